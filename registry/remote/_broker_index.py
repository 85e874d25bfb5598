"""The search index of a plain Pulsar broker, kept in a local SQLite cache (issue 22).

A broker's admin API has no search: the only way to find "every topic with a field called currency" is to read
every topic. `schema-explorer serve` answers searches itself (its explorer API), so this index exists only for
a plain broker. It is built in the background:

* listing: per namespace, its policies (GET /namespaces/t/ns) and its topics (the three topic listings, folded
  as Pulsar folds them: _listing.py), from a few threads;
* indexing: per topic, its schemas (GET /schemas/t/ns/topic/schemas: one request, plus GET /metadata for a
  topic without a live schema, to tell a deleted history from none), and its own compatibility strategy (GET
  .../schemaCompatibilityStrategy) only where the broker says topic policies may exist: topic-level policies
  enabled, and the namespace lists `__change_events`, where Pulsar keeps them (or the broker lists that topic
  nowhere, so it says nothing). `INDEX_WORKERS` reads in flight from one asyncio loop (_async_reader.py),
  fewer while the broker refuses for load. Pulsar has no bulk read of topic policies and no change feed or
  ETag for schemas, so a refresh asks every topic again; only answers that differ are written, and only they
  move the catalog's token.

The cache is one SQLite file per cluster URL and credentials (`cache_path`, under the user's data directory), so a
second visit searches at once from the last complete index while a refresh runs. It is only ever a search
index: every other read (a history, a policy, a topic page) and every write goes to the broker. After a write
through the same handle, the topic or namespace it touched is read again at once (`touched`), so a search
sees its own writes. A cache that cannot be read, or was written by another format, is deleted and rebuilt,
never answered from.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Final, Protocol
from urllib.parse import unquote, urlsplit

from .._catalog import INDEX_WORKERS, BrokerIndex, CatalogRow, CatalogSource, IndexState, IndexStatus, stored_fields
from .._errors import AuthError, NamespaceNotFoundError, RegistryError, StorageError, TenantNotFoundError
from .._history import trim
from .._model import CompatibilityStrategy, NamespacePolicy, SchemaVersion, TopicPolicy
from .._names import TopicName
from .._paths import data_dir
from ..storage._rows import namespace_policy_from_json, namespace_policy_to_json
from ._async_reader import AsyncReader
from ._listing import TopicListing
from ._pacing import Concurrency

_LISTING_WORKERS: Final = 8  # threads listing namespaces (a few hundred requests, not the first visit's cost)
CACHE_FORMAT: Final = "1"
CACHE_ENV_VAR: Final = "SCHEMA_EXPLORER_CACHE_DIR"
_BATCH: Final = 256  # rows written to the cache per transaction
_GIVE_UP_AFTER: Final = 20  # topics failing in a row: the broker is down or refusing, not one topic broken


class IndexSource(Protocol):
    """What the index reads from the broker: RemoteStorage's reads."""

    def tenants(self) -> list[str]: ...

    def namespaces(self, tenant: str) -> list[str]: ...

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None: ...

    include_system: bool  # the broker's system topics are listed too

    def topic_listing(self, namespace: str, *, include_system: bool) -> TopicListing: ...

    def history(self, schema_id: str) -> list[SchemaVersion]: ...

    def topic_compatibility(self, topic: str) -> CompatibilityStrategy | None: ...

    def async_reader(self, in_flight: int) -> AsyncReader: ...

    async def history_async(self, reader: AsyncReader, schema_id: str) -> list[SchemaVersion]: ...

    async def topic_compatibility_async(self, reader: AsyncReader, topic: str) -> CompatibilityStrategy | None: ...


def cache_path(url: str, identity: str | None) -> Path:
    """`$SCHEMA_EXPLORER_CACHE_DIR/<host>-<digest>.sqlite`, else under `<user data dir>/pulsar-schema-explorer/
    remote-cache/`. The digest covers `identity` too (the credentials' digest, Connection.identity): what one
    role may see is never shown to another, and no secret is in the name."""
    base = os.environ.get(CACHE_ENV_VAR)
    folder = Path(base).expanduser() if base else data_dir() / "remote-cache"
    digest = hashlib.sha256(f"{url}\0{identity or ''}".encode()).hexdigest()[:16]
    parsed = urlsplit(url)  # the host and port name the file; a password in the URL never does
    where = f"{parsed.hostname or 'broker'}_{parsed.port}" if parsed.port else parsed.hostname or "broker"
    return folder / f"{re.sub(r'[^A-Za-z0-9.-]+', '_', where)[:60]}-{digest}.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (name TEXT PRIMARY KEY, policy TEXT);
CREATE TABLE IF NOT EXISTS topics (
    name TEXT PRIMARY KEY, tenant TEXT NOT NULL, namespace TEXT NOT NULL, version INTEGER, type TEXT,
    timestamp INTEGER, deleted INTEGER, live INTEGER, fields TEXT, data BLOB, compatibility TEXT
);
"""
_COLUMNS = "name, tenant, namespace, version, type, timestamp, deleted, live, fields, data, compatibility"
# Upserts that write only a row that differs, so their row count says whether the catalog moved.
_UPSERT = f"""
INSERT INTO topics ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(name) DO UPDATE SET version = excluded.version, type = excluded.type, timestamp = excluded.timestamp,
    deleted = excluded.deleted, live = excluded.live, fields = excluded.fields, data = excluded.data,
    compatibility = excluded.compatibility
WHERE (topics.version, topics.type, topics.timestamp, topics.deleted, topics.live, topics.fields, topics.data,
       topics.compatibility)
    IS NOT (excluded.version, excluded.type, excluded.timestamp, excluded.deleted, excluded.live, excluded.fields,
            excluded.data, excluded.compatibility)
"""
_UPSERT_NAMESPACE = (
    "INSERT INTO namespaces VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET policy = excluded.policy "
    "WHERE namespaces.policy IS NOT excluded.policy"
)
_CATALOG = (
    "SELECT name, namespace, version, type, timestamp, deleted, live, fields, data FROM topics "
    "ORDER BY tenant, namespace, name"
)
IndexRow = tuple[str, str, str, int | None, str | None, int | None, int | None, int | None, str | None, bytes | None,
                 str | None]  # fmt: skip


class CachedBrokerIndex(BrokerIndex):
    """The background index of one plain broker over one cache file (module docstring). Thread-safe: the app's
    sessions search while the index thread writes."""

    def __init__(
        self,
        source: IndexSource,
        path: Path,
        *,
        url: str,
        topic_policies: bool,
        sent: Callable[[], int],
        workers: int = INDEX_WORKERS,
        pace: Concurrency | None = None,
    ) -> None:
        self._source = source
        self._pace = pace or Concurrency(workers)  # lowered by the admin client while the broker refuses
        self._path = path
        self._url = url
        self._topic_policies = topic_policies
        self._sent = sent
        self._workers = workers
        self._lock = threading.RLock()  # the connection and the status
        self._opened: sqlite3.Connection | None = None  # the cache file, opened when first needed
        self._generation = 0  # moves whenever a search could answer differently
        self._status = IndexStatus(
            state=IndexState.IDLE, indexed=0, total=0, cached=0, complete_at=None, cache_path=str(path), workers=workers
        )
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._finished = threading.Condition(self._lock)
        self._started_sent = 0
        self._read_seq = 0  # numbers each topic read, so an older read never overwrites a newer one
        self._last_read: dict[str, int] = {}
        self._failing = 0  # topic reads that failed in a row
        self._resume_from: set[str] = set()  # topics read since the last complete run (a resumed run skips them)
        self._policy_namespaces: set[str] | None = None  # where topic policies may exist (None: anywhere)

    # --- the cache file ---------------------------------------------------------------------------------

    @property
    def _db(self) -> sqlite3.Connection:
        return self._open_cache()

    def _open_cache(self) -> sqlite3.Connection:
        """The cache file, opened (and the status read from it) on first use: a handle that never searches
        creates no cache."""
        with self._lock:
            if self._opened is None:
                try:
                    self._opened = self._open()
                    self._status = replace(self._status, cached=self._count(), complete_at=self._complete_at())
                except (OSError, sqlite3.Error) as exc:
                    self._opened = None
                    raise self._unusable(exc) from None
            return self._opened

    def _unusable(self, exc: Exception) -> StorageError:
        return StorageError(
            f"cannot use the search index cache {self._path}: {exc}; set {CACHE_ENV_VAR} to a folder you may write"
        )

    def _open(self) -> sqlite3.Connection:
        self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            db = self._connect(str(self._path))
            found = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if found.get("format") == CACHE_FORMAT and found.get("url") == self._url:
                return db
            if not found:  # a new file
                self._stamp(db)
                return db
            db.close()
        except sqlite3.DatabaseError:
            pass
        # Unreadable, or another format: a cache is never answered from when in doubt. Start afresh.
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{self._path}{suffix}").unlink()
        db = self._connect(str(self._path))
        self._stamp(db)
        return db

    @staticmethod
    def _connect(where: str) -> sqlite3.Connection:
        os.close(os.open(where, os.O_CREAT | os.O_WRONLY, 0o600))  # schemas can be private: the user's alone
        os.chmod(where, 0o600)  # a file an older version made
        db = sqlite3.connect(where, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(_SCHEMA)
        return db

    def _stamp(self, db: sqlite3.Connection) -> None:
        db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?), ('url', ?)", (CACHE_FORMAT, self._url))

    def _count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM topics").fetchone()[0])

    def _complete_at(self) -> int | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'complete_at'").fetchone()
        return int(row[0]) if row else None

    def close(self) -> None:
        self.cancel()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=30)
        with self._lock:
            if self._opened is not None:
                self._opened.close()
                self._opened = None

    # --- what the catalog reads -------------------------------------------------------------------------

    def change_token(self) -> int:
        """Moves whenever the cache's rows or policies changed (the catalog is rebuilt only then)."""
        return self._generation

    def catalog_source(self) -> CatalogSource:
        """Every indexed topic's catalog facts, in catalog order. A broker records no clients."""
        with self._lock:
            token = self._generation
            try:
                rows: list[CatalogRow] = self._db.execute(_CATALOG).fetchall()
                namespaces = self._db.execute("SELECT name, policy FROM namespaces WHERE policy IS NOT NULL").fetchall()
                strategies = self._db.execute(
                    "SELECT name, compatibility FROM topics WHERE compatibility IS NOT NULL"
                ).fetchall()
            except sqlite3.Error as exc:
                raise self._unusable(exc) from None
        return CatalogSource(
            token=token,
            rows=rows,
            namespace_policies={str(n): namespace_policy_from_json(str(p)) for n, p in namespaces},
            topic_policies={str(t): TopicPolicy(compatibility=CompatibilityStrategy(c)) for t, c in strategies},
            clients={},
        )

    # --- the run ----------------------------------------------------------------------------------------

    def status(self) -> IndexStatus:
        with self._lock:
            if self._opened is None and self._path.exists():
                self._open_cache()  # what an earlier visit left (asking creates no cache: only a run does)
            status = self._status
        if not status.running:
            return status
        return replace(status, requests=self._sent() - self._started_sent, workers=min(self._workers, self._pace.limit))

    def refresh(self) -> IndexStatus:
        """Start a run unless one is going (a cancelled run resumes: the topics it read are not read again)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return self._status
            self._open_cache()
            self._cancel.clear()
            self._failing = 0
            self._started_sent = self._sent()
            self._status = replace(
                self._status, state=IndexState.LISTING, indexed=0, total=0, unreadable=0, error="", requests=0
            )
            self._thread = threading.Thread(target=self._run, name="broker-index", daemon=True)
            self._thread.start()
            return self._status

    def cancel(self) -> IndexStatus:
        """Stop the run: the requests in flight finish, nothing more is asked; what was read stays cached."""
        self._cancel.set()
        return self.status()

    def wait(self, timeout: float | None = None) -> IndexStatus:
        """Block until the run ends (or `timeout` seconds pass); the status then."""
        with self._finished:
            self._finished.wait_for(lambda: not self._status.running, timeout=timeout)
        return self.status()

    def _run(self) -> None:
        try:
            listed = self._list()
            if listed is None:
                return self._end(IndexState.CANCELLED)
            todo = [t for t in listed if t not in self._resume_from]
            self._update(state=IndexState.INDEXING, total=len(listed), indexed=len(listed) - len(todo))
            if not self._index(todo):
                return self._end(IndexState.CANCELLED)
            self._resume_from.clear()
            now = _now_ms()
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('complete_at', ?)", (str(now),))
            self._end(IndexState.DONE, complete_at=now)
        except RegistryError as exc:
            self._end(IndexState.FAILED, error=f"{exc} ({self._how_far()})")
        except (OSError, sqlite3.Error) as exc:
            self._end(IndexState.FAILED, error=str(self._unusable(exc)))
        except Exception as exc:  # noqa: BLE001 - a background thread must report, never die silently
            self._end(IndexState.FAILED, error=f"internal error while indexing: {type(exc).__name__}: {exc}")

    def _how_far(self) -> str:
        """Where a failed run stopped, for its error: what was read stays cached and a new run resumes."""
        with self._lock:
            status = self._status
        if status.state is IndexState.LISTING:
            return "stopped while listing namespaces and topics; the cache keeps its last index"
        return f"stopped after {status.indexed} of {status.total} topics; the cache keeps what was read"

    def _list(self) -> list[str] | None:
        """Namespaces with their policies and topics, reconciled into the cache; the listed topics, or None
        when cancelled."""
        namespaces = [ns for tenant in self._source.tenants() for ns in self._namespaces(tenant)]
        found: dict[str, tuple[NamespacePolicy | None, TopicListing] | None] = {}
        with ThreadPoolExecutor(min(self._workers, _LISTING_WORKERS), thread_name_prefix="broker-index") as pool:
            for ns, listing in zip(namespaces, pool.map(self._read_namespace, namespaces), strict=True):
                if self._cancel.is_set():
                    return None
                found[ns] = listing
        kept = {ns: listing for ns, listing in found.items() if listing is not None}
        topics = [t for _, listing in kept.values() for t in listing.topics]
        said = {ns for ns, (_, listing) in kept.items() if listing.policy_events}
        self._policy_namespaces = said or None  # a broker listing `__change_events` nowhere says nothing
        with self._lock, self._transaction():
            changed = 0
            for table, names in (("topics", topics), ("namespaces", list(kept))):  # what is no longer there goes
                self._db.execute("CREATE TEMP TABLE IF NOT EXISTS listed (name TEXT PRIMARY KEY)")
                self._db.execute("DELETE FROM listed")
                self._db.executemany("INSERT OR IGNORE INTO listed VALUES (?)", ((n,) for n in names))
                sql = f"DELETE FROM {table} WHERE name NOT IN (SELECT name FROM listed)"  # noqa: S608
                changed += self._db.execute(sql).rowcount
            changed += self._db.executemany(
                _UPSERT_NAMESPACE, ((ns, _policy_text(policy)) for ns, (policy, _) in kept.items())
            ).rowcount
            self._moved(changed)
        return topics

    def _namespaces(self, tenant: str) -> list[str]:
        try:
            return self._source.namespaces(tenant)
        except TenantNotFoundError:
            return []  # deleted since it was listed

    def _read_namespace(self, namespace: str) -> tuple[NamespacePolicy | None, TopicListing] | None:
        if self._cancel.is_set():
            return None
        try:
            listing = self._source.topic_listing(namespace, include_system=self._source.include_system)
            return self._source.namespace_policy(namespace), listing
        except NamespaceNotFoundError:
            return None  # deleted since its tenant was listed

    def _index(self, topics: list[str]) -> bool:
        """Read each topic, at most `workers` in flight from one event loop; False when cancelled."""
        return asyncio.run(self._index_async(topics))

    async def _index_async(self, topics: list[str]) -> bool:
        reader = self._source.async_reader(self._workers)
        pending: set[asyncio.Task[IndexRow | None]] = set()
        batch: list[IndexRow] = []
        it = iter(topics)
        try:
            while True:
                while len(pending) < self._in_flight() and not self._cancel.is_set():
                    topic = next(it, None)
                    if topic is None:
                        break
                    pending.add(asyncio.create_task(self._read_topic(reader, topic, self._next_seq())))
                if not pending:
                    break  # all read, or cancelled: those in flight finished, nothing more is asked
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED, timeout=0.5)
                for task in done:
                    row = task.result()
                    if row is not None:
                        batch.append(row)
                    self._bump_indexed()
                if len(batch) >= _BATCH or not pending:
                    self._write(batch)
                    batch.clear()
        finally:
            for task in pending:  # an error ends the run: nothing in flight outlives it
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await reader.aclose()
        self._write(batch)
        return not self._cancel.is_set()

    def _in_flight(self) -> int:
        """Reads kept in flight: fewer while the broker refuses for load (_pacing.Concurrency)."""
        return max(1, min(self._workers, self._pace.limit))

    def _next_seq(self) -> int:
        with self._lock:
            self._read_seq += 1
            return self._read_seq

    async def _read_topic(self, reader: AsyncReader, topic: str, seq: int) -> IndexRow | None:
        """One topic's catalog row, or None when it could not be read (counted) or a newer read exists."""
        try:
            name = TopicName.parse(topic)
            history = await self._source.history_async(reader, name.schema_id)
            strategy = (
                await self._source.topic_compatibility_async(reader, topic) if self._reads_strategy(name) else None
            )
            row = _row_of(topic, name, history, strategy)
        except AuthError:
            raise
        except RegistryError as exc:
            with self._lock:
                self._failing += 1
                self._status = replace(
                    self._status,
                    unreadable=self._status.unreadable + 1,
                    error=self._status.error or f"{topic}: {exc}",
                )
                if self._failing >= _GIVE_UP_AFTER:
                    raise StorageError(f"{self._failing} topics in a row could not be read; the last: {exc}") from None
            return None
        with self._lock:
            self._failing = 0
            if not self._newest(topic, seq):
                return None  # a write's re-read came after this one started
            self._resume_from.add(topic)
        return row

    def _reads_strategy(self, name: TopicName) -> bool:
        """Whether a run reads the topic's own strategy (module docstring)."""
        said = self._policy_namespaces
        return self._topic_policies and (said is None or str(name.namespace_name) in said)

    def _newest(self, topic: str, seq: int) -> bool:
        """Record read `seq` of `topic` unless a later-started read was recorded already (call under the lock)."""
        if self._last_read.get(topic, -1) > seq:
            return False
        self._last_read[topic] = seq
        return True

    def _row(self, topic: str) -> IndexRow:
        """A topic's row read now, its own strategy always asked (after a write, which may have set it)."""
        name = TopicName.parse(topic)
        history = self._source.history(name.schema_id)
        strategy = self._source.topic_compatibility(topic) if self._topic_policies else None
        return _row_of(topic, name, history, strategy)

    def _write(self, rows: list[IndexRow]) -> None:
        if not rows:
            return
        with self._lock, self._transaction():
            self._moved(self._db.executemany(_UPSERT, rows).rowcount)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _moved(self, changed: int) -> None:
        """After a write of `changed` rows: a catalog built before is stale only when some row changed."""
        if changed > 0:
            self._generation += 1
            self._status = replace(self._status, cached=self._count())

    def _bump_indexed(self) -> None:
        with self._lock:
            self._status = replace(self._status, indexed=self._status.indexed + 1)

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)  # type: ignore[arg-type]

    def _end(self, state: IndexState, *, error: str = "", complete_at: int | None = None) -> None:
        with self._finished:
            self._status = replace(
                self._status,
                state=state,
                error=error or self._status.error,
                complete_at=complete_at if complete_at is not None else self._status.complete_at,
                requests=self._sent() - self._started_sent,
                cached=self._count(),
            )
            self._finished.notify_all()

    # --- a write through the same handle ------------------------------------------------------------------

    def touched(self, path: str) -> None:
        """Read again what an admin write to `path` changed, so a search sees this handle's own writes at
        once: a topic (schemas or topic policies), or a namespace (policies and topic list). The write stood on
        the broker whatever happens here: when the re-read fails, the index stops counting as complete, so
        the next search reads the broker again instead of answering without the write."""
        parts = [unquote(p) for p in path.split("?", 1)[0].strip("/").split("/")]
        if parts[:2] != ["admin", "v2"] or len(parts) < 5 or (self._opened is None and not self._path.exists()):
            return  # not a namespace or topic; or no index to keep current
        try:
            self._reread(parts)
        except (RegistryError, sqlite3.Error) as exc:
            with self._lock:
                self._status = replace(
                    self._status, complete_at=None, error=f"the index missed a write to {path} ({exc})"
                )
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("DELETE FROM meta WHERE key = 'complete_at'")

    def _reread(self, parts: list[str]) -> None:
        kind, tenant, namespace = parts[2], parts[3], parts[4]
        if kind == "namespaces":
            self._reread_namespace(f"{tenant}/{namespace}")
        elif kind in ("schemas", "persistent", "non-persistent") and len(parts) >= 6:
            domains = ("persistent", "non-persistent") if kind == "schemas" else (kind,)
            for domain in domains:
                topic = f"{domain}://{tenant}/{namespace}/{parts[5]}"
                if kind == "schemas" and domain == "non-persistent" and not self._holds(topic):
                    continue
                self._reread_topic(topic)

    def _holds(self, topic: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM topics WHERE name = ?", (topic,)).fetchone() is not None

    def _reread_topic(self, topic: str) -> None:
        """A successful write leaves its topic in place (Pulsar has it, or created it): read its row. A read
        that fails raises (`touched` then marks the index incomplete), unlike a run's, which counts it."""
        seq = self._next_seq()
        row = self._row(topic)
        with self._lock:
            if self._newest(topic, seq):
                self._write([row])

    def _reread_namespace(self, namespace: str) -> None:
        try:
            policy = self._source.namespace_policy(namespace)
        except NamespaceNotFoundError:
            policy = None
        with self._lock, self._transaction():
            self._moved(self._db.execute(_UPSERT_NAMESPACE, (namespace, _policy_text(policy))).rowcount)


def _row_of(
    topic: str, name: TopicName, history: list[SchemaVersion], strategy: CompatibilityStrategy | None
) -> IndexRow:
    """The catalog row of `topic` with `history` and its own `strategy`."""
    base: tuple[str, str, str] = (topic, name.tenant, str(name.namespace_name))
    compatibility = None if strategy in (None, CompatibilityStrategy.UNDEFINED) else str(strategy)
    if not history:
        return (*base, None, None, None, None, None, None, None, compatibility)
    live = trim(history)
    last = history[-1]
    if last.deleted or not live:
        return (*base, last.version, str(last.type), last.timestamp, 1, 0, None, None, compatibility)
    latest = live[-1]
    fields = stored_fields(latest.type, latest.data)
    data = latest.data if fields is None else None  # kept only when its fields cannot be read (an error row)
    return (*base, latest.version, str(latest.type), latest.timestamp, 0, len(live), fields, data, compatibility)


def _policy_text(policy: NamespacePolicy | None) -> str | None:
    return None if policy is None else namespace_policy_to_json(policy)


def _now_ms() -> int:
    return int(time.time() * 1000)


def wait_ready(index: CachedBrokerIndex) -> IndexStatus:
    """Start the index when no complete one exists and wait for it (a search must not answer from half an
    index); a StorageError naming why when it ends without one."""
    status = index.status()
    if status.ready:
        if status.state is IndexState.IDLE:
            index.refresh()  # a cache from an earlier visit answers now; the broker is read again meanwhile
        return status
    index.refresh()
    status = index.wait()
    if not status.ready:
        raise StorageError(
            f"the search index of this broker is not complete ({status.state}: {status.indexed} of "
            f"{status.total} topics read{'; ' + status.error if status.error else ''}); refresh it to search"
        )
    return status
