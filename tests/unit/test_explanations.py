"""Every incompatibility is explained: a stable RuleCode, JSON pointers into each schema, the direction, the
version it fails against, a message naming the field and the types, and a hint (users.md #1).

Why: users ask "why is it incompatible?" more than anything else (confluentinc/schema-registry#1551,
apache/pulsar#11631: "doesn't mention if it fails the forward or the backward compatibility check"). The
verdicts themselves are Pulsar's (pulsar-semantics.md §3.4, §4; avro-resolution.md); these tests pin the
explanation attached to them, one table row per rule, then nested and transitive cases, then an invariant
over generated pairs: compatible ⇔ no problems.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry import (
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    Problem,
    Registry,
    RuleCode,
    SchemaInfo,
    SchemaType,
)
from registry._compatibility import Versioned, check_key_value, check_with_all, check_with_latest
from registry._schema_data import to_schema_data
from registry._types import SchemaData
from schemas import (
    BAR,
    FOO,
    JSON_SCHEMA_DRAFT,
    KV_NS,
    PB_INT64,
    S1,
    TOPIC,
    avro_info,
    field,
    json_info,
    kv,
    pn_test,
    primitive,
    record,
    record_dict,
    seed,
)

CS = CompatibilityStrategy
BACKWARD, FORWARD, NONE = Direction.BACKWARD, Direction.FORWARD, Direction.NONE

# --------------------------------------------------------------------------------------------- JSON pointers

_MISSING = object()


def resolve_pointer(document: Any, pointer: str) -> Any:
    """RFC 6901: "" is the whole document; returns _MISSING when a token does not resolve."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        return _MISSING
    node = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            if token not in node:
                return _MISSING
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node) or (token != "0" and token.startswith("0")):
                return _MISSING
            node = node[int(token)]
        else:
            return _MISSING
    return node


def document(text: str) -> Any:
    """A schema document as JSON; primitives' empty text stays text (only the root pointer fits it)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def test_pointer_resolver_follows_rfc_6901() -> None:
    doc = {"fields": [{"name": "a", "type": "int"}], "a/b": {"~": 1}}
    assert resolve_pointer(doc, "") is doc
    assert resolve_pointer(doc, "/fields/0/type") == "int"
    assert resolve_pointer(doc, "/a~1b/~0") == 1
    assert resolve_pointer(doc, "/fields/1") is _MISSING
    assert resolve_pointer(doc, "/fields/00") is _MISSING
    assert resolve_pointer(doc, "fields") is _MISSING


def documents(reg: Registry, topic: str, candidate: SchemaInfo, problem: Problem) -> tuple[Any, Any]:
    """(reader document, writer document) for a problem: BACKWARD = the candidate reads the version, FORWARD =
    the version reads the candidate; for NONE the reader side is the candidate and the writer the version."""
    new = document(candidate.text)
    old = document(reg.get(topic, problem.version).schema) if problem.version is not None else new
    return (old, new) if problem.direction is FORWARD else (new, old)


def assert_explained(reg: Registry, topic: str, candidate: SchemaInfo, result: CompatibilityResult) -> None:
    """The invariants every problem of a verdict must satisfy."""
    assert result.compatible == (not result.problems)
    for problem in result.problems:
        assert isinstance(problem.code, RuleCode)
        assert problem.message.strip() and problem.hint.strip(), problem
        if problem.version is not None:
            assert problem.version in result.checked_versions, (problem, result.checked_versions)
        reader_doc, writer_doc = documents(reg, topic, candidate, problem)
        assert resolve_pointer(reader_doc, problem.reader_path) is not _MISSING, (problem.reader_path, reader_doc)
        assert resolve_pointer(writer_doc, problem.writer_path) is not _MISSING, (problem.writer_path, writer_doc)


# --------------------------------------------------------------------------------------------- the rule table


def R(*fields: dict[str, Any], name: str = "Order", **extra: Any) -> SchemaInfo:
    return avro_info(record(name, list(fields), "acme.shop", **extra))


def enum(name: str, symbols: list[str], **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": name, "symbols": symbols, **extra}


def fixed(name: str, size: int) -> dict[str, Any]:
    return {"type": "fixed", "name": name, "size": size}


def address(*fields: dict[str, Any]) -> dict[str, Any]:
    return record_dict("Address", list(fields))


def customer(addr: dict[str, Any]) -> dict[str, Any]:
    return record_dict("Customer", [field("address", addr)])


ZIP_STRING = address(field("zip", "string"))
ZIP_INT = address(field("zip", "int"))
ZIP_AND_CITY = address(field("zip", "string"), field("city", "string"))


@dataclass(frozen=True)
class Case:
    history: list[SchemaInfo]
    candidate: SchemaInfo
    strategy: CompatibilityStrategy
    code: RuleCode
    direction: Direction
    version: int
    mentions: tuple[str, ...]


CASES = {
    # §3.4 step 3 / §10 rule 6: the registry's type pre-check.
    "an AVRO topic refuses a JSON schema": Case(
        [avro_info(S1)], json_info(S1), CS.FULL, RuleCode.SCHEMA_TYPE_CHANGED, NONE, 0, ("AVRO", "JSON")
    ),
    "a STRING topic refuses an INT32 schema": Case(
        [primitive(SchemaType.STRING)],
        primitive(SchemaType.INT32),
        CS.BACKWARD,
        RuleCode.SCHEMA_TYPE_CHANGED,
        NONE,
        0,
        ("STRING", "INT32"),
    ),
    "a transitive check names the first version of another type": Case(
        [avro_info(S1), json_info(S1)],
        json_info(S1),
        CS.FULL_TRANSITIVE,
        RuleCode.SCHEMA_TYPE_CHANGED,
        NONE,
        0,
        ("AVRO", "JSON"),
    ),
    # §2.5: ALWAYS_INCOMPATIBLE, through each checker family.
    "ALWAYS_INCOMPATIBLE refuses an Avro change": Case(
        [R(field("id", "long"))],
        R(field("id", "long"), field("note", "string", "")),
        CS.ALWAYS_INCOMPATIBLE,
        RuleCode.STRATEGY_FORBIDS_CHANGE,
        NONE,
        0,
        ("ALWAYS_INCOMPATIBLE",),
    ),
    "ALWAYS_INCOMPATIBLE refuses a STRING data change": Case(
        [primitive(SchemaType.STRING)],
        primitive(SchemaType.STRING, "null"),
        CS.ALWAYS_INCOMPATIBLE,
        RuleCode.STRATEGY_FORBIDS_CHANGE,
        NONE,
        0,
        ("ALWAYS_INCOMPATIBLE",),
    ),
    "ALWAYS_INCOMPATIBLE refuses a PROTOBUF_NATIVE change": Case(
        [pn_test()],
        pn_test(PB_INT64),
        CS.ALWAYS_INCOMPATIBLE,
        RuleCode.STRATEGY_FORBIDS_CHANGE,
        NONE,
        0,
        ("ALWAYS_INCOMPATIBLE",),
    ),
    # §4.2 Avro resolution.
    "a field added without default cannot read old data": Case(
        [R(field("id", "long"))],
        R(field("id", "long"), field("note", "int")),
        CS.BACKWARD,
        RuleCode.READER_FIELD_WITHOUT_DEFAULT,
        BACKWARD,
        0,
        ("note", "int"),
    ),
    "a field removed without default breaks old readers": Case(
        [R(field("id", "long"), field("note", "string"))],
        R(field("id", "long")),
        CS.FORWARD,
        RuleCode.READER_FIELD_WITHOUT_DEFAULT,
        FORWARD,
        0,
        ("note", "string"),
    ),
    "string retyped to int cannot read old data": Case(
        [R(field("sku", "string"))],
        R(field("sku", "int")),
        CS.BACKWARD,
        RuleCode.TYPE_MISMATCH,
        BACKWARD,
        0,
        ("sku", "string", "int"),
    ),
    "int promoted to long breaks old readers": Case(
        [R(field("qty", "int"))],
        R(field("qty", "long")),
        CS.FORWARD,
        RuleCode.TYPE_MISMATCH,
        FORWARD,
        0,
        ("qty", "int", "long"),
    ),
    "an enum renamed without alias": Case(
        [R(field("color", enum("Color", ["RED", "BLUE"])))],
        R(field("color", enum("Colour", ["RED", "BLUE"]))),
        CS.BACKWARD,
        RuleCode.NAME_MISMATCH,
        BACKWARD,
        0,
        ("color", "enum", "Color", "Colour"),
    ),
    "a fixed renamed without alias": Case(
        [R(field("hash", fixed("Md5", 16)))],
        R(field("hash", fixed("Digest", 16))),
        CS.FORWARD,
        RuleCode.NAME_MISMATCH,
        FORWARD,
        0,
        ("hash", "fixed", "Md5", "Digest"),
    ),
    "a fixed resized": Case(
        [R(field("hash", fixed("Md5", 16)))],
        R(field("hash", fixed("Md5", 32))),
        CS.BACKWARD,
        RuleCode.FIXED_SIZE_MISMATCH,
        BACKWARD,
        0,
        ("hash", "Md5", "16", "32"),
    ),
    "a string read through a union without string": Case(
        [R(field("sku", "string"))],
        R(field("sku", ["null", "int"], None)),
        CS.BACKWARD,
        RuleCode.NO_MATCHING_UNION_BRANCH,
        BACKWARD,
        0,
        ("sku", "string", "int"),
    ),
    "a null default on a string field the reader needs": Case(
        [R(field("id", "long"))],
        R(field("id", "long"), field("note", "string", None)),
        CS.BACKWARD,
        RuleCode.INVALID_DEFAULT,
        BACKWARD,
        0,
        ("note", "string", "null"),
    ),
    # §4.6 PROTOBUF_NATIVE.
    "a protobuf root message swapped": Case(
        [pn_test()],
        pn_test(root="SubMessage"),
        CS.FULL,
        RuleCode.ROOT_MESSAGE_CHANGED,
        NONE,
        0,
        ("proto.TestMessage", "proto.SubMessage"),
    ),
    # §4.7 KEY_VALUE.
    "a key-value key part changing from AVRO to JSON": Case(
        [kv(FOO, BAR)],
        kv(BAR, BAR, key_type=SchemaType.JSON),
        CS.FULL,
        RuleCode.KEY_VALUE_PART_TYPE_CHANGED,
        NONE,
        0,
        ("AVRO", "JSON", "KeyValue"),
    ),
    "a key-value value part gaining a field without default": Case(
        [kv(BAR, BAR)],
        kv(BAR, record("Bar", [field("field1", "boolean"), field("extra", "int")], KV_NS)),
        CS.BACKWARD,
        RuleCode.READER_FIELD_WITHOUT_DEFAULT,
        BACKWARD,
        0,
        ("value", "extra", "int"),
    ),
    # Nested places: the message names the dotted path, the pointers reach the leaf.
    "a field inside a nested record": Case(
        [R(field("customer", customer(ZIP_STRING)))],
        R(field("customer", customer(ZIP_INT))),
        CS.BACKWARD,
        RuleCode.TYPE_MISMATCH,
        BACKWARD,
        0,
        ("customer.address.zip", "string", "int"),
    ),
    "a field inside an array of records": Case(
        [R(field("items", {"type": "array", "items": ZIP_STRING}))],
        R(field("items", {"type": "array", "items": ZIP_INT})),
        CS.BACKWARD,
        RuleCode.TYPE_MISMATCH,
        BACKWARD,
        0,
        ("items", "zip", "string", "int"),
    ),
    "a field inside a map of records": Case(
        [R(field("by_id", {"type": "map", "values": ZIP_STRING}))],
        R(field("by_id", {"type": "map", "values": ZIP_INT})),
        CS.FORWARD,
        RuleCode.TYPE_MISMATCH,
        FORWARD,
        0,
        ("by_id", "zip", "string", "int"),
    ),
    "a field inside a union branch": Case(
        [R(field("ship_to", ["null", ZIP_STRING], None))],
        R(field("ship_to", ["null", ZIP_AND_CITY], None)),
        CS.BACKWARD,
        RuleCode.READER_FIELD_WITHOUT_DEFAULT,
        BACKWARD,
        0,
        ("ship_to", "city", "string"),
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_each_rule_is_explained(reg: Registry, case: Case) -> None:
    versions = seed(reg, TOPIC, case.history)
    result = reg.check(TOPIC, case.candidate, case.strategy)

    assert not result.compatible
    assert_explained(reg, TOPIC, case.candidate, result)
    matching = [p for p in result.problems if p.code is case.code]
    assert matching, [p.code for p in result.problems]
    problem = matching[0]
    assert problem.direction is case.direction
    assert problem.version == versions[case.version]
    for word in case.mentions:
        assert word in problem.message, (word, problem.message)
    assert f"version {problem.version}" in problem.direction_text


def test_nested_pointers_reach_the_leaf_field(reg: Registry) -> None:
    """A field inside a nested record: both pointers land on the `zip` field's type in each document."""
    seed(reg, TOPIC, [R(field("customer", customer(ZIP_STRING)))])
    candidate = R(field("customer", customer(ZIP_INT)))
    (problem,) = reg.check(TOPIC, candidate, CS.BACKWARD).problems
    reader_doc = json.loads(candidate.text)
    writer_doc = json.loads(reg.get(TOPIC, 0).schema)
    assert resolve_pointer(reader_doc, problem.reader_path) == "int"
    assert resolve_pointer(writer_doc, problem.writer_path) == "string"
    parent = problem.reader_path.rsplit("/", 1)[0]
    assert resolve_pointer(reader_doc, parent)["name"] == "zip"


def test_reader_field_without_default_points_at_the_reader_field(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("id", "long"))])
    candidate = R(field("id", "long"), field("note", "int"))
    (problem,) = reg.check(TOPIC, candidate, CS.BACKWARD).problems
    assert resolve_pointer(json.loads(candidate.text), problem.reader_path)["name"] == "note"


def test_key_value_pointers_are_prefixed_with_the_part(reg: Registry) -> None:
    seed(reg, TOPIC, [kv(BAR, BAR)])
    candidate = kv(BAR, record("Bar", [field("field1", "boolean"), field("extra", "int")], KV_NS))
    (problem,) = reg.check(TOPIC, candidate, CS.BACKWARD).problems
    assert problem.reader_path.startswith("/value/")
    assert resolve_pointer(json.loads(candidate.text), problem.reader_path)["name"] == "extra"


# --------------------------------------------------------------------------------------------- other paths


def test_consumer_with_schema_on_active_topic_without_schema(reg: Registry) -> None:
    """§8.2: an in-use topic with no live schema refuses a consumer schema (NotExistSchemaException)."""
    assert reg.connect_producer(TOPIC, None, name="legacy-producer").accepted
    admission = reg.connect_consumer(TOPIC, avro_info(S1), subscription="audit")

    assert not admission.accepted and admission.role is ClientRole.CONSUMER
    assert admission.result is not None and not admission.result.compatible
    (problem,) = admission.result.problems
    assert problem.code is RuleCode.NO_SCHEMA_ON_ACTIVE_TOPIC
    assert problem.direction is NONE and problem.version is None
    assert "AVRO" in problem.message and problem.hint
    assert problem.reader_path == problem.writer_path == ""
    assert reg.history(TOPIC) == []


def test_existing_version_that_does_not_parse_as_avro() -> None:
    """§4.3 strict JSON: a legacy JSON-Schema draft in the history (as a real broker may hold, e.g. one explored
    over its admin API) makes every candidate incompatible. The embedded registry never stores one (§3.7), so
    the flow is driven directly."""
    legacy = Versioned(0, SchemaData(SchemaType.JSON, JSON_SCHEMA_DRAFT.encode()))
    candidate = to_schema_data(json_info(S1))
    for result in (check_with_latest([legacy], candidate, CS.FULL), check_with_all([legacy], candidate, CS.FULL)):
        assert not result.compatible
        (problem,) = result.problems
        assert problem.code is RuleCode.UNPARSEABLE_SCHEMA
        assert problem.version == 0 and "version 0" in problem.message and problem.hint


def test_key_value_checker_refuses_a_non_key_value_side() -> None:
    """KeyValueSchemaCompatibilityCheck's own refusal (§4.7 step 2); the registry's type pre-check normally
    fires first, so the checker is called directly."""
    existing = [Versioned(0, to_schema_data(kv(BAR, BAR)))]
    outcome = check_key_value(existing, to_schema_data(avro_info(BAR)), CS.FULL)
    assert [p.code for p in outcome.problems] == [RuleCode.NOT_KEY_VALUE]
    outcome = check_key_value([Versioned(3, to_schema_data(avro_info(BAR)))], to_schema_data(kv(BAR, BAR)), CS.FULL)
    assert [(p.code, p.version) for p in outcome.problems] == [(RuleCode.NOT_KEY_VALUE, 3)]


def test_every_rule_code_has_an_explained_case() -> None:
    covered = {case.code for case in CASES.values()} | {
        RuleCode.NO_SCHEMA_ON_ACTIVE_TOPIC,
        RuleCode.UNPARSEABLE_SCHEMA,
        RuleCode.NOT_KEY_VALUE,
        RuleCode.JSON_SCHEMA_ID_CHANGED,  # a 3.0/4.0 line rule: tests/unit/test_pulsar_version.py
        RuleCode.DUPLICATE_FIELD,  # Avro's applyAliases: tests/unit/test_pulsar_version.py
    }
    assert covered == set(RuleCode)


# --------------------------------------------------------------------------------------------- direction, versions


def test_direction_text_in_words() -> None:
    backward = Problem(code=RuleCode.TYPE_MISMATCH, message="m", direction=BACKWARD, version=3)
    forward = Problem(code=RuleCode.TYPE_MISMATCH, message="m", direction=FORWARD, version=3)
    assert backward.direction_text == "the new schema, as a reader, cannot read data written with version 3"
    assert forward.direction_text == "version 3, as a reader, cannot read data written with the new schema"


def test_direction_text_names_the_failing_version(reg: Registry) -> None:
    history = [R(field("id", "long"), field(f"f{i}", "int", 0)) for i in range(4)]
    assert seed(reg, TOPIC, history) == [0, 1, 2, 3]
    (problem,) = reg.check(TOPIC, R(field("sku", "string")), CS.BACKWARD).problems
    assert problem.version == 3
    assert problem.direction_text == "the new schema, as a reader, cannot read data written with version 3"


def test_full_reports_both_directions(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("hash", fixed("Md5", 16)))])
    result = reg.check(TOPIC, R(field("hash", fixed("Md5", 32))), CS.FULL)
    assert {(p.code, p.direction) for p in result.problems} == {
        (RuleCode.FIXED_SIZE_MISMATCH, BACKWARD),
        (RuleCode.FIXED_SIZE_MISMATCH, FORWARD),
    }


@pytest.mark.parametrize(
    "strategy, directions",
    [
        (CS.BACKWARD_TRANSITIVE, {BACKWARD}),
        (CS.FULL_TRANSITIVE, {BACKWARD, FORWARD}),
    ],
    ids=["backward transitive names each version", "full transitive names each version both ways"],
)
def test_transitive_problems_name_each_failing_version(
    reg: Registry, strategy: CompatibilityStrategy, directions: set[Direction]
) -> None:
    """v0 and v1 lack `note`, v2 has it: the candidate (v2 again, `note` without default) fails against
    exactly v0 and v1, and each problem says which."""
    history = [
        R(field("id", "long")),
        R(field("id", "long"), field("extra", "int", 0)),
        R(field("id", "long"), field("note", "int")),
    ]
    seed(reg, TOPIC, history)
    candidate = R(field("id", "long"), field("note", "int"))
    result = reg.check(TOPIC, candidate, strategy)

    assert result.checked_versions == (0, 1, 2)
    assert_explained(reg, TOPIC, candidate, result)
    assert {p.version for p in result.problems} == {0, 1}
    assert {p.direction for p in result.problems} <= directions
    for version in (0, 1):
        assert any(f"version {version}" in p.direction_text for p in result.problems)


def test_non_transitive_names_only_the_latest(reg: Registry) -> None:
    seed(reg, TOPIC, [R(field("id", "long")), R(field("id", "long"), field("extra", "int", 0))])
    result = reg.check(TOPIC, R(field("id", "long"), field("note", "int")), CS.BACKWARD)
    assert result.checked_versions == (1,)
    assert {p.version for p in result.problems} == {1}


@pytest.mark.parametrize("strategy", [s for s in CS if s is not CS.UNDEFINED], ids=lambda s: f"under {s}")
def test_a_compatible_verdict_has_no_problems(reg: Registry, strategy: CompatibilityStrategy) -> None:
    seed(reg, TOPIC, [R(field("id", "long"))])
    same = reg.check(TOPIC, R(field("id", "long")), strategy)
    assert same.compatible and same.problems == ()


# --------------------------------------------------------------------------------------------- invariant


def _field_types(name: str) -> st.SearchStrategy[tuple[Any, Any]]:
    """(type, a valid default) pairs; named types are named after the field so each is defined once."""
    named = [
        (enum(f"E_{name}", ["A", "B"]), "A"),
        (enum(f"E_{name}", ["A", "B", "C"]), "A"),
        (enum(f"F_{name}", ["A", "B"]), "A"),
        (fixed(f"X_{name}", 4), "\u0000" * 4),
        (fixed(f"X_{name}", 8), "\u0000" * 8),
        (record_dict(f"N_{name}", [field("z", "int")]), {"z": 0}),
        (record_dict(f"N_{name}", [field("z", "string")]), {"z": ""}),
        (record_dict(f"N_{name}", [field("z", "int"), field("w", "int")]), {"z": 0, "w": 0}),
    ]
    plain = [
        ("int", 0),
        ("long", 0),
        ("float", 0.0),
        ("double", 0.0),
        ("string", ""),
        ("bytes", ""),
        ("boolean", False),
        (["null", "string"], None),
        (["null", "int"], None),
        (["null", "long"], None),
        ({"type": "array", "items": "int"}, []),
        ({"type": "array", "items": "long"}, []),
        ({"type": "map", "values": "string"}, {}),
    ]
    return st.sampled_from(plain + named)


@st.composite
def record_schemas(draw: st.DrawFn) -> str:
    fields = []
    for name in draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3)):
        type_, default = draw(_field_types(name))
        if draw(st.booleans()):
            fields.append(field(name, type_, default))
        else:
            fields.append(field(name, type_))
    return record("Gen", fields, "gen")


CHECKED = [s for s in CS if s is not CS.UNDEFINED]
ALLOWED_DIRECTIONS = {
    CS.BACKWARD: {BACKWARD},
    CS.BACKWARD_TRANSITIVE: {BACKWARD},
    CS.FORWARD: {FORWARD},
    CS.FORWARD_TRANSITIVE: {FORWARD},
    CS.FULL: {BACKWARD, FORWARD},
    CS.FULL_TRANSITIVE: {BACKWARD, FORWARD},
    CS.ALWAYS_INCOMPATIBLE: {NONE},
    CS.ALWAYS_COMPATIBLE: set(),
}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(old=record_schemas(), new=record_schemas(), strategy=st.sampled_from(CHECKED))
def test_compatible_iff_no_problems_over_generated_pairs(old: str, new: str, strategy: CompatibilityStrategy) -> None:
    reg = Registry.in_memory()
    reg.register(TOPIC, avro_info(old))
    candidate = avro_info(new)
    result = reg.check(TOPIC, candidate, strategy)

    assert result.compatible == (len(result.problems) == 0)
    assert_explained(reg, TOPIC, candidate, result)
    assert {p.direction for p in result.problems} <= ALLOWED_DIRECTIONS[strategy]
    # The same verdict comes back from what_if's table (verdicts never depend on who asks).
    assert reg.what_if(TOPIC, candidate).by_strategy[strategy] == result
