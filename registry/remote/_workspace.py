"""A workspace beside a plain Pulsar broker: where the explorer keeps what a broker has no place for.

A broker's admin API stores schemas and policies, never proposals, review rules, an audit trail or webhooks.
A workspace is a storage of this project's own (a SQLite file or a PostgreSQL database: the location forms of
`--db`, registry/storage/_locations.py) that keeps exactly those, while the schemas and policies stay on the
broker: proposals are reviewed against the broker as it is now (`RegistryState` over its admin API) and
applied to it through `BrokerTarget` (registry/remote/_apply.py). Every write made through the explorer to the
broker is audited here, and refused here first where the namespace's rules require proposals.

`registry.open(url, workspace=LOCATION)` names one (two gateways, or a team, share one on PostgreSQL); without
it a plain broker gets a per-user file keyed by the cluster's URL (`default_workspace`), so one person's
proposals survive between commands. An embedded registry and `schema-explorer serve` keep all of this in their
own storage: they take no workspace.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from .._audit import AuditAction, AuditEntry
from .._auditing import AuditNote, Auditor
from .._errors import StorageError
from .._location import LocationKind, names_remote, parse_location
from .._names import NamespaceName
from .._paths import data_dir
from .._state import RegistryState
from ..proposals._desk import ProposalDesk
from ..proposals._facade import EmbeddedProposals
from ..proposals._permissions import Step, proposals_required
from ..proposals._records import rules as stored_rules
from ..storage._base import LocalStorage
from ..storage._locations import open_plugin
from ..storage._memory import MemoryStorage
from ..storage._sqlite import SqliteStorage
from ..webhooks._desk import WebhookDesk
from ..webhooks._handle import Webhooks
from ..webhooks._notices import Notices
from ._apply import BrokerTarget, BrokerWrites

WORKSPACE_ENV_VAR: Final = "SCHEMA_EXPLORER_WORKSPACE_DIR"


def default_workspace(url: str) -> Path:
    """`$SCHEMA_EXPLORER_WORKSPACE_DIR/<host>_<port>-<digest>.db`, else under `<user data dir>/
    pulsar-schema-explorer/workspaces/`: one file per cluster URL (the digest covers the whole URL; a password
    in it never names the file). Not a cache: proposals and the audit trail live there."""
    base = os.environ.get(WORKSPACE_ENV_VAR)
    folder = Path(base).expanduser() if base else data_dir() / "workspaces"
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    parsed = urlsplit(url)
    where = f"{parsed.hostname or 'broker'}_{parsed.port}" if parsed.port else parsed.hostname or "broker"
    return folder / f"{re.sub(r'[^A-Za-z0-9.-]+', '_', where)[:60]}-{digest}.db"


def open_workspace(location: str | os.PathLike[str]) -> tuple[LocalStorage, str]:
    """The storage a workspace location names, made when missing (a workspace starts empty), and the location
    as messages show it (no password). An http(s) URL is a registry, not a workspace: refused."""
    text = os.fspath(location).strip()
    if not text:
        raise StorageError("no workspace location given (an empty path)")
    if names_remote(text):
        raise StorageError(f"{text} is an admin API, not a workspace: name a file, memory: or postgresql://...")
    where = parse_location(text)
    if where.kind is LocationKind.SQLITE:
        path = Path(where.target).expanduser()
        if path.is_dir():
            raise StorageError(f"cannot use {text!r} as a workspace: it is a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot make the workspace folder {path.parent}: {exc.strerror or exc}") from None
        return SqliteStorage(path), str(path)
    if where.kind is LocationKind.MEMORY:
        return MemoryStorage(), where.shown
    if where.kind is LocationKind.POSTGRESQL:
        from ..storage._postgres import PostgresStorage  # psycopg is only imported for a postgresql:// location

        return PostgresStorage(where.target, create=True), where.shown
    return open_plugin(where, create=True), where.shown


class Workspace:
    """Proposals, review rules, the audit trail and webhooks of one plain broker, kept in `storage`."""

    def __init__(self, storage: LocalStorage, location: str, state: RegistryState, writes: BrokerWrites) -> None:
        self._storage = storage
        self.location = location
        clock = lambda: time.time_ns() // 1_000_000  # noqa: E731
        self._notices = Notices(storage, clock)
        self._auditor = Auditor(storage, clock, lambda: None, self._notices)
        desk = ProposalDesk(storage, state, BrokerTarget(state, writes), self._auditor, clock)
        self.proposals = EmbeddedProposals(desk, state)
        self.webhooks: Webhooks = WebhookDesk(storage, self._auditor, clock)

    @contextlib.contextmanager
    def direct(
        self, action: AuditAction, target: str, user: str, step: Step | None, namespace: str | None
    ) -> Iterator[AuditNote]:
        """One write made through the explorer to the broker, audited here: refused before it is sent where
        `namespace`'s rules require proposals for `step` (a schema or policy change), recorded with its outcome
        or refusal after. The audit line commits once the broker has answered."""
        with self._auditor.audited(action, target, user) as note:
            if step is not None and namespace is not None:
                ns = str(NamespaceName.parse(namespace))
                refusal = proposals_required(ns, stored_rules(self._storage, ns), step)
                if refusal is not None:
                    raise refusal.exception()
            yield note

    def audit_trail(self, target: str | None, limit: int) -> list[AuditEntry]:
        return self._auditor.trail(target, limit)

    def close(self) -> None:
        self._notices.deliveries.closing(self._storage)  # its notices get a few seconds to go out
        self._storage.close()


class WorkspaceSlot:
    """A plain broker's workspace as its handle holds it. A workspace named by the caller is opened at once (a
    bad location fails at open); the per-user default is opened at its first use (a proposal, a webhook, a
    write through the explorer), so reading a cluster (get, search, diff, compare) never creates it, and works
    where the data folder cannot be written. Until then its audit trail reads as empty: nothing was written."""

    def __init__(
        self, location: str | os.PathLike[str] | None, url: str, state: RegistryState, writes: BrokerWrites
    ) -> None:
        self._path = default_workspace(url) if location is None else None
        self._location: str | os.PathLike[str] = location if location is not None else default_workspace(url)
        self._state = state
        self._writes = writes
        self._opened: Workspace | None = None
        if location is not None:
            self.get()

    @property
    def location(self) -> str:
        """Where it is (or will be) kept, shown without a password."""
        if self._opened is not None:
            return self._opened.location
        return str(self._path)

    def get(self) -> Workspace:
        """The workspace, opened (and made, when missing) now if it was not yet."""
        if self._opened is None:
            kept, shown = open_workspace(self._location)
            self._opened = Workspace(kept, shown, self._state, self._writes)
        return self._opened

    def audit_trail(self, target: str | None, limit: int) -> list[AuditEntry]:
        if self._opened is None and self._path is not None and not self._path.exists():
            return []  # never opened, never made: no write went through the explorer
        return self.get().audit_trail(target, limit)

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
