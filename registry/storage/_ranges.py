"""A SQL registry (a SQLite file or a PostgreSQL database) read by ranges of a stable topic key, by readers in
processes that share nothing but the location: Spark tasks, each reading its own part of a fleet.

Why: an audit of a million topics cannot pass the registry through one process. A planner cuts the key space
into ranges from the keys alone (`RangeReader.plan`: boundaries computed in SQL, never a history read), and
each reader opens the registry itself and reads only its range (`RangeRead.bundles`), a few hundred topics at
a time, as the records an export writes (registry/_snapshot.py), so whatever rebuilds registries from snapshot
records (`registry_from_records`) answers for them exactly as for an export.

The key is the schema id, `tenant/namespace/topic` (no domain): a history's own key (the `schemas` and
`heads` primary keys), so a history is read by one reader only, and persistent:// and non-persistent://
topics that share it (Pulsar keys histories so, §1) land together. Keys compare by code point, which is the
byte order of both engines (SQLite's BINARY, PostgreSQL's "C" collation).

One state for every reader:
- PostgreSQL: `pinned()` exports the snapshot of a REPEATABLE READ transaction it holds open
  (`pg_export_snapshot()`), and every reader opens it (`SET TRANSACTION SNAPSHOT`): all ranges are read from
  one committed state, whatever commits meanwhile. A reader that starts after the pin was released fails
  (StorageError), never reads another state silently.
- SQLite cannot share a state between connections: each reader reads its range in one read transaction
  (one state), and says which (`RangeRead.token`, the change token of what it read); a token other than the
  pinned one means the registry changed between the plan and that read, and that range may show the newer
  state. The caller reports it (the pipeline does, by range).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import RegistryNotFoundError, StorageError
from .._model import TopicPolicy
from .._names import DOMAINS, TopicName
from ._rows import client_of, namespace_policy_from_json, schema_version_of, topic_policy_from_json
from ._snapshot_values import (
    _namespace_policy_record,
    _topic_policy_record,
    client_record,
    version_record,
)
from ._sql import SqlDialect

if TYPE_CHECKING:
    from .._handle import SchemaRegistry

Record = dict[str, Any]
_UNREADABLE = (ValueError, TypeError, KeyError)  # a stored value the model refuses (json errors are ValueErrors)
CHUNK = 500  # keys read at once by a reader: what it holds in memory (a 20-version history of 1 KB: ~26 KB)
_TOKEN = "SELECT value FROM meta WHERE key = 'changes'"
_VERSIONS = (
    'SELECT schema_id, version, type, data, properties, timestamp, deleted, "user" FROM schemas WHERE {where} '
    "ORDER BY schema_id, version"
)
_CLIENTS = (
    "SELECT topic, role, name, subscription, schema_type, version, connected_at, replicator FROM clients "
    "WHERE {where} ORDER BY topic, role, name, subscription"
)


@dataclass(frozen=True, slots=True)
class KeyRange:
    """The topics whose key (schema id `tenant/namespace/topic`) is in [low, high); None leaves that end open."""

    low: str | None = None
    high: str | None = None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (self.low is None or key >= self.low) and (self.high is None or key < self.high)

    @classmethod
    def of(cls, *, tenant: str | None = None, namespace: str | None = None) -> KeyRange:
        """Every key of one namespace (`tenant/ns`) or one tenant; the whole key space without either."""
        prefix = f"{namespace}/" if namespace is not None else f"{tenant}/" if tenant is not None else None
        return cls() if prefix is None else cls(prefix, _after(prefix))

    def split(self, boundaries: Sequence[str]) -> list[KeyRange]:
        """This range cut at `boundaries` (sorted keys inside it)."""
        edges = [self.low, *boundaries, self.high]
        return [KeyRange(lo, hi) for lo, hi in zip(edges, edges[1:], strict=False)]


@dataclass(frozen=True, slots=True)
class ReadState:
    """The committed state a read was planned on: its change token and, for PostgreSQL, the exported snapshot
    every reader opens (None: readers see the latest commit and compare tokens)."""

    token: int
    snapshot: str | None = None


@dataclass(frozen=True, slots=True)
class TopicBundle:
    """Everything the core needs to answer for the topics of one key, as snapshot records: their namespace
    (with its policy), the topics (persistent:// and non-persistent:// may share a key), the history with its
    tombstones, oldest first, and the recorded clients. Tenants are implied by the key."""

    key: str
    tenant: str
    namespace: str
    records: tuple[Record, ...]
    problem: str | None = None  # why some of its stored rows could not be read (its records are then partial)

    @property
    def topics(self) -> list[str]:
        return [r["name"] for r in self.records if r["kind"] == "topic"]


class RangeRead:
    """One reader's read transaction: `token` is the change token of the state it reads."""

    def __init__(self, dialect: SqlDialect, db: Any, token: int) -> None:
        self._dialect, self._db, self.token = dialect, db, token

    def _rows(self, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return list(self._dialect.execute(self._db, sql, list(params)).fetchall())

    def bundles(self, key_range: KeyRange, *, chunk: int = CHUNK) -> Iterator[TopicBundle]:
        """The bundles of every key in `key_range` that has a topic, in key order, `chunk` keys read at a time."""
        low = key_range.low
        while True:
            upper = self._chunk_end(low, key_range.high, chunk)
            yield from self._chunk(KeyRange(low, upper))
            if upper is None or upper == key_range.high:
                return
            low = upper

    def _chunk_end(self, low: str | None, high: str | None, chunk: int) -> str | None:
        """The key `chunk` histories after `low` (the next chunk's first), or `high` when fewer remain."""
        rows = self._rows(
            "SELECT schema_id FROM heads WHERE schema_id >= ? ORDER BY schema_id LIMIT 1 OFFSET ?", [low or "", chunk]
        )
        if not rows or (high is not None and str(rows[0][0]) >= high):
            return high
        return str(rows[0][0])

    def _chunk(self, keys: KeyRange) -> Iterator[TopicBundle]:
        """The bundles of `keys`; a stored row that cannot be read (a value the registry would refuse: an
        unknown type, a policy that is not JSON) marks its key's bundle with the reason, the other keys read on."""
        topics: dict[str, list[tuple[str, str]]] = {}  # key -> (topic, namespace)
        policies: dict[str, str] = {}
        clients: dict[str, list[Record]] = {}
        problems: dict[str, str] = {}

        def unreadable(key: str, what: str, exc: Exception) -> None:
            problems.setdefault(key, f"unreadable {what} row: {type(exc).__name__}: {exc}")

        for domain in DOMAINS:
            where, params = _prefixed(f"{domain}://", keys)
            for name, ns in self._rows(f"SELECT name, namespace FROM topics WHERE {where.format(c='name')}", params):
                topics.setdefault(str(name).split("://", 1)[1], []).append((str(name), str(ns)))
            for topic, policy in self._rows(
                f"SELECT topic, policy FROM topic_policies WHERE {where.format(c='topic')}", params
            ):
                policies[str(topic)] = str(policy)
            for row in self._rows(_CLIENTS.format(where=where.format(c="topic")), params):
                key = str(row[0]).split("://", 1)[-1]
                try:
                    clients.setdefault(key, []).append(client_record(client_of(row)))
                except _UNREADABLE as exc:
                    unreadable(key, "client", exc)
        if not topics:
            return
        versions: dict[str, list[Record]] = {}
        where, params = _bounded("schema_id", keys)
        for row in self._rows(_VERSIONS.format(where=where), params):
            key = str(row[0])
            if key in topics:
                try:
                    versions.setdefault(key, []).append(version_record(schema_version_of(key, row[1:])))
                except _UNREADABLE as exc:
                    unreadable(key, f"version {row[1]}", exc)
        names = sorted({ns for found in topics.values() for _, ns in found})
        marks = ", ".join("?" * len(names))
        stored = dict(self._rows(f"SELECT name, policy FROM namespaces WHERE name IN ({marks})", names))
        namespaces = {ns: {"kind": "namespace", "name": ns, "policy": _policy(ns, stored.get(ns))} for ns in names}
        for key in sorted(topics):
            found = sorted(topics[key])
            namespace = found[0][1]
            records: list[Record] = [namespaces[namespace]]
            for name, ns in found:
                try:
                    policy = topic_policy_from_json(policies[name]) if name in policies else TopicPolicy()
                except _UNREADABLE as exc:
                    unreadable(key, "topic policy", exc)
                    policy = TopicPolicy()
                records.append(
                    {
                        "kind": "topic",
                        "name": name,
                        "namespace": ns,
                        "policy": None if policy == TopicPolicy() else _topic_policy_record(policy),
                    }
                )
            records += versions.get(key, [])
            records += clients.get(key, [])
            tenant = namespace.split("/")[0]
            yield TopicBundle(key, tenant, namespace, tuple(records), problems.get(key))


class RangeReader:
    """A SQLite file or PostgreSQL database opened for reading by key range (module docstring): a planner
    calls `plan` and holds `pinned()` for the length of the job; each reader opens its own `RangeReader` on the
    same location and reads `reading(state).bundles(range)`. Never creates or changes anything."""

    def __init__(self, location: str) -> None:
        from .._location import LocationKind, parse_location

        where = parse_location(location)
        if where.kind is LocationKind.SQLITE:
            from ._sqlite import SqliteDialect

            path = Path(where.target).expanduser()
            if not path.is_file():
                raise RegistryNotFoundError(
                    f"no registry file at {str(path)!r} (it must be on a path this process sees)"
                )
            self._dialect: SqlDialect = SqliteDialect(path, read_only=True)
        elif where.kind is LocationKind.POSTGRESQL:
            from ._postgres import PostgresDialect

            self._dialect = PostgresDialect(where.target, pool_size=2)
        else:
            raise StorageError(
                f"registry location {where.shown!r}: only a SQLite file or a PostgreSQL database is read by key range"
            )
        self.location = where.shown
        try:
            with self._dialect.snapshot() as db:
                found = self._dialect.stored_format(db)
        except BaseException:
            self._dialect.close()
            raise
        if found is None or found > self._dialect.format or found < 3 and where.kind is LocationKind.SQLITE:
            self._dialect.close()
            if found is None:
                raise RegistryNotFoundError(f"no registry in {self._dialect.where}")
            raise StorageError(
                f"{self._dialect.what} is in storage format {found}: open it once with this release "
                f"(formats up to {self._dialect.format} are read, from 3 on for a file)"
            )

    def __enter__(self) -> RangeReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._dialect.close()

    def plan(self, per_range: int, within: KeyRange | None = None) -> list[tuple[KeyRange, int]]:
        """`within` cut into ranges of about `per_range` histories each, with the number of histories in each:
        boundaries computed by the database from the keys alone (nothing of a history is read, nothing but
        the boundaries comes back), so planning a million topics costs the planner almost no memory."""
        if per_range < 1:
            raise ValueError("per_range must be at least 1")
        within = within or KeyRange()
        where, params = _bounded("schema_id", within)
        boundaries_sql = (
            f"SELECT schema_id, n FROM (SELECT schema_id, row_number() OVER (ORDER BY schema_id) AS n FROM heads "
            f"WHERE {where}) numbered WHERE (n - 1) % ? = 0 AND n > 1 ORDER BY schema_id"
        )
        with self._dialect.snapshot() as db:
            (total,) = self._dialect.execute(db, f"SELECT count(*) FROM heads WHERE {where}", params).fetchone()
            rows = self._dialect.execute(db, boundaries_sql, [*params, per_range]).fetchall()
        ranges = within.split([str(key) for key, _ in rows])
        starts = [1, *(int(n) for _, n in rows), int(total) + 1]
        return [(r, starts[i + 1] - starts[i]) for i, r in enumerate(ranges)]

    @contextmanager
    def pinned(self) -> Iterator[ReadState]:
        """The state readers should read, held for the block (PostgreSQL: an exported snapshot)."""
        with self._dialect.pin() as snapshot:
            with self._dialect.snapshot_at(snapshot) as db:
                token = _token(self._dialect, db)
            yield ReadState(token=token, snapshot=snapshot)

    @contextmanager
    def reading(self, state: ReadState | None = None) -> Iterator[RangeRead]:
        """One read transaction: at `state`'s snapshot where it has one, else at the latest commit."""
        with self._dialect.snapshot_at(None if state is None else state.snapshot) as db:
            yield RangeRead(self._dialect, db, _token(self._dialect, db))


def _policy(namespace: str, stored: Any) -> Record:
    """A namespace's stored policy as a snapshot writes it; StorageError naming the namespace when it cannot be
    read (every topic of the namespace depends on it: the reader's range cannot be read)."""
    if stored is None:
        return {}
    try:
        return _namespace_policy_record(namespace_policy_from_json(str(stored)))
    except _UNREADABLE as exc:
        raise StorageError(f"unreadable policy of namespace {namespace!r}: {type(exc).__name__}: {exc}") from None


def _token(dialect: SqlDialect, db: Any) -> int:
    row = dialect.execute(db, _TOKEN).fetchone()
    return int(row[0]) if row else 0


def _after(prefix: str) -> str:
    """The smallest string above every string that starts with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _bounded(column: str, keys: KeyRange) -> tuple[str, list[object]]:
    """A WHERE clause keeping `column` in `keys`."""
    where: list[str] = ["1 = 1"]
    params: list[object] = []
    if keys.low is not None:
        where.append(f"{column} >= ?")
        params.append(keys.low)
    if keys.high is not None:
        where.append(f"{column} < ?")
        params.append(keys.high)
    return " AND ".join(where), params


def _prefixed(prefix: str, keys: KeyRange) -> tuple[str, list[object]]:
    """A WHERE clause (column left as `{c}`) keeping full names `prefix + key` with key in `keys`: a range of
    the names' own index."""
    low = prefix + (keys.low or "")
    high = prefix + keys.high if keys.high is not None else _after(prefix)
    return "{c} >= ? AND {c} < ?", [low, high]


def namespace_bundles(
    registry: SchemaRegistry, namespace: str, keys: Collection[str] | None = None
) -> Iterator[TopicBundle]:
    """The bundles of one namespace read through the facade, in key order: for registries read by namespace
    rather than by key range (a remote admin API, a storage of one's own); only those of `keys` when given
    (the other topics are listed, never read). One topic listing, then per topic
    its history (shared by persistent:// and non-persistent:// topics of one key: read once), its own policy
    where the broker keeps topic policies, and its recorded clients where the registry records them."""
    record = {
        "kind": "namespace",
        "name": namespace,
        "policy": _namespace_policy_record(registry.namespace_policy(namespace)),
    }
    policies = registry.broker.topic_level_policies_enabled
    by_key: dict[str, list[str]] = {}
    for topic in registry.topics(namespace):
        key = TopicName.parse(topic).schema_id
        if keys is None or key in keys:
            by_key.setdefault(key, []).append(topic)
    tenant = namespace.split("/")[0]
    for key in sorted(by_key):
        records: list[Record] = [record]
        topics = sorted(by_key[key])
        for topic in topics:
            policy = registry.topic_policy(topic) if policies else TopicPolicy()
            records.append(
                {
                    "kind": "topic",
                    "name": topic,
                    "namespace": namespace,
                    "policy": None if policy == TopicPolicy() else _topic_policy_record(policy),
                }
            )
        records += [version_record(entry) for entry in registry.history(topics[0], include_deleted=True)]
        if registry.records_clients:
            records += [client_record(client) for topic in topics for client in registry.clients(topic)]
        yield TopicBundle(key=key, tenant=tenant, namespace=namespace, records=tuple(records))
