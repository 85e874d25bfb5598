"""One side of a comparison: a registry handle's topics and histories, read once, with its fingerprints where
its storage lists them (one read of small rows, no schema text: storage/_base.py `BulkListing`).

A history is compared as a broker's admin API shows it: its last tombstone, if any, and the live versions
after it (§3.2; GET /schemas and /metadata, remote/_backend.py); what came before the tombstone exists for no
purpose, and a broker does not tell it, so an embedded and a remote side compare alike.

Histories are keyed by schema id (tenant/namespace/base topic, §1): a topic's partitions and both domains
share one history, so they are compared once, shown under the topic name the listing gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import TypeVar

from .._errors import InvalidArgumentError, NotFoundError, TopicPoliciesDisabledError
from .._facade import BackedRegistry
from .._handle import SchemaRegistry
from .._location import LocationKind, parse_location, remote_url
from .._model import SchemaVersion, TopicPolicy
from .._names import TopicName
from .._read_only import ReadOnlyRegistry
from ..storage._base import BulkListing, Fingerprint


class Side:
    """A registry as a comparison reads it: `names` maps each schema id to the topic shown for it; `prints`
    every history's fingerprints and `own_policies` every topic's own policy, when the storage lists them in
    bulk (else None: each is read per topic)."""

    def __init__(self, handle: SchemaRegistry) -> None:
        self.handle = handle
        self.namespaces: list[str] = []
        self.names: dict[str, str] = {}
        for namespace in _namespaces(handle):
            self.namespaces.append(namespace)
            with suppress(NotFoundError):  # a namespace deleted while we list
                for topic in handle.topics(namespace):
                    name = TopicName.parse(topic)
                    self.names.setdefault(name.schema_id, str(name.base))
        storage = _bulk(handle)
        self.prints = None if storage is None else storage.all_fingerprints()
        self.own_policies = None if storage is None else storage.all_topic_policies()
        for schema_id in self.prints or ():
            self.names.setdefault(schema_id, f"persistent://{schema_id}")
        self._histories: dict[str, list[SchemaVersion]] = {}

    def history(self, schema_id: str) -> list[SchemaVersion]:
        """The visible history (its last tombstone and the live versions), oldest first; [] for none."""
        found = self._histories.get(schema_id)
        if found is None:
            found = []
            if self.prints is None or schema_id in self.prints:
                with suppress(NotFoundError):
                    found = self.handle.history(self.names.get(schema_id, schema_id), include_deleted=True)
            found = visible(found)
            self._histories[schema_id] = found
        return found

    def own_policy(self, topic: str) -> TopicPolicy:
        """The topic's own policy (empty when it has none)."""
        if self.own_policies is not None:
            return self.own_policies.get(topic, TopicPolicy())
        with suppress(NotFoundError, TopicPoliciesDisabledError):  # a broker without topic policies has none
            return self.handle.topic_policy(topic)
        return TopicPolicy()

    def fingerprints(self, schema_id: str) -> list[Fingerprint] | None:
        """The visible history's fingerprints, or None when this side's storage does not list them."""
        if self.prints is None:
            return None
        return visible(self.prints.get(schema_id, []))


def parquet_side(folder: str | Path) -> SchemaRegistry:
    """A Parquet export folder (`export --format parquet`) as a side: read whole, read-only (registry.parquet).
    InvalidArgumentError naming what is missing when the folder is not an export."""
    from ..parquet import import_parquet_export

    return import_parquet_export(folder).read_only()


def is_snapshot_file(path: Path) -> bool:
    """An export file (`schema-explorer export`, JSON lines) rather than a registry file: it starts with `{`."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(64).lstrip().startswith(b"{")


def open_side(
    location: str,
    *,
    token: str | None = None,
    pulsar_version: str | None = None,
    writes: bool = False,
    workspace: str | None = None,
) -> SchemaRegistry:
    """The registry a comparison side names, as every shell opens it (the CLI's --from/--to, the app's Compare
    page): an admin URL (with `token`), a Parquet export folder, an export file, or a registry location, which
    is never created (a registry made on the spot would compare as empty). Read-only unless `writes` (the side
    `--propose` opens proposals in), which an export, file or folder, cannot be: InvalidArgumentError."""
    from .._open import open as open_registry
    from .._snapshot import import_snapshot

    text = location.strip()
    if not text:
        raise InvalidArgumentError("no registry named (an empty location)")
    url = remote_url(text)
    if url is not None:
        reg = open_registry(url, token=token, pulsar_version=pulsar_version, workspace=workspace)
        return reg if writes else reg.read_only()
    if token:
        raise InvalidArgumentError("a token only applies to an http(s) URL")
    where = parse_location(text)
    path = Path(where.target).expanduser() if where.kind is LocationKind.SQLITE else None
    if path is not None and (path.is_dir() or is_snapshot_file(path)):
        if writes:
            kind = "a Parquet export folder" if path.is_dir() else "an export file"
            raise InvalidArgumentError(
                f"{kind} is read-only: proposals are opened in a registry (a file, a database or a URL)"
            )
        return parquet_side(path) if path.is_dir() else import_snapshot(path).read_only()
    return open_registry(path or text, read_only=not writes, pulsar_version=pulsar_version)


E = TypeVar("E", SchemaVersion, Fingerprint)


def visible(entries: list[E]) -> list[E]:
    """The last tombstone and what follows it (all of a history without one)."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].deleted:
            return entries[i:]
    return entries


def _namespaces(handle: SchemaRegistry) -> Iterator[str]:
    for tenant in handle.tenants():
        with suppress(NotFoundError):  # a tenant deleted while we list
            yield from handle.namespaces(tenant)


def _bulk(handle: SchemaRegistry) -> BulkListing | None:
    """The storage of an embedded registry, when it lists histories and topic policies in bulk."""
    while isinstance(handle, ReadOnlyRegistry):
        handle = handle._inner
    if not isinstance(handle, BackedRegistry):
        return None
    storage = handle._state.storage
    return storage if isinstance(storage, BulkListing) else None
