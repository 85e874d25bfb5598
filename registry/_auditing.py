"""Recording the embedded registry's write attempts in its audit trail (registry/_audit.py has the entries).

Every facade write runs inside `Auditor.audited`: one storage transaction holds the write and its audit line
(one commit, one fsync), and a refused write is recorded with its reason. An audit line is a record of who did
what, not a copy of the input: a refused 1 MiB schema is named by its size and digest, so refused writes
cannot grow the registry by their inputs.

After the write commits (the outermost transaction: a server's batch commits several writes at once), what the
write was is handed to `after_commit` (registry/webhooks/_notices.py: webhook notices), never before and never
for a write that was undone, and nothing it does can fail or undo the write.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._errors import RegistryError, StorageError
from ._names import NamespaceName, TopicName, parse_tenant
from ._text import readable
from .storage._base import LocalStorage

_log = logging.getLogger("registry.audit")
_AUDIT_DETAIL_BYTES = 1024
_AUDIT_NAME_BYTES = 300  # a topic name is at most 3 x 255 characters by Pulsar's rules; longer ones are refused


@dataclass(slots=True)
class AuditNote:
    """What a write fills in for its audit entry while it runs; `input` is the schema it was given, named in
    the line of a refused write by its size and digest (never kept whole)."""

    target: str
    detail: str = ""
    outcome: AuditOutcome = AuditOutcome.OK
    input: str | bytes | None = None
    proposal: Any = None  # the proposal the write stored last (a Proposal), for its notices
    version: int | None = None  # the schema version the write stored, if it stored one


class AfterCommit(Protocol):
    """Told of each audited write: `prepared` inside its transaction (what to hand over), `committed` with
    what was prepared once the outermost transaction has committed."""

    def prepared(self, action: AuditAction, note: AuditNote, user: str, refused: bool) -> Sequence[object]: ...
    def committed(self, prepared: Sequence[object]) -> None: ...


class Auditor:
    """The audit trail of one embedded registry: `clock` stamps the lines, `on_write` runs after each attempt
    (the facade counts its own writes with it), `after_commit` is told of each write once it has committed."""

    def __init__(
        self,
        storage: LocalStorage,
        clock: Callable[[], int],
        on_write: Callable[[], None],
        after_commit: AfterCommit | None = None,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._on_write = on_write
        self._after_commit = after_commit
        self._local = threading.local()  # per thread: what each open transaction level will hand over

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A storage transaction (nested: a savepoint) whose writes' notices go out when the outermost one
        commits; a level undone by an exception drops its own."""
        levels: list[list[object]] = self._local.__dict__.setdefault("levels", [])
        levels.append([])
        committed = False
        try:
            with self._storage.transaction():
                yield
            committed = True
        finally:
            mine = levels.pop()
            if committed and levels:
                levels[-1].extend(mine)
            elif committed and mine and self._after_commit is not None:
                try:
                    self._after_commit.committed(mine)
                except Exception:  # the write is committed: nothing after it may fail it
                    _log.exception("handing over the notices of a committed write failed")

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """One storage transaction for a facade write (one commit, one fsync). A RegistryError commits what
        was written before it and is then raised."""
        refused: RegistryError | None = None
        with self.transaction():
            try:
                yield
            except RegistryError as exc:
                refused = exc
        if refused is not None:
            raise refused

    def touched(self, proposal: object) -> None:
        """The innermost write on this thread stored `proposal` (its notices name it)."""
        notes: list[AuditNote] = self._local.__dict__.get("notes", [])
        if notes:
            notes[-1].proposal = proposal

    @contextlib.contextmanager
    def audited(self, action: AuditAction, target: str, user: str) -> Iterator[AuditNote]:
        """Record one write attempt: the body fills in the note; a RegistryError is recorded as refused.

        The audit line commits in the same transaction as the write it records (one fsync for both)."""
        note = AuditNote(target=str(target))
        refused: RegistryError | None = None
        notes: list[AuditNote] = self._local.__dict__.setdefault("notes", [])
        notes.append(note)
        try:
            with self.atomic():
                try:
                    yield note
                except RegistryError as exc:
                    refused = exc
                    self._write(action, note.target, user, _refusal(exc, note.input), AuditOutcome.REFUSED)
                else:
                    self._write(action, note.target, user, note.detail, note.outcome)
                self._prepare(action, note, user, refused is not None)
        except StorageError as exc:
            if exc is not refused:  # the transaction itself failed (busy, disk): nothing of it was kept
                self._write(action, note.target, user, str(exc), AuditOutcome.REFUSED)
            raise
        finally:
            notes.pop()
            self._on_write()
        if refused is not None:
            raise refused

    def _prepare(self, action: AuditAction, note: AuditNote, user: str, refused: bool) -> None:
        """What the write hands over after commit, kept at the innermost open transaction level."""
        if self._after_commit is None:
            return
        try:
            prepared = self._after_commit.prepared(action, note, user, refused)
        except Exception:  # notices never fail a write: it is logged and the write goes on
            _log.exception("preparing the notices of a %s write failed", action)
            return
        levels: list[list[object]] = self._local.__dict__.get("levels", [])
        if levels:
            levels[-1].extend(prepared)

    def trail(self, target: str | None, limit: int) -> list[AuditEntry]:
        """The newest `limit` entries, of everything or of `target` (a topic, namespace or tenant)."""
        return self._storage.audit(None if target is None else audit_target(target), limit)

    def _write(self, action: AuditAction, target: str, user: str, detail: str, outcome: AuditOutcome) -> None:
        entry = AuditEntry(
            at=self._clock(),
            user=_audit_text(user, _AUDIT_NAME_BYTES),
            action=action,
            target=_audit_text(target, _AUDIT_NAME_BYTES),
            detail=_audit_text(detail, _AUDIT_DETAIL_BYTES),
            outcome=outcome,
        )
        with contextlib.suppress(StorageError):  # the write itself is done: a lost audit line must not undo it
            self._storage.append_audit(entry)


def created(was_created: bool, kind: str) -> tuple[AuditOutcome, str]:
    """The outcome and detail of a create call."""
    if was_created:
        return AuditOutcome.OK, f"{kind} created"
    return AuditOutcome.UNCHANGED, f"{kind} already existed"


def topic_target(topic: str) -> str:
    """A topic as the audit trail names it: its base name, without the partition."""
    return str(TopicName.parse(topic).base)


def audit_target(target: str) -> str:
    """A topic, namespace or tenant name as the audit trail stores it."""
    text = str(target).strip()
    if "://" in text or text.count("/") >= 2:
        return topic_target(text)
    if "/" in text:
        return str(NamespaceName.parse(text))
    return parse_tenant(text)


def _audit_text(text: str, limit: int) -> str:
    """`text` made encodable and cut to at most `limit` UTF-8 bytes, saying how long it was."""
    data = readable(text).encode("utf-8")
    if len(data) <= limit:
        return data.decode("utf-8")
    return f"{data[: limit - 40].decode('utf-8', 'ignore')}… ({len(data):,} bytes in all)"


def _refusal(exc: RegistryError, given: str | bytes | None) -> str:
    """A refused write's audit detail: the reason (at most ~1 KiB) and the input's size and SHA-256."""
    reason = _audit_text(str(exc), _AUDIT_DETAIL_BYTES - 100)
    if given is None:
        return reason
    data = given if isinstance(given, bytes) else given.encode("utf-8", "surrogatepass")
    return f"{reason} [input: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}]"
