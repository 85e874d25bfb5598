"""The topic catalog: one summary row per topic, searched and paged in the core.

The app's Browse page and the server's `/explorer/v1/topics` both page through this, so search semantics
live once, here. A broken stored schema never breaks the list: its row says so in `error`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from ._model import CompatibilityStrategy, PolicySource, SchemaType


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
    fields: tuple[str, ...] = ()  # field names of the latest AVRO/JSON schema, dotted for nested records
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

    `text` matches, case-insensitively, a substring of the topic's full name or of one of its field names.
    """

    text: str = ""
    tenant: str | None = None
    namespace: str | None = None  # "tenant/namespace"
    schema_types: frozenset[SchemaType] = frozenset()
    strategies: frozenset[CompatibilityStrategy] = frozenset()
    min_versions: int | None = None
    max_versions: int | None = None
    has_clients: bool | None = None

    def matches(self, row: TopicSummary) -> bool:
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
        needle = self.text.strip().lower()
        if not needle:
            return True
        return needle in row.topic.lower() or any(needle in f.lower() for f in row.fields)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPage:
    """One page of a search, with the total and the facet counts of everything the search matched."""

    items: tuple[TopicSummary, ...]
    total: int
    offset: int
    limit: int
    by_type: Mapping[str, int] = field(default_factory=dict)  # schema type name (or "NONE") -> count
    by_strategy: Mapping[str, int] = field(default_factory=dict)

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.items) < self.total


def page_of(rows: Iterable[TopicSummary], query: TopicQuery, *, offset: int, limit: int) -> TopicPage:
    """Filter `rows` (already in topic-name order), count facets, and cut one page."""
    matched = [row for row in rows if query.matches(row)]
    by_type = Counter(row.schema_type.value if row.schema_type else "NONE" for row in matched)
    by_strategy = Counter(row.strategy.value for row in matched)
    return TopicPage(
        items=tuple(matched[offset : offset + limit]),
        total=len(matched),
        offset=offset,
        limit=limit,
        by_type=dict(by_type),
        by_strategy=dict(by_strategy),
    )


def field_names(schema_type: SchemaType, schema_text: str) -> tuple[str, ...]:
    """Field names of an AVRO/JSON schema for search, dotted through nested records; () for other types.

    A plain JSON walk, not an Avro parse: search must stay cheap on 100k topics and tolerate any text.
    """
    if schema_type not in (SchemaType.AVRO, SchemaType.JSON):
        return ()
    try:
        tree = json.loads(schema_text)
    except ValueError:
        return ()
    return tuple(dict.fromkeys(_walk(tree, "", 0)))


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
