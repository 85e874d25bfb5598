"""Avro schema parsing as Pulsar's broker does it with Avro 1.12 Java (pulsar-semantics.md §3.3, §3.7, §4.2).

Why not fastavro's parser: Pulsar's verdicts depend on Java's exact parse rules (the lenient name validator,
default validation switched off for checks and on for dedup, `Schema.equals` ignoring docs and aliases).
We decode JSON with msgspec and build a small graph in one pass. Parsing is on the path of every cold
check, so the pass does only what checks need: each node gets its structure id (identical subtrees resolve
with nothing to report) and where it sits; JSON pointers, alias indexes, default validation and the equality
key are derived on first use. Names are memoised as shared strings. In the compiled build (mypyc) the nodes
that cannot be part of a reference cycle (leaves, sites, most fields) are invisible to the cyclic collector,
which would otherwise walk every node of every cached schema again and again.

The nodes are in _nodes.py and the parser in _parser.py; this module is the entry point and its cache.
"""

from __future__ import annotations

import gc
from typing import Final

from .._cache_budget import AVRO_FACTOR, AVRO_PARSED_BYTES
from ._nodes import AvroSchema
from ._parser import parse_text

# Below this many characters (some 300 fields) a parse allocates too few tracked objects for the collector to
# start more than once (its first threshold is 700).
_SMALL_TEXT: Final = 8192


# Parsed schemas by text, least recently used first (dicts keep insertion order). A plain dict rather than
# functools.lru_cache: compiled, a lookup stays native instead of going through a Python call and the cache's
# linked list, which measurably slowed small cold checks. Bounded by bytes (registry/_cache_budget.py): an entry
# costs `parse_cost`; one larger than the whole share is parsed but not kept.
# No lock: a lock on every miss cost a tenth of a small cold check (bench/bench_compat.py, 3-field pair: 8.0x
# the avro package with it, 8.8x without, 9.4x before the byte bound). Every step is one atomic dict operation
# and compiled code switches threads only inside them, so races are rare and bounded: two misses of one text
# both add it (counted twice: fewer bytes kept), an eviction and a hit never both take one entry (pop returns
# it once), and only a hit holding its entry while eviction empties the cache (the count then restarts at
# zero) can leave one entry uncounted. The bound holds within a few entries.
_PARSED: Final[dict[str, AvroSchema]] = {}
_PARSED_MAX_BYTES: Final = AVRO_PARSED_BYTES
_PARSED_BYTES: Final[list[int]] = [0]  # the accounted bytes of _PARSED (a list: module globals here are Final)


def clear_parse_cache() -> None:
    """Forget every parsed schema (benchmarks time cold parses with it)."""
    _PARSED.clear()
    _PARSED_BYTES[0] = 0


def parse_cache_bytes() -> int:
    """The bytes the parse cache accounts for now (never more than its share of the budget)."""
    return _PARSED_BYTES[0]


def parse_cost(text: str) -> int:
    """What keeping the parse of `text` costs the cache, in bytes: AVRO_FACTOR per character (measured by
    bench/bench_cache_factors.py, the key text included), 3 more where the key takes 4 bytes a character."""
    return len(text) * (AVRO_FACTOR if text.isascii() else AVRO_FACTOR + 3) + 64


def parse_avro(text: str) -> AvroSchema:
    """Parse with Pulsar's lenient names and default validation off. Cached: histories re-parse the same text."""
    schema = _PARSED.pop(text, None)
    if schema is not None:
        _PARSED[text] = schema  # now the most recently used
        return schema
    schema = _parse_pausing_collector(text)
    cost = parse_cost(text)
    if cost <= _PARSED_MAX_BYTES:
        _keep(text, schema, cost)
    return schema


def _keep(text: str, schema: AvroSchema, cost: int) -> None:
    """Add a parse to the cache, the least recently used going first to make room."""
    if text in _PARSED:
        return  # another thread parsed and kept it meanwhile
    while _PARSED and _PARSED_BYTES[0] + cost > _PARSED_MAX_BYTES:
        try:
            oldest = next(iter(_PARSED))
        except (RuntimeError, StopIteration):  # a hit moved an entry meanwhile
            break
        if _PARSED.pop(oldest, None) is not None:  # else a hit has it in hand, and puts it back
            _PARSED_BYTES[0] -= parse_cost(oldest)
    if not _PARSED:
        _PARSED_BYTES[0] = 0
    elif _PARSED_BYTES[0] + cost > _PARSED_MAX_BYTES:
        return  # no room made: not kept
    _PARSED[text] = schema
    _PARSED_BYTES[0] += cost


def _parse_pausing_collector(text: str) -> AvroSchema:
    """Decoding and building a large schema allocate thousands of objects and free none: collecting while they
    grow is wasted work (a fifth of a large parse), so the cyclic collector waits until the parse is done. A
    small text allocates too little to start a collection, and pausing the collector would cost more.
    """
    if len(text) < _SMALL_TEXT:
        return parse_text(text)
    collecting = gc.isenabled()
    gc.disable()
    try:
        return parse_text(text)
    finally:
        if collecting:
            gc.enable()
