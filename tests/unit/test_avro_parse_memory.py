"""Parsed schemas are freed once dropped, recursive ones included, and the parse cache stays within its bound.

Compiled builds keep leaf nodes, sites and most fields out of the cyclic collector's sight (`acyclic` classes in
registry/_avro_schema.py); only fields whose type refers to a named type by name can close a cycle, and those are
`_LinkingField`s that it does see. A mistake there leaks every recursive schema parsed: these tests parse each
shape a thousand times and watch the allocator.
"""

from __future__ import annotations

import gc
import sys

import pytest

from registry._avro_schema import (
    _PARSED,
    _PARSED_MAX,
    Record,
    _LinkingField,
    _parse,
    clear_parse_cache,
    parse_avro,
    walk,
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


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_a_thousand_parses_of_the_same_shape_leave_nothing_behind(text: str) -> None:
    _parse(text)  # warm the name and structure tables, which keep one entry per distinct name and shape
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(1000):
        _parse(text)
    gc.collect()
    # A leaked tree is a dozen blocks or more: a thousand of them could not hide under this bound.
    assert sys.getallocatedblocks() - before < 500


def _linking_fields(text: str) -> set[str]:
    return {
        f"{node.name}.{field.name}"
        for node in walk(_parse(text).root)
        if isinstance(node, Record)
        for field in node.fields
        if isinstance(field, _LinkingField)
    }


def test_exactly_the_fields_whose_type_names_a_named_type_can_link_a_cycle() -> None:
    assert _linking_fields(SHAPES["a forward reference that closes a cycle"]) == {"A.b", "A.c", "B.a"}
    assert _linking_fields(SHAPES["a nested record that refers to its parent"]) == {"Tree.kids", "Kid.up"}
    assert _linking_fields(SHAPES["no recursion at all"]) == set()


def test_the_parse_cache_keeps_the_most_recently_used_schemas_up_to_its_bound() -> None:
    clear_parse_cache()
    texts = [f'{{"type":"fixed","name":"F{i}","size":1}}' for i in range(_PARSED_MAX + 1)]
    first = parse_avro(texts[0])
    for text in texts[1:_PARSED_MAX]:
        parse_avro(text)
    assert parse_avro(texts[0]) is first  # a hit, and now the most recently used
    parse_avro(texts[_PARSED_MAX])  # one over the bound: the least recently used goes
    assert len(_PARSED) == _PARSED_MAX
    assert texts[0] in _PARSED and texts[1] not in _PARSED
    clear_parse_cache()
