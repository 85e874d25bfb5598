"""A registry in PostgreSQL (psycopg 3 and its connection pool), for registries several servers share: the
PostgreSQL part of the SQL storage (storage/_sql.py holds everything both engines share).

- Every write transaction first takes a transaction-scoped advisory lock of the database
  (`pg_advisory_xact_lock`), as SQLite's `BEGIN IMMEDIATE` takes the file's write lock: writers are serialised
  wherever they run.
- A write is acknowledged after COMMIT, which PostgreSQL makes durable (synchronous_commit, the default).
- Reads borrow a pooled connection in autocommit mode; the catalog reads one REPEATABLE READ snapshot.

Text columns sort with the "C" collation: names come back in the byte order SQLite gives, so exports of
both are identical. Connection settings are libpq's: the password from the URL, PGPASSWORD or ~/.pgpass
(never printed: errors show the location without it), `sslmode` and the rest passed through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .._errors import StorageError
from .._location import postgres_shown
from .._types import AVRO_PARSED_TYPES
from ._sql import Params, Row, SqlDialect, SqlStorage

# This backend's own table format. 1: the first. 2: `proposals`, schema change proposals (registry/proposals/).
SCHEMA_VERSION = 2
LOCK_KEY = 0x5053_4558  # "PSEX": the advisory lock every write of a registry database takes
POOL_SIZE = 8
CONNECT_TIMEOUT = 15  # seconds
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
CREATE TABLE IF NOT EXISTS proposals (
    id BIGSERIAL PRIMARY KEY, namespace TEXT COLLATE "C" NOT NULL, target TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL, updated_at BIGINT NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS proposals_by_namespace ON proposals (namespace, state);
CREATE INDEX IF NOT EXISTS proposals_by_target ON proposals (target);
"""
_CATALOG = """
SELECT t.name, t.namespace, h.version, h.type, h.timestamp, h.deleted, h.live, h.fields,
       CASE WHEN h.fields IS NULL AND NOT h.deleted THEN
           (SELECT s.data FROM schemas s WHERE s.schema_id = h.schema_id AND s.version = h.version) END
FROM topics t LEFT JOIN heads h ON h.schema_id = substr(t.name, strpos(t.name, '://') + 3)
ORDER BY split_part(t.namespace, '/', 1), t.namespace, t.name
"""
_LATEST = """
SELECT (SELECT max(version) FROM fingerprints WHERE schema_id = :sid),
       (SELECT max(version) FROM fingerprints WHERE schema_id = :sid AND deleted)
"""
_BY_BYTES = """
SELECT version, type, deleted, sha256, equality FROM fingerprints
WHERE schema_id = :sid AND sha256 = :sha256 AND version > :after AND type = :kind ORDER BY version
"""
_PARSED_TYPES = ", ".join(f"'{t}'" for t in sorted(AVRO_PARSED_TYPES))
_BY_EQUALITY = f"""
SELECT version, type, deleted, sha256, equality FROM fingerprints
WHERE schema_id = :sid AND version > :after AND type IN ({_PARSED_TYPES})
  AND (equality IS NULL OR (equality = :eq AND type = :kind))
ORDER BY version
"""
# `?` and `:name` (storage/_sql.py's placeholders) as psycopg's `%s` and `%(name)s`; a literal % doubled.
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


def _for_psycopg(sql: str) -> str:
    return _NAMED.sub(r"%(\1)s", sql.replace("%", "%%").replace("?", "%s"))


class PostgresDialect(SqlDialect):
    """Connections from a pool: a thread holds one for the length of its transaction, reads borrow one."""

    def __init__(self, dsn: str, *, pool_size: int = POOL_SIZE) -> None:
        try:
            import psycopg
            from psycopg import sql
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StorageError(
                "a postgresql:// registry needs psycopg 3: pip install 'pulsar-schema-explorer[postgres]'"
            ) from None
        self._errors: type[Exception] = psycopg.Error
        self._sql_module = sql
        self._unique: type[Exception] = psycopg.errors.UniqueViolation
        self.location = postgres_shown(dsn)
        self.what = f"the registry database {self.location}"
        self.where = f"the database {self.location}"
        self._sql: dict[str, str] = {}
        try:  # one plain connection first: libpq's reason at once, where the pool would retry until its timeout
            psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT).close()
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {self.what}: {exc}".strip()) from None
        self._pool = ConnectionPool(
            dsn, min_size=1, max_size=pool_size, kwargs={"autocommit": True}, open=False, name="schema-registry"
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - PoolTimeout carries libpq's reason in its cause
            self._pool.close()
            reason = exc.__cause__ or exc
            raise StorageError(f"cannot connect to {self.what}: {reason}") from None

    def _text(self, sql: str) -> str:
        found = self._sql.get(sql)
        if found is None:
            found = self._sql[sql] = _for_psycopg(sql)
        return found

    @contextmanager
    def begin(self) -> Iterator[Any]:
        try:
            with self._pool.connection() as db, db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                yield db
        except self._errors as exc:
            raise StorageError(f"cannot write {self.what}: {exc}") from None

    @contextmanager
    def savepoint(self, db: Any) -> Iterator[None]:
        with db.transaction():  # a savepoint: an exception undoes only this part
            yield

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        try:
            with self._pool.connection() as db, db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield db
        except self._errors as exc:
            raise StorageError(f"cannot read {self.what}: {exc}") from None

    @contextmanager
    def pin(self) -> Iterator[str | None]:
        """`pg_export_snapshot()` of a REPEATABLE READ transaction held open for the block: every reader that
        opens it (`snapshot_at`) sees exactly the state this transaction sees, wherever it runs."""
        try:
            with self._pool.connection() as db, db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                row = db.execute("SELECT pg_export_snapshot()").fetchone()
                if row is None:
                    raise StorageError(f"{self.what} exported no snapshot")
                yield str(row[0])
        except self._errors as exc:
            raise StorageError(f"cannot read {self.what}: {exc}") from None

    @contextmanager
    def snapshot_at(self, state: str | None) -> Iterator[Any]:
        if state is None:
            with self.snapshot() as db:
                yield db
            return
        try:
            with self._pool.connection() as db, db.transaction():
                db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                # SET takes no parameters: the id is quoted as a literal (a state no longer held fails here)
                db.execute(self._sql_module.SQL("SET TRANSACTION SNAPSHOT {}").format(self._sql_module.Literal(state)))
                yield db
        except self._errors as exc:
            raise StorageError(f"cannot read {self.what} at snapshot {state}: {exc}") from None

    def read(self, sql: str, params: Params) -> list[Row]:
        try:
            with self._pool.connection() as db:
                return list(db.execute(self._text(sql), params).fetchall())
        except self._errors as exc:
            raise StorageError(f"cannot read {self.what}: {exc}") from None

    def execute(self, db: Any, sql: str, params: Params = ()) -> Any:
        return db.execute(self._text(sql), params)

    def execute_many(self, db: Any, sql: str, rows: Iterable[Sequence[object]]) -> None:
        with db.cursor() as cursor:
            cursor.executemany(self._text(sql), list(rows))

    def copy_rows(self, db: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        """COPY FROM STDIN: one statement streams every row (an import of a million topics in minutes, where an
        INSERT per row took hours over the network)."""
        with db.cursor() as cursor, cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def is_duplicate_key(self, error: BaseException | None) -> bool:
        return isinstance(error, self._unique)

    def dedup_sql(self) -> tuple[str, str, str]:
        return _LATEST, _BY_BYTES, _BY_EQUALITY

    def catalog_sql(self) -> str:
        return _CATALOG

    format = SCHEMA_VERSION

    def has_table(self, db: Any, name: str) -> bool:
        found = db.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        return bool(found and found[0])

    def create_tables(self, db: Any) -> None:
        self._run_ddl(db)
        db.execute("INSERT INTO meta VALUES ('schema_version', %s), ('changes', '0')", (str(SCHEMA_VERSION),))

    def migrate(self, db: Any, found: int) -> None:
        self._run_ddl(db)  # the tables a newer format added, empty
        db.execute("UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def ids_given(self, db: Any, table: str) -> None:
        """A serial column's sequence does not see ids written by hand: move it past them."""
        db.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), GREATEST((SELECT max(id) FROM {table}), 1))"
        )

    def _run_ddl(self, db: Any) -> None:
        for statement in _DDL.strip().split(";"):
            if statement.strip():
                db.execute(statement)

    def close(self) -> None:
        self._pool.close()


class PostgresStorage(SqlStorage):
    """The registry in the PostgreSQL database `dsn` names; its tables are made only with `create`."""

    def __init__(self, dsn: str, *, create: bool = False, pool_size: int = POOL_SIZE) -> None:
        dialect = PostgresDialect(dsn, pool_size=pool_size)
        self.location = dialect.location
        try:
            super().__init__(dialect, create=create)
        except BaseException:
            dialect.close()
            raise
