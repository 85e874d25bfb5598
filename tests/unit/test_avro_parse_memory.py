"""Parsed schemas are freed once dropped, recursive ones included, and the parse cache stays within its bound.

Compiled builds keep leaf nodes, sites and most fields out of the cyclic collector's sight (`acyclic` classes in
registry/avro/_schema.py); only fields whose type refers to a named type by name can close a cycle, and those are
`LinkingField`s that it does see. A mistake there leaks every recursive schema parsed: these tests parse each
shape a thousand times and watch the allocator.
"""

from __future__ import annotations

import gc
import sys

import pytest

from registry.avro._nodes import LinkingField, Record, walk
from registry.avro._parser import parse_text
from registry.avro._schema import (
    _PARSED,
    _PARSED_MAX_BYTES,
    clear_parse_cache,
    parse_avro,
    parse_cache_bytes,
    parse_cost,
)

SHAPES = {
    "a record that refers to itself": (
        '{"type":"record","name":"Node","fields":[{"name":"value","type":"int"},'
        '{"name":"next","type":["null","Node"],"default":null}]}'
    ),
    "a nested record that refers to its parent": (
        '{"type":"record","name":"Tree","namespace":"t","fields":[{"name":"kids","type":{"type":"array","items":'
        '{"type":"record","name":"Kid","fields":[{"name":"up","type":["null","Tree"]},{"name":"n","type":"long"}]}}}]}'
    ),
    "a forward reference that closes a cycle": (
        '{"type":"record","name":"A","fields":[{"name":"b","type":["null","B"]},'
        '{"name":"c","type":{"type":"record","name":"B","fields":[{"name":"a","type":["null","A"]}]}}]}'
    ),
    "a map of a record that holds a map of itself": (
        '{"type":"record","name":"M","fields":[{"name":"m","type":{"type":"map","values":"M"}},'
        '{"name":"s","type":"string"}]}'
    ),
    "no recursion at all": (
        '{"type":"record","name":"Flat","fields":[{"name":"e","type":{"type":"enum","name":"E","symbols":["X"]}},'
        '{"name":"u","type":["null","string"]},{"name":"f","type":{"type":"fixed","name":"F","size":2}}]}'
    ),
}


@pytest.fixture(autouse=True)
def older_objects_frozen() -> None:
    """The leak checks collect garbage twice each: in a test process that has run hundreds of tests before, a
    full collection walks every object they left alive (0.7 s a test, 4-9 s under load). Those are moved out
    of the collector's sight first (gc.freeze, as tests/conftest.py does after collection, and kept frozen as
    the run's are); what the test allocates is collected and counted exactly as before, and an old object that
    keeps a new one alive still keeps it alive."""
    gc.collect(1)  # the young garbage, cheaply; the rest is frozen with what lives
    gc.freeze()


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_a_thousand_parses_of_the_same_shape_leave_nothing_behind(text: str) -> None:
    parse_text(text)  # warm the name and structure tables, which keep one entry per distinct name and shape
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(1000):
        parse_text(text)
    gc.collect()
    # A leaked tree is a dozen blocks or more: a thousand of them could not hide under this bound.
    assert sys.getallocatedblocks() - before < 500


def _linking_fields(text: str) -> set[str]:
    return {
        f"{node.name}.{field.name}"
        for node in walk(parse_text(text).root)
        if isinstance(node, Record)
        for field in node.fields
        if isinstance(field, LinkingField)
    }


def test_exactly_the_fields_whose_type_names_a_named_type_can_link_a_cycle() -> None:
    assert _linking_fields(SHAPES["a forward reference that closes a cycle"]) == {"A.b", "A.c", "B.a"}
    assert _linking_fields(SHAPES["a nested record that refers to its parent"]) == {"Tree.kids", "Kid.up"}
    assert _linking_fields(SHAPES["no recursion at all"]) == set()


def _big(i: int, doc_chars: int) -> str:
    return f'{{"type":"fixed","name":"F{i}","size":1,"doc":"{"x" * doc_chars}"}}'


def test_the_parse_cache_keeps_the_most_recently_used_schemas_within_its_bytes() -> None:
    """Bounded by bytes, not entries (issue 18 item 3): 40 distinct 600 KB schemas (some 9.6 MB accounted
    each) would all have stayed under the old bound of 4,096 entries."""
    clear_parse_cache()
    texts = [_big(i, 600_000) for i in range(40)]
    fit = _PARSED_MAX_BYTES // parse_cost(texts[0])
    assert 2 < fit < len(texts)
    first = parse_avro(texts[0])
    for text in texts[1:fit]:
        parse_avro(text)
    assert parse_avro(texts[0]) is first  # a hit, and now the most recently used
    for text in texts[fit:]:
        parse_avro(text)
        assert parse_cache_bytes() == sum(parse_cost(t) for t in _PARSED) <= _PARSED_MAX_BYTES
    assert len(_PARSED) == fit and texts[-1] in _PARSED
    assert texts[0] not in _PARSED and texts[1] not in _PARSED  # the least recently used went first
    clear_parse_cache()
    assert parse_cache_bytes() == 0


def test_a_schema_larger_than_the_whole_share_is_parsed_but_not_kept() -> None:
    clear_parse_cache()
    kept = _big(0, 1000)
    parse_avro(kept)
    huge = _big(1, _PARSED_MAX_BYTES // 16 + 1)
    assert parse_cost(huge) > _PARSED_MAX_BYTES
    assert parse_avro(huge).root.name == "F1"
    assert huge not in _PARSED and kept in _PARSED  # nothing was evicted for it either
    assert parse_cache_bytes() == parse_cost(kept)
    clear_parse_cache()


def test_long_names_are_not_kept_in_the_shared_name_tables() -> None:
    from registry.avro._parser import _FULL_NAMES, _NAMES

    long_name = "N" * 10_000
    parse_avro(
        f'{{"type":"record","name":"{long_name}","namespace":"a.b","fields":[{{"name":"{long_name}","type":"int"}}]}}'
    )
    assert long_name not in _NAMES
    assert all(long_name not in full for names in _FULL_NAMES.values() for full in names.values())
    clear_parse_cache()
