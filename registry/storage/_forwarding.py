"""`ForwardingStorage`: a storage of one's own around a built-in one, instead of one written from nothing.

Every member of the storage protocol (`LocalStorage`, storage/_base.py) is forwarded, by hand, to the storage it
wraps, through one hook, `around(operation, call)`. A wrapper overrides `around` to see every call (timing,
counting, tracing: `schema-explorer serve` times its storage this way for /metrics), or overrides single members
to change what passes (a write mirrored elsewhere, a read refused for some tenants). Stored bytes are not for a
wrapper to change: the built-in storages fingerprint and index the bytes they are given. Written out member by
member, so a type checker sees what a wrapper offers, and a
member the protocol gains later fails the conformance suite until it is forwarded here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from .._audit import AuditEntry
from .._catalog import CatalogSource
from .._model import ClientRecord, NamespacePolicy, SchemaVersion, TopicPolicy
from .._types import SchemaType
from ._base import DedupScan, LocalStorage, ProposalRow
from ._read_cache import ReadCache

T = TypeVar("T")


class ForwardingStorage:
    """Forwards every storage call to `inner`, each through `around(operation, call)`."""

    def __init__(self, inner: LocalStorage) -> None:
        self.inner = inner

    def around(self, operation: str, call: Callable[[], T]) -> T:
        """Run one storage call (`operation` is the protocol member's name); override to observe every call."""
        return call()

    @property
    def read_cache(self) -> ReadCache | None:
        """The wrapped storage's read cache, if it keeps one (Registry.cache_usage reads its size)."""
        found = getattr(self.inner, "read_cache", None)
        return found if isinstance(found, ReadCache) else None

    @property
    def created(self) -> bool:
        """Whether the wrapped storage made the registry when it opened (Registry.open stores its line then)."""
        return bool(getattr(self.inner, "created", False))

    # --- schema histories -------------------------------------------------------------------------------

    def history(self, schema_id: str) -> list[SchemaVersion]:
        return self.around("history", lambda: self.inner.history(schema_id))

    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]:
        return self.around("history_range", lambda: self.inner.history_range(schema_id, first, last))

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan:
        return self.around("dedup_scan", lambda: self.inner.dedup_scan(schema_id, kind, sha256, equality))

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        self.around("append", lambda: self.inner.append(entry, expected_latest))

    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None:
        self.around("append_indexed", lambda: self.inner.append_indexed(entry, expected_latest, equality))

    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None:
        self.around("put_equalities", lambda: self.inner.put_equalities(schema_id, equalities))

    def drop(self, schema_id: str) -> bool:
        return self.around("drop", lambda: self.inner.drop(schema_id))

    # --- metadata ---------------------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        return self.around("tenants", self.inner.tenants)

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        return self.around("put_tenant", lambda: self.inner.put_tenant(tenant, created_at))

    def namespaces(self, tenant: str) -> list[str]:
        return self.around("namespaces", lambda: self.inner.namespaces(tenant))

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self.around("namespace_policy", lambda: self.inner.namespace_policy(namespace))

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        self.around("put_namespace", lambda: self.inner.put_namespace(namespace, policy, created_at))

    def topics(self, namespace: str) -> list[str]:
        return self.around("topics", lambda: self.inner.topics(namespace))

    def has_topic(self, topic: str) -> bool:
        return self.around("has_topic", lambda: self.inner.has_topic(topic))

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        return self.around("put_topic", lambda: self.inner.put_topic(topic, namespace, created_at))

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        return self.around("topic_policy", lambda: self.inner.topic_policy(topic))

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        self.around("put_topic_policy", lambda: self.inner.put_topic_policy(topic, policy))

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        return self.around("clients", lambda: self.inner.clients(topics))

    def put_client(self, client: ClientRecord) -> None:
        self.around("put_client", lambda: self.inner.put_client(client))

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        return self.around("remove_clients", lambda: self.inner.remove_clients(topic, name, role))

    def setting(self, key: str) -> str | None:
        return self.around("setting", lambda: self.inner.setting(key))

    def put_setting(self, key: str, value: str) -> None:
        self.around("put_setting", lambda: self.inner.put_setting(key, value))

    def change_token(self) -> int:
        return self.around("change_token", self.inner.change_token)

    def catalog_source(self) -> CatalogSource:
        return self.around("catalog_source", self.inner.catalog_source)

    # --- proposals ------------------------------------------------------------------------------------

    def proposal(self, proposal_id: int) -> ProposalRow | None:
        return self.around("proposal", lambda: self.inner.proposal(proposal_id))

    def proposals(
        self, *, state: str | None, namespace: str | None, target: str | None, limit: int
    ) -> list[ProposalRow]:
        return self.around(
            "proposals", lambda: self.inner.proposals(state=state, namespace=namespace, target=target, limit=limit)
        )

    def proposal_counts(self) -> dict[str, int]:
        return self.around("proposal_counts", self.inner.proposal_counts)

    def put_proposal(self, row: ProposalRow) -> int:
        return self.around("put_proposal", lambda: self.inner.put_proposal(row))

    # --- transactions and the audit trail ---------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The wrapped storage's transaction; `around` sees it opened ("transaction"), not its whole length."""
        with self.around("transaction", self.inner.transaction):
            yield

    def append_audit(self, entry: AuditEntry) -> None:
        self.around("append_audit", lambda: self.inner.append_audit(entry))

    def audit(self, target: str | None, limit: int) -> list[AuditEntry]:
        return self.around("audit", lambda: self.inner.audit(target, limit))

    def close(self) -> None:
        self.around("close", self.inner.close)
