"""The embedded registry file: SQLite (stdlib), WAL from the first write, one transaction per write; the SQLite
part of the SQL storage.

Several processes (app, server, CLI) may share one file. A write transaction is `BEGIN IMMEDIATE`, which takes
the file's write lock up front; the rest (appends that compare the latest version, savepoints, the change token)
is the shared SQL storage's (storage/_sql.py). One connection per thread: Streamlit and uvicorn call from several.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .._catalog import stored_fields
from .._errors import StorageError
from .._types import AVRO_PARSED_TYPES, SchemaType
from ._sql import Params, Row, SqlDialect, SqlStorage

# 1: the first format. 2: search keys stored at registration (`schemas.fields`), each history's latest entry
# kept in `heads` (the catalog reads 100k topics in one query), and the `audit` table. 3: `fingerprints`,
# what dedup needs of each version without its text (the SHA-256 of the data; the equality digest of AVRO,
# JSON and PROTOBUF versions, NULL until known). 4: `proposals`, schema change proposals (registry/proposals/).
SCHEMA_VERSION = 4
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
CREATE TABLE IF NOT EXISTS proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, target TEXT NOT NULL, state TEXT NOT NULL,
    updated_at INTEGER NOT NULL, doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS proposals_by_namespace ON proposals (namespace, state);
CREATE INDEX IF NOT EXISTS proposals_by_target ON proposals (target);
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


# The last version and the last tombstone of a history, then the live rows dedup must look at (_base.DedupScan).
# Each is an index seek (the planner is told which index: files are not ANALYZEd), so dedup costs the same
# whatever the history's length.
_LATEST = """
SELECT (SELECT max(version) FROM fingerprints WHERE schema_id = :sid),
       (SELECT max(version) FROM fingerprints INDEXED BY fingerprints_tombstones WHERE schema_id = :sid AND deleted)
"""
_BY_BYTES = """
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_sha256
WHERE schema_id = :sid AND sha256 = :sha256 AND version > :after AND type = :kind ORDER BY version
"""
_PARSED_TYPES = ", ".join(repr(str(t)) for t in sorted(AVRO_PARSED_TYPES))
_BY_EQUALITY = f"""
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_equality
WHERE schema_id = :sid AND equality IS NULL AND version > :after AND type IN ({_PARSED_TYPES})
UNION ALL
SELECT version, type, deleted, sha256, equality FROM fingerprints INDEXED BY fingerprints_by_equality
WHERE schema_id = :sid AND equality = :eq AND version > :after AND type = :kind AND type IN ({_PARSED_TYPES})
ORDER BY version
"""
_SAVEPOINT_NAMES = 64


class _InUse:
    """The calls using a dialect's connections right now, so that `close` waits for them to end.

    sqlite3 lets any thread use a connection made with `check_same_thread=False`, but closing one while another
    thread is inside a call on it frees memory that call still uses: the process crashes rather than raising
    (seen when a server shut down while its proposal tally read in the background). A close waits until no other
    thread uses a connection, and calls that start meanwhile wait for it to end; afterwards they open new
    connections, as after any close. The closing thread's own calls (a close inside its transaction) do not
    count: it would wait for itself."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._active = 0
        self._closing = False
        self._mine = threading.local()

    @contextmanager
    def using(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._closing or getattr(self._mine, "depth", 0) > 0)
            self._active += 1
        self._mine.depth = getattr(self._mine, "depth", 0) + 1
        try:
            yield
        finally:
            self._mine.depth -= 1
            with self._changed:
                self._active -= 1
                self._changed.notify_all()

    @contextmanager
    def closing(self) -> Iterator[None]:
        with self._changed:
            self._closing = True
            own = getattr(self._mine, "depth", 0)
            self._changed.wait_for(lambda: self._active == own)
        try:
            yield
        finally:
            with self._changed:
                self._closing = False
                self._changed.notify_all()


class SqliteDialect(SqlDialect):
    """A registry file: one connection per thread, `BEGIN IMMEDIATE` for every write, savepoints nested."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 30_000, read_only: bool = False) -> None:
        self.path = path
        self._read_only = read_only
        self.what = f"the registry file {str(path)!r}"
        self.where = f"the file {str(path)!r}"
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._in_use = _InUse()

    def _connect(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        try:
            if self._read_only:  # never creates the file, never writes it (a reader in another process)
                target = f"{self.path.resolve().as_uri()}?mode=ro"
                db = sqlite3.connect(target, uri=True, isolation_level=None, check_same_thread=False)
                db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
                self._local.db = db
                with self._lock:
                    self._all.append(db)
                return db
            db = sqlite3.connect(
                self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
            db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open {self.what}: {exc}") from None
        self._local.db = db
        with self._lock:
            self._all.append(db)
        return db

    def _write_ahead(self, db: sqlite3.Connection) -> None:
        """Put the file in WAL mode (readers go on beside a writer) once this connection's first write has
        committed, never on opening: switching rewrites the file's header, and neither reading a file (an older
        release's, or one in rollback-journal mode as `import` leaves it) nor a refused write may change any of
        its bytes. WAL is kept in the file, so once done for a connection it is done. A switch that finds the
        file busy (a reader in another process at that instant) leaves rollback-journal mode, which is as
        correct, and the next write tries again."""
        if getattr(self._local, "write_ahead", False):
            return
        try:
            db.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            return
        self._local.write_ahead = True

    @contextmanager
    def begin(self) -> Iterator[sqlite3.Connection]:
        with self._in_use.using():
            db = self._connect()
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StorageError(f"{self.what} is busy or unwritable: {exc}") from None
            self._local.depth = 0
            try:
                yield db
            except sqlite3.DatabaseError as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StorageError(f"cannot write {self.what}: {exc}") from None
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            try:
                db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise StorageError(f"cannot write {self.what}: {exc}") from None
            self._write_ahead(db)

    @contextmanager
    def savepoint(self, db: sqlite3.Connection) -> Iterator[None]:
        depth: int = getattr(self._local, "depth", 0) + 1
        name = f"w{depth % _SAVEPOINT_NAMES}"
        db.execute(f"SAVEPOINT {name}")
        self._local.depth = depth
        try:
            yield
        except BaseException:
            if db.in_transaction:
                db.execute(f"ROLLBACK TO {name}")
                db.execute(f"RELEASE {name}")
            raise
        finally:
            self._local.depth = depth - 1
        db.execute(f"RELEASE {name}")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        with self._in_use.using():
            db = self._connect()
            try:
                db.execute("BEGIN")
                try:
                    yield db
                finally:
                    db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                raise StorageError(f"cannot read {self.what}: {exc}") from None

    def read(self, sql: str, params: Params) -> list[Row]:
        with self._in_use.using():
            try:
                return self._connect().execute(sql, params).fetchall()
            except sqlite3.DatabaseError as exc:
                raise StorageError(f"cannot read {self.what}: {exc}") from None

    def execute(self, db: sqlite3.Connection, sql: str, params: Params = ()) -> sqlite3.Cursor:
        return db.execute(sql, params)

    def execute_many(self, db: sqlite3.Connection, sql: str, rows: Iterable[Sequence[object]]) -> None:
        db.executemany(sql, rows)

    def is_duplicate_key(self, error: BaseException | None) -> bool:
        return isinstance(error, sqlite3.IntegrityError)

    def dedup_sql(self) -> tuple[str, str, str]:
        return _LATEST, _BY_BYTES, _BY_EQUALITY

    def catalog_sql(self) -> str:
        return _CATALOG

    format = SCHEMA_VERSION

    def has_table(self, db: sqlite3.Connection, name: str) -> bool:
        return (
            db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None
        )

    def create_tables(self, db: sqlite3.Connection) -> None:
        self._run_ddl(db)
        db.execute("INSERT INTO meta VALUES ('schema_version', ?), ('changes', '0')", (str(SCHEMA_VERSION),))

    def migrates_on_open(self, found: int) -> bool:
        return found < 3  # formats 1 and 2 lack the tables every read uses (heads, fingerprints)

    def migrate(self, db: sqlite3.Connection, found: int) -> None:
        self._run_ddl(db)  # the tables a newer format added, empty
        if found < 3:
            _migrate(db, found)
        db.execute("INSERT OR IGNORE INTO meta VALUES ('changes', '0')")
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))

    def before_migration(self, db: sqlite3.Connection, found: int) -> object:
        """A copy of the file as it was (`registry.db.format-3.backup` beside it), kept until the migration has
        committed: SQLite makes the migration atomic anyway; the copy is for a user who wants the old file. It is
        read through a connection of its own, which in WAL mode sees the last commit beside this write.

        The copy never goes through a path someone else made: its name is taken exclusively first (an existing
        file or a planted symlink there is refused, nothing changed), SQLite writes it in a private folder of
        this process's own, and a rename puts it in place, which replaces a name and never follows one."""
        backup = self.path.with_name(f"{self.path.name}.format-{found}.backup")
        try:
            os.close(os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            raise StorageError(
                f"cannot migrate {self.what}: {str(backup)!r} is in the way of its copy (left by a migration "
                "that was interrupted, or not ours); nothing was changed: move it away and write again"
            ) from None
        except OSError as exc:
            raise StorageError(f"cannot copy {self.what} aside before migrating it: {exc}") from None
        try:
            private = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.migrating-", dir=self.path.parent))
            try:
                made = private / backup.name
                source, copy = sqlite3.connect(self.path), sqlite3.connect(made)
                try:
                    source.backup(copy)
                finally:
                    copy.close()
                    source.close()
                os.chmod(made, stat.S_IMODE(os.stat(self.path).st_mode))  # no more readable than the file
                os.replace(made, backup)
            finally:
                shutil.rmtree(private, ignore_errors=True)
        except (sqlite3.DatabaseError, OSError) as exc:
            backup.unlink(missing_ok=True)  # the name this call took, still empty
            raise StorageError(f"cannot copy {self.what} aside before migrating it: {exc}") from None
        return backup

    def after_migration(self, kept: object) -> None:
        if isinstance(kept, Path):
            kept.unlink(missing_ok=True)

    def _run_ddl(self, db: sqlite3.Connection) -> None:
        for statement in _DDL.strip().split(";"):
            if statement.strip():
                db.execute(statement)

    def close(self) -> None:
        with self._in_use.closing(), self._lock:
            for db in self._all:
                try:
                    db.close()
                except sqlite3.Error:
                    pass
            self._all.clear()
            self._local = threading.local()


class SqliteStorage(SqlStorage):
    """The registry file at `path` (made if missing): the storage `Registry.open("registry.db")` uses."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_ms: int = 30_000) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the directory of the registry file {str(self.path)!r}: {exc}") from None
        dialect = SqliteDialect(self.path, busy_timeout_ms=busy_timeout_ms)
        try:
            super().__init__(dialect)
        except StorageError as exc:
            dialect.close()
            if isinstance(exc.__context__, sqlite3.DatabaseError):  # not a registry: not SQLite, or damaged
                raise StorageError(f"{str(self.path)!r} is not a usable registry file: {exc.__context__}") from None
            raise


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
