"""A registry in PostgreSQL (psycopg 3 and its connection pool), for registries several servers share.

The same semantics as the SQLite file (storage/_sqlite.py), across processes and hosts:
- Every write runs in one transaction that first takes a transaction-scoped advisory lock of the database
  (`pg_advisory_xact_lock`), as SQLite's `BEGIN IMMEDIATE` takes the file's write lock: writers are
  serialised, so a registration's read-check-append and a policy's read-modify-write are atomic wherever
  they run. Appends also compare the latest version, and the primary key (schema_id, version) is the last
  line of defence: a duplicate becomes StaleHistoryError (re-read and retry), never a second version 5.
- A write is acknowledged after COMMIT, which PostgreSQL makes durable (synchronous_commit, the default).
- The change token is the `changes` row of `meta`, bumped in the committing transaction; every cached read
  compares it first (one indexed read), so a policy set through one server is what the next read of any
  other server sees (storage/_read_cache.py).

Text columns sort with the "C" collation: names come back in the byte order SQLite gives, so exports of
both are identical. Connection settings are libpq's: the password from the URL, PGPASSWORD or ~/.pgpass
(never printed: errors show the location without it), `sslmode` and the rest passed through.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from .._audit import AuditEntry
from .._catalog import CatalogSource, stored_fields
from .._errors import RegistryNotFoundError, StorageError
from .._model import ClientRecord, NamespacePolicy, SchemaVersion, TopicPolicy
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

SCHEMA_VERSION = 1  # this backend's own table format
LOCK_KEY = 0x5053_4558  # "PSEX": the advisory lock every write of a registry database takes
POOL_SIZE = 8
CONNECT_TIMEOUT = 15  # seconds
T = TypeVar("T")
_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tenants (name TEXT COLLATE "C" PRIMARY KEY, created_at BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (
    name TEXT COLLATE "C" PRIMARY KEY, tenant TEXT COLLATE "C" NOT NULL, policy TEXT NOT NULL,
    created_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS namespaces_by_tenant ON namespaces (tenant);
CREATE TABLE IF NOT EXISTS topics (
    name TEXT COLLATE "C" PRIMARY KEY, namespace TEXT COLLATE "C" NOT NULL, created_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS topics_by_namespace ON topics (namespace);
CREATE TABLE IF NOT EXISTS topic_policies (topic TEXT COLLATE "C" PRIMARY KEY, policy TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS schemas (
    schema_id TEXT COLLATE "C" NOT NULL, version BIGINT NOT NULL, type TEXT NOT NULL, data BYTEA NOT NULL,
    properties TEXT NOT NULL, timestamp BIGINT NOT NULL, deleted BOOLEAN NOT NULL, "user" TEXT NOT NULL,
    fields TEXT, PRIMARY KEY (schema_id, version));
CREATE TABLE IF NOT EXISTS clients (
    topic TEXT COLLATE "C" NOT NULL, role TEXT COLLATE "C" NOT NULL, name TEXT COLLATE "C" NOT NULL,
    subscription TEXT COLLATE "C" NOT NULL, schema_type TEXT, version BIGINT, connected_at BIGINT NOT NULL,
    replicator BOOLEAN NOT NULL, PRIMARY KEY (topic, role, name, subscription));
CREATE TABLE IF NOT EXISTS heads (
    schema_id TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL, type TEXT NOT NULL, timestamp BIGINT NOT NULL,
    deleted BOOLEAN NOT NULL, live BIGINT NOT NULL, fields TEXT);
CREATE TABLE IF NOT EXISTS fingerprints (
    schema_id TEXT COLLATE "C" NOT NULL, version BIGINT NOT NULL, type TEXT NOT NULL, deleted BOOLEAN NOT NULL,
    sha256 BYTEA NOT NULL, equality BYTEA, PRIMARY KEY (schema_id, version));
CREATE INDEX IF NOT EXISTS fingerprints_by_sha256 ON fingerprints (schema_id, sha256);
CREATE INDEX IF NOT EXISTS fingerprints_by_equality ON fingerprints (schema_id, equality);
CREATE INDEX IF NOT EXISTS fingerprints_tombstones ON fingerprints (schema_id, version) WHERE deleted;
CREATE TABLE IF NOT EXISTS audit (
    id BIGSERIAL PRIMARY KEY, at BIGINT NOT NULL, "user" TEXT NOT NULL, action TEXT NOT NULL,
    target TEXT COLLATE "C" NOT NULL, tenant TEXT COLLATE "C" NOT NULL, namespace TEXT COLLATE "C" NOT NULL,
    detail TEXT NOT NULL, outcome TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_target ON audit (target);
CREATE INDEX IF NOT EXISTS audit_by_namespace ON audit (namespace);
CREATE INDEX IF NOT EXISTS audit_by_tenant ON audit (tenant);
"""
_CATALOG = """
SELECT t.name, t.namespace, h.version, h.type, h.timestamp, h.deleted, h.live, h.fields,
       CASE WHEN h.fields IS NULL AND NOT h.deleted THEN
           (SELECT s.data FROM schemas s WHERE s.schema_id = h.schema_id AND s.version = h.version) END
FROM topics t LEFT JOIN heads h ON h.schema_id = substr(t.name, strpos(t.name, '://') + 3)
ORDER BY split_part(t.namespace, '/', 1), t.namespace, t.name
"""
_BUMP = "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'changes' RETURNING value"
_TOKEN = "SELECT value FROM meta WHERE key = 'changes'"
_LATEST = """
SELECT (SELECT max(version) FROM fingerprints WHERE schema_id = %(sid)s),
       (SELECT max(version) FROM fingerprints WHERE schema_id = %(sid)s AND deleted)
"""
_BY_BYTES = """
SELECT version, type, deleted, sha256, equality FROM fingerprints
WHERE schema_id = %s AND sha256 = %s AND version > %s AND type = %s ORDER BY version
"""
_PARSED_TYPES = ", ".join(f"'{t}'" for t in sorted(AVRO_PARSED_TYPES))
_BY_EQUALITY = f"""
SELECT version, type, deleted, sha256, equality FROM fingerprints
WHERE schema_id = %(sid)s AND version > %(after)s AND type IN ({_PARSED_TYPES})
  AND (equality IS NULL OR (equality = %(eq)s AND type = %(kind)s))
ORDER BY version
"""
_VERSION_COLUMNS = 'version, type, data, properties, timestamp, deleted, "user"'


def shown_location(dsn: str) -> str:
    """The location without its password, for messages (`postgresql://user@host:port/db?sslmode=...`)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - a DSN libpq cannot parse: show only its scheme
        return "postgresql://(unparseable location)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    db = parts.get("dbname") or ""
    return f"postgresql://{user}{host}{port}/{db}"


class PostgresStorage:
    """Connections from a pool: a thread holds one for the length of its transaction, reads borrow one."""

    def __init__(self, dsn: str, *, create: bool = False, pool_size: int = POOL_SIZE) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StorageError(
                "a postgresql:// registry needs psycopg 3: pip install 'pulsar-schema-explorer[postgres]'"
            ) from None
        self._errors: type[Exception] = psycopg.Error
        self._unique: type[Exception] = psycopg.errors.UniqueViolation
        self.location = shown_location(dsn)
        self.created = False  # whether this handle made the registry's tables (Registry.open stores its line then)
        self._local = threading.local()
        self.read_cache = ReadCache()
        try:  # one plain connection first: libpq's reason at once, where the pool would retry until its timeout
            psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT).close()
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to the registry database {self.location}: {exc}".strip()) from None
        self._pool = ConnectionPool(
            dsn, min_size=1, max_size=pool_size, kwargs={"autocommit": True}, open=False, name="schema-registry"
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - PoolTimeout carries libpq's reason in its cause
            self._pool.close()
            reason = exc.__cause__ or exc
            raise StorageError(f"cannot connect to the registry database {self.location}: {reason}") from None
        try:
            self._init_schema(create)
        except BaseException:
            self._pool.close()
            raise

    # --- connections and transactions -------------------------------------------------------------------

    def _init_schema(self, create: bool) -> None:
        with self._transaction() as db:
            found = db.execute("SELECT to_regclass('meta') IS NOT NULL").fetchone()
            if not found or not found[0]:
                if not create:
                    raise RegistryNotFoundError(
                        f"no registry in the database {self.location}: pass create=True (or use a command that "
                        "writes) to make one there"
                    )
                for statement in _DDL.strip().split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(
                    "INSERT INTO meta VALUES ('schema_version', %s), ('changes', '0'), ('equality_form', %s)",
                    (str(SCHEMA_VERSION), EQUALITY_FORM),
                )
                self.created = True
                return
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None or int(row[0]) > SCHEMA_VERSION:
                raise StorageError(
                    f"the registry database {self.location} was written by a newer version "
                    f"(format {row[0] if row else '?'}, this version reads {SCHEMA_VERSION})"
                )
            form = db.execute("SELECT value FROM meta WHERE key = 'equality_form'").fetchone()
            if form is None or form[0] != EQUALITY_FORM:
                db.execute("UPDATE fingerprints SET equality = NULL WHERE equality IS NOT NULL")
                db.execute(
                    "INSERT INTO meta VALUES ('equality_form', %s) ON CONFLICT (key) DO UPDATE SET value = %s",
                    (EQUALITY_FORM, EQUALITY_FORM),
                )

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One commit for every write inside (this thread's); nested ones are savepoints. The registry's
        write lock is taken up front, so what the body reads cannot change before it commits."""
        with self._transaction():
            yield

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            with held.transaction():  # a savepoint: an exception undoes only this part
                yield held
            return
        token: int | None = None
        done = False
        try:
            with self._pool.connection() as db:
                self._local.conn, self._local.changed, self._local.touched = db, False, set()
                try:
                    with db.transaction():
                        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                        yield db
                        if self._local.changed:
                            bumped = db.execute(_BUMP).fetchone()
                            token = int(bumped[0]) if bumped else 0
                            self.read_cache.committing(token, self._local.touched)
                    done = True
                finally:
                    self._local.conn = None
        except self._errors as exc:
            raise StorageError(f"cannot write the registry database {self.location}: {exc}") from None
        finally:
            if token is not None:
                self.read_cache.committed(token if done else None, self._local.touched)

    @contextmanager
    def _write(self, *, bump: bool = True, touches: Hashable | None = None) -> Iterator[Any]:
        """One write in its own transaction or as a savepoint of the caller's (see SqliteStorage._write)."""
        with self._transaction() as db:
            if bump:
                self._local.changed = True
            if touches is not None:
                self._local.touched.add(touches)
            yield db

    def _read(self, sql: str, params: Sequence[object] | Mapping[str, object] = ()) -> list[tuple[Any, ...]]:
        held = getattr(self._local, "conn", None)
        try:
            if held is not None:
                return cast(list[tuple[Any, ...]], held.execute(sql, params).fetchall())
            with self._pool.connection() as db:
                return db.execute(sql, params).fetchall()
        except self._errors as exc:
            raise StorageError(f"cannot read the registry database {self.location}: {exc}") from None

    def _cached(self, key: Hashable, load: Callable[[], T], size: Callable[[T], int]) -> T:
        """`load()`, or what it gave last time if nothing it read has changed since (_read_cache.py)."""
        token = self.change_token()
        writing = getattr(self._local, "conn", None) is not None
        if writing and key in self._local.touched:
            return load()
        value, generation = self.read_cache.lookup(token, key)
        if value is MISSING:
            value = load()
            if not writing:
                self.read_cache.store(generation, key, value, size(value))
        return cast(T, value)

    # --- schema histories -------------------------------------------------------------------------------

    def history(self, schema_id: str) -> list[SchemaVersion]:
        entries: tuple[SchemaVersion, ...] = self._cached(
            ("history", schema_id), lambda: self._history(schema_id), history_size
        )
        return list(entries)

    def _history(self, schema_id: str) -> tuple[SchemaVersion, ...]:
        rows = self._read(f"SELECT {_VERSION_COLUMNS} FROM schemas WHERE schema_id = %s ORDER BY version", (schema_id,))
        return tuple(schema_version_of(schema_id, row) for row in rows)

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan:
        ((latest, tomb),) = self._read(_LATEST, {"sid": schema_id})
        if latest is None or latest == tomb:
            return DedupScan(latest=latest, tombstone=tomb, rows=[])
        after = -1 if tomb is None else int(tomb)
        if equality is None:
            found = self._read(_BY_BYTES, (schema_id, sha256, after, str(kind)))
        else:
            found = self._read(_BY_EQUALITY, {"sid": schema_id, "after": after, "kind": str(kind), "eq": equality})
        rows = [fingerprint_of(row) for row in found]
        return DedupScan(latest=int(latest), tombstone=None if tomb is None else int(tomb), rows=rows)

    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]:
        rows = self._read(
            f"SELECT {_VERSION_COLUMNS} FROM schemas WHERE schema_id = %s AND version BETWEEN %s AND %s "
            "ORDER BY version",
            (schema_id, first, last),
        )
        return [schema_version_of(schema_id, row) for row in rows]

    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None:
        """Remember equality digests computed later (not a change: the token stays)."""
        with self._write(bump=False) as db, db.cursor() as cursor:
            cursor.executemany(
                "UPDATE fingerprints SET equality = %s WHERE schema_id = %s AND version = %s",
                [(digest, schema_id, version) for version, digest in equalities.items()],
            )

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        self.append_indexed(entry, expected_latest, None)

    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None:
        fields = "" if entry.deleted else stored_fields(entry.type, entry.data)
        found = fingerprint(entry, equality)
        try:
            with self._write(touches=("history", entry.topic)) as db:
                sql = "SELECT max(version) FROM schemas WHERE schema_id = %s"
                (latest,) = db.execute(sql, (entry.topic,)).fetchone()
                if latest != expected_latest:
                    raise StaleHistoryError(entry.topic)
                db.execute(
                    f"INSERT INTO schemas ({_VERSION_COLUMNS}, schema_id, fields) VALUES (%s, %s, %s, %s, %s, %s, %s, "
                    "%s, %s)",
                    (entry.version, str(entry.type), entry.data, json.dumps(dict(entry.properties), sort_keys=True),
                     entry.timestamp, entry.deleted, entry.user, entry.topic, fields),
                )  # fmt: skip
                live = 0
                if not entry.deleted:
                    head = db.execute("SELECT deleted, live FROM heads WHERE schema_id = %s", (entry.topic,)).fetchone()
                    live = 1 if head is None or head[0] else int(head[1]) + 1
                db.execute(
                    "INSERT INTO heads VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (schema_id) DO UPDATE SET "
                    "version = excluded.version, type = excluded.type, timestamp = excluded.timestamp, "
                    "deleted = excluded.deleted, live = excluded.live, fields = excluded.fields",
                    (entry.topic, entry.version, str(entry.type), entry.timestamp, entry.deleted, live, fields),
                )
                db.execute(
                    "INSERT INTO fingerprints VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (schema_id, version) "
                    "DO UPDATE SET type = excluded.type, deleted = excluded.deleted, sha256 = excluded.sha256, "
                    "equality = excluded.equality",
                    (entry.topic, entry.version, str(entry.type), entry.deleted, found.sha256, found.equality),
                )
        except StorageError as exc:
            if isinstance(exc.__context__, self._unique):  # the primary key caught a race the lock did not
                raise StaleHistoryError(entry.topic) from None
            raise

    def drop(self, schema_id: str) -> bool:
        with self._write(touches=("history", schema_id)) as db:
            db.execute("DELETE FROM heads WHERE schema_id = %s", (schema_id,))
            db.execute("DELETE FROM fingerprints WHERE schema_id = %s", (schema_id,))
            return bool(db.execute("DELETE FROM schemas WHERE schema_id = %s", (schema_id,)).rowcount > 0)

    # --- metadata ---------------------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM tenants ORDER BY name")]

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        with self._write() as db:
            sql = "INSERT INTO tenants VALUES (%s, %s) ON CONFLICT DO NOTHING"
            return bool(db.execute(sql, (tenant, created_at)).rowcount > 0)

    def namespaces(self, tenant: str) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM namespaces WHERE tenant = %s ORDER BY name", (tenant,))]

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self._cached(("namespace", namespace), lambda: self._namespace_policy(namespace), lambda _: 256)

    def _namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        rows = self._read("SELECT policy FROM namespaces WHERE name = %s", (namespace,))
        return namespace_policy_from_json(str(rows[0][0])) if rows else None

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        with self._write(touches=("namespace", namespace)) as db:
            db.execute(
                "INSERT INTO namespaces VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET "
                "policy = excluded.policy",
                (namespace, namespace.split("/")[0], namespace_policy_to_json(policy), created_at),
            )

    def topics(self, namespace: str) -> list[str]:
        rows = self._read("SELECT name FROM topics WHERE namespace = %s ORDER BY name", (namespace,))
        return [str(r[0]) for r in rows]

    def has_topic(self, topic: str) -> bool:
        return bool(self._read("SELECT 1 FROM topics WHERE name = %s", (topic,)))

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        with self._write() as db:
            sql = "INSERT INTO topics VALUES (%s, %s, %s) ON CONFLICT DO NOTHING"
            return bool(db.execute(sql, (topic, namespace, created_at)).rowcount > 0)

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        rows = self._read("SELECT policy FROM topic_policies WHERE topic = %s", (topic,))
        return topic_policy_from_json(str(rows[0][0])) if rows else None

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        with self._write() as db:
            if policy is None:
                db.execute("DELETE FROM topic_policies WHERE topic = %s", (topic,))
            else:
                db.execute(
                    "INSERT INTO topic_policies VALUES (%s, %s) ON CONFLICT (topic) DO UPDATE SET policy = "
                    "excluded.policy",
                    (topic, topic_policy_to_json(policy)),
                )

    def setting(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = %s", (f"setting.{key}",))
        return str(rows[0][0]) if rows else None

    def put_setting(self, key: str, value: str) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (f"setting.{key}", value),
            )

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        sql = "SELECT topic, role, name, subscription, schema_type, version, connected_at, replicator FROM clients"
        params: list[object] = []
        if topics is not None:
            if not topics:
                return []
            sql += " WHERE topic = ANY(%s)"
            params = [list(topics)]
        rows = self._read(sql + " ORDER BY topic, role, name, subscription", params)
        return [client_of(row) for row in rows]

    def put_client(self, client: ClientRecord) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO clients VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (topic, role, name, "
                "subscription) DO UPDATE SET schema_type = excluded.schema_type, version = excluded.version, "
                "connected_at = excluded.connected_at, replicator = excluded.replicator",
                client_row(client),
            )

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        with self._write() as db:
            if role is None:
                return int(db.execute("DELETE FROM clients WHERE topic = %s AND name = %s", (topic, name)).rowcount)
            sql = "DELETE FROM clients WHERE topic = %s AND name = %s AND role = %s"
            return int(db.execute(sql, (topic, name, role)).rowcount)

    def change_token(self) -> int:
        rows = self._read(_TOKEN)
        return int(rows[0][0]) if rows else 0

    def catalog_source(self) -> CatalogSource:
        """Every topic's catalog facts from one snapshot (a REPEATABLE READ, read-only transaction)."""
        try:
            with self._pool.connection() as db, db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                token = db.execute(_TOKEN).fetchone()
                rows = db.execute(_CATALOG).fetchall()
                namespaces = db.execute("SELECT name, policy FROM namespaces").fetchall()
                policies = db.execute("SELECT topic, policy FROM topic_policies").fetchall()
                clients = db.execute("SELECT topic, role, count(*) FROM clients GROUP BY topic, role").fetchall()
        except self._errors as exc:
            raise StorageError(f"cannot read the registry database {self.location}: {exc}") from None
        return CatalogSource(
            token=int(token[0]) if token else 0,
            rows=[(*r[:8], None if r[8] is None else bytes(r[8])) for r in rows],
            namespace_policies={str(n): namespace_policy_from_json(str(p)) for n, p in namespaces},
            topic_policies={str(t): topic_policy_from_json(str(p)) for t, p in policies},
            clients={(str(t), str(r)): int(n) for t, r, n in clients},
        )

    # --- audit trail ------------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        with self._write(bump=False) as db:
            db.execute(
                'INSERT INTO audit (at, "user", action, target, tenant, namespace, detail, outcome) '
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                audit_row(entry),
            )

    def audit(self, target: str | None, limit: int) -> list[AuditEntry]:
        where, params = audit_query(target, limit, "%s")
        rows = self._read('SELECT at, "user", action, target, detail, outcome FROM audit' + where, params)
        return [audit_entry_of(row) for row in rows]

    def close(self) -> None:
        self._pool.close()
