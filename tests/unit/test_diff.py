"""Semantic diff of any two schemas: each change with its kind, path, and BACKWARD / FORWARD effect, plus
each side's normalised text (users.md #2, #3).

Why: users ask to diff any two versions (provectus/kafka-ui#867, Apicurio#7033) and for a semantic diff
marked breaking or not (confluentinc/schema-registry#3255). The marks must never contradict Pulsar's own
verdict: a change marked BREAKS for BACKWARD means `check(..., BACKWARD)` refuses the new schema, and a
refusal means some change is marked BREAKS in that direction (avro-resolution.md; pulsar-semantics.md §4.2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry import ChangeKind, CompatibilityStrategy, Registry, SchemaDiff, SchemaInfo, SchemaType
from registry._changes import Effect
from schemas import BAR, FOO, KV_NS, TOPIC, field, kv, primitive, record, record_dict, seed

CS = CompatibilityStrategy
K = ChangeKind
OK, RISK, BREAKS = Effect.OK, Effect.RISK, Effect.BREAKS

_MISSING = object()


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901 over a parsed JSON document ("" is the whole document)."""
    node = document
    for raw in pointer[1:].split("/") if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def document(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def schema(fields: list[dict[str, Any]], kind: SchemaType, name: str = "Order", **extra: Any) -> SchemaInfo:
    return SchemaInfo(type=kind, schema=record(name, fields, "acme.shop", **extra))


def color(symbols: list[str], name: str = "Color", **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": name, "symbols": symbols, **extra}


def customer(zip_type: Any, *extra_fields: dict[str, Any]) -> dict[str, Any]:
    address = record_dict("Address", [field("zip", zip_type), *extra_fields])
    return record_dict("Customer", [field("address", address)])


Change4 = tuple[ChangeKind, str, Effect, Effect]


@dataclass(frozen=True)
class Case:
    old: list[dict[str, Any]]
    new: list[dict[str, Any]]
    expected: list[Change4]
    exact: bool = True  # the changes are exactly `expected` (kind, path, effects)
    old_extra: tuple[tuple[str, Any], ...] = ()
    new_extra: tuple[tuple[str, Any], ...] = ()


ID = field("id", "long")
CASES = {
    "a field added with a default": Case([ID], [ID, field("note", "string", "")], [(K.FIELD_ADDED, "note", OK, OK)]),
    "a field added without a default breaks backward": Case(
        [ID], [ID, field("note", "string")], [(K.FIELD_ADDED, "note", BREAKS, OK)]
    ),
    "a field removed that had a default": Case(
        [ID, field("note", "string", "")], [ID], [(K.FIELD_REMOVED, "note", OK, OK)]
    ),
    "a field removed without a default breaks forward": Case(
        [ID, field("note", "string")], [ID], [(K.FIELD_REMOVED, "note", OK, BREAKS)]
    ),
    "a field renamed through an alias, with a default": Case(
        [ID, field("note", "string", "")],
        [ID, field("remark", "string", "", aliases=["note"])],
        [(K.FIELD_RENAMED, "note", OK, OK)],
        exact=False,
    ),
    "a field renamed through an alias, without a default, breaks forward": Case(
        [ID, field("note", "string")],
        [ID, field("remark", "string", aliases=["note"])],
        [(K.FIELD_RENAMED, "note", OK, BREAKS)],
        exact=False,
    ),
    "a field retyped string to int": Case(
        [field("sku", "string")], [field("sku", "int")], [(K.TYPE_CHANGED, "sku", BREAKS, BREAKS)]
    ),
    "a field promoted int to long": Case(
        [field("qty", "int")], [field("qty", "long")], [(K.TYPE_PROMOTED, "qty", OK, BREAKS)]
    ),
    "a field promoted float to double": Case(
        [field("x", "float")], [field("x", "double")], [(K.TYPE_PROMOTED, "x", OK, BREAKS)]
    ),
    "a field narrowed long to int still reads forward": Case(
        [field("qty", "long")], [field("qty", "int")], [(K.TYPE_CHANGED, "qty", BREAKS, OK)]
    ),
    "a field narrowed double to float still reads forward": Case(
        [field("x", "double")], [field("x", "float")], [(K.TYPE_CHANGED, "x", BREAKS, OK)]
    ),
    "a field string to bytes reads both ways": Case(
        [field("blob", "string")], [field("blob", "bytes")], [(K.TYPE_PROMOTED, "blob", OK, OK)]
    ),
    "a field bytes to string reads both ways": Case(
        [field("blob", "bytes")], [field("blob", "string")], [(K.TYPE_PROMOTED, "blob", OK, OK)]
    ),
    "a default added": Case([field("n", "int")], [field("n", "int", 1)], [(K.DEFAULT_ADDED, "n", OK, OK)]),
    "a default removed": Case([field("n", "int", 1)], [field("n", "int")], [(K.DEFAULT_REMOVED, "n", OK, OK)]),
    "a default changed": Case([field("n", "int", 1)], [field("n", "int", 2)], [(K.DEFAULT_CHANGED, "n", OK, OK)]),
    "a field doc changed": Case(
        [field("n", "int", doc="count")], [field("n", "int", doc="how many")], [(K.DOC_CHANGED, "n", OK, OK)]
    ),
    "a record doc changed": Case(
        [ID], [ID], [(K.DOC_CHANGED, "(root)", OK, OK)], old_extra=(("doc", "v1"),), new_extra=(("doc", "v2"),)
    ),
    "an enum symbol added is a forward risk": Case(
        [field("c", color(["RED"]))], [field("c", color(["RED", "BLUE"]))], [(K.ENUM_SYMBOL_ADDED, "c", OK, RISK)]
    ),
    "an enum symbol removed is a backward risk": Case(
        [field("c", color(["RED", "BLUE"]))], [field("c", color(["RED"]))], [(K.ENUM_SYMBOL_REMOVED, "c", RISK, OK)]
    ),
    "an enum symbol removed with a reader default is fine": Case(
        [field("c", color(["RED", "BLUE"], default="RED"))],
        [field("c", color(["RED"], default="RED"))],
        [(K.ENUM_SYMBOL_REMOVED, "c", OK, OK)],
    ),
    "an enum renamed without alias": Case(
        [field("c", color(["RED"]))], [field("c", color(["RED"], name="Hue"))], [(K.NAME_CHANGED, "c", BREAKS, BREAKS)]
    ),
    "a record renamed is fine for Pulsar": Case(
        [ID], [ID], [(K.NAME_CHANGED, "(root)", OK, OK)], old_extra=(("name", "Order"),), new_extra=(("name", "Po"),)
    ),
    "a field made nullable": Case(
        [field("s", "string")],
        [field("s", ["null", "string"], None)],
        [(K.UNION_BRANCH_ADDED, "s", OK, BREAKS)],
        exact=False,
    ),
    "a field no longer nullable": Case(
        [field("s", ["null", "string"])], [field("s", "string")], [(K.UNION_BRANCH_REMOVED, "s", BREAKS, OK)]
    ),
    "a union gaining a branch": Case(
        [field("v", ["null", "string"])],
        [field("v", ["null", "string", "int"])],
        [(K.UNION_BRANCH_ADDED, "v", OK, BREAKS)],
    ),
    "a field in a nested record retyped": Case(
        [field("customer", customer("string"))],
        [field("customer", customer("int"))],
        [(K.TYPE_CHANGED, "customer.address.zip", BREAKS, BREAKS)],
    ),
    "a field in a nested record added with a default": Case(
        [field("customer", customer("string"))],
        [field("customer", customer("string", field("city", "string", "")))],
        [(K.FIELD_ADDED, "customer.address.city", OK, OK)],
    ),
    "array items promoted": Case(
        [field("qty", {"type": "array", "items": "int"})],
        [field("qty", {"type": "array", "items": "long"})],
        [(K.TYPE_PROMOTED, "qty[]", OK, BREAKS)],
    ),
    "a logical type changed is a risk both ways": Case(
        [field("at", {"type": "long", "logicalType": "timestamp-millis"})],
        [field("at", {"type": "long", "logicalType": "timestamp-micros"})],
        [(K.LOGICAL_TYPE_CHANGED, "at", RISK, RISK)],
    ),
    "a fixed resized": Case(
        [field("h", {"type": "fixed", "name": "Md5", "size": 16})],
        [field("h", {"type": "fixed", "name": "Md5", "size": 32})],
        [(K.FIXED_SIZE_CHANGED, "h", BREAKS, BREAKS)],
    ),
    "nothing changed": Case([ID], [ID], []),
}

AVRO_LIKE = [SchemaType.AVRO, SchemaType.JSON]


def _infos(case: Case, kind: SchemaType) -> tuple[SchemaInfo, SchemaInfo]:
    old_extra, new_extra = dict(case.old_extra), dict(case.new_extra)
    old = schema(case.old, kind, name=old_extra.pop("name", "Order"), **old_extra)
    new = schema(case.new, kind, name=new_extra.pop("name", "Order"), **new_extra)
    return old, new


def as_tuples(diff: SchemaDiff) -> list[Change4]:
    return [(c.kind, c.path, c.backward, c.forward) for c in diff.changes]


def assert_pointers_resolve(diff: SchemaDiff, old_text: str, new_text: str) -> None:
    old_doc, new_doc = document(old_text), document(new_text)
    for change in diff.changes:
        assert resolve_pointer(old_doc, change.old_pointer) is not _MISSING, change
        assert resolve_pointer(new_doc, change.new_pointer) is not _MISSING, change


def assert_consistent(reg: Registry, topic: str, new: SchemaInfo, diff: SchemaDiff) -> None:
    """BREAKS in a direction ⇔ Pulsar refuses that direction against the old version (the latest)."""
    for strategy, effect in ((CS.BACKWARD, diff.backward), (CS.FORWARD, diff.forward)):
        result = reg.check(topic, new, strategy)
        marked = [c for c in diff.changes if (c.backward if strategy is CS.BACKWARD else c.forward) is BREAKS]
        assert (effect is BREAKS) == (not result.compatible), (strategy, marked, result.problems)


@pytest.mark.parametrize("kind", AVRO_LIKE, ids=["AVRO", "JSON"])
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_semantic_diff(reg: Registry, case: Case, kind: SchemaType) -> None:
    old, new = _infos(case, kind)
    seed(reg, TOPIC, [old])
    diff = reg.diff(TOPIC, 0, new)

    assert diff.old_type is kind and diff.new_type is kind
    got = as_tuples(diff)
    if case.exact:
        assert sorted(got) == sorted(case.expected)
    else:
        for expected in case.expected:
            assert expected in got, (expected, got)
    for change in diff.changes:
        assert change.message.strip()
    assert_pointers_resolve(diff, old.text, new.text)
    assert_consistent(reg, TOPIC, new, diff)


def test_changes_carry_before_and_after(reg: Registry) -> None:
    seed(reg, TOPIC, [schema([field("qty", "int"), field("note", "string", "")], SchemaType.AVRO)])
    diff = reg.diff(
        TOPIC, 0, schema([field("qty", "long"), field("remark", "string", "", aliases=["note"])], SchemaType.AVRO)
    )
    by_kind = {c.kind: c for c in diff.changes}
    assert (by_kind[K.TYPE_PROMOTED].before, by_kind[K.TYPE_PROMOTED].after) == ("int", "long")
    assert (by_kind[K.FIELD_RENAMED].before, by_kind[K.FIELD_RENAMED].after) == ("note", "remark")


def test_diff_between_two_live_versions_not_consecutive(reg: Registry) -> None:
    v = [
        schema([ID], SchemaType.AVRO),
        schema([ID, field("a", "int", 0)], SchemaType.AVRO),
        schema([ID, field("a", "int", 0), field("b", "int", 0)], SchemaType.AVRO),
    ]
    assert seed(reg, TOPIC, v) == [0, 1, 2]
    diff = reg.diff(TOPIC, 0, 2)
    assert sorted(as_tuples(diff)) == [(K.FIELD_ADDED, "a", OK, OK), (K.FIELD_ADDED, "b", OK, OK)]
    backwards = reg.diff(TOPIC, 2, 0)
    assert sorted(as_tuples(backwards)) == [(K.FIELD_REMOVED, "a", OK, OK), (K.FIELD_REMOVED, "b", OK, OK)]
    # new=None: against the latest live version.
    assert reg.diff(TOPIC, 0) == diff


# ------------------------------------------------------------------------------------------- KEY_VALUE, primitives

KEY_V2 = record("Foo", [field("field3", "long")], KV_NS)
VALUE_V2 = record("Bar", [field("field1", "boolean"), field("extra", "int")], KV_NS)


def test_key_value_parts_are_diffed_with_prefixed_paths(reg: Registry) -> None:
    old, new = kv(FOO, BAR), kv(KEY_V2, VALUE_V2)
    seed(reg, TOPIC, [old])
    diff = reg.diff(TOPIC, 0, new)

    got = as_tuples(diff)
    assert (K.TYPE_PROMOTED, "key.field3", OK, BREAKS) in got
    assert (K.FIELD_REMOVED, "key.field1", OK, OK) in got
    assert (K.FIELD_ADDED, "value.extra", BREAKS, OK) in got
    assert all(c.path.startswith(("key.", "value.")) for c in diff.changes)
    assert all(c.old_pointer.startswith(("/key", "/value")) for c in diff.changes)
    assert_pointers_resolve(diff, reg.get(TOPIC, 0).schema, new.text)
    assert_consistent(reg, TOPIC, new, diff)


def test_key_value_sub_type_change(reg: Registry) -> None:
    seed(reg, TOPIC, [kv(FOO, BAR)])
    diff = reg.diff(TOPIC, 0, kv(BAR, BAR, key_type=SchemaType.JSON))
    assert (K.SCHEMA_TYPE_CHANGED, "key", BREAKS, BREAKS) in as_tuples(diff)


@pytest.mark.parametrize(
    "kind", [SchemaType.STRING, SchemaType.INT32, SchemaType.BOOLEAN, SchemaType.LOCAL_DATE_TIME], ids=str
)
def test_primitive_same_type_has_no_changes(reg: Registry, kind: SchemaType) -> None:
    seed(reg, TOPIC, [primitive(kind)])
    diff = reg.diff(TOPIC, 0, primitive(kind))
    assert diff.changes == () and diff.backward is OK and diff.forward is OK
    assert diff.old_text == diff.new_text


@pytest.mark.parametrize(
    "old, new",
    [
        (primitive(SchemaType.STRING), primitive(SchemaType.INT32)),
        (
            SchemaInfo(type=SchemaType.AVRO, schema=record("R", [ID])),
            SchemaInfo(type=SchemaType.JSON, schema=record("R", [ID])),
        ),
        (primitive(SchemaType.STRING), SchemaInfo(type=SchemaType.AVRO, schema=record("R", [ID]))),
    ],
    ids=["STRING to INT32", "AVRO to JSON", "STRING to AVRO"],
)
def test_type_change_is_a_single_breaking_change(reg: Registry, old: SchemaInfo, new: SchemaInfo) -> None:
    seed(reg, TOPIC, [old])
    diff = reg.diff(TOPIC, 0, new)
    assert as_tuples(diff) == [(K.SCHEMA_TYPE_CHANGED, "(root)", BREAKS, BREAKS)]
    assert (diff.old_type, diff.new_type) == (old.type, new.type)
    assert_consistent(reg, TOPIC, new, diff)


# ------------------------------------------------------------------------------------------- normalised text

LAYOUT_A = (
    '{"type":"record","name":"Order","namespace":"acme.shop","fields":[{"name":"id","type":"long"},'
    '{"name":"tags","type":{"type":"array","items":"string"},"default":[]}]}'
)
# The same schema: keys reversed, `{"type": "string"}` for the bare name, indented.
LAYOUT_B = json.dumps(
    {
        "fields": [
            {"type": "long", "name": "id"},
            {"default": [], "type": {"items": {"type": "string"}, "type": "array"}, "name": "tags"},
        ],
        "namespace": "acme.shop",
        "name": "Order",
        "type": "record",
    },
    indent=3,
)


@pytest.mark.parametrize("kind", AVRO_LIKE, ids=["AVRO", "JSON"])
def test_two_layouts_of_one_schema_normalise_to_the_same_text(reg: Registry, kind: SchemaType) -> None:
    seed(reg, TOPIC, [SchemaInfo(type=kind, schema=LAYOUT_A)])
    diff = reg.diff(TOPIC, 0, SchemaInfo(type=kind, schema=LAYOUT_B))
    assert diff.changes == ()
    assert diff.old_text == diff.new_text
    # Keys in a stable, readable order: type, name, namespace before fields.
    text = diff.old_text
    assert text.index('"type"') < text.index('"name"') < text.index('"namespace"') < text.index('"fields"')
    assert json.loads(text) == json.loads(LAYOUT_A)


def test_normalised_text_is_stable_across_calls(reg: Registry) -> None:
    seed(reg, TOPIC, [SchemaInfo(type=SchemaType.AVRO, schema=LAYOUT_B)])
    first = reg.diff(TOPIC, 0, SchemaInfo(type=SchemaType.AVRO, schema=LAYOUT_A))
    again = reg.diff(TOPIC, 0, SchemaInfo(type=SchemaType.AVRO, schema=LAYOUT_A))
    assert first.old_text == again.old_text == first.new_text


def test_key_value_text_shows_both_parts(reg: Registry) -> None:
    seed(reg, TOPIC, [kv(FOO, BAR)])
    diff = reg.diff(TOPIC, 0, kv(FOO, BAR))
    assert diff.old_text == diff.new_text
    assert "key" in diff.old_text and "value" in diff.old_text and "Foo" in diff.old_text and "Bar" in diff.old_text


# ------------------------------------------------------------------------------------------- consistency edge cases

# Union resolution picks a reader branch by promotion or by record structure (avro-resolution.md, "Writer
# union"), so a branch that disappears from the union does not break BACKWARD when another branch reads it.
EDGE = {
    "a nullable int widened to a nullable long": ([field("n", ["null", "int"])], [field("n", ["null", "long"])]),
    "an int widened to a nullable long": ([field("n", "int")], [field("n", ["null", "long"], None)]),
    "an int branch dropped next to long": ([field("n", ["int", "long"])], [field("n", ["long"])]),
    "a record moved into a union under another name": (
        [field("at", record_dict("Point", [field("x", "int")]))],
        [field("at", ["null", record_dict("Location", [field("x", "int")])], None)],
    ),
    "a nullable string made bytes": ([field("s", ["null", "string"])], [field("s", ["null", "bytes"])]),
    "a map of int promoted": (
        [field("m", {"type": "map", "values": "int"})],
        [field("m", {"type": "map", "values": "double"})],
    ),
}


@pytest.mark.parametrize("old_fields, new_fields", list(EDGE.values()), ids=list(EDGE))
def test_diff_marks_agree_with_pulsar_on_union_edge_cases(
    reg: Registry, old_fields: list[dict[str, Any]], new_fields: list[dict[str, Any]]
) -> None:
    old, new = schema(old_fields, SchemaType.AVRO), schema(new_fields, SchemaType.AVRO)
    seed(reg, TOPIC, [old])
    assert_consistent(reg, TOPIC, new, reg.diff(TOPIC, 0, new))


def test_a_removed_field_with_default_is_not_blamed_for_a_sibling(reg: Registry) -> None:
    """Only the retyped sibling breaks; the defaulted field that went away breaks nothing by itself."""
    point = [field("z", "long"), field("w", "int", 0)]
    old = schema([field("p", record_dict("P", point))], SchemaType.AVRO)
    new = schema([field("p", record_dict("P", [field("z", "int")]))], SchemaType.AVRO)
    seed(reg, TOPIC, [old])
    got = as_tuples(reg.diff(TOPIC, 0, new))
    assert (K.FIELD_REMOVED, "p.w", OK, OK) in got, got
    assert (K.TYPE_CHANGED, "p.z", BREAKS, OK) in got, got


def _types() -> list[Any]:
    return [
        "int",
        "long",
        "float",
        "double",
        "string",
        "bytes",
        "boolean",
        ["null", "int"],
        ["null", "long"],
        ["null", "string"],
        ["string", "null"],
        {"type": "array", "items": "int"},
        {"type": "map", "values": "long"},
        {"type": "enum", "name": "E", "symbols": ["A", "B"]},
        {"type": "enum", "name": "E", "symbols": ["A"]},
        {"type": "fixed", "name": "F", "size": 2},
        {"type": "fixed", "name": "F", "size": 4},
        record_dict("N", [field("z", "int")]),
        record_dict("N", [field("z", "long"), field("w", "int", 0)]),
    ]


_DEFAULTS = {"int": 0, "long": 0, "float": 0.0, "double": 0.0, "string": "", "bytes": "", "boolean": True}


@st.composite
def generated(draw: st.DrawFn) -> str:
    """One small record; a field of a named type is the only one using it (named types are defined once)."""
    fields = []
    used_named = False
    for name in draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3)):
        type_ = draw(st.sampled_from(_types()))
        if isinstance(type_, dict) and "name" in type_:
            if used_named:
                type_ = "string"
            used_named = True
        default = _DEFAULTS.get(type_) if isinstance(type_, str) else None
        if isinstance(type_, list) and type_[0] == "null" and draw(st.booleans()):
            fields.append(field(name, type_, None))
        elif default is not None and draw(st.booleans()):
            fields.append(field(name, type_, default))
        else:
            fields.append(field(name, type_))
    return record("Gen", fields, "gen")


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(old=generated(), new=generated())
def test_diff_marks_agree_with_pulsar_over_generated_pairs(old: str, new: str) -> None:
    reg = Registry.in_memory()
    reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=old))
    candidate = SchemaInfo(type=SchemaType.AVRO, schema=new)
    diff = reg.diff(TOPIC, 0, candidate)
    assert_pointers_resolve(diff, old, new)
    assert_consistent(reg, TOPIC, candidate, diff)
