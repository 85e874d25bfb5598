"""Loading a whole snapshot into an empty SQL registry in bulk: the rows of each table written in large chunks
(PostgreSQL's COPY, SQLite's executemany) inside the caller's one transaction, instead of one storage call
(and one savepoint, and several statements) per record.

Why: an import into PostgreSQL wrote row by row, each version a savepoint and four statements over the network
(20,000 topics in 107 s), so a registry of a million topics took hours to load. The rows are the same ones the
storage's own writes make (storage/_sql.py), so a bulk-loaded registry answers, exports and is written to
exactly as one filled by registrations:

- `schemas` and `fingerprints` per version (the SHA-256 of the data; the equality digest unknown, NULL, as for
  any imported version: dedup parses those texts when it needs them);
- the search keys (`fields`) of each history's latest version, the only ones anything reads (`heads` copies
  them; a later registration computes its own); older versions keep NULL;
- `heads` computed once at the end from `schemas`, in SQL.

Every record is checked as `registry_from_records` checks it (the same parsers, the same messages naming the
line), and a history must come oldest first. Records arrive as a stream (a snapshot file is never held whole):
the memory this takes is one history and one chunk of rows, plus a number per history for the order check.
A duplicate topic or client record, which a snapshot never holds, is refused by the database's primary key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .._catalog import stored_fields
from .._errors import RegistryError, StorageError
from .._model import SchemaVersion
from .._names import NamespaceName, TopicName, parse_tenant
from ._rows import audit_row, client_row, namespace_policy_to_json, topic_policy_to_json
from ._snapshot_values import SnapshotError, _audit, _client, _field, _namespace_policy, _topic_policy, _version, _where
from ._sql import SqlStorage

CHUNK = 5_000  # rows per COPY / executemany
_REBUILD_HEADS = """
INSERT INTO heads (schema_id, version, type, timestamp, deleted, live, fields)
SELECT s.schema_id, s.version, s.type, s.timestamp, s.deleted,
       (SELECT count(*) FROM schemas c WHERE c.schema_id = h.schema_id AND c.version > h.tomb), s.fields
FROM (SELECT schema_id, max(version) AS latest, max(CASE WHEN deleted THEN version ELSE -1 END) AS tomb
      FROM schemas GROUP BY schema_id) h
JOIN schemas s ON s.schema_id = h.schema_id AND s.version = h.latest
"""
_SCHEMAS = ("schema_id", "version", "type", "data", "properties", "timestamp", "deleted", '"user"', "fields")
_FINGERPRINTS = ("schema_id", "version", "type", "deleted", "sha256", "equality")
_AUDIT = ("at", '"user"', "action", "target", "tenant", "namespace", "detail", "outcome")
_CLIENTS = ("topic", "role", "name", "subscription", "schema_type", "version", "connected_at", "replicator")


class _Loader:
    """The rows of one load, buffered per table and written a chunk at a time."""

    def __init__(self, storage: SqlStorage) -> None:
        self.storage = storage
        self.pending: dict[tuple[str, tuple[str, ...]], list[Sequence[object]]] = {}
        self.tenants: set[str] = set()
        self.namespaces: dict[str, Sequence[object]] = {}
        self.latest: dict[str, int] = {}  # schema id -> last version loaded (histories come oldest first)
        self.history: list[SchemaVersion] = []  # the history being read, until another one starts

    def add(self, table: str, columns: tuple[str, ...], row: Sequence[object]) -> None:
        rows = self.pending.setdefault((table, columns), [])
        rows.append(row)
        if len(rows) >= CHUNK:
            self.flush(table, columns)

    def flush(self, table: str, columns: tuple[str, ...]) -> None:
        rows = self.pending.pop((table, columns), [])
        if not rows:
            return
        try:
            self.storage.copy_rows(table, columns, rows)
        except StorageError as exc:  # a primary key: the same topic or client twice
            raise SnapshotError(f"the snapshot cannot be loaded into {table}: {exc}") from None

    def flush_all(self) -> None:
        self.end_history()
        if self.namespaces:
            for row in self.namespaces.values():
                self.add("namespaces", ("name", "tenant", "policy", "created_at"), row)
            self.namespaces.clear()
        for table, columns in list(self.pending):
            self.flush(table, columns)

    def version(self, entry: SchemaVersion, where: str) -> None:
        latest = self.latest.get(entry.topic)
        if latest is not None and entry.version <= latest:
            raise SnapshotError(
                f"{where}: version {entry.version} of {entry.topic} comes after version {latest}; "
                "versions must be listed oldest first"
            )
        self.latest[entry.topic] = entry.version
        if self.history and self.history[-1].topic != entry.topic:
            self.end_history()
        self.history.append(entry)

    def end_history(self) -> None:
        """Write the versions read of one history; only the last one gets its search keys (see the module)."""
        import json

        for position, entry in enumerate(self.history):
            last = position == len(self.history) - 1
            fields = "" if entry.deleted else (stored_fields(entry.type, entry.data) if last else None)
            properties = json.dumps(dict(entry.properties), sort_keys=True)
            self.add(
                "schemas",
                _SCHEMAS,
                (entry.topic, entry.version, str(entry.type), entry.data, properties, entry.timestamp, entry.deleted,
                 entry.user, fields),
            )  # fmt: skip
            digest = hashlib.sha256(entry.data).digest()
            self.add("fingerprints", _FINGERPRINTS, (entry.topic, entry.version, str(entry.type), entry.deleted,
                                                    digest, None))  # fmt: skip
        self.history = []


def bulk_load(
    storage: SqlStorage, records: Iterable[Mapping[str, Any]], load_one: Callable[[Mapping[str, Any]], None]
) -> None:
    """Load snapshot records (after the header) into `storage`, an empty SQL registry, inside the caller's
    transaction (`registry_from_records` holds one: all or nothing); `load_one` loads the few records written
    through the storage's own calls (review rules, proposals). SnapshotError names a bad record."""
    loader = _Loader(storage)
    kind: object = None
    for record in records:
        if record.get("kind") != kind:
            if kind in ("review_rules", "proposal") or record.get("kind") in ("review_rules", "proposal"):
                loader.flush_all()  # those go through the storage's own calls, between two chunks
            kind = record.get("kind")
        try:
            if kind == "tenant":
                tenant = parse_tenant(_field(record, "name", str))
                if tenant not in loader.tenants:
                    loader.tenants.add(tenant)
                    loader.add("tenants", ("name", "created_at"), (tenant, 0))
            elif kind == "namespace":
                ns = str(NamespaceName.parse(_field(record, "name", str)))
                policy = _namespace_policy(_field(record, "policy", dict, default={}))
                loader.namespaces[ns] = (ns, ns.split("/")[0], namespace_policy_to_json(policy), 0)
            elif kind == "topic":
                name = TopicName.parse(_field(record, "name", str))
                topic = str(name.base)
                loader.add("topics", ("name", "namespace", "created_at"), (topic, str(name.namespace_name), 0))
                policy = _field(record, "policy", dict, default=None)
                if policy is not None:
                    text = topic_policy_to_json(_topic_policy(policy))
                    loader.add("topic_policies", ("topic", "policy"), (topic, text))
            elif kind == "version":
                loader.version(_version(record), _where(record))
            elif kind == "client":
                loader.add("clients", _CLIENTS, client_row(_client(record)))
            elif kind == "audit":
                loader.add("audit", _AUDIT, audit_row(_audit(record)))
            else:
                load_one(record)  # review rules and proposals: few, through the storage's own calls
        except SnapshotError:
            raise
        except (RegistryError, KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"{_where(record)}: invalid {record.get('kind')} record: {exc}") from None
    loader.flush_all()
    try:
        storage.finish_bulk_load(_REBUILD_HEADS)
    except StorageError as exc:
        raise SnapshotError(f"the snapshot cannot be loaded: {exc}") from None
