"""pulsar-semantics.md §9.2: every upstream compatibility vector, replayed against the registry facade.

Each row: a fresh topic, the existing list registered oldest first (under ALWAYS_COMPATIBLE), the strategy put in
force the way the upstream test did (topic policy, namespace policy, deprecated auto-update strategy or broker
setting), then the candidate is checked (REST /compatibility) and registered (REST POST /schema). Consumer and
producer rows go through `connect_consumer` / `connect_producer` instead. Upstream paths are relative to
apache/pulsar's `pulsar-broker/src/test/java/org/apache/pulsar/`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from registry import (
    AutoUpdateStrategy,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    IncompatibleSchemaError,
    InvalidSchemaError,
    Registry,
    RuleCode,
    SchemaInfo,
    SchemaType,
)
from schemas import (
    BAR,
    FOO,
    JSON_SCHEMA_DRAFT,
    NAMESPACE,
    P1,
    P2,
    P3,
    P4,
    PB_INT64,
    S1,
    S2,
    S3,
    S4,
    S5,
    S6,
    S7,
    S8,
    TOPIC,
    V1,
    V2,
    V3,
    V4,
    avro,
    avro_info,
    field,
    json_info,
    kv,
    pn_test,
    primitive,
    record,
    seed,
)

CS = CompatibilityStrategy
A = avro_info
J = json_info

MISSING = frozenset({RuleCode.READER_FIELD_WITHOUT_DEFAULT})
UNION = frozenset({RuleCode.TYPE_MISMATCH, RuleCode.NO_MATCHING_UNION_BRANCH})
MISMATCH = frozenset({RuleCode.TYPE_MISMATCH, RuleCode.NO_MATCHING_UNION_BRANCH, RuleCode.READER_FIELD_WITHOUT_DEFAULT})
FORBID = frozenset({RuleCode.STRATEGY_FORBIDS_CHANGE})
TYPE_CHANGED = frozenset({RuleCode.SCHEMA_TYPE_CHANGED})
BW = frozenset({Direction.BACKWARD})
FW = frozenset({Direction.FORWARD})
EITHER = frozenset({Direction.BACKWARD, Direction.FORWARD})
NONE = frozenset({Direction.NONE})
ANY_DIRECTION = frozenset(Direction)


@dataclass(frozen=True)
class Vector:
    existing: tuple[SchemaInfo, ...]
    candidate: SchemaInfo
    strategy: CompatibilityStrategy
    compatible: bool
    # How the strategy is put in force: "topic" / "namespace" policy, "broker" setting, or an auto-update strategy.
    via: str | AutoUpdateStrategy = "namespace"
    # For compatible rows: the version register() returns (None = a new version, len(existing)).
    version: int | None = None
    codes: frozenset[RuleCode] = frozenset()
    directions: frozenset[Direction] = frozenset()


def case(
    id_: str,
    existing: list[SchemaInfo],
    candidate: SchemaInfo,
    strategy: CompatibilityStrategy,
    compatible: bool,
    **kw: object,
) -> object:
    return pytest.param(Vector(tuple(existing), candidate, strategy, compatible, **kw), id=id_)  # type: ignore[arg-type]


def make_for(vec: Vector, make_reg: Callable[..., Registry]) -> Registry:
    if vec.via == "broker":
        return make_reg(compatibility=vec.strategy)
    return make_reg()


def put_strategy_in_force(reg: Registry, vec: Vector) -> None:
    if vec.via == "topic":
        reg.set_topic_policy(TOPIC, compatibility=vec.strategy)
    elif vec.via == "namespace":
        reg.set_namespace_policy(NAMESPACE, compatibility=vec.strategy)
    elif isinstance(vec.via, AutoUpdateStrategy):
        reg.set_namespace_policy(NAMESPACE, compatibility=CS.UNDEFINED, auto_update_strategy=vec.via)
    else:
        assert vec.via == "broker"


def snapshot(reg: Registry) -> list[tuple[int, SchemaType, bytes, bool]]:
    return [(v.version, v.type, v.data, v.deleted) for v in reg.history(TOPIC, include_deleted=True)]


def assert_verdict(res: CompatibilityResult, vec: Vector) -> None:
    assert res.strategy is vec.strategy
    assert res.compatible is vec.compatible, res.problems
    if vec.compatible:
        assert res.problems == ()
        return
    assert res.problems, "an incompatible verdict names at least one problem"
    codes = {p.code for p in res.problems}
    assert codes & vec.codes, f"expected one of {sorted(vec.codes)}, got {sorted(codes)}"
    directions = {p.direction for p in res.problems}
    assert directions & vec.directions, f"expected a direction in {sorted(vec.directions)}, got {sorted(directions)}"
    for problem in res.problems:
        assert problem.message
        assert problem.version is None or 0 <= problem.version < len(vec.existing)


# ------------------------------------------------------------------------------------------- checker vectors

ENUM_E = {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "DIAMONDS"]}
ENUM_SMALLER = {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS"]}
ENUM_RENAMED = {"type": "enum", "name": "Colour", "symbols": ["SPADES", "HEARTS", "DIAMONDS"]}
FIXED_8 = {"type": "fixed", "name": "Hash", "size": 8}
FIXED_16 = {"type": "fixed", "name": "Hash", "size": 16}
DERIVED_NS = "org.example.derived"


def derived(fields: list[dict[str, object]], name: str = "Derived", **extra: object) -> SchemaInfo:
    return A(record(name, fields, DERIVED_NS, **extra))


S1_DICT = json.loads(S1)
S1_PRETTY = avro(S1_DICT, pretty=True) + "\n"
S1_WITH_DOC = avro({**S1_DICT, "doc": "a record", "fields": [{**S1_DICT["fields"][0], "doc": "first field"}]})
S1_KEYS_REORDERED = json.dumps(
    {
        "fields": [{"type": "string", "name": "field1"}],
        "namespace": S1_DICT["namespace"],
        "name": "DefaultTest",
        "type": "record",
    }
)
S1_FIELD1_INT = avro({**S1_DICT, "fields": [{"name": "field1", "type": "int"}]})
S1_CUSTOM_ATTR = avro({**S1_DICT, "fields": [{**S1_DICT["fields"][0], "foo": "bar"}]})

DOLLAR_NS = "org.apache.pulsar.broker.service.schema.JsonSchemaCompatibilityCheckTest"
DOLLAR_1 = record("Outer$Inner", [field("field1", "string")], DOLLAR_NS)
DOLLAR_2 = record("Outer$Inner", [field("field2", "string")], DOLLAR_NS)

FOO_ADMIN = record("Foo", [field("intField", "int")], "org.apache.pulsar.broker.admin.AdminApiSchemaTest")
FOO1_ADMIN = record(
    "Foo1", [field("intField", "int"), field("file1", "string")], "org.apache.pulsar.broker.admin.AdminApiSchemaTest"
)
# FOO with a doc attribute: same Avro schema, different bytes (so the identical-hash shortcut does not apply).
FOO_DOC = avro({**json.loads(FOO), "doc": "doc only"})

COMPATIBILITY_VECTORS = [
    # service/schema/BaseAvroSchemaCompatibilityTest + AvroSchemaCompatibilityCheckTest#testBackwardCompatibility
    case("avro-bw-1-reader-adds-field-with-default", [A(S1)], A(S2), CS.BACKWARD, True, via="topic"),
    case(
        "avro-bw-2-reader-adds-field-without-default",
        [A(S1)],
        A(S3),
        CS.BACKWARD,
        False,
        via="topic",
        codes=MISSING,
        directions=BW,
    ),
    case("avro-bw-3-field-renamed-with-alias", [A(S1)], A(S4), CS.BACKWARD, True, via="topic"),
    case("avro-bw-4-string-widened-to-nullable-union", [A(S1)], A(S5), CS.BACKWARD, True, via="topic"),
    case(
        "avro-bw-5-nullable-union-narrowed-to-string",
        [A(S5)],
        A(S1),
        CS.BACKWARD,
        False,
        via="topic",
        codes=UNION,
        directions=BW,
    ),
    case("avro-bw-6-union-gains-int-branch", [A(S5)], A(S6), CS.BACKWARD, True, via="topic"),
    case(
        "avro-bw-7-union-loses-int-branch", [A(S6)], A(S5), CS.BACKWARD, False, via="topic", codes=UNION, directions=BW
    ),
    # AvroSchemaCompatibilityCheckTest#testForwardCompatibility
    case("avro-fw-1-add-field-with-default", [A(S1)], A(S2), CS.FORWARD, True),
    case("avro-fw-2-add-field-without-default", [A(S1)], A(S3), CS.FORWARD, True),
    case("avro-fw-3-drop-default", [A(S2)], A(S3), CS.FORWARD, True),
    case("avro-fw-4-add-default", [A(S3)], A(S2), CS.FORWARD, True),
    case("avro-fw-5-add-another-field-with-default", [A(S2)], A(S7), CS.FORWARD, True),
    case("avro-fw-6-drop-field-that-has-a-default", [A(S2)], A(S1), CS.FORWARD, True),
    # AvroSchemaCompatibilityCheckTest#testFullCompatibility (FULL is the broker default)
    case("avro-full-1-add-field-with-default", [A(S1)], A(S2), CS.FULL, True, via="broker"),
    case(
        "avro-full-2-add-field-without-default",
        [A(S1)],
        A(S3),
        CS.FULL,
        False,
        via="broker",
        codes=MISSING,
        directions=BW,
    ),
    case(
        "avro-full-3-drop-field-without-default",
        [A(S3)],
        A(S1),
        CS.FULL,
        False,
        via="broker",
        codes=MISSING,
        directions=FW,
    ),
    # BaseAvroSchemaCompatibilityTest#testBackwardTransitive / AvroSchemaCompatibilityCheckTest
    case("avro-bt-1-nullable-field1-reads-all", [A(S1), A(S2)], A(S5), CS.BACKWARD_TRANSITIVE, True),
    case("avro-bt-2-wider-union-reads-all", [A(S1), A(S2), A(S5)], A(S6), CS.BACKWARD_TRANSITIVE, True),
    case("avro-bt-3-drop-default-against-one-version", [A(S2)], A(S8), CS.BACKWARD_TRANSITIVE, True),
    case("avro-bt-4-non-transitive-only-sees-latest", [A(S1), A(S2)], A(S8), CS.BACKWARD, True),
    case(
        "avro-bt-5-transitive-sees-first-version",
        [A(S1), A(S2)],
        A(S8),
        CS.BACKWARD_TRANSITIVE,
        False,
        codes=MISSING,
        directions=BW,
    ),
    case(
        "avro-bt-6-transitive-fails-on-older-versions",
        [A(S1), A(S2), A(S5)],
        A(S8),
        CS.BACKWARD_TRANSITIVE,
        False,
        codes=MISMATCH,
        directions=BW,
    ),
    # AvroSchemaCompatibilityCheckTest#testForwardTransitive
    case("avro-ft-1-all-old-read-new", [A(S1), A(S2)], A(S3), CS.FORWARD_TRANSITIVE, True, via="topic"),
    case("avro-ft-2-all-old-read-extra-field", [A(S1), A(S2), A(S3)], A(S7), CS.FORWARD_TRANSITIVE, True, via="topic"),
    case("avro-ft-3-latest-reads-with-default", [A(S3), A(S2)], A(S1), CS.FORWARD, True, via="topic"),
    case(
        "avro-ft-4-first-version-lacks-default",
        [A(S3), A(S2)],
        A(S1),
        CS.FORWARD_TRANSITIVE,
        False,
        via="topic",
        codes=MISSING,
        directions=FW,
    ),
    # AvroSchemaCompatibilityCheckTest#testFullTransitive
    case("avro-fullt-1-full-only-sees-latest", [A(S1), A(S2)], A(S3), CS.FULL, True, via="topic"),
    case(
        "avro-fullt-2-full-transitive-sees-first",
        [A(S1), A(S2)],
        A(S3),
        CS.FULL_TRANSITIVE,
        False,
        via="topic",
        codes=MISSING,
        directions=BW,
    ),
    # service/schema/JsonSchemaCompatibilityCheckTest (extends BaseAvroSchemaCompatibilityTest)
    case(
        "json-base-bw-2-reader-adds-field-without-default",
        [J(S1)],
        J(S3),
        CS.BACKWARD,
        False,
        codes=MISSING,
        directions=BW,
    ),
    case("json-base-full-1-add-field-with-default", [J(S1)], J(S2), CS.FULL, True),
    # JsonSchemaCompatibilityCheckTest: a `$` in a (nested-class) record name parses leniently
    case(
        "json-dollar-name-field-renamed-without-default",
        [J(DOLLAR_1)],
        J(DOLLAR_2),
        CS.BACKWARD,
        False,
        codes=MISSING,
        directions=BW,
    ),
    # service/schema/SchemaServiceTest#checkIsCompatible
    case("svc-iscompat-1-backward-checks-latest", [A(S1), A(S2)], A(S3), CS.BACKWARD, True),
    case(
        "svc-iscompat-2-backward-transitive-checks-all",
        [A(S1), A(S2)],
        A(S3),
        CS.BACKWARD_TRANSITIVE,
        False,
        codes=MISSING,
        directions=BW,
    ),
    # SchemaServiceTest#dontReAddExistingSchemaInMiddle / dontReAddExistingSchemaAtRoot
    case("svc-dedup-middle-returns-v1", [A(S1), A(S2), A(S3)], A(S2), CS.FULL, True, version=1),
    case("svc-dedup-root-returns-v0", [A(S1)], A(S1), CS.FULL, True, version=0),
    # admin/AdminApiSchemaTest#testSchemaCompatibility (STRING) and type change
    case(
        "admin-compat-same-string-schema",
        [primitive(SchemaType.STRING)],
        primitive(SchemaType.STRING),
        CS.FULL,
        True,
        version=0,
    ),
    case(
        "admin-compat-string-to-int8-type-change",
        [primitive(SchemaType.STRING)],
        primitive(SchemaType.INT8),
        CS.FULL,
        False,
        codes=TYPE_CHANGED,
        directions=NONE,
    ),
    # AdminApiSchemaTest#testPostSchemaCompatibilityStrategy (409 under BACKWARD)
    case(
        "admin-post-backward-409-new-field-without-default",
        [A(FOO_ADMIN)],
        A(FOO1_ADMIN),
        CS.BACKWARD,
        False,
        codes=MISSING,
        directions=BW,
    ),
    # admin/AdminApiSchemaAutoUpdateTest: strategies set through the deprecated namespace auto-update policy
    case(
        "autoupd-backward-new-long-field-without-default",
        [A(V1)],
        A(V3),
        CS.BACKWARD,
        False,
        via=AutoUpdateStrategy.Backward,
        codes=MISSING,
        directions=BW,
    ),
    case("autoupd-backward-dropped-field", [A(V1)], A(V2), CS.BACKWARD, True, via=AutoUpdateStrategy.Backward),
    case(
        "autoupd-forward-dropped-field-without-default",
        [A(V1)],
        A(V2),
        CS.FORWARD,
        False,
        via=AutoUpdateStrategy.Forward,
        codes=MISSING,
        directions=FW,
    ),
    case("autoupd-forward-added-field", [A(V1)], A(V3), CS.FORWARD, True, via=AutoUpdateStrategy.Forward),
    case(
        "autoupd-full-dropped-field",
        [A(V1)],
        A(V2),
        CS.FULL,
        False,
        via=AutoUpdateStrategy.Full,
        codes=MISSING,
        directions=FW,
    ),
    case(
        "autoupd-full-added-field-without-default",
        [A(V1)],
        A(V3),
        CS.FULL,
        False,
        via=AutoUpdateStrategy.Full,
        codes=MISSING,
        directions=BW,
    ),
    case("autoupd-full-added-field-with-default", [A(V1)], A(V4), CS.FULL, True, via=AutoUpdateStrategy.Full),
    case(
        "autoupd-disabled-rejects-any-change",
        [A(V1)],
        A(V4),
        CS.ALWAYS_INCOMPATIBLE,
        False,
        via=AutoUpdateStrategy.AutoUpdateDisabled,
        codes=FORBID,
        directions=NONE,
    ),
    case(
        "autoupd-disabled-accepts-same-schema",
        [A(V1)],
        A(V1),
        CS.ALWAYS_INCOMPATIBLE,
        True,
        via=AutoUpdateStrategy.AutoUpdateDisabled,
        version=0,
    ),
    # service/schema/SchemaTypeCompatibilityCheckTest
    case(
        "type-always-incompat-broker-rejects-person-three",
        [A(P1)],
        A(P3),
        CS.ALWAYS_INCOMPATIBLE,
        False,
        via="broker",
        codes=FORBID,
        directions=NONE,
    ),
    case("type-json-to-avro-rejected", [J(P3)], A(P3), CS.FULL, False, codes=TYPE_CHANGED, directions=NONE),
    case(
        "type-int32-to-string-rejected",
        [primitive(SchemaType.INT32)],
        primitive(SchemaType.STRING),
        CS.FULL,
        False,
        codes=TYPE_CHANGED,
        directions=NONE,
    ),
    case("type-always-compat-type-change-stored", [A(P3)], J(P3), CS.ALWAYS_COMPATIBLE, True),
    case(
        "type-primitive-same-int32",
        [primitive(SchemaType.INT32)],
        primitive(SchemaType.INT32),
        CS.FULL,
        True,
        version=0,
    ),
    # derived (pulsar-semantics.md §4.2, §3.3; verified against Avro 1.12.0 upstream of this project)
    case(
        "derived-record-rename-is-compatible",
        [A(S1)],
        A(record("Renamed", [field("field1", "string")], "org.other")),
        CS.FULL,
        True,
    ),
    case(
        "derived-enum-symbol-removed-not-detected",
        [derived([field("suit", ENUM_E)])],
        derived([field("suit", ENUM_SMALLER)]),
        CS.FULL,
        True,
    ),
    case(
        "derived-enum-renamed-rejected",
        [derived([field("suit", ENUM_E)])],
        derived([field("suit", ENUM_RENAMED)]),
        CS.FULL,
        False,
        codes=frozenset({RuleCode.NAME_MISMATCH}),
        directions=EITHER,
    ),
    case(
        "derived-int-to-long-backward-promotes",
        [derived([field("n", "int")])],
        derived([field("n", "long")]),
        CS.BACKWARD,
        True,
    ),
    case(
        "derived-int-to-long-forward-cannot-demote",
        [derived([field("n", "int")])],
        derived([field("n", "long")]),
        CS.FORWARD,
        False,
        codes=frozenset({RuleCode.TYPE_MISMATCH}),
        directions=FW,
    ),
    case(
        "derived-string-to-bytes-full-promotes-both-ways",
        [derived([field("s", "string")])],
        derived([field("s", "bytes")]),
        CS.FULL,
        True,
    ),
    case(
        "derived-fixed-size-change-rejected",
        [derived([field("h", FIXED_8)])],
        derived([field("h", FIXED_16)]),
        CS.FULL,
        False,
        codes=frozenset({RuleCode.FIXED_SIZE_MISMATCH}),
        directions=EITHER,
    ),
    case(
        "derived-drop-field-without-default-forward-rejected",
        [A(S3)],
        A(S1),
        CS.FORWARD,
        False,
        codes=MISSING,
        directions=FW,
    ),
    case("derived-drop-field-without-default-backward-accepted", [A(S3)], A(S1), CS.BACKWARD, True),
    case("derived-whitespace-only-change-dedups", [A(S1)], A(S1_PRETTY), CS.FULL, True, version=0),
    case("derived-doc-only-change-dedups", [A(S1)], A(S1_WITH_DOC), CS.FULL, True, version=0),
    case("derived-always-compatible-accepts-anything", [A(S1)], A(S1_FIELD1_INT), CS.ALWAYS_COMPATIBLE, True),
    case(
        "derived-protobuf-has-no-checker",
        [SchemaInfo(type=SchemaType.PROTOBUF, schema=S1)],
        SchemaInfo(type=SchemaType.PROTOBUF, schema=S3),
        CS.FULL,
        True,
    ),
    case("derived-custom-attribute-makes-new-version", [A(S1)], A(S1_CUSTOM_ATTR), CS.FULL, True),
    case("derived-json-key-order-dedups", [A(S1)], A(S1_KEYS_REORDERED), CS.FULL, True, version=0),
    case(
        "derived-default-added-under-always-incompatible",
        [A(S3)],
        A(S2),
        CS.ALWAYS_INCOMPATIBLE,
        False,
        codes=FORBID,
        directions=NONE,
    ),
    # service/schema/KeyValueSchemaCompatibilityCheckTest
    case("kv-identical-foo-bar-full", [kv(FOO, BAR)], kv(FOO, BAR), CS.FULL, True, version=0),
    case("kv-identical-foo-bar-backward", [kv(FOO, BAR)], kv(FOO, BAR), CS.BACKWARD, True, version=0),
    case("kv-identical-foo-bar-forward", [kv(FOO, BAR)], kv(FOO, BAR), CS.FORWARD, True, version=0),
    case(
        "kv-swapped-key-and-value-full", [kv(FOO, BAR)], kv(BAR, FOO), CS.FULL, False, codes=MISMATCH, directions=EITHER
    ),
    case(
        "kv-swapped-key-and-value-backward",
        [kv(FOO, BAR)],
        kv(BAR, FOO),
        CS.BACKWARD,
        False,
        codes=MISMATCH,
        directions=BW,
    ),
    case(
        "kv-swapped-key-and-value-forward",
        [kv(FOO, BAR)],
        kv(BAR, FOO),
        CS.FORWARD,
        False,
        codes=MISMATCH,
        directions=FW,
    ),
    case(
        "kv-key-type-json-to-avro-rejected",
        [kv(FOO, BAR, SchemaType.JSON, SchemaType.AVRO)],
        kv(FOO_DOC, BAR, SchemaType.AVRO, SchemaType.AVRO),
        CS.FULL,
        False,
        codes=frozenset({RuleCode.KEY_VALUE_PART_TYPE_CHANGED}),
        directions=ANY_DIRECTION,
    ),
    case(
        "kv-no-type-properties-means-bytes-and-passes",
        [kv(FOO, BAR, None, None)],
        kv(BAR, FOO, None, None),
        CS.FULL,
        True,
    ),
    case("kv-string-to-kv-always-compatible", [primitive(SchemaType.STRING)], kv(FOO, BAR), CS.ALWAYS_COMPATIBLE, True),
    case(
        "kv-string-to-kv-always-incompatible",
        [primitive(SchemaType.STRING)],
        kv(FOO, BAR),
        CS.ALWAYS_INCOMPATIBLE,
        False,
        codes=frozenset({RuleCode.SCHEMA_TYPE_CHANGED, RuleCode.NOT_KEY_VALUE, RuleCode.STRATEGY_FORBIDS_CHANGE}),
        directions=ANY_DIRECTION,
    ),
    case(
        "kv-primitive-only-property-change-dedups",
        [kv(None, None, SchemaType.INT32, SchemaType.STRING)],
        kv(None, None, SchemaType.STRING, SchemaType.BOOLEAN),
        CS.FULL,
        True,
        version=0,
    ),
    # service/schema/ProtobufNativeSchemaCompatibilityCheckTest
    case(
        "pn-root-message-changed-rejected",
        [pn_test(root="SubMessage")],
        pn_test(root="TestMessage"),
        CS.FULL,
        False,
        codes=frozenset({RuleCode.ROOT_MESSAGE_CHANGED}),
        directions=ANY_DIRECTION,
    ),
    case("pn-int32-to-int64-field-accepted", [pn_test()], pn_test(PB_INT64), CS.FULL, True),
    case(
        "pn-always-incompatible-rejects-change",
        [pn_test()],
        pn_test(PB_INT64),
        CS.ALWAYS_INCOMPATIBLE,
        False,
        codes=FORBID,
        directions=NONE,
    ),
]


@pytest.mark.parametrize("vec", COMPATIBILITY_VECTORS)
def test_compatibility_vector(make_reg: Callable[..., Registry], vec: Vector) -> None:
    reg = make_for(vec, make_reg)
    versions = seed(reg, TOPIC, list(vec.existing))
    assert versions == list(range(len(vec.existing)))
    put_strategy_in_force(reg, vec)
    assert reg.effective_policy(TOPIC).admin_compatibility.value is vec.strategy

    # REST /compatibility with the effective strategy, then with the strategy named explicitly.
    assert_verdict(reg.check(TOPIC, vec.candidate), vec)
    assert_verdict(reg.check(TOPIC, vec.candidate, strategy=vec.strategy), vec)

    # REST POST /schema: same verdict (dedup may return an existing version instead).
    before = snapshot(reg)
    if vec.compatible:
        expected = len(vec.existing) if vec.version is None else vec.version
        assert reg.register(TOPIC, vec.candidate).version == expected
        if vec.version is None:
            assert len(snapshot(reg)) == len(before) + 1
            assert reg.get(TOPIC).version == expected
            assert reg.get(TOPIC).type is vec.candidate.type
        else:
            assert snapshot(reg) == before
    else:
        with pytest.raises(IncompatibleSchemaError) as excinfo:
            reg.register(TOPIC, vec.candidate)
        result = excinfo.value.result
        assert result is not None and not result.compatible and result.problems
        assert str(excinfo.value)
        assert snapshot(reg) == before


# ------------------------------------------------------------------------------------------- json-draft

# JsonSchemaCompatibilityCheckTest#testJsonSchemaBackwardsCompatibility (json-draft-1/2): at checker level an
# Avro schema and a Jackson JSON-Schema draft document are incompatible either way; at registry level with
# strict JSON (schemaJsonAllowLegacyJacksonFormat=false, §2.3/§4.3) the draft document is invalid data (422).


def test_json_draft_1_avro_then_draft_document_is_invalid(reg: Registry) -> None:
    assert reg.register(TOPIC, J(S1)).version == 0
    with pytest.raises(InvalidSchemaError):
        reg.check(TOPIC, J(JSON_SCHEMA_DRAFT))
    with pytest.raises(InvalidSchemaError):
        reg.register(TOPIC, J(JSON_SCHEMA_DRAFT))
    assert [v.version for v in reg.history(TOPIC)] == [0]


def test_json_draft_2_draft_document_cannot_be_registered_first(reg: Registry) -> None:
    with pytest.raises(InvalidSchemaError):
        reg.register(TOPIC, J(JSON_SCHEMA_DRAFT))
    assert reg.history(TOPIC, include_deleted=True) == []
    # Nothing was stored, so the Avro schema then goes in as the first version.
    assert reg.register(TOPIC, J(S1)).version == 0


# ------------------------------------------------------------------------------------------- derived poison

# derived-invalid-default-poison (§4.8): accepted on an empty history, every later put fails with a clear error.


def test_derived_invalid_default_poisons_later_puts(reg: Registry) -> None:
    poisoned = A(record("Poison", [field("f", "string", None)], "org.example"))
    assert reg.register(TOPIC, poisoned).version == 0
    reg.set_namespace_policy(NAMESPACE, compatibility=CS.ALWAYS_COMPATIBLE)
    before = snapshot(reg)
    from registry import PoisonedHistoryError, RegistryError

    with pytest.raises(RegistryError) as excinfo:
        reg.register(TOPIC, A(S1))
    assert isinstance(excinfo.value, PoisonedHistoryError)
    assert snapshot(reg) == before


# ------------------------------------------------------------------------------------------- consumer vectors

# SchemaCompatibilityCheckTest#testConsumerCompatibilityCheckCanReadLastTest / ...ReadAllTest /
# testConsumerWithNotCompatibilitySchema (namespace strategy; the topic has a live schema, so it is "in use").
CONSUMER_VECTORS = [
    pytest.param([P1, P2], P3, CS.BACKWARD, True, id="consumer-canreadlast-p3-backward"),
    pytest.param([P1, P2], P3, CS.FORWARD, True, id="consumer-canreadlast-p3-forward"),
    pytest.param([P1, P2], P3, CS.FORWARD_TRANSITIVE, True, id="consumer-canreadlast-p3-forward-transitive"),
    pytest.param([P1, P2], P3, CS.FULL, True, id="consumer-canreadlast-p3-full"),
    pytest.param([P1, P2], P3, CS.BACKWARD_TRANSITIVE, False, id="consumer-readall-p3-backward-transitive"),
    pytest.param([P1, P2], P3, CS.FULL_TRANSITIVE, False, id="consumer-readall-p3-full-transitive"),
    pytest.param([P1, P2], P4, CS.BACKWARD, False, id="consumer-notcompat-p4-backward"),
    pytest.param([P1, P2], P4, CS.FULL, False, id="consumer-notcompat-p4-full"),
    # derived (§8.2): no identical-hash shortcut on the "all" path
    pytest.param([P1], P1, CS.ALWAYS_INCOMPATIBLE, False, id="consumer-always-incompat-identical-rejected"),
]


@pytest.mark.parametrize(("existing", "candidate", "strategy", "accepted"), CONSUMER_VECTORS)
def test_consumer_vector(
    reg: Registry, existing: list[str], candidate: str, strategy: CompatibilityStrategy, accepted: bool
) -> None:
    seed(reg, TOPIC, [A(s) for s in existing])
    reg.set_namespace_policy(NAMESPACE, compatibility=strategy)
    before = snapshot(reg)
    adm = reg.connect_consumer(TOPIC, A(candidate), subscription="sub", name="c1")
    assert adm.accepted is accepted, adm.reason
    assert adm.registered is False
    assert snapshot(reg) == before, "a consumer on an in-use topic never registers its schema"
    if accepted:
        assert adm.result is None or adm.result.compatible
    else:
        assert adm.reason
        if adm.result is not None:
            assert not adm.result.compatible and adm.result.problems


# SchemaCompatibilityCheckTest#testProducerSendWithOldSchemaAndConsumerCanRead-style: producer P3 under FULL.
def test_producer_p3_full_registers_new_version(reg: Registry) -> None:
    seed(reg, TOPIC, [A(P1), A(P2)])
    adm = reg.connect_producer(TOPIC, A(P3), name="p1")
    assert adm.accepted, adm.reason
    assert adm.version == 2
    assert adm.registered is True
    assert reg.get(TOPIC).version == 2
