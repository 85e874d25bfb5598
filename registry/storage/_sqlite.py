"""The embedded registry file: SQLite (stdlib), WAL, one transaction per write.

Several processes (app, server, CLI) may share one file. Appends run in `BEGIN IMMEDIATE` and compare the
latest version before inserting, so two writers can never produce a duplicate or a missing version number;
the primary key (schema_id, version) is the last line of defence.

`transaction()` lets the facade make one commit of a whole write: its reads, its writes and its audit line
(one fsync instead of one per statement group). Inside it, each storage write is a savepoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from .._audit import AuditEntry
from .._catalog import CatalogSource, stored_fields
from .._errors import StorageError
from .._model import (
    ClientRecord,
    NamespacePolicy,
    SchemaVersion,
    TopicPolicy,
)
from .._types import AVRO_PARSED_TYPES, SchemaType
from ._base import DedupScan, StaleHistoryError, fingerprint
from ._read_cache import MISSING, ReadCache
from ._rows import (
    EQUALITY_FORM,
    audit_entry_of,
    audit_query,
    audit_row,
    client_of,
    client_row,
    fingerprint_of,
    history_size,
    namespace_policy_from_json,
    namespace_policy_to_json,
    schema_version_of,
    topic_policy_from_json,
    topic_policy_to_json,
)

# 1: the first format. 2: search keys stored at registration (`schemas.fields`), each history's latest entry
# kept in `heads` (the catalog reads 100k topics in one query), and the `audit` table. 3: `fingerprints`,
# what dedup needs of each version without its text (the SHA-256 of the data; the equality digest of AVRO,
# JSON and PROTOBUF versions, NULL until known).
SCHEMA_VERSION = 3
T = TypeVar("T")
_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tenants (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (
    name TEXT PRIMARY KEY, tenant TEXT NOT NULL, policy TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS namespaces_by_tenant ON namespaces (tenant);
CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, namespace TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS topics_by_namespace ON topics (namespace);
CREATE TABLE IF NOT EXISTS topic_policies (topic TEXT PRIMARY KEY, policy TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS schemas (
    schema_id TEXT NOT NULL, version INTEGER NOT NULL, type TEXT NOT NULL, data BLOB NOT NULL,
    properties TEXT NOT NULL, timestamp INTEGER NOT NULL, deleted INTEGER NOT NULL, user TEXT NOT NULL,
    fields TEXT, PRIMARY KEY (schema_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS clients (
    topic TEXT NOT NULL, role TEXT NOT NULL, name TEXT NOT NULL, subscription TEXT NOT NULL,
    schema_type TEXT, version INTEGER, connected_at INTEGER NOT NULL, replicator INTEGER NOT NULL,
    PRIMARY KEY (topic, role, name, subscription));
CREATE TABLE IF NOT EXISTS heads (
    schema_id TEXT PRIMARY KEY, version INTEGER NOT NULL, type TEXT NOT NULL, timestamp INTEGER NOT NULL,
    deleted INTEGER NOT NULL, live INTEGER NOT NULL, fields TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fingerprints (
    schema_id TEXT NOT NULL, version INTEGER NOT NULL, type TEXT NOT NULL, deleted INTEGER NOT NULL,
    sha256 BLOB NOT NULL, equality BLOB, PRIMARY KEY (schema_id, version)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fingerprints_by_sha256 ON fingerprints (schema_id, sha256);
CREATE INDEX IF NOT EXISTS fingerprints_by_equality ON fingerprints (schema_id, equality);
CREATE INDEX IF NOT EXISTS fingerprints_tombstones ON fingerprints (schema_id, version) WHERE deleted;
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, user TEXT NOT NULL, action TEXT NOT NULL,
    target TEXT NOT NULL, tenant TEXT NOT NULL, namespace TEXT NOT NULL, detail TEXT NOT NULL,
    outcome TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_target ON audit (target);
CREATE INDEX IF NOT EXISTS audit_by_namespace ON audit (namespace);
CREATE INDEX IF NOT EXISTS audit_by_tenant ON audit (tenant);
"""
# `heads` rebuilt from `schemas`: per history, the latest entry and how many entries follow the last tombstone.
_REBUILD_HEADS = """
INSERT OR REPLACE INTO heads
WITH h AS (
    SELECT schema_id, max(version) AS latest, max(CASE WHEN deleted THEN version ELSE -1 END) AS tomb
    FROM schemas GROUP BY schema_id)
SELECT s.schema_id, s.version, s.type, s.timestamp, s.deleted,
       (SELECT count(*) FROM schemas c WHERE c.schema_id = h.schema_id AND c.version > h.tomb), s.fields
FROM h JOIN schemas s ON s.schema_id = h.schema_id AND s.version = h.latest
"""
# Every topic with its history's head; the schema text only where the search keys were not stored.
_CATALOG = """
SELECT t.name, t.namespace, h.version, h.type, h.timestamp, h.deleted, h.live, h.fields,
       CASE WHEN h.fields IS NULL AND NOT h.deleted THEN
           (SELECT s.data FROM schemas s WHERE s.schema_id = h.schema_id AND s.version = h.version) END
FROM topics t LEFT JOIN heads h ON h.schema_id = substr(t.name, instr(t.name, '://') + 3)
ORDER BY substr(t.namespace, 1, instr(t.namespace, '/') - 1), t.namespace, t.name
"""


_BUMP = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'changes' RETURNING value"
_TOKEN = "SELECT value FROM meta WHERE key = 'changes'"
# The last version and the last tombstone of a history, then the live rows dedup must look at (_storage.DedupScan).
# Each is an index seek (the planner is told which index: files are not ANALYZEd), so dedup costs the same
# whatever the history's length.
_LATEST = """
SELECT (SELECT max(version) FROM fingerprints WHERE schema_id = ?1),
       (SELECT max(version) FROM fingerprints INDEXED BY fingerprints_tombstones WHERE schema_id = ?1 AND deleted)
"""
_BY_BYTES = """
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_sha256
WHERE schema_id = ? AND sha256 = ? AND version > ? AND type = ? ORDER BY version
"""
_PARSED_TYPES = ", ".join(repr(str(t)) for t in sorted(AVRO_PARSED_TYPES))
_BY_EQUALITY = f"""
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_equality
WHERE schema_id = ?1 AND equality IS NULL AND version > ?2 AND type IN ({_PARSED_TYPES})
UNION ALL
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_equality
WHERE schema_id = ?1 AND equality = ?4 AND version > ?2 AND type = ?3 AND type IN ({_PARSED_TYPES})
ORDER BY version
"""
_SAVEPOINT_NAMES = 64


class SqliteStorage:
    """One connection per thread (Streamlit and uvicorn call from several threads)."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 30_000) -> None:
        self.path = Path(path).expanduser()
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.read_cache = ReadCache()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the directory of the registry file {str(self.path)!r}: {exc}") from None
        self._init_schema()

    # --- connections ------------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        try:
            db = sqlite3.connect(
                self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
            db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open the registry file {str(self.path)!r}: {exc}") from None
        self._local.db = db
        with self._lock:
            self._all.append(db)
        return db

    def _init_schema(self) -> None:
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            for statement in _DDL.strip().split(";"):
                if statement.strip():
                    db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            db.execute("INSERT OR IGNORE INTO meta VALUES ('changes', '0')")
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                db.execute("ROLLBACK")
                raise StorageError(
                    f"the registry file {str(self.path)!r} was written by a newer version "
                    f"(format {row[0]}, this version reads {SCHEMA_VERSION})"
                )
            elif int(row[0]) < SCHEMA_VERSION:
                _migrate(db, int(row[0]))
                db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
            _forget_stale_equalities(db)
            _refresh_stale_fields(db)
            db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StorageError(f"{str(self.path)!r} is not a usable registry file: {exc}") from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One commit for every write inside (this thread's); nested ones are savepoints. The write lock is
        taken up front, so what the body reads cannot change before it commits."""
        with self._transaction():
            yield

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        depth: int = getattr(self._local, "depth", 0)
        if depth:
            savepoint = f"w{depth % _SAVEPOINT_NAMES}"
            db.execute(f"SAVEPOINT {savepoint}")
            self._local.depth = depth + 1
            try:
                yield db
            except BaseException:
                if db.in_transaction:
                    db.execute(f"ROLLBACK TO {savepoint}")
                    db.execute(f"RELEASE {savepoint}")
                raise
            finally:
                self._local.depth = depth
            db.execute(f"RELEASE {savepoint}")
            return
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StorageError(f"the registry file {str(self.path)!r} is busy or unwritable: {exc}") from None
        self._local.depth, self._local.changed, self._local.touched = 1, False, set()
        try:
            yield db
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            self._local.depth = 0
        token = None
        done = False
        try:
            if self._local.changed:
                token = int(db.execute(_BUMP).fetchone()[0])
                self.read_cache.committing(token, self._local.touched)
            db.execute("COMMIT")
            done = True
        except sqlite3.DatabaseError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StorageError(f"cannot write the registry file {str(self.path)!r}: {exc}") from None
        finally:
            if token is not None:
                self.read_cache.committed(token if done else None, self._local.touched)

    @contextmanager
    def _write(self, *, bump: bool = True, touches: Hashable | None = None) -> Iterator[sqlite3.Connection]:
        """One write, in its own transaction or as a savepoint of the caller's, taking the write lock up front
        so read-check-insert is atomic.

        `bump` advances the change token when the transaction commits (every write but the audit trail's);
        `touches` names the read-cache entry the write changes (dropped when it commits)."""
        with self._transaction() as db:
            if bump:
                self._local.changed = True
            if touches is not None:
                self._local.touched.add(touches)
            yield db

    def _cached(self, key: Hashable, load: Callable[[], T], size: Callable[[T], int]) -> T:
        """`load()`, or what it gave last time if nothing it read has changed since (_read_cache.py)."""
        token = self.change_token()
        writing = getattr(self._local, "depth", 0)
        if writing and key in self._local.touched:
            return load()  # this transaction's own write, not committed yet
        value, generation = self.read_cache.lookup(token, key)
        if value is MISSING:
            value = load()
            if not writing:
                self.read_cache.store(generation, key, value, size(value))
        return cast(T, value)

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._connect().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot read the registry file {str(self.path)!r}: {exc}") from None

    # --- schema histories -------------------------------------------------------------------------------

    def history(self, schema_id: str) -> list[SchemaVersion]:
        entries: tuple[SchemaVersion, ...] = self._cached(
            ("history", schema_id), lambda: self._history(schema_id), history_size
        )
        return list(entries)

    def _history(self, schema_id: str) -> tuple[SchemaVersion, ...]:
        rows = self._read(
            "SELECT version, type, data, properties, timestamp, deleted, user FROM schemas "
            "WHERE schema_id = ? ORDER BY version",
            (schema_id,),
        )
        return tuple(schema_version_of(schema_id, row) for row in rows)

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan:
        """Two indexed reads of small rows, none of the schema text; filtered in SQLite, not in Python."""
        db = self._connect()
        try:
            latest, tomb = db.execute(_LATEST, (schema_id,)).fetchone()
            if latest is None or latest == tomb:
                return DedupScan(latest=latest, tombstone=tomb, rows=[])
            after = -1 if tomb is None else int(tomb)
            if equality is None:
                found = db.execute(_BY_BYTES, (schema_id, sha256, after, str(kind))).fetchall()
            else:
                found = db.execute(_BY_EQUALITY, (schema_id, after, str(kind), equality)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot read the registry file {str(self.path)!r}: {exc}") from None
        rows = [fingerprint_of(row) for row in found]
        return DedupScan(latest=int(latest), tombstone=None if tomb is None else int(tomb), rows=rows)

    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]:
        rows = self._read(
            "SELECT version, type, data, properties, timestamp, deleted, user FROM schemas "
            "WHERE schema_id = ? AND version BETWEEN ? AND ? ORDER BY version",
            (schema_id, first, last),
        )
        return [schema_version_of(schema_id, row) for row in rows]

    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None:
        """Remember equality digests computed later (not a change: the token stays)."""
        with self._write(bump=False) as db:
            db.executemany(
                "UPDATE fingerprints SET equality = ? WHERE schema_id = ? AND version = ?",
                [(digest, schema_id, version) for version, digest in equalities.items()],
            )

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        self.append_indexed(entry, expected_latest, None)

    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None:
        fields = "" if entry.deleted else stored_fields(entry.type, entry.data)
        found = fingerprint(entry, equality)
        with self._write(touches=("history", entry.topic)) as db:
            (latest,) = db.execute("SELECT max(version) FROM schemas WHERE schema_id = ?", (entry.topic,)).fetchone()
            if latest != expected_latest:
                raise StaleHistoryError(entry.topic)
            db.execute(
                "INSERT INTO schemas (schema_id, version, type, data, properties, timestamp, deleted, user, fields) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.topic,
                    entry.version,
                    str(entry.type),
                    entry.data,
                    json.dumps(dict(entry.properties), sort_keys=True),
                    entry.timestamp,
                    int(entry.deleted),
                    entry.user,
                    fields,
                ),
            )
            live = 0
            if not entry.deleted:
                head = db.execute("SELECT deleted, live FROM heads WHERE schema_id = ?", (entry.topic,)).fetchone()
                live = 1 if head is None or head[0] else int(head[1]) + 1
            db.execute(
                "INSERT OR REPLACE INTO heads VALUES (?, ?, ?, ?, ?, ?, ?)",
                (entry.topic, entry.version, str(entry.type), entry.timestamp, int(entry.deleted), live, fields),
            )
            db.execute(
                "INSERT OR REPLACE INTO fingerprints VALUES (?, ?, ?, ?, ?, ?)",
                (entry.topic, entry.version, str(entry.type), int(entry.deleted), found.sha256, found.equality),
            )

    def drop(self, schema_id: str) -> bool:
        with self._write(touches=("history", schema_id)) as db:
            db.execute("DELETE FROM heads WHERE schema_id = ?", (schema_id,))
            db.execute("DELETE FROM fingerprints WHERE schema_id = ?", (schema_id,))
            return db.execute("DELETE FROM schemas WHERE schema_id = ?", (schema_id,)).rowcount > 0

    # --- metadata ---------------------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM tenants ORDER BY name")]

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        with self._write() as db:
            return db.execute("INSERT OR IGNORE INTO tenants VALUES (?, ?)", (tenant, created_at)).rowcount > 0

    def namespaces(self, tenant: str) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM namespaces WHERE tenant = ? ORDER BY name", (tenant,))]

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self._cached(("namespace", namespace), lambda: self._namespace_policy(namespace), lambda _: 256)

    def _namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        rows = self._read("SELECT policy FROM namespaces WHERE name = ?", (namespace,))
        return namespace_policy_from_json(str(rows[0][0])) if rows else None

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        with self._write(touches=("namespace", namespace)) as db:
            db.execute(
                "INSERT INTO namespaces VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET policy = excluded.policy",
                (namespace, namespace.split("/")[0], namespace_policy_to_json(policy), created_at),
            )

    def topics(self, namespace: str) -> list[str]:
        return [
            str(r[0]) for r in self._read("SELECT name FROM topics WHERE namespace = ? ORDER BY name", (namespace,))
        ]

    def has_topic(self, topic: str) -> bool:
        return bool(self._read("SELECT 1 FROM topics WHERE name = ?", (topic,)))

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        with self._write() as db:
            return (
                db.execute("INSERT OR IGNORE INTO topics VALUES (?, ?, ?)", (topic, namespace, created_at)).rowcount > 0
            )

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        rows = self._read("SELECT policy FROM topic_policies WHERE topic = ?", (topic,))
        return topic_policy_from_json(str(rows[0][0])) if rows else None

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        with self._write() as db:
            if policy is None:
                db.execute("DELETE FROM topic_policies WHERE topic = ?", (topic,))
            else:
                db.execute("INSERT OR REPLACE INTO topic_policies VALUES (?, ?)", (topic, topic_policy_to_json(policy)))

    def setting(self, key: str) -> str | None:
        """A registry-wide setting (the Pulsar version profile), kept in `meta` under `setting.<key>`."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", (f"setting.{key}",))
        return str(rows[0][0]) if rows else None

    def put_setting(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"setting.{key}", value))

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        sql = "SELECT topic, role, name, subscription, schema_type, version, connected_at, replicator FROM clients"
        params: list[object] = []
        if topics is not None:
            if not topics:
                return []
            sql += f" WHERE topic IN ({','.join('?' * len(topics))})"
            params = list(topics)
        rows = self._read(sql + " ORDER BY topic, role, name, subscription", params)
        return [client_of(row) for row in rows]

    def put_client(self, client: ClientRecord) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO clients VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                client_row(client),
            )

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        with self._write() as db:
            if role is None:
                return db.execute("DELETE FROM clients WHERE topic = ? AND name = ?", (topic, name)).rowcount
            return db.execute(
                "DELETE FROM clients WHERE topic = ? AND name = ? AND role = ?", (topic, name, role)
            ).rowcount

    def change_token(self) -> int:
        rows = self._read(_TOKEN)
        return int(rows[0][0]) if rows else 0

    def catalog_source(self) -> CatalogSource:
        """Every topic's catalog facts in one read transaction (one consistent snapshot, a handful of queries)."""
        db = self._connect()
        try:
            db.execute("BEGIN")
            try:
                token = db.execute("SELECT value FROM meta WHERE key = 'changes'").fetchone()
                rows = db.execute(_CATALOG).fetchall()
                namespaces = db.execute("SELECT name, policy FROM namespaces").fetchall()
                policies = db.execute("SELECT topic, policy FROM topic_policies").fetchall()
                clients = db.execute("SELECT topic, role, count(*) FROM clients GROUP BY topic, role").fetchall()
            finally:
                db.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot read the registry file {str(self.path)!r}: {exc}") from None
        return CatalogSource(
            token=int(token[0]) if token else 0,
            rows=rows,
            namespace_policies={str(n): namespace_policy_from_json(str(p)) for n, p in namespaces},
            topic_policies={str(t): topic_policy_from_json(str(p)) for t, p in policies},
            clients={(str(t), str(r)): int(n) for t, r, n in clients},
        )

    # --- audit trail ------------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        with self._write(bump=False) as db:
            db.execute(
                "INSERT INTO audit (at, user, action, target, tenant, namespace, detail, outcome) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                audit_row(entry),
            )

    def audit(self, target: str | None, limit: int) -> list[AuditEntry]:
        where, params = audit_query(target, limit, "?")
        rows = self._read("SELECT at, user, action, target, detail, outcome FROM audit" + where, params)
        return [audit_entry_of(row) for row in rows]

    def close(self) -> None:
        with self._lock:
            for db in self._all:
                try:
                    db.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
        self._local = threading.local()


def _migrate(db: sqlite3.Connection, found: int) -> None:
    """Bring an older file (format `found`) to SCHEMA_VERSION inside the opening transaction (missing tables
    came from _DDL)."""
    columns = {str(row[1]) for row in db.execute("PRAGMA table_info(schemas)")}
    if "fields" not in columns:
        db.execute("ALTER TABLE schemas ADD COLUMN fields TEXT")
        rows = db.execute("SELECT schema_id, version, type, data, deleted FROM schemas").fetchall()
        db.executemany(
            "UPDATE schemas SET fields = ? WHERE schema_id = ? AND version = ?",
            [("" if dl else stored_fields(SchemaType(str(t)), bytes(d)), sid, v) for sid, v, t, d, dl in rows],
        )
    if found < 2:
        rebuild_heads(db)
    else:
        add_fingerprints(db)


def _forget_stale_equalities(db: sqlite3.Connection) -> None:
    """Inside the opening transaction: drop equality digests made with an older equality key."""
    row = db.execute("SELECT value FROM meta WHERE key = 'equality_form'").fetchone()
    if row is not None and str(row[0]) == EQUALITY_FORM:
        return
    db.execute("UPDATE fingerprints SET equality = NULL WHERE equality IS NOT NULL")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('equality_form', ?)", (EQUALITY_FORM,))


# Which search keys (`stored_fields`) the stored `fields` were made with. Bump it whenever read_fields learns
# to read more; files with another mark have the fields of the types it changed recomputed on opening.
# 2: fields of KEY_VALUE parts, PROTOBUF and PROTOBUF_NATIVE schemas (before: none).
FIELDS_FORM = "2"
_FIELDS_FORM_TYPES = (SchemaType.KEY_VALUE, SchemaType.PROTOBUF, SchemaType.PROTOBUF_NATIVE)


def _refresh_stale_fields(db: sqlite3.Connection) -> None:
    """Inside the opening transaction: recompute the search keys that an older `read_fields` left empty."""
    row = db.execute("SELECT value FROM meta WHERE key = 'fields_form'").fetchone()
    if row is not None and str(row[0]) == FIELDS_FORM:
        return
    marks = ", ".join("?" * len(_FIELDS_FORM_TYPES))
    rows = db.execute(
        f"SELECT schema_id, version, type, data FROM schemas WHERE deleted = 0 AND type IN ({marks})",
        [str(t) for t in _FIELDS_FORM_TYPES],
    ).fetchall()
    db.executemany(
        "UPDATE schemas SET fields = ? WHERE schema_id = ? AND version = ?",
        [(stored_fields(SchemaType(str(t)), bytes(d)), sid, v) for sid, v, t, d in rows],
    )
    db.execute(
        "UPDATE heads SET fields = (SELECT s.fields FROM schemas s WHERE s.schema_id = heads.schema_id "
        f"AND s.version = heads.version) WHERE deleted = 0 AND type IN ({marks})",
        [str(t) for t in _FIELDS_FORM_TYPES],
    )
    db.execute("INSERT OR REPLACE INTO meta VALUES ('fields_form', ?)", (FIELDS_FORM,))


def rebuild_heads(db: sqlite3.Connection) -> None:
    """Recompute `heads` from `schemas` (migration, and bulk loaders that write `schemas` directly), and add
    the fingerprints of versions that have none."""
    db.execute("DELETE FROM heads")
    db.execute(_REBUILD_HEADS)
    add_fingerprints(db)


def add_fingerprints(db: sqlite3.Connection) -> None:
    """Fingerprint every version that has none: the data's SHA-256 now (cheap); the equality digest stays
    unknown (NULL) until a registration on that topic parses the version anyway and stores it."""
    rows = db.execute(
        "SELECT s.schema_id, s.version, s.type, s.deleted, s.data FROM schemas s WHERE NOT EXISTS "
        "(SELECT 1 FROM fingerprints f WHERE f.schema_id = s.schema_id AND f.version = s.version)"
    )
    db.executemany(
        "INSERT INTO fingerprints VALUES (?, ?, ?, ?, ?, NULL)",
        ((sid, v, t, dl, hashlib.sha256(bytes(d)).digest()) for sid, v, t, dl, d in rows),
    )
