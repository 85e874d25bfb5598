"""Storage behind the registry, after Pulsar's pluggable `SchemaStorage` plus its metadata store.

Schema histories are append-only lists per schema id, written with compare-and-set on the latest version
(Pulsar §3.1: concurrent puts are serialised by optimistic CAS on the index and retried). Policies, tenants,
namespaces, topics and recorded clients are small key-value records.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._audit import AuditEntry
from .._catalog import CatalogStorage
from .._model import ClientRecord, NamespacePolicy, SchemaVersion, TopicPolicy
from .._types import AVRO_PARSED_TYPES, SchemaType


class StaleHistoryError(Exception):
    """The history changed since it was read; the caller re-reads and retries (never surfaces to users)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    """What dedup needs to know of a stored version without reading or decoding its text (§3.3).

    `sha256` is the digest of the stored bytes. `equality` is the digest of the parsed Avro schema's
    equality key for AVRO/JSON/PROTOBUF versions that parse with valid defaults, computed once when the
    version is registered; None when unknown (tombstones, other types, versions stored by an import or
    before format 3, or a version that does not parse cleanly: the registry then parses the text)."""

    version: int
    type: SchemaType
    deleted: bool
    sha256: bytes
    equality: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DedupScan:
    """A history as a registration sees it, without reading any schema text (§3.3).

    `latest`: the last version number, tombstones included (None: no history); `tombstone`: the last
    tombstone's (None: none); `rows`: oldest first, the live versions dedup has to look at for a candidate:
    those that may equal it (same type and digest) and, for an AVRO/JSON/PROTOBUF candidate, every
    AVRO/JSON/PROTOBUF version whose equality digest is not known (the registry parses those)."""

    latest: int | None
    tombstone: int | None
    rows: list[Fingerprint]

    @property
    def has_live(self) -> bool:
        return self.latest is not None and self.latest != self.tombstone


def is_dedup_row(found: Fingerprint, kind: SchemaType, sha256: bytes, equality: bytes | None) -> bool:
    """Must dedup look at this live version for a candidate of `kind` (see `DedupScan.rows`)?"""
    if equality is None:  # a candidate compared by its bytes
        return found.type is kind and found.sha256 == sha256
    return found.type in AVRO_PARSED_TYPES and (
        found.equality is None or (found.type is kind and found.equality == equality)
    )


def fingerprint(entry: SchemaVersion, equality: bytes | None = None) -> Fingerprint:
    return Fingerprint(
        version=entry.version,
        type=entry.type,
        deleted=entry.deleted,
        sha256=hashlib.sha256(entry.data).digest(),
        equality=equality,
    )


class Storage(Protocol):
    # schema histories
    def history(self, schema_id: str) -> list[SchemaVersion]: ...
    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None: ...
    def drop(self, schema_id: str) -> bool: ...
    # metadata
    def tenants(self) -> list[str]: ...
    def put_tenant(self, tenant: str, created_at: int) -> bool: ...
    def namespaces(self, tenant: str) -> list[str]: ...
    def namespace_policy(self, namespace: str) -> NamespacePolicy | None: ...
    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None: ...
    def topics(self, namespace: str) -> list[str]: ...
    def has_topic(self, topic: str) -> bool: ...
    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool: ...
    def topic_policy(self, topic: str) -> TopicPolicy | None: ...
    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None: ...
    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]: ...
    def put_client(self, client: ClientRecord) -> None: ...
    def remove_clients(self, topic: str, name: str, role: str | None) -> int: ...
    def setting(self, key: str) -> str | None: ...
    def put_setting(self, key: str, value: str) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class ChangeTracking(Protocol):
    """Optional for a storage: a number that changes with every write, from any process, cheap to read.

    The registry keys its catalog cache on it; storages without it (a remote one) get a time-based token."""

    def change_token(self) -> int: ...


@runtime_checkable
class IndexedHistory(Protocol):
    """Optional for a storage: a history's fingerprints, and a range of its versions, so a registration reads
    neither every version's text nor more versions than its strategy checks."""

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan: ...
    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]: ...
    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None: ...
    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None: ...


@runtime_checkable
class BulkListing(Protocol):
    """Optional for a storage: every history's fingerprints (tombstones included, oldest first) by schema id,
    and every topic's own policy by topic, each in one read, so two registries of many topics are compared
    without a read per topic and without any schema text where they agree (registry/compare/)."""

    def all_fingerprints(self) -> dict[str, list[Fingerprint]]: ...
    def all_topic_policies(self) -> dict[str, TopicPolicy]: ...


@runtime_checkable
class Transactional(Protocol):
    """Optional for a storage: `with storage.transaction():` makes every write inside one atomic commit.

    Transactions nest (the inner ones are savepoints: an exception undoes only its own writes). A write
    made in a transaction is durable when the outermost one has committed, not before."""

    def transaction(self) -> contextlib.AbstractContextManager[None]: ...


@runtime_checkable
class AuditLog(Protocol):
    """Optional for a storage: keep the audit trail (appending never changes the change token)."""

    def append_audit(self, entry: AuditEntry) -> None: ...
    def audit(self, target: str | None, limit: int) -> list[AuditEntry]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ProposalRow:
    """A stored proposal: its id, what a listing filters on, and the proposal itself as JSON text (the core
    reads and writes it: registry/proposals/_records.py)."""

    id: int
    namespace: str
    target: str
    state: str
    updated_at: int
    doc: str


@runtime_checkable
class ProposalStore(Protocol):
    """Optional for a storage: keep schema change proposals (registry/proposals/). Writing one is a change
    (the token moves); ids are whole numbers from 1, never reused."""

    def proposal(self, proposal_id: int) -> ProposalRow | None: ...
    def proposals(
        self, *, state: str | None, namespace: str | None, target: str | None, limit: int
    ) -> list[ProposalRow]: ...
    def proposal_counts(self) -> dict[str, int]:
        """How many proposals are in each state (the states that have none may be left out)."""
        ...

    def put_proposal(self, row: ProposalRow) -> int:
        """Store `row`: a new proposal when `row.id` is 0 (its new id is returned, above every id stored), else
        the proposal with that id, replaced whole or, when there is none (an import), made with that id."""
        ...


class LocalStorage(
    Storage, IndexedHistory, Transactional, AuditLog, ChangeTracking, CatalogStorage, ProposalStore, Protocol
):
    """What the embedded registry writes to: SQLite (`SqliteStorage`), PostgreSQL (`PostgresStorage`), memory
    (`MemoryStorage`) or a storage of one's own, each with every optional part above. A remote backend is only
    a `Storage` read over HTTP: its writes are the broker's business."""
