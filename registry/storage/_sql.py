"""The SQL storage, written once: every read and write of a registry kept in SQL tables, over a small dialect.

SQLite (storage/_sqlite.py) and PostgreSQL (storage/_postgres.py) differ only in what `SqlDialect` holds: how a
connection is had and a write transaction begun (SQLite's `BEGIN IMMEDIATE` on the file, PostgreSQL's advisory
lock), savepoints, placeholders, the table definitions and migrations, a few statements that need the engine's
own functions or index hints, and which driver errors mean what. Everything else is here, so the two cannot
drift apart; the conformance suite (storage/conformance.py) proves both.

The semantics both give (registry/storage/README.md):
- Every write runs in one transaction that first takes the registry's write lock, so a registration's
  read-check-append and a policy's read-modify-write are atomic wherever they run. Appends also compare the
  latest version, and the primary key (schema_id, version) is the last line of defence: a duplicate becomes
  StaleHistoryError (re-read and retry), never a second version 5.
- `transaction()` makes one commit of a whole write: its reads, its writes and its audit line (one fsync). Inside
  it each storage write is a savepoint, and what the body read cannot change before it commits.
- The change token is the `changes` row of `meta`, bumped in the committing transaction; cached reads compare it
  first (storage/_read_cache.py), so a change made by another process or server is what the next read sees.

SQL here uses `?` for positional and `:name` for named parameters; a dialect rewrites them for its driver.
"""

from __future__ import annotations

import abc
import json
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar, cast

from .._audit import AuditEntry
from .._catalog import CatalogSource, stored_fields
from .._errors import RegistryNotFoundError, StorageError
from .._model import ClientRecord, NamespacePolicy, SchemaVersion, TopicPolicy
from .._types import SchemaType
from ._base import DedupScan, Fingerprint, ProposalRow, StaleHistoryError, fingerprint
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

T = TypeVar("T")
Row = tuple[Any, ...]
Params = Sequence[object] | Mapping[str, object]

_VERSION_COLUMNS = 'version, type, data, properties, timestamp, deleted, "user"'
_BUMP = "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'changes' RETURNING value"
_TOKEN = "SELECT value FROM meta WHERE key = 'changes'"
_PROPOSAL_COLUMNS = "id, namespace, target, state, updated_at, doc"
# Which search keys (`stored_fields`) the stored `fields` were made with. Bump it whenever read_fields learns to
# read more; registries with another mark have the fields of the types it changed recomputed on opening.
# 2: fields of KEY_VALUE parts, PROTOBUF and PROTOBUF_NATIVE schemas (before: none).
FIELDS_FORM = "2"
_FIELDS_FORM_TYPES = (SchemaType.KEY_VALUE, SchemaType.PROTOBUF, SchemaType.PROTOBUF_NATIVE)


class SqlDialect(abc.ABC):
    """What one SQL engine does its own way. `what` names the registry in messages ("the registry file
    '/x/r.db'", "the registry database postgresql://u@h/db"): never a password."""

    what: str
    where: str  # the place without "registry": "the database postgresql://u@h/db", "the file '/x/r.db'"

    @abc.abstractmethod
    def begin(self) -> AbstractContextManager[Any]:
        """A connection in a new write transaction holding the registry's write lock: committed when the block
        ends, rolled back when it raises. A driver error becomes StorageError naming the registry."""

    @abc.abstractmethod
    def savepoint(self, db: Any) -> AbstractContextManager[None]:
        """A savepoint inside `db`'s transaction: rolled back alone when the block raises."""

    @abc.abstractmethod
    def snapshot(self) -> AbstractContextManager[Any]:
        """A connection in a read-only transaction that sees one committed state throughout."""

    def pin(self) -> AbstractContextManager[str | None]:
        """A committed state other connections can open while the block runs (`snapshot_at`), or None when the
        engine cannot share one (SQLite: each reader sees the latest commit when it starts; a reader compares
        change tokens instead). Used by readers in other processes (storage/_ranges.py)."""
        return nullcontext(None)

    def snapshot_at(self, state: str | None) -> AbstractContextManager[Any]:
        """`snapshot()`, at a state `pin` gave (None: the latest commit)."""
        return self.snapshot()

    @abc.abstractmethod
    def read(self, sql: str, params: Params) -> list[Row]:
        """Rows of a read outside any transaction (autocommit: the latest committed state)."""

    @abc.abstractmethod
    def execute(self, db: Any, sql: str, params: Params = ()) -> Any:
        """Run `sql` on `db` (placeholders rewritten for the driver); the driver's cursor."""

    @abc.abstractmethod
    def execute_many(self, db: Any, sql: str, rows: Iterable[Sequence[object]]) -> None: ...

    @abc.abstractmethod
    def is_duplicate_key(self, error: BaseException | None) -> bool:
        """Whether `error` (the driver's, as the cause of a StorageError) is a primary-key violation."""

    @abc.abstractmethod
    def dedup_sql(self) -> tuple[str, str, str]:
        """(latest, by bytes, by equality): the three reads of `dedup_scan`, each an index seek on this engine.
        Named parameters: sid, after, kind, sha256, eq."""

    @abc.abstractmethod
    def catalog_sql(self) -> str:
        """Every topic with its history's head, in catalog order (tenant, namespace, topic), with the schema text
        only where no search keys were stored."""

    format: int  # the table format this release writes

    def stored_format(self, db: Any) -> int | None:
        """The format the registry's tables are in (`meta.schema_version`), None when there are none.

        Every release wrote a whole number from 1 on; anything else (`abc`, `4.5`, empty, `-1`, `0`) was edited
        or damaged, so it is refused in one line naming the value rather than guessed at: taken for an old
        format, `-1` would be "migrated" by the first write."""
        if not self.has_table(db, "meta"):
            return None
        row = self.execute(db, "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            return None
        marker = str(row[0])
        if marker.isascii() and marker.isdigit() and len(marker) <= 18 and int(marker) >= 1:
            return int(marker)
        shown = marker if len(marker) <= 40 else f"{marker[:40]}..."
        raise StorageError(
            f"{self.what} holds storage format {shown!r}, which is not a whole number >= 1: it is damaged or "
            "was not written by pulsar-schema-explorer (left as it is)"
        )

    @abc.abstractmethod
    def create_tables(self, db: Any) -> None:
        """Make the tables of `format` in an empty file or database."""

    @abc.abstractmethod
    def migrate(self, db: Any, found: int) -> None:
        """Bring tables of format `found` to `format`, inside a write transaction (all or nothing)."""

    def migrates_on_open(self, found: int) -> bool:
        """Whether tables of format `found` must be migrated before anything can be read from them (formats so
        old that reads need what they lack); newer old formats are migrated by the first write instead."""
        return False

    def before_migration(self, db: Any, found: int) -> object:
        """Called in the migrating transaction before any change: a SQLite file copies itself aside. What it
        returns goes to `after_migration` once the migration has committed."""
        return None

    def after_migration(self, kept: object) -> None:
        """The migration committed: drop what `before_migration` kept."""
        return None

    @abc.abstractmethod
    def has_table(self, db: Any, name: str) -> bool: ...

    def copy_rows(self, db: Any, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        """Insert many rows into one table at once (a bulk load into an empty registry)."""
        marks = ", ".join("?" * len(columns))
        self.execute_many(db, f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def ids_given(self, db: Any, table: str) -> None:
        """Rows were written with ids of their own (an import): the next new row's id must come after them."""
        return None

    @abc.abstractmethod
    def close(self) -> None: ...


class SqlStorage:
    """The storage protocol (storage/_base.py, `LocalStorage`) over SQL tables, through a `SqlDialect`.

    Opening a registry of the current format reads and never writes: one of an older format is read as it is
    (what it lacks, such as proposals, reads as empty), and the first write migrates it in place, in that
    write's own transaction, so the migration and the write commit together or not at all. (Search keys an
    older release computed otherwise, and formats before 3, are brought up to date on opening: reads need
    them.) A newer format than this release knows, or a format that is not a whole number >= 1, is
    refused with one line. Tables are made only in a new file, or with `create` in an empty database."""

    def __init__(self, dialect: SqlDialect, *, create: bool = True) -> None:
        self._dialect = dialect
        self._local = threading.local()
        self.read_cache = ReadCache()
        self.created = False  # whether this handle made the registry's tables (Registry.open stores its line then)
        self._upgrade_pending = False
        with dialect.snapshot() as db:
            found = dialect.stored_format(db)
            equalities, fields = (False, False) if found is None else stale_forms(dialect, db)
        if found is None:
            if not create:
                raise RegistryNotFoundError(
                    f"no registry in {dialect.where}: pass create=True (or use a command that writes) to make one there"
                )
            self._upgrade_pending = True  # the next transaction makes the tables
            with self._transaction():
                pass
            self.created = True
        elif found > dialect.format:
            raise StorageError(
                f"{dialect.what} was written by a newer release (storage format {found}; this release reads "
                f"formats up to {dialect.format}): upgrade pulsar-schema-explorer to open it"
            )
        elif found < dialect.format or equalities or fields:
            self._upgrade_pending = True
            # Search keys of an older release would give wrong search results, and formats before 3 lack tables
            # every read uses: those are brought up to date now. The rest waits for the first write.
            if fields or dialect.migrates_on_open(found):
                with self._transaction():
                    pass

    def _upgrade(self, db: Any) -> Callable[[], None]:
        """Inside the first write transaction (the write lock held, so no other process migrates at the same
        time): make or migrate the tables and refresh what an older release computed otherwise. Returns what
        to do once it has committed."""
        found = self._dialect.stored_format(db)  # another process may have done it meanwhile
        kept: object = None
        if found is None:
            self._dialect.create_tables(db)
        elif found < self._dialect.format:
            kept = self._dialect.before_migration(db, found)
            self._dialect.migrate(db, found)
        forget_stale_equalities(self._dialect, db)
        refresh_stale_fields(self._dialect, db)

        def committed() -> None:
            self._upgrade_pending = False
            self._dialect.after_migration(kept)

        return committed

    # --- transactions -----------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One commit for every write inside (this thread's); nested ones are savepoints. The write lock is
        taken up front, so what the body reads cannot change before it commits."""
        with self._transaction():
            yield

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        held = getattr(self._local, "db", None)
        if held is not None:
            with self._dialect.savepoint(held):
                yield held
            return
        token: int | None = None
        done = False
        touched: set[Hashable] = set()
        upgraded: Callable[[], None] | None = None
        try:
            with self._dialect.begin() as db:
                self._local.db, self._local.changed, self._local.touched = db, False, touched
                try:
                    if self._upgrade_pending:
                        upgraded = self._upgrade(db)
                    yield db
                    if self._local.changed:
                        (bumped,) = self._dialect.execute(db, _BUMP).fetchone()
                        token = int(bumped)
                        self.read_cache.committing(token, touched)
                finally:
                    self._local.db = None
            done = True
            if upgraded is not None:
                upgraded()
        finally:
            if token is not None:
                self.read_cache.committed(token if done else None, touched)

    @contextmanager
    def _write(self, *, bump: bool = True, touches: Hashable | None = None) -> Iterator[Any]:
        """One write, in its own transaction or as a savepoint of the caller's, taking the write lock up front
        so read-check-insert is atomic. `bump` advances the change token when the transaction commits (every
        write but the audit trail's and equality digests); `touches` names the read-cache entry the write
        changes (dropped when it commits)."""
        with self._transaction() as db:
            if bump:
                self._local.changed = True
            if touches is not None:
                self._local.touched.add(touches)
            yield db

    def _read(self, sql: str, params: Params = ()) -> list[Row]:
        """A read: inside this thread's transaction when one is open (it sees its own writes), else autocommit."""
        held = getattr(self._local, "db", None)
        if held is None:
            return self._dialect.read(sql, params)
        return list(self._dialect.execute(held, sql, params).fetchall())

    def _cached(self, key: Hashable, load: Callable[[], T], size: Callable[[T], int]) -> T:
        """`load()`, or what it gave last time if nothing it read has changed since (_read_cache.py)."""
        token = self.change_token()
        writing = getattr(self._local, "db", None) is not None
        if writing and key in self._local.touched:
            return load()  # this transaction's own write, not committed yet
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
        rows = self._read(f"SELECT {_VERSION_COLUMNS} FROM schemas WHERE schema_id = ? ORDER BY version", (schema_id,))
        return tuple(schema_version_of(schema_id, row) for row in rows)

    def dedup_scan(self, schema_id: str, kind: SchemaType, sha256: bytes, equality: bytes | None) -> DedupScan:
        """Two indexed reads of small rows, none of the schema text; filtered in SQL, not in Python."""
        latest_sql, by_bytes, by_equality = self._dialect.dedup_sql()
        ((latest, tomb),) = self._read(latest_sql, {"sid": schema_id})
        if latest is None or latest == tomb:
            return DedupScan(latest=latest, tombstone=tomb, rows=[])
        after = -1 if tomb is None else int(tomb)
        params = {"sid": schema_id, "after": after, "kind": str(kind), "sha256": sha256, "eq": equality}
        found = self._read(by_bytes if equality is None else by_equality, params)
        rows = [fingerprint_of(row) for row in found]
        return DedupScan(latest=int(latest), tombstone=None if tomb is None else int(tomb), rows=rows)

    def all_fingerprints(self) -> dict[str, list[Fingerprint]]:
        """Every history's fingerprints in one read of the small `fingerprints` rows (no schema text)."""
        found: dict[str, list[Fingerprint]] = {}
        rows = self._read(
            "SELECT schema_id, version, type, deleted, sha256, equality FROM fingerprints ORDER BY schema_id, version"
        )
        for row in rows:
            found.setdefault(str(row[0]), []).append(fingerprint_of(tuple(row[1:])))
        return found

    def all_topic_policies(self) -> dict[str, TopicPolicy]:
        """Every topic's own policy in one read."""
        rows = self._read("SELECT topic, policy FROM topic_policies")
        return {str(topic): topic_policy_from_json(str(policy)) for topic, policy in rows}

    def history_range(self, schema_id: str, first: int, last: int) -> list[SchemaVersion]:
        rows = self._read(
            f"SELECT {_VERSION_COLUMNS} FROM schemas WHERE schema_id = ? AND version BETWEEN ? AND ? ORDER BY version",
            (schema_id, first, last),
        )
        return [schema_version_of(schema_id, row) for row in rows]

    def put_equalities(self, schema_id: str, equalities: Mapping[int, bytes]) -> None:
        """Remember equality digests computed later (not a change: the token stays)."""
        with self._write(bump=False) as db:
            self._dialect.execute_many(
                db,
                "UPDATE fingerprints SET equality = ? WHERE schema_id = ? AND version = ?",
                [(digest, schema_id, version) for version, digest in equalities.items()],
            )

    def append(self, entry: SchemaVersion, expected_latest: int | None) -> None:
        self.append_indexed(entry, expected_latest, None)

    def append_indexed(self, entry: SchemaVersion, expected_latest: int | None, equality: bytes | None) -> None:
        fields = "" if entry.deleted else stored_fields(entry.type, entry.data)
        found = fingerprint(entry, equality)
        run = self._dialect.execute
        try:
            with self._write(touches=("history", entry.topic)) as db:
                (latest,) = run(db, "SELECT max(version) FROM schemas WHERE schema_id = ?", (entry.topic,)).fetchone()
                if latest != expected_latest:
                    raise StaleHistoryError(entry.topic)
                properties = json.dumps(dict(entry.properties), sort_keys=True)
                run(
                    db,
                    f"INSERT INTO schemas ({_VERSION_COLUMNS}, schema_id, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (entry.version, str(entry.type), entry.data, properties, entry.timestamp, entry.deleted,
                     entry.user, entry.topic, fields),
                )  # fmt: skip
                live = 0
                if not entry.deleted:
                    head = run(db, "SELECT deleted, live FROM heads WHERE schema_id = ?", (entry.topic,)).fetchone()
                    live = 1 if head is None or head[0] else int(head[1]) + 1
                run(
                    db,
                    "INSERT INTO heads VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (schema_id) DO UPDATE SET "
                    "version = excluded.version, type = excluded.type, timestamp = excluded.timestamp, "
                    "deleted = excluded.deleted, live = excluded.live, fields = excluded.fields",
                    (entry.topic, entry.version, str(entry.type), entry.timestamp, entry.deleted, live, fields),
                )
                run(
                    db,
                    "INSERT INTO fingerprints VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (schema_id, version) "
                    "DO UPDATE SET type = excluded.type, deleted = excluded.deleted, sha256 = excluded.sha256, "
                    "equality = excluded.equality",
                    (entry.topic, entry.version, str(entry.type), entry.deleted, found.sha256, found.equality),
                )
        except StorageError as exc:
            if self._dialect.is_duplicate_key(exc.__cause__ or exc.__context__):  # a race the lock did not catch
                raise StaleHistoryError(entry.topic) from None
            raise

    def drop(self, schema_id: str) -> bool:
        with self._write(touches=("history", schema_id)) as db:
            self._dialect.execute(db, "DELETE FROM heads WHERE schema_id = ?", (schema_id,))
            self._dialect.execute(db, "DELETE FROM fingerprints WHERE schema_id = ?", (schema_id,))
            return bool(self._dialect.execute(db, "DELETE FROM schemas WHERE schema_id = ?", (schema_id,)).rowcount > 0)

    # --- metadata ---------------------------------------------------------------------------------------

    def _changed_rows(self, sql: str, params: Params, *, touches: Hashable | None = None) -> int:
        with self._write(touches=touches) as db:
            return int(self._dialect.execute(db, sql, params).rowcount)

    def tenants(self) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM tenants ORDER BY name")]

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        sql = "INSERT INTO tenants VALUES (?, ?) ON CONFLICT DO NOTHING"
        return self._changed_rows(sql, (tenant, created_at)) > 0

    def namespaces(self, tenant: str) -> list[str]:
        return [str(r[0]) for r in self._read("SELECT name FROM namespaces WHERE tenant = ? ORDER BY name", (tenant,))]

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self._cached(("namespace", namespace), lambda: self._namespace_policy(namespace), lambda _: 256)

    def _namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        rows = self._read("SELECT policy FROM namespaces WHERE name = ?", (namespace,))
        return namespace_policy_from_json(str(rows[0][0])) if rows else None

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        self._changed_rows(
            "INSERT INTO namespaces VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET policy = excluded.policy",
            (namespace, namespace.split("/")[0], namespace_policy_to_json(policy), created_at),
            touches=("namespace", namespace),
        )

    def topics(self, namespace: str) -> list[str]:
        return [
            str(r[0]) for r in self._read("SELECT name FROM topics WHERE namespace = ? ORDER BY name", (namespace,))
        ]

    def has_topic(self, topic: str) -> bool:
        return bool(self._read("SELECT 1 FROM topics WHERE name = ?", (topic,)))

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        sql = "INSERT INTO topics VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
        return self._changed_rows(sql, (topic, namespace, created_at)) > 0

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        rows = self._read("SELECT policy FROM topic_policies WHERE topic = ?", (topic,))
        return topic_policy_from_json(str(rows[0][0])) if rows else None

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        if policy is None:
            self._changed_rows("DELETE FROM topic_policies WHERE topic = ?", (topic,))
            return
        self._changed_rows(
            "INSERT INTO topic_policies VALUES (?, ?) ON CONFLICT (topic) DO UPDATE SET policy = excluded.policy",
            (topic, topic_policy_to_json(policy)),
        )

    def setting(self, key: str) -> str | None:
        """A registry-wide setting (the Pulsar line it answers as), kept in `meta` under `setting.<key>`."""
        rows = self._read("SELECT value FROM meta WHERE key = ?", (f"setting.{key}",))
        return str(rows[0][0]) if rows else None

    def put_setting(self, key: str, value: str) -> None:
        self._changed_rows(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (f"setting.{key}", value),
        )

    def clients(self, topics: Sequence[str] | None) -> list[ClientRecord]:
        sql = "SELECT topic, role, name, subscription, schema_type, version, connected_at, replicator FROM clients"
        params: list[object] = []
        if topics is not None:
            if not topics:
                return []
            sql += f" WHERE topic IN ({', '.join('?' * len(topics))})"
            params = list(topics)
        rows = self._read(sql + " ORDER BY topic, role, name, subscription", params)
        return [client_of(row) for row in rows]

    def put_client(self, client: ClientRecord) -> None:
        self._changed_rows(
            "INSERT INTO clients VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (topic, role, name, subscription) "
            "DO UPDATE SET schema_type = excluded.schema_type, version = excluded.version, "
            "connected_at = excluded.connected_at, replicator = excluded.replicator",
            client_row(client),
        )

    def remove_clients(self, topic: str, name: str, role: str | None) -> int:
        if role is None:
            return self._changed_rows("DELETE FROM clients WHERE topic = ? AND name = ?", (topic, name))
        return self._changed_rows("DELETE FROM clients WHERE topic = ? AND name = ? AND role = ?", (topic, name, role))

    def change_token(self) -> int:
        rows = self._read(_TOKEN)
        return int(rows[0][0]) if rows else 0

    def catalog_source(self) -> CatalogSource:
        """Every topic's catalog facts from one snapshot (a handful of queries in one read transaction)."""
        run = self._dialect.execute
        with self._dialect.snapshot() as db:
            token = run(db, _TOKEN).fetchone()
            rows = run(db, self._dialect.catalog_sql()).fetchall()
            namespaces = run(db, "SELECT name, policy FROM namespaces").fetchall()
            policies = run(db, "SELECT topic, policy FROM topic_policies").fetchall()
            clients = run(db, "SELECT topic, role, count(*) FROM clients GROUP BY topic, role").fetchall()
        return CatalogSource(
            token=int(token[0]) if token else 0,
            rows=[(*r[:8], None if r[8] is None else bytes(r[8])) for r in rows],
            namespace_policies={str(n): namespace_policy_from_json(str(p)) for n, p in namespaces},
            topic_policies={str(t): topic_policy_from_json(str(p)) for t, p in policies},
            clients={(str(t), str(r)): int(n) for t, r, n in clients},
        )

    # --- proposals --------------------------------------------------------------------------------------

    def _proposals_kept(self) -> bool:
        """False while a registry of the format before proposals waits for its first write (nothing to read)."""
        if not self._upgrade_pending:
            return True
        held = getattr(self._local, "db", None)
        if held is not None:
            return self._dialect.has_table(held, "proposals")
        with self._dialect.snapshot() as db:
            return self._dialect.has_table(db, "proposals")

    def proposal(self, proposal_id: int) -> ProposalRow | None:
        if not self._proposals_kept():
            return None
        rows = self._read(f"SELECT {_PROPOSAL_COLUMNS} FROM proposals WHERE id = ?", (proposal_id,))
        return _proposal_row(rows[0]) if rows else None

    def proposals(
        self, *, state: str | None, namespace: str | None, target: str | None, limit: int
    ) -> list[ProposalRow]:
        if not self._proposals_kept():
            return []
        where, params = [], []
        for column, value in (("state", state), ("namespace", namespace), ("target", target)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT {_PROPOSAL_COLUMNS} FROM proposals"
        sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id DESC LIMIT ?"
        return [_proposal_row(row) for row in self._read(sql, [*params, limit])]

    def proposal_counts(self) -> dict[str, int]:
        if not self._proposals_kept():
            return {}
        return {
            str(state): int(n) for state, n in self._read("SELECT state, COUNT(*) FROM proposals GROUP BY state", ())
        }

    def put_proposal(self, row: ProposalRow) -> int:
        values = (row.namespace, row.target, row.state, row.updated_at, row.doc)
        with self._write() as db:
            if row.id == 0:
                sql = (
                    "INSERT INTO proposals (namespace, target, state, updated_at, doc) VALUES (?, ?, ?, ?, ?) "
                    "RETURNING id"
                )
                (made,) = self._dialect.execute(db, sql, values).fetchone()
                return int(made)
            self._dialect.execute(
                db,
                "INSERT INTO proposals (id, namespace, target, state, updated_at, doc) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET namespace = excluded.namespace, target = excluded.target, "
                "state = excluded.state, updated_at = excluded.updated_at, doc = excluded.doc",
                (row.id, *values),
            )
            self._dialect.ids_given(db, "proposals")
            return row.id

    # --- audit trail ------------------------------------------------------------------------------------

    def append_audit(self, entry: AuditEntry) -> None:
        with self._write(bump=False) as db:
            self._dialect.execute(
                db,
                'INSERT INTO audit (at, "user", action, target, tenant, namespace, detail, outcome) '
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                audit_row(entry),
            )

    def audit(self, target: str | None, limit: int) -> list[AuditEntry]:
        where, params = audit_query(target, limit, "?")
        rows = self._read('SELECT at, "user", action, target, detail, outcome FROM audit' + where, params)
        return [audit_entry_of(row) for row in rows]

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        """Bulk rows into one table, inside the caller's transaction (storage/_bulk_load.py: an import)."""
        try:
            with self._write() as db:
                self._dialect.copy_rows(db, table, columns, rows)
        except Exception as exc:
            if self._dialect.is_duplicate_key(exc):  # the savepoint is undone; the caller's transaction is not
                raise StorageError(f"the same {table} row twice ({str(exc).strip()})") from None
            raise

    def finish_bulk_load(self, heads_sql: str) -> None:
        """After a bulk load: each history's head, computed from its versions in one statement."""
        with self._write() as db:
            self._dialect.execute(db, heads_sql)

    def close(self) -> None:
        self._dialect.close()
        self._local = threading.local()


def _proposal_row(row: Row) -> ProposalRow:
    i, ns, target, state, at, doc = row
    return ProposalRow(
        id=int(i), namespace=str(ns), target=str(target), state=str(state), updated_at=int(at), doc=str(doc)
    )


# --- kept up to date with what this release computes -------------------------------------------------------


def stale_forms(dialect: SqlDialect, db: Any) -> tuple[bool, bool]:
    """Whether the stored equality digests, and the stored search keys, were made by an older release."""
    run = dialect.execute
    forms = dict(run(db, "SELECT key, value FROM meta WHERE key IN ('equality_form', 'fields_form')").fetchall())
    return forms.get("equality_form") != EQUALITY_FORM, forms.get("fields_form") != FIELDS_FORM


def forget_stale_equalities(dialect: SqlDialect, db: Any) -> None:
    """Drop equality digests made with an older equality key (storage/_rows.py, EQUALITY_FORM)."""
    run = dialect.execute
    row = run(db, "SELECT value FROM meta WHERE key = 'equality_form'").fetchone()
    if row is not None and str(row[0]) == EQUALITY_FORM:
        return
    run(db, "UPDATE fingerprints SET equality = NULL WHERE equality IS NOT NULL")
    run(
        db,
        "INSERT INTO meta VALUES ('equality_form', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (EQUALITY_FORM,),
    )


def refresh_stale_fields(dialect: SqlDialect, db: Any) -> None:
    """Recompute the search keys that an older `read_fields` left empty (FIELDS_FORM)."""
    run = dialect.execute
    row = run(db, "SELECT value FROM meta WHERE key = 'fields_form'").fetchone()
    if row is not None and str(row[0]) == FIELDS_FORM:
        return
    marks = ", ".join("?" * len(_FIELDS_FORM_TYPES))
    kinds = [str(t) for t in _FIELDS_FORM_TYPES]
    rows = run(
        db, f"SELECT schema_id, version, type, data FROM schemas WHERE NOT deleted AND type IN ({marks})", kinds
    ).fetchall()
    dialect.execute_many(
        db,
        "UPDATE schemas SET fields = ? WHERE schema_id = ? AND version = ?",
        [(stored_fields(SchemaType(str(t)), bytes(d)), sid, v) for sid, v, t, d in rows],
    )
    run(
        db,
        "UPDATE heads SET fields = (SELECT s.fields FROM schemas s WHERE s.schema_id = heads.schema_id "
        f"AND s.version = heads.version) WHERE NOT deleted AND type IN ({marks})",
        kinds,
    )
    run(
        db,
        "INSERT INTO meta VALUES ('fields_form', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (FIELDS_FORM,),
    )
