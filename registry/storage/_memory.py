"""A registry in memory: everything in dicts behind one lock, gone with the process (tests, scratch copies,
`memory:`). It keeps every promise of the storage protocol (registry/storage/README.md), checked by the same
conformance suite as SQLite and PostgreSQL."""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

from .._audit import AuditEntry, is_within
from .._catalog import CatalogRow, CatalogSource, stored_fields
from .._model import ClientRecord, NamespacePolicy, SchemaVersion, TopicPolicy
from .._types import SchemaType
from ._base import DedupScan, Fingerprint, ProposalRow, StaleHistoryError, fingerprint, is_dedup_row


class MemoryStorage:
    """Everything in dicts behind one lock: for tests and scratch registries."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._histories: dict[str, list[SchemaVersion]] = {}
        self._fingerprints: dict[str, list[Fingerprint]] = {}
        self._tenants: dict[str, int] = {}
        self._namespaces: dict[str, NamespacePolicy] = {}
        self._topics: dict[str, str] = {}
        self._topic_policies: dict[str, TopicPolicy] = {}
        self._clients: dict[tuple[str, str, str, str], ClientRecord] = {}
        self._changes = 0
        self._audit: list[AuditEntry] = []
        self._settings: dict[str, str] = {}
        self._proposals: dict[int, ProposalRow] = {}

    def history(self, schema_id: str) -> list[SchemaVersion]:
        with self._lock:
            return list(self._histories.get(schema_id, ()))

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        self.append_indexed(entry, expected_latest, None)

    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None:
        with self._lock:
            self._changes += 1
            entries = self._histories.setdefault(entry.topic, [])
            latest = entries[-1].version if entries else None
            if latest != expected_latest:
                raise StaleHistoryError(entry.topic)
            entries.append(entry)
            self._fingerprints.setdefault(entry.topic, []).append(fingerprint(entry, equality))

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan:
        with self._lock:
            prints = self._fingerprints.get(schema_id, [])
            tomb = next((p.version for p in reversed(prints) if p.deleted), None)
            rows = [p for p in prints if (tomb is None or p.version > tomb) and is_dedup_row(p, kind, sha256, equality)]
            return DedupScan(latest=prints[-1].version if prints else None, tombstone=tomb, rows=rows)

    def all_fingerprints(self) -> dict[str, list[Fingerprint]]:
        with self._lock:
            return {schema_id: list(prints) for schema_id, prints in self._fingerprints.items()}

    def all_topic_policies(self) -> dict[str, TopicPolicy]:
        with self._lock:
            return dict(self._topic_policies)

    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]:
        with self._lock:
            return [e for e in self._histories.get(schema_id, ()) if first <= e.version <= last]

    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None:
        """Remember equality digests computed later (not a change: the token stays)."""
        with self._lock:
            prints = self._fingerprints.get(schema_id, [])
            for i, found in enumerate(prints):
                if found.version in equalities:
                    prints[i] = replace(found, equality=equalities[found.version])

    def drop(self, schema_id: str) -> bool:
        with self._lock:
            self._changes += 1
            self._fingerprints.pop(schema_id, None)
            return self._histories.pop(schema_id, None) is not None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Holds the lock, so other threads never see half of it; nothing is undone on an exception (the
        writes of a scratch registry are not worth a journal)."""
        with self._lock:
            yield

    def tenants(self) -> list[str]:
        with self._lock:
            return sorted(self._tenants)

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        with self._lock:
            self._changes += 1
            if tenant in self._tenants:
                return False
            self._tenants[tenant] = created_at
            return True

    def namespaces(self, tenant: str) -> list[str]:
        with self._lock:
            return sorted(ns for ns in self._namespaces if ns.split("/")[0] == tenant)

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        with self._lock:
            return self._namespaces.get(namespace)

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        with self._lock:
            self._changes += 1
            self._namespaces[namespace] = policy

    def topics(self, namespace: str) -> list[str]:
        with self._lock:
            return sorted(t for t, ns in self._topics.items() if ns == namespace)

    def has_topic(self, topic: str) -> bool:
        with self._lock:
            return topic in self._topics

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        with self._lock:
            self._changes += 1
            if topic in self._topics:
                return False
            self._topics[topic] = namespace
            return True

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        with self._lock:
            return self._topic_policies.get(topic)

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        with self._lock:
            self._changes += 1
            if policy is None:
                self._topic_policies.pop(topic, None)
            else:
                self._topic_policies[topic] = policy

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        with self._lock:
            wanted = None if topics is None else set(topics)
            found = [c for c in self._clients.values() if wanted is None or c.topic in wanted]
            return sorted(found, key=lambda c: (c.topic, c.role, c.name, c.subscription))

    def put_client(self, client: ClientRecord) -> None:
        with self._lock:
            self._changes += 1
            self._clients[(client.topic, client.role, client.name, client.subscription)] = client

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        with self._lock:
            self._changes += 1
            doomed = [k for k in self._clients if k[0] == topic and k[2] == name and (role is None or k[1] == role)]
            for key in doomed:
                del self._clients[key]
            return len(doomed)

    def setting(self, key: str) -> str | None:
        with self._lock:
            return self._settings.get(key)

    def put_setting(self, key: str, value: str) -> None:
        with self._lock:
            self._changes += 1
            self._settings[key] = value

    def proposal(self, proposal_id: int) -> ProposalRow | None:
        with self._lock:
            return self._proposals.get(proposal_id)

    def proposals(
        self, *, state: str | None, namespace: str | None, target: str | None, limit: int
    ) -> list[ProposalRow]:
        with self._lock:
            rows = [
                row
                for row in self._proposals.values()
                if (state is None or row.state == state)
                and (namespace is None or row.namespace == namespace)
                and (target is None or row.target == target)
            ]
        return sorted(rows, key=lambda row: -row.id)[:limit]

    def proposal_counts(self) -> dict[str, int]:
        with self._lock:
            return dict(collections.Counter(row.state for row in self._proposals.values()))

    def put_proposal(self, row: ProposalRow) -> int:
        with self._lock:
            self._changes += 1
            if row.id == 0:
                row = replace(row, id=max(self._proposals, default=0) + 1)
            self._proposals[row.id] = row
            return row.id

    def change_token(self) -> int:
        with self._lock:
            return self._changes

    def catalog_source(self) -> CatalogSource:
        with self._lock:
            rows: list[CatalogRow] = []
            for topic, namespace in self._topics.items():
                entries = self._histories.get(topic.split("://", 1)[-1])
                if not entries:
                    rows.append((topic, namespace, None, None, None, None, None, None, None))
                    continue
                last = entries[-1]
                tomb = max((e.version for e in entries if e.deleted), default=-1)
                live = sum(1 for e in entries if e.version > tomb)
                fields = "" if last.deleted else stored_fields(last.type, last.data)
                data = last.data if fields is None else None
                rows.append(
                    (topic, namespace, last.version, last.type.value, last.timestamp, last.deleted, live, fields, data)
                )
            clients: dict[tuple[str, str], int] = {}
            for topic, role, _, _ in self._clients:
                clients[(topic, str(role))] = clients.get((topic, str(role)), 0) + 1
            rows.sort(key=lambda r: (r[1].split("/", 1)[0], r[1], r[0]))
            return CatalogSource(
                token=self._changes,
                rows=rows,
                namespace_policies=dict(self._namespaces),
                topic_policies=dict(self._topic_policies),
                clients=clients,
            )

    def append_audit(self, entry: AuditEntry) -> None:
        with self._lock:
            self._audit.append(entry)

    def audit(self, target: str | None, limit: int) -> list[AuditEntry]:
        with self._lock:
            found = [e for e in reversed(self._audit) if target is None or is_within(e, target)]
            return found[:limit]

    def close(self) -> None:
        pass
