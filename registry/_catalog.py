"""The topic catalog: one summary row per topic, searched and paged in the core.

The app's Browse page and the server's `/explorer/v1/topics` both page through this, so search semantics
live once, here. A broken stored schema never breaks the list: its row says so in `error`. A plain broker's
catalog is searched from an index built in the background (remote/_broker_index.py); where that index stands
(`IndexStatus`) is a value here, and so is the `BrokerIndex` interface a handle that has one offers, so every
handle can answer without importing the remote side.
"""

from __future__ import annotations

import abc
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Final, Protocol, runtime_checkable

from google.protobuf.descriptor import Descriptor

from ._errors import InvalidSchemaError
from ._key_value import split_key_value
from ._model import ClientRole, CompatibilityStrategy, Effective, NamespacePolicy, PolicySource, TopicPolicy
from ._types import SchemaType
from .protobuf._native import parse_protobuf_native


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicSummary:
    """What a topic list shows about one topic, from its latest live version and its policies."""

    topic: str
    tenant: str
    namespace: str
    schema_type: SchemaType | None  # None: no live schema (never registered, or deleted)
    versions: int  # live versions
    latest_version: int | None
    updated_at: int | None  # the latest live version's timestamp, ms since the epoch
    deleted: bool  # the history ends with a tombstone
    strategy: CompatibilityStrategy
    strategy_source: PolicySource
    producers: int
    consumers: int
    fields: tuple[str, ...] = ()  # field names of the latest schema, dotted for nested types (see read_fields)
    error: str = ""  # why the latest schema could not be read, when it could not

    @property
    def has_clients(self) -> bool:
        return self.producers + self.consumers > 0

    @property
    def short_name(self) -> str:
        return self.topic.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicQuery:
    """A search over the catalog; every criterion is optional and they combine with AND.

    `text` is whitespace-separated terms that must all match, case-insensitively: a plain term is a
    substring of the topic's full name or of one of its field names; `name:x` and `field:x` restrict it to
    one of them; `type:AVRO` names the latest schema type exactly (`type:NONE`: no live schema).
    """

    text: str = ""
    tenant: str | None = None
    namespace: str | None = None  # "tenant/namespace"
    schema_types: frozenset[SchemaType] = frozenset()
    strategies: frozenset[CompatibilityStrategy] = frozenset()
    min_versions: int | None = None
    max_versions: int | None = None
    has_clients: bool | None = None

    def terms(self) -> tuple[tuple[str, str], ...]:
        """(kind, lower-case needle) per term of `text`; kind is "any", "name", "field" or "type"."""
        found: list[tuple[str, str]] = []
        for word in self.text.lower().split():
            kind, sep, needle = word.partition(":")
            if sep and kind in _TERM_KINDS and needle:
                found.append((kind, needle))
            else:
                found.append(("any", word))
        return tuple(found)

    def matches(self, row: TopicSummary) -> bool:
        """The reference semantics of a search, one row at a time (Catalog.search is the fast equivalent)."""
        if self.tenant is not None and row.tenant != self.tenant:
            return False
        if self.namespace is not None and row.namespace != self.namespace:
            return False
        if self.schema_types and row.schema_type not in self.schema_types:
            return False
        if self.strategies and row.strategy not in self.strategies:
            return False
        if self.min_versions is not None and row.versions < self.min_versions:
            return False
        if self.max_versions is not None and row.versions > self.max_versions:
            return False
        if self.has_clients is not None and row.has_clients != self.has_clients:
            return False
        name = row.topic.lower()
        fields = [f.lower() for f in row.fields]
        kind_name = (row.schema_type.value if row.schema_type else "NONE").lower()
        for kind, needle in self.terms():
            in_name = needle in name
            in_fields = any(needle in f for f in fields)
            ok = {
                "any": in_name or in_fields,
                "name": in_name,
                "field": in_fields,
                "type": kind_name == needle,
            }[kind]
            if not ok:
                return False
        return True


_TERM_KINDS = frozenset({"name", "field", "type"})


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPage:
    """One page of a search, with the total and the facet counts of everything the search matched."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("has_more",)

    items: tuple[TopicSummary, ...]
    total: int
    offset: int
    limit: int
    by_type: Mapping[str, int] = field(default_factory=dict)  # schema type name (or "NONE") -> count
    by_strategy: Mapping[str, int] = field(default_factory=dict)
    by_namespace: Mapping[str, int] = field(default_factory=dict)  # "tenant/namespace" -> count

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.items) < self.total


def page_of(rows: Iterable[TopicSummary], query: TopicQuery, *, offset: int, limit: int) -> TopicPage:
    """Filter `rows` (already in catalog order) with the reference semantics, count facets, cut one page."""
    return _page([row for row in rows if query.matches(row)], offset=offset, limit=limit)


def _page(matched: Sequence[TopicSummary], *, offset: int, limit: int) -> TopicPage:
    by_type = Counter(row.schema_type.value if row.schema_type else "NONE" for row in matched)
    by_strategy = Counter(row.strategy.value for row in matched)
    by_namespace = Counter(row.namespace for row in matched)
    return TopicPage(
        items=tuple(matched[offset : offset + limit]),
        total=len(matched),
        offset=offset,
        limit=limit,
        by_type=dict(by_type),
        by_strategy=dict(by_strategy),
        by_namespace=dict(by_namespace),
    )


# --- the fast catalog: built once per change of the registry, searched in memory ---------------------------


# One row per topic, as a storage reads them for every topic at once (plain tuples: 100k of them are cheap):
# (topic, namespace, latest version, its type, its timestamp, deleted, live versions, fields, data), where
# the five facts of the latest entry are None for a topic without history, `fields` is the stored search
# keys joined by newlines (None when not stored: then `data` holds the schema to read them from).
CatalogRow = tuple[str, str, int | None, str | None, int | None, bool | None, int | None, str | None, bytes | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogSource:
    """Everything the catalog is built from, read by the storage in one consistent snapshot."""

    token: int  # the storage's change token of this snapshot
    rows: Sequence[CatalogRow]  # in catalog order: tenant, then namespace, then topic
    namespace_policies: Mapping[str, NamespacePolicy]
    topic_policies: Mapping[str, TopicPolicy]
    clients: Mapping[tuple[str, str], int]  # (topic, role) -> recorded clients


@runtime_checkable
class CatalogStorage(Protocol):
    """Optional for a storage: read the catalog's facts for every topic at once (one query, not one per topic)."""

    def catalog_source(self) -> CatalogSource: ...


StrategyOf = Callable[[TopicPolicy | None, NamespacePolicy | None], Effective[CompatibilityStrategy]]
FieldsOf = Callable[[str, int, SchemaType, bytes], "FieldsRead"]  # (schema id, version, type, data)
_TYPES = {t.value: t for t in SchemaType}


class Catalog:
    """Every topic in catalog order (tenant, namespace, topic), held as columns and searched without I/O.

    Only the rows of the requested page become TopicSummary values, so building and searching 100k topics
    costs a few list comprehensions, not 100k objects."""

    __slots__ = (
        "_consumers", "_deleted", "_errors", "_fields", "_fields_lower", "_latest", "_names", "_namespaces",
        "_producers", "_sources", "_strategies", "_tenants", "_topics", "_types", "_type_names", "_type_values",
        "_updated", "_versions", "token",
    )  # fmt: skip

    def __init__(self, rows: Sequence[TopicSummary], token: int) -> None:
        """A catalog of ready summaries (storages without a catalog source)."""
        ordered = sorted(rows, key=lambda r: (r.tenant, r.namespace, r.topic))
        self.token = token
        self._topics = [r.topic for r in ordered]
        self._namespaces = [r.namespace for r in ordered]
        self._tenants = [r.tenant for r in ordered]
        self._types = [r.schema_type for r in ordered]
        self._versions = [r.versions for r in ordered]
        self._latest = [r.latest_version for r in ordered]
        self._updated = [r.updated_at for r in ordered]
        self._deleted = [r.deleted for r in ordered]
        self._strategies = [r.strategy for r in ordered]
        self._sources = [r.strategy_source for r in ordered]
        self._producers = [r.producers for r in ordered]
        self._consumers = [r.consumers for r in ordered]
        self._fields = ["\n".join(r.fields) for r in ordered]  # split again only for the rows of a page
        self._errors = [r.error for r in ordered]
        self._index()

    def _index(self) -> None:
        self._names = [t.lower() for t in self._topics]
        self._fields_lower = [f.lower() for f in self._fields]
        self._type_values = [t.value if t is not None else "NONE" for t in self._types]
        self._type_names = [t.lower() for t in self._type_values]

    @classmethod
    def build(cls, source: CatalogSource, strategy_of: StrategyOf, fields_of: FieldsOf) -> Catalog:
        """The catalog of a storage snapshot; `fields_of` reads the search keys a storage did not keep."""
        rows = source.rows
        self = cls.__new__(cls)
        self.token = source.token
        if rows:
            topics, namespaces, latest, types, updated, deleted, live, fields, data = map(list, zip(*rows, strict=True))
        else:
            topics = namespaces = latest = types = updated = deleted = live = fields = data = []
        self._topics, self._namespaces = topics, namespaces
        self._tenants = [ns.split("/", 1)[0] for ns in namespaces]
        is_live = [d is not None and not d for d in deleted]
        self._deleted = [bool(d) for d in deleted]
        self._types = [_TYPES[t] if ok else None for t, ok in zip(types, is_live, strict=True)]
        self._versions = [v if ok else 0 for v, ok in zip(live, is_live, strict=True)]
        self._latest = [v if ok else None for v, ok in zip(latest, is_live, strict=True)]
        self._updated = [t if ok else None for t, ok in zip(updated, is_live, strict=True)]
        by_namespace = {ns: strategy_of(None, source.namespace_policies.get(ns)) for ns in set(namespaces)}
        strategies = [by_namespace[ns] for ns in namespaces]
        if source.topic_policies:
            for i, topic in enumerate(topics):
                policy = source.topic_policies.get(topic)
                if policy is not None and policy.compatibility not in (None, CompatibilityStrategy.UNDEFINED):
                    strategies[i] = strategy_of(policy, source.namespace_policies.get(namespaces[i]))
        self._strategies = [s.value for s in strategies]
        self._sources = [s.source for s in strategies]
        producer, consumer = str(ClientRole.PRODUCER), str(ClientRole.CONSUMER)
        self._producers = [source.clients.get((t, producer), 0) for t in topics]
        self._consumers = [source.clients.get((t, consumer), 0) for t in topics]
        self._errors = [""] * len(topics)
        self._fields = [f if ok and f is not None else "" for f, ok in zip(fields, is_live, strict=True)]
        for i, stored in enumerate(fields):
            if stored is None and is_live[i]:  # not kept by the storage (or unreadable): read it here
                kind = self._types[i]
                assert kind is not None and latest[i] is not None
                found, self._errors[i] = fields_of(topics[i].split("://", 1)[-1], latest[i], kind, data[i] or b"")
                self._fields[i] = "\n".join(found)
        self._index()
        return self

    def __len__(self) -> int:
        return len(self._topics)

    @property
    def rows(self) -> tuple[TopicSummary, ...]:
        """Every row as a TopicSummary (for tests and exports; a search materialises only its page)."""
        return tuple(self._row(i) for i in range(len(self._topics)))

    def _row(self, i: int) -> TopicSummary:
        return TopicSummary(
            topic=self._topics[i],
            tenant=self._tenants[i],
            namespace=self._namespaces[i],
            schema_type=self._types[i],
            versions=self._versions[i],
            latest_version=self._latest[i],
            updated_at=self._updated[i],
            deleted=self._deleted[i],
            strategy=self._strategies[i],
            strategy_source=self._sources[i],
            producers=self._producers[i],
            consumers=self._consumers[i],
            fields=tuple(self._fields[i].split("\n")) if self._fields[i] else (),
            error=self._errors[i],
        )

    def search(self, query: TopicQuery, *, offset: int, limit: int) -> TopicPage:
        """The same answer as `page_of(self.rows, query, ...)`, filtering columns with C-speed substring tests."""
        index: Sequence[int] = range(len(self._topics))
        if query.tenant is not None:
            index = [i for i in index if self._tenants[i] == query.tenant]
        if query.namespace is not None:
            index = [i for i in index if self._namespaces[i] == query.namespace]
        if query.schema_types:
            index = [i for i in index if self._types[i] in query.schema_types]
        if query.strategies:
            index = [i for i in index if self._strategies[i] in query.strategies]
        if query.min_versions is not None:
            index = [i for i in index if self._versions[i] >= query.min_versions]
        if query.max_versions is not None:
            index = [i for i in index if self._versions[i] <= query.max_versions]
        if query.has_clients is not None:
            index = [i for i in index if (self._producers[i] + self._consumers[i] > 0) == query.has_clients]
        names, fields, types = self._names, self._fields_lower, self._type_names
        for kind, needle in query.terms():
            if kind == "any":
                index = [i for i in index if needle in names[i] or needle in fields[i]]
            elif kind == "name":
                index = [i for i in index if needle in names[i]]
            elif kind == "field":
                index = [i for i in index if needle in fields[i]]
            else:
                index = [i for i in index if types[i] == needle]
        type_values, strategies = self._type_values, self._strategies
        return TopicPage(
            items=tuple(self._row(i) for i in index[offset : offset + limit]),
            total=len(index),
            offset=offset,
            limit=limit,
            by_type=dict(Counter(type_values[i] for i in index)),
            by_strategy={str(k): v for k, v in Counter(strategies[i] for i in index).items()},
            by_namespace=dict(Counter(self._namespaces[i] for i in index)),
        )


FieldsRead = tuple[tuple[str, ...], str]  # (field names, why they could not be read, or "")


# Types whose schema data is an Avro-style JSON document (PROTOBUF is the Avro form of a generated class).
_JSON_FIELD_TYPES = (SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF)


def read_fields(schema_type: SchemaType, data: bytes) -> FieldsRead:
    """Field names of a stored schema for search, dotted through nested types, and an error text when the
    schema cannot be read: Avro-style JSON (AVRO, JSON, PROTOBUF), each part of a KEY_VALUE (`key.id`,
    `value.amount`) and the messages of a PROTOBUF_NATIVE descriptor from its root message; () for primitives."""
    if schema_type in _JSON_FIELD_TYPES:
        try:
            tree = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return (), f"the stored {schema_type} schema is not valid JSON ({exc})"
        return tuple(dict.fromkeys(_walk(tree, "", 0))), ""
    try:
        if schema_type is SchemaType.KEY_VALUE:
            return _key_value_fields(data), ""
        if schema_type is SchemaType.PROTOBUF_NATIVE:
            root = parse_protobuf_native(data).root
            return tuple(dict.fromkeys(_walk_message(root, "", (root.full_name,)))), ""
    except InvalidSchemaError as exc:
        return (), f"the stored {schema_type} schema cannot be read ({exc})"
    return (), ""


def _key_value_fields(data: bytes) -> tuple[str, ...]:
    """Fields of both parts of KEY_VALUE data. A part's type is in the version's properties, which search keys
    are made without; the JSON walk finds nothing in a primitive part (empty) and needs no type to read a
    record, so each part is walked as JSON when it is JSON."""
    names: list[str] = []
    for which, part in zip(("key", "value"), split_key_value(data), strict=True):
        try:
            tree = json.loads(part.decode("utf-8")) if part.strip() else None
        except (ValueError, UnicodeDecodeError):
            continue
        names.extend(_walk(tree, f"{which}.", 0))
    return tuple(dict.fromkeys(names))


def _walk_message(message: Descriptor, prefix: str, path: tuple[str, ...]) -> Iterator[str]:
    """Fields of a protobuf message, dotted into message-typed fields (a map's values too); a type already on
    the path (recursion) is not entered again."""
    if len(path) > 32:
        return
    for f in message.fields:
        name = f"{prefix}{f.name}"
        yield name
        inner = f.message_type
        if inner is not None and inner.GetOptions().map_entry:
            inner = inner.fields_by_name["value"].message_type
        if inner is not None and inner.full_name not in path:
            yield from _walk_message(inner, f"{name}.", (*path, inner.full_name))


def stored_fields(schema_type: SchemaType, data: bytes) -> str | None:
    """The `fields` value a storage keeps beside a version: names joined by newlines, None when unreadable."""
    names, error = read_fields(schema_type, data)
    return None if error else "\n".join(names)


def _walk(node: object, prefix: str, depth: int) -> Iterator[str]:
    if depth > 32:
        return
    if isinstance(node, list):
        for branch in node:
            yield from _walk(branch, prefix, depth + 1)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind == "record" or kind == "error":
            for item in node.get("fields") or ():
                if isinstance(item, dict) and isinstance(item.get("name"), str):
                    path = f"{prefix}{item['name']}"
                    yield path
                    yield from _walk(item.get("type"), f"{path}.", depth + 1)
        elif kind == "array":
            yield from _walk(node.get("items"), prefix, depth + 1)
        elif kind == "map":
            yield from _walk(node.get("values"), prefix, depth + 1)
        elif isinstance(kind, dict | list):
            yield from _walk(kind, prefix, depth + 1)


INDEX_WORKERS: Final = 32  # reads in flight while indexing topics (enough to keep a real broker busy)


class IndexState(StrEnum):
    """The phase of a plain broker's index run."""

    IDLE = "idle"  # not started in this process (a cache from an earlier visit may answer)
    LISTING = "listing"  # reading namespaces and their topic lists
    INDEXING = "indexing"  # reading each topic's schemas
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexStatus:
    """Where the search index of a plain broker stands (`reg.broker_index.status()`)."""

    state: IndexState
    indexed: int  # topics read so far in this run
    total: int  # topics listed in this run (0 until the listing is done)
    cached: int  # topics the cache holds (what a search answers from)
    complete_at: int | None  # when the last complete index finished, ms since the epoch; None: never
    unreadable: int = 0  # topics of this run whose schemas could not be read (their cached row, if any, stays)
    error: str = ""  # why the run failed, or the first unreadable topic's reason
    cache_path: str = ""  # the SQLite file
    workers: int = INDEX_WORKERS  # reads in flight now (fewer while the broker refuses for load)
    requests: int = 0  # HTTP requests the handle sent since this run started (the run's; and any other call's)

    @property
    def ready(self) -> bool:
        """A complete index exists (maybe from an earlier visit): a search answers from it at once."""
        return self.complete_at is not None

    @property
    def running(self) -> bool:
        return self.state in (IndexState.LISTING, IndexState.INDEXING)

    def age_s(self, now_ms: int | None = None) -> float | None:
        """Seconds since the last complete index finished (None: never)."""
        if self.complete_at is None:
            return None
        return max(0.0, ((now_ms if now_ms is not None else int(time.time() * 1000)) - self.complete_at) / 1000)


class BrokerIndex(abc.ABC):
    """The background search index of a plain broker, as a handle offers it (`SchemaRegistry.broker_index`):
    a capability asked for, not a stub, since only a handle on a plain broker has one (embedded registries and
    `schema-explorer serve` search without it). remote/_broker_index.py implements it."""

    __slots__ = ()

    @abc.abstractmethod
    def status(self) -> IndexStatus:
        """Where the index stands: its run's phase, the topics read of those listed, how old the cache is."""

    @abc.abstractmethod
    def refresh(self) -> IndexStatus:
        """Start reading the broker again in the background (a no-op while a run goes on; a cancelled run
        resumes: the topics it read are not read again)."""

    @abc.abstractmethod
    def cancel(self) -> IndexStatus:
        """Stop the running index: what it read stays cached, and the next refresh resumes."""
