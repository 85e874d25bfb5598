"""pulsar-semantics.md §10: the 15 rules, one group of tests per rule (what the vectors and scenarios leave out)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from registry import (
    AutoUpdateStrategy,
    ClientRole,
    CompatibilityStrategy,
    Direction,
    IncompatibleSchemaError,
    InvalidSchemaError,
    NotFoundError,
    PoisonedHistoryError,
    PolicySource,
    Registry,
    RegistryError,
    RuleCode,
    SchemaInfo,
    SchemaNotFoundError,
    SchemaType,
)
from registry._model import Admission
from schemas import (
    BAR,
    FOO,
    NAMESPACE,
    PB_INT32,
    PB_INT64,
    PB_STRING,
    S1,
    S2,
    S3,
    S5,
    S8,
    TOPIC,
    avro,
    avro_info,
    field,
    json_info,
    kv,
    pn_test,
    primitive,
    protobuf_native,
    record,
    seed,
)

CS = CompatibilityStrategy
A = avro_info
J = json_info
EVERY_STRATEGY = [s for s in CS if s is not CS.UNDEFINED]
CHECKED_STRATEGIES = [s for s in EVERY_STRATEGY if s not in (CS.ALWAYS_COMPATIBLE, CS.ALWAYS_INCOMPATIBLE)]
NON_TRANSITIVE = [CS.BACKWARD, CS.FORWARD, CS.FULL]
TRANSITIVE = [CS.BACKWARD_TRANSITIVE, CS.FORWARD_TRANSITIVE, CS.FULL_TRANSITIVE]
AUTO_UPDATE_DISABLED = "Schema not found and schema auto updating is disabled."
NO_SCHEMA_ON_ACTIVE_TOPIC = "Failed to add schema to an active topic with empty(BYTES) schema"
S1_PRETTY = avro(json.loads(S1), pretty=True)


def snapshot(reg: Registry, topic: str = TOPIC) -> list[tuple[int, SchemaType, bytes, bool]]:
    return [(v.version, v.type, v.data, v.deleted) for v in reg.history(topic, include_deleted=True)]


def codes(result: object) -> set[RuleCode]:
    return {p.code for p in result.problems}  # type: ignore[attr-defined]


def _enum_rec(extra: dict[str, object]) -> str:
    """A record with one enum field; `extra` goes into the enum's definition."""
    enum = {"type": "enum", "name": "Colour", "symbols": ["A", "B"], **extra}
    return json.dumps(
        {"type": "record", "name": "R", "namespace": "org.example", "fields": [{"name": "e", "type": enum}]}
    )


def _double_rec(default: object) -> str:
    field = {"name": "d", "type": "double", "default": default}
    return json.dumps({"type": "record", "name": "R", "namespace": "org.example", "fields": [field]})


def use(reg: Registry, strategy: CompatibilityStrategy) -> None:
    reg.set_namespace_policy(NAMESPACE, compatibility=strategy)


# ====================== rule 1: versions per schema id


class TestRule1Versions:
    def test_partitions_and_domains_share_one_history(self, reg: Registry) -> None:
        assert reg.register("persistent://acme/tests/orders-partition-3", A(S1)).version == 0
        for name in (
            "persistent://acme/tests/orders",
            "non-persistent://acme/tests/orders",
            "acme/tests/orders",
            "persistent://acme/tests/orders-partition-0",
        ):
            got = reg.get(name)
            assert got.version == 0, name
            assert got.topic == "acme/tests/orders"
        assert reg.register("persistent://acme/tests/orders-partition-0", A(S1)).version == 0, "dedup across partitions"
        assert reg.register("non-persistent://acme/tests/orders", A(S2)).version == 1
        assert [v.version for v in reg.history("acme/tests/orders-partition-7")] == [0, 1]
        assert reg.find_version("persistent://acme/tests/orders", A(S2)) == 1

    def test_partition_checks_run_against_the_shared_history(self, reg: Registry) -> None:
        reg.register("persistent://acme/tests/orders", A(S1))
        res = reg.check("persistent://acme/tests/orders-partition-1", A(S3))
        assert not res.compatible  # FULL: S3 cannot read S1
        with pytest.raises(IncompatibleSchemaError):
            reg.register("non-persistent://acme/tests/orders-partition-2", A(S3))

    def test_each_topic_numbers_from_zero(self, reg: Registry) -> None:
        assert reg.register("persistent://acme/tests/a", A(S1)).version == 0
        assert reg.register("persistent://acme/tests/a", A(S2)).version == 1
        assert reg.register("persistent://acme/tests/b", A(S2)).version == 0
        assert reg.register("persistent://acme/other/a", A(S2)).version == 0

    def test_soft_delete_on_empty_history_writes_a_tombstone(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.delete(TOPIC, force=True)
        assert reg.delete(TOPIC) == 0
        assert reg.delete(TOPIC) == 1, "each soft delete appends a tombstone, even after a tombstone"
        assert [(v.version, v.deleted) for v in reg.history(TOPIC, include_deleted=True)] == [(0, True), (1, True)]
        assert reg.register(TOPIC, A(S1)).version == 2

    def test_tombstone_records_user_and_timestamp(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1), user="alice")
        assert reg.get(TOPIC).user == "alice"
        reg.delete(TOPIC, user="bob")
        tomb = reg.history(TOPIC, include_deleted=True)[-1]
        assert tomb.deleted and tomb.user == "bob" and tomb.type is SchemaType.NONE and tomb.data == b""
        assert tomb.timestamp >= reg.history(TOPIC, include_deleted=True)[0].timestamp > 1_600_000_000_000

    def test_force_delete_resets_numbering(self, reg: Registry) -> None:
        for s in (S1, S2):
            reg.register(TOPIC, A(s))
        assert reg.delete(TOPIC, force=True) is None
        assert reg.register(TOPIC, A(S3)).version == 0, "nothing before the forced delete is consulted (S3 vs S1 is F)"


class TestRule1Concurrency:
    def test_concurrent_identical_puts_yield_one_version(self, reg: Registry) -> None:
        # SchemaTest#testCreateSchemaInParallel (§3.1): puts are serialised; identical ones dedup.
        from concurrent.futures import ThreadPoolExecutor

        reg.register("persistent://acme/tests/warmup", A(S1))
        with ThreadPoolExecutor(max_workers=8) as pool:
            versions = list(pool.map(lambda _: reg.register(TOPIC, A(S1)).version, range(16)))
        assert set(versions) == {0}
        assert len(reg.history(TOPIC)) == 1

    def test_concurrent_distinct_puts_stay_dense(self, reg: Registry) -> None:
        from concurrent.futures import ThreadPoolExecutor

        reg.register(TOPIC, A(record("Seed", [field("f0", "int")])))
        use(reg, CS.ALWAYS_COMPATIBLE)
        texts = [record("Seed", [field(f"f{i}", "int")]) for i in range(1, 13)]
        with ThreadPoolExecutor(max_workers=6) as pool:
            versions = list(pool.map(lambda t: reg.register(TOPIC, A(t)).version, texts))
        assert sorted(versions) == list(range(1, 13))
        assert [v.version for v in reg.history(TOPIC)] == list(range(13))

    def test_two_handles_on_one_sqlite_file_share_history(self, tmp_path: object) -> None:
        from pathlib import Path

        from registry import BrokerConfig

        path = Path(str(tmp_path)) / "shared.db"
        first = Registry.open(path, broker=BrokerConfig(), create=True)
        second = Registry.open(path, broker=BrokerConfig(), create=True)
        try:
            assert first.register(TOPIC, A(S1)).version == 0
            assert second.register(TOPIC, A(S1)).version == 0
            assert second.register(TOPIC, A(S2)).version == 1
            assert first.get(TOPIC).version == 1
            second.delete(TOPIC)
            with pytest.raises(SchemaNotFoundError):
                first.get(TOPIC)
        finally:
            for handle in (first, second):
                close = getattr(handle, "close", None)
                if callable(close):
                    close()


# ====================== rule 2: trimming at the last tombstone


class TestRule2Trimming:
    def test_versions_before_the_tombstone_do_not_exist(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        assert reg.delete(TOPIC) == 2
        assert reg.register(TOPIC, A(S3)).version == 3
        assert [v.version for v in reg.history(TOPIC)] == [3]
        for missing in (0, 1, 2, 4, 99):
            with pytest.raises(SchemaNotFoundError):
                reg.get(TOPIC, version=missing)
        assert reg.get(TOPIC, version=3).data == S3.encode()
        assert reg.find_version(TOPIC, A(S1)) is None
        assert len(reg.history(TOPIC, include_deleted=True)) == 4

    def test_dedup_ignores_versions_before_the_tombstone(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.delete(TOPIC)
        assert reg.register(TOPIC, A(S1)).version == 2

    def test_transitive_check_ignores_versions_before_the_tombstone(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.delete(TOPIC)
        assert reg.register(TOPIC, A(S2)).version == 2
        use(reg, CS.BACKWARD_TRANSITIVE)
        res = reg.check(TOPIC, A(S3))  # S3 reads S2, would fail reading S1
        assert res.compatible, res.problems
        assert res.checked_versions == (2,)
        assert reg.register(TOPIC, A(S3)).version == 3

    def test_no_schema_after_delete(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.delete(TOPIC)
        with pytest.raises(SchemaNotFoundError):
            reg.get(TOPIC)
        assert reg.history(TOPIC) == []
        # A producer meets "no schema": under validation enforcement a schema-less producer is let in.
        reg.set_namespace_policy(NAMESPACE, validation_enforced=True)
        assert reg.connect_producer(TOPIC, None, name="p").accepted

    def test_unknown_topic_has_empty_history_and_no_schema(self, reg: Registry) -> None:
        assert reg.history("persistent://acme/tests/never") == []
        with pytest.raises(SchemaNotFoundError) as excinfo:
            reg.get("persistent://acme/tests/never")
        assert isinstance(excinfo.value, NotFoundError) and isinstance(excinfo.value, LookupError)
        assert reg.find_version("persistent://acme/tests/never", A(S1)) is None


# ====================== rule 3: register = validate, dedup, check, store


class TestRule3Register:
    def test_dedup_matches_any_live_version_before_checking(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2), A(S5)])
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        assert reg.register(TOPIC, A(S1)).version == 0
        assert reg.register(TOPIC, A(S2)).version == 1
        assert len(reg.history(TOPIC)) == 3

    def test_check_has_no_dedup_step(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        res = reg.check(TOPIC, A(S1))
        assert not res.compatible
        assert reg.register(TOPIC, A(S1)).version == 0

    def test_first_schema_is_stored_without_any_check(self, make_reg: Callable[..., Registry]) -> None:
        reg = make_reg(compatibility=CS.ALWAYS_INCOMPATIBLE)
        assert reg.register(TOPIC, A(S1)).version == 0
        reg.delete(TOPIC)
        assert reg.register(TOPIC, J(S3)).version == 2, "after a delete the next schema is again unchecked"

    @pytest.mark.parametrize(
        ("first", "second", "duplicate"),
        [
            # EnumSchema.equals compares names, symbols and props: not the enum's default.
            (_enum_rec({"default": "A"}), _enum_rec({"default": "B"}), True),
            (_enum_rec({}), _enum_rec({"default": "B", "doc": "d", "aliases": ["Old"]}), True),
            (_enum_rec({"default": "A"}), _enum_rec({"default": "A", "colour": "red"}), False),
            # Props are Jackson JsonNodes: IntNode(1) is not DoubleNode(1.0).
            (_enum_rec({"weight": 1}), _enum_rec({"weight": 1.0}), False),
            (_enum_rec({"weight": 1.0}), _enum_rec({"weight": 1.00}), True),
            # Schema.parse reads a text default of a float/double field as a DoubleNode.
            (_double_rec("1.5"), _double_rec(1.5), True),
            (_double_rec(" 2.5d"), _double_rec(2.5), True),
            (_double_rec(1), _double_rec(1.0), False),
        ],
    )
    def test_dedup_is_java_avro_schema_equals(self, reg: Registry, first: str, second: str, duplicate: bool) -> None:
        assert reg.register(TOPIC, A(first)).version == 0
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        if duplicate:
            assert reg.register(TOPIC, A(second)).version == 0, "the live version is returned, even ALWAYS_INCOMPATIBLE"
            reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
            adm = reg.connect_producer(TOPIC, A(second), name="p")
            assert adm.accepted and adm.version == 0 and not adm.registered
        else:
            with pytest.raises(IncompatibleSchemaError):
                reg.register(TOPIC, A(second))
        assert len(reg.history(TOPIC)) == 1

    def test_properties_do_not_take_part_in_dedup(self, reg: Registry) -> None:
        first = SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"owner": "team-a"})
        assert reg.register(TOPIC, first).version == 0
        assert reg.get(TOPIC).properties == {"owner": "team-a"}
        other = SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"owner": "team-b", "x": "y"})
        assert reg.register(TOPIC, other).version == 0
        assert reg.get(TOPIC).properties == {"owner": "team-a"}, "the old properties are kept"
        assert len(reg.history(TOPIC)) == 1

    def test_properties_do_not_take_part_in_dedup_for_primitives(self, reg: Registry) -> None:
        assert reg.register(TOPIC, SchemaInfo(type=SchemaType.STRING, schema="", properties={"a": "1"})).version == 0
        assert reg.register(TOPIC, SchemaInfo(type=SchemaType.STRING, schema="", properties={"a": "2"})).version == 0

    def test_register_ignores_allow_auto_update(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
        assert reg.register(TOPIC, A(S2)).version == 1

    def test_incompatible_register_stores_nothing_and_explains(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        before = snapshot(reg)
        with pytest.raises(IncompatibleSchemaError) as excinfo:
            reg.register(TOPIC, A(S3))
        result = excinfo.value.result
        assert result is not None
        assert result.strategy is CS.FULL
        assert result.checked_versions == (0,)
        problem = result.problems[0]
        assert problem.code is RuleCode.READER_FIELD_WITHOUT_DEFAULT
        assert problem.direction is Direction.BACKWARD
        assert problem.version == 0
        assert problem.reader_path.startswith("/")
        assert "field2" in problem.message or problem.reader_path.endswith("/fields/1")
        assert snapshot(reg) == before

    def test_registered_version_carries_type_data_user_properties(self, reg: Registry) -> None:
        info = SchemaInfo(type=SchemaType.JSON, schema=S1, properties={"k": "v"})
        assert reg.register(TOPIC, info, user="carol").version == 0
        got = reg.get(TOPIC)
        assert (got.type, got.data, got.user, dict(got.properties), got.deleted) == (
            SchemaType.JSON,
            S1.encode(),
            "carol",
            {"k": "v"},
            False,
        )
        assert got.schema == S1
        assert got.topic == "acme/tests/topic"


# ====================== rule 4: dedup equality

S2_DICT = json.loads(S2)


def _s2_variant(**changes: object) -> str:
    return avro({**S2_DICT, **changes})


def _s2_field2(**changes: object) -> str:
    fields = [S2_DICT["fields"][0], {**S2_DICT["fields"][1], **changes}]
    return avro({**S2_DICT, "fields": fields})


SAME_AVRO_SCHEMA = [
    pytest.param(avro(S2_DICT, pretty=True) + "\n\n", id="whitespace"),
    pytest.param(json.dumps(dict(reversed(list(S2_DICT.items())))), id="json-key-order"),
    pytest.param(_s2_variant(doc="record documentation"), id="record-doc"),
    pytest.param(_s2_field2(doc="field documentation"), id="field-doc"),
    pytest.param(_s2_variant(aliases=["OldName"]), id="record-aliases"),
    pytest.param(_s2_field2(aliases=["second"]), id="field-aliases"),
]

DIFFERENT_AVRO_SCHEMA = [
    pytest.param(_s2_field2(default="bar"), id="other-default"),
    pytest.param(_s2_field2(foo="bar"), id="custom-field-attribute"),
    pytest.param(_s2_variant(owner="team-a"), id="custom-record-attribute"),
    pytest.param(avro({**S2_DICT, "fields": list(reversed(S2_DICT["fields"]))}), id="field-order"),
    pytest.param(_s2_variant(namespace="org.other"), id="namespace"),
    pytest.param(_s2_variant(name="OtherName"), id="record-name"),
    pytest.param(_s2_field2(order="descending"), id="field-sort-order"),
]


class TestRule4DedupEquality:
    @pytest.mark.parametrize("variant", SAME_AVRO_SCHEMA)
    @pytest.mark.parametrize("schema_type", [SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF])
    def test_equal_avro_schemas_dedup(self, reg: Registry, variant: str, schema_type: SchemaType) -> None:
        assert reg.register(TOPIC, SchemaInfo(type=schema_type, schema=S2)).version == 0
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, SchemaInfo(type=schema_type, schema=variant)).version == 0
        assert reg.get(TOPIC).data == S2.encode()
        assert len(reg.history(TOPIC)) == 1

    @pytest.mark.parametrize("variant", DIFFERENT_AVRO_SCHEMA)
    def test_unequal_avro_schemas_make_a_new_version(self, reg: Registry, variant: str) -> None:
        assert reg.register(TOPIC, A(S2)).version == 0
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, A(variant)).version == 1
        assert reg.register(TOPIC, A(variant)).version == 1, "and that one dedups in turn"

    def test_logical_type_is_part_of_equality(self, reg: Registry) -> None:
        plain = record("Day", [field("d", "int")], "org.example")
        dated = record("Day", [field("d", {"type": "int", "logicalType": "date"})], "org.example")
        reg.register(TOPIC, A(plain))
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, A(dated)).version == 1

    def test_dedup_requires_the_same_type(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        with pytest.raises(IncompatibleSchemaError) as excinfo:
            reg.register(TOPIC, J(S1))
        assert RuleCode.SCHEMA_TYPE_CHANGED in codes(excinfo.value.result)
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, J(S1)).version == 1
        assert reg.register(TOPIC, A(S1_PRETTY)).version == 0, "dedup matches the AVRO entry, not the JSON one"

    def test_other_types_dedup_by_bytes(self, reg: Registry) -> None:
        assert reg.register(TOPIC, primitive(SchemaType.STRING)).version == 0
        assert reg.register(TOPIC, primitive(SchemaType.STRING, "null")).version == 1, (
            "different bytes, DEFAULT accepts"
        )
        assert reg.register(TOPIC, primitive(SchemaType.STRING)).version == 0
        assert reg.register(TOPIC, primitive(SchemaType.STRING, "null")).version == 1

    def test_protobuf_native_dedups_by_bytes(self, reg: Registry) -> None:
        first = pn_test()
        assert reg.register(TOPIC, first).version == 0
        assert reg.register(TOPIC, pn_test()).version == 0
        reformatted = SchemaInfo(
            type=SchemaType.PROTOBUF_NATIVE, schema=json.dumps(json.loads(first.text), indent=2), properties={}
        )
        assert reg.register(TOPIC, reformatted).version == 1, "not Avro-parsed: other bytes are another schema"

    def test_key_value_dedups_by_packed_bytes(self, reg: Registry) -> None:
        assert reg.register(TOPIC, kv(FOO, BAR)).version == 0
        # The admin form is re-serialised compactly, so layout of the outer document does not matter...
        pretty = SchemaInfo(
            type=SchemaType.KEY_VALUE,
            schema=json.dumps(json.loads(kv(FOO, BAR).text), indent=3),
            properties=dict(kv(FOO, BAR).properties),
        )
        assert reg.register(TOPIC, pretty).version == 0
        # ...but KEY_VALUE is not Avro-parsed for dedup: reordered keys inside the key schema are other bytes.
        foo_reordered = json.dumps(dict(reversed(list(json.loads(FOO).items()))))
        assert reg.register(TOPIC, kv(foo_reordered, BAR)).version == 1

    def test_key_value_same_bytes_other_sub_types_is_the_same_schema(self, reg: Registry) -> None:
        # derived (§4.7 registry-level caveat): the hash uses bytes + type only.
        assert reg.register(TOPIC, kv(None, None, SchemaType.INT32, SchemaType.STRING)).version == 0
        res = reg.check(TOPIC, kv(None, None, SchemaType.STRING, SchemaType.BOOLEAN))
        assert res.compatible
        assert reg.register(TOPIC, kv(None, None, SchemaType.STRING, SchemaType.BOOLEAN)).version == 0
        assert reg.get(TOPIC).properties["key.schema.type"] == "INT32"


class TestRule4FindVersion:
    def test_find_version_is_byte_equality(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        assert reg.find_version(TOPIC, A(S1)) == 0
        assert reg.find_version(TOPIC, A(S2)) == 1
        assert reg.find_version(TOPIC, A(S1_PRETTY)) is None, "Avro-equal but other bytes"
        assert reg.register(TOPIC, A(S1_PRETTY)).version == 0, "while register dedups it"
        assert reg.find_version(TOPIC, J(S1)) is None, "type takes part"
        assert reg.find_version(TOPIC, A(S3)) is None

    def test_find_version_ignores_properties(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        assert reg.find_version(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"a": "b"})) == 0

    def test_find_version_returns_first_match_after_last_tombstone(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        reg.delete(TOPIC)
        assert reg.find_version(TOPIC, A(S1)) is None
        assert reg.register(TOPIC, A(S1)).version == 3
        assert reg.find_version(TOPIC, A(S1)) == 3

    def test_find_version_primitive(self, reg: Registry) -> None:
        reg.register(TOPIC, primitive(SchemaType.INT32))
        assert reg.find_version(TOPIC, primitive(SchemaType.INT32)) == 0
        assert reg.find_version(TOPIC, primitive(SchemaType.INT64)) is None


# ====================== rule 5: latest vs all


class TestRule5LatestOrAll:
    @pytest.mark.parametrize("strategy", NON_TRANSITIVE)
    def test_non_transitive_checks_latest_only(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        seed(reg, TOPIC, [A(S1), A(S5), A(S2)])
        res = reg.check(TOPIC, A(S8), strategy=strategy)
        assert res.compatible, res.problems
        assert res.checked_versions == (2,)

    @pytest.mark.parametrize("strategy", TRANSITIVE)
    def test_transitive_checks_every_live_version(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        res = reg.check(TOPIC, A(S2.replace('"default":"foo"', '"default":"x"')), strategy=strategy)
        assert res.compatible, res.problems
        assert res.checked_versions == (0, 1)

    def test_transitive_problem_names_the_failing_version(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        res = reg.check(TOPIC, A(S8), strategy=CS.BACKWARD_TRANSITIVE)
        assert not res.compatible
        assert res.checked_versions == (0, 1)
        assert {p.version for p in res.problems} == {0}
        assert all(p.direction is Direction.BACKWARD for p in res.problems)

    def test_forward_problem_direction(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S3)])
        res = reg.check(TOPIC, A(S1), strategy=CS.FORWARD)
        assert not res.compatible
        assert {p.direction for p in res.problems} == {Direction.FORWARD}
        assert codes(res) == {RuleCode.READER_FIELD_WITHOUT_DEFAULT}

    def test_full_reports_both_directions_when_both_fail(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(record("R", [field("a", "int")]))])
        res = reg.check(TOPIC, A(record("R", [field("b", "int")])), strategy=CS.FULL)
        assert not res.compatible
        assert {p.direction for p in res.problems} == {Direction.BACKWARD, Direction.FORWARD}

    def test_transitive_needs_every_version_of_the_same_type(self, reg: Registry) -> None:
        seed(reg, TOPIC, [primitive(SchemaType.STRING), A(S1)])
        res = reg.check(TOPIC, A(S2), strategy=CS.FULL_TRANSITIVE)
        assert not res.compatible
        assert RuleCode.SCHEMA_TYPE_CHANGED in codes(res)
        assert any(p.version == 0 for p in res.problems)
        assert reg.check(TOPIC, A(S2), strategy=CS.FULL).compatible

    def test_transitive_has_no_identical_shortcut_but_identical_passes_the_checker(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        assert reg.check(TOPIC, A(S2), strategy=CS.FULL_TRANSITIVE).compatible


# ====================== rule 6: type pre-check, identical shortcut


class TestRule6PreChecks:
    @pytest.mark.parametrize("strategy", [s for s in EVERY_STRATEGY if s is not CS.ALWAYS_COMPATIBLE])
    def test_type_change_rejected(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        reg.register(TOPIC, A(S1))
        res = reg.check(TOPIC, J(S1), strategy=strategy)
        assert not res.compatible
        assert codes(res) & {RuleCode.SCHEMA_TYPE_CHANGED, RuleCode.STRATEGY_FORBIDS_CHANGE}
        if strategy is not CS.ALWAYS_INCOMPATIBLE:
            problem = next(p for p in res.problems if p.code is RuleCode.SCHEMA_TYPE_CHANGED)
            assert "AVRO" in problem.message and "JSON" in problem.message
            assert problem.direction is Direction.NONE

    def test_type_change_accepted_under_always_compatible(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, primitive(SchemaType.INT64)).version == 1
        assert reg.register(TOPIC, kv(FOO, BAR)).version == 2
        assert reg.register(TOPIC, pn_test()).version == 3
        assert [v.type for v in reg.history(TOPIC)] == [
            SchemaType.AVRO,
            SchemaType.INT64,
            SchemaType.KEY_VALUE,
            SchemaType.PROTOBUF_NATIVE,
        ]

    @pytest.mark.parametrize("strategy", [s for s in EVERY_STRATEGY if not s.is_transitive])
    def test_byte_identical_to_latest_is_compatible(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        seed(reg, TOPIC, [A(S1), A(S3)])
        res = reg.check(TOPIC, A(S3), strategy=strategy)
        assert res.compatible and res.problems == ()

    @pytest.mark.parametrize("strategy", [CS.BACKWARD_TRANSITIVE, CS.FULL_TRANSITIVE])
    def test_transitive_has_no_identical_shortcut(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        # §3.4 "all": no identical-schema shortcut, so S3 (identical to the latest) still fails against S1.
        seed(reg, TOPIC, [A(S1), A(S3)])
        res = reg.check(TOPIC, A(S3), strategy=strategy)
        assert not res.compatible and {p.version for p in res.problems} == {0}


# ====================== rule 7: ALWAYS_* strategies


class TestRule7AlwaysStrategies:
    def test_always_incompatible_lifecycle(self, reg: Registry) -> None:
        assert reg.register(TOPIC, A(S1)).version == 0
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        assert reg.register(TOPIC, A(S1_PRETTY)).version == 0
        with pytest.raises(IncompatibleSchemaError) as excinfo:
            reg.register(TOPIC, A(S2))
        problems = excinfo.value.result.problems  # type: ignore[union-attr]
        assert {p.code for p in problems} == {RuleCode.STRATEGY_FORBIDS_CHANGE}
        assert {p.direction for p in problems} == {Direction.NONE}

    @pytest.mark.parametrize(
        "info",
        [
            pytest.param(primitive(SchemaType.STRING, "null"), id="string"),
            pytest.param(pn_test(PB_INT64), id="pn"),
            pytest.param(kv(FOO, S1), id="kv"),
            pytest.param(SchemaInfo(type=SchemaType.PROTOBUF, schema=S2), id="pb"),
        ],
    )
    def test_always_incompatible_rejects_changes_of_every_type(self, reg: Registry, info: SchemaInfo) -> None:
        first = {
            SchemaType.STRING: primitive(SchemaType.STRING),
            SchemaType.PROTOBUF_NATIVE: pn_test(),
            SchemaType.KEY_VALUE: kv(FOO, BAR),
            SchemaType.PROTOBUF: SchemaInfo(type=SchemaType.PROTOBUF, schema=S1),
        }[info.type]
        reg.register(TOPIC, first)
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        assert not reg.check(TOPIC, info).compatible
        with pytest.raises(IncompatibleSchemaError):
            reg.register(TOPIC, info)
        assert reg.register(TOPIC, first).version == 0

    def test_always_compatible_accepts_incompatible_avro(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S5)])
        use(reg, CS.ALWAYS_COMPATIBLE)
        res = reg.check(TOPIC, A(S3))
        assert res.compatible and res.strategy is CS.ALWAYS_COMPATIBLE
        assert reg.register(TOPIC, A(S3)).version == 2


# ====================== rule 8: effective policy


class TestRule8EffectivePolicy:
    def test_defaults(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        eff = reg.effective_policy(TOPIC)
        assert (eff.compatibility.value, eff.compatibility.source) == (CS.FULL, PolicySource.BROKER_DEFAULT)
        assert (eff.admin_compatibility.value, eff.admin_compatibility.source) == (CS.FULL, PolicySource.BROKER_DEFAULT)
        assert eff.allow_auto_update.value is True
        assert eff.validation_enforced.value is False
        assert eff.is_system_topic is False
        ns = reg.namespace_policy(NAMESPACE)
        assert ns.compatibility is CS.UNDEFINED
        assert ns.auto_update_strategy is None
        assert ns.allow_auto_update is None
        assert ns.allow_auto_update_with_replicator is True
        assert ns.validation_enforced is False
        assert reg.topic_policy(TOPIC).compatibility is None

    def test_broker_setting_is_the_fallback(self, make_reg: Callable[..., Registry]) -> None:
        reg = make_reg(compatibility=CS.BACKWARD)
        reg.register(TOPIC, A(S1))
        eff = reg.effective_policy(TOPIC).compatibility
        assert (eff.value, eff.source) == (CS.BACKWARD, PolicySource.BROKER_DEFAULT)
        assert reg.register(TOPIC, A(S2)).version == 1
        assert reg.check(TOPIC, A(S8)).compatible, "S8 reads S2"
        res = reg.check(TOPIC, _r([field("field1", "int")], name="DefaultTest"))
        assert res.strategy is CS.BACKWARD and not res.compatible

    @pytest.mark.parametrize(
        ("auto", "expected"),
        [
            (AutoUpdateStrategy.AutoUpdateDisabled, CS.ALWAYS_INCOMPATIBLE),
            (AutoUpdateStrategy.Backward, CS.BACKWARD),
            (AutoUpdateStrategy.Forward, CS.FORWARD),
            (AutoUpdateStrategy.Full, CS.FULL),
            (AutoUpdateStrategy.AlwaysCompatible, CS.ALWAYS_COMPATIBLE),
            (AutoUpdateStrategy.BackwardTransitive, CS.BACKWARD_TRANSITIVE),
            (AutoUpdateStrategy.ForwardTransitive, CS.FORWARD_TRANSITIVE),
            (AutoUpdateStrategy.FullTransitive, CS.FULL_TRANSITIVE),
        ],
    )
    def test_auto_update_mapping(
        self, reg: Registry, auto: AutoUpdateStrategy, expected: CompatibilityStrategy
    ) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, auto_update_strategy=auto)
        assert reg.namespace_policy(NAMESPACE).auto_update_strategy is auto
        eff = reg.effective_policy(TOPIC)
        assert (eff.compatibility.value, eff.compatibility.source) == (expected, PolicySource.AUTO_UPDATE_MAPPING)
        assert eff.admin_compatibility.value is expected
        assert reg.check(TOPIC, A(S2)).strategy is expected

    def test_namespace_strategy_beats_auto_update_mapping(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(
            NAMESPACE, compatibility=CS.BACKWARD, auto_update_strategy=AutoUpdateStrategy.AutoUpdateDisabled
        )
        eff = reg.effective_policy(TOPIC).compatibility
        assert (eff.value, eff.source) == (CS.BACKWARD, PolicySource.NAMESPACE)
        assert reg.register(TOPIC, A(S2)).version == 1

    def test_auto_update_disabled_means_always_incompatible(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, auto_update_strategy=AutoUpdateStrategy.AutoUpdateDisabled)
        with pytest.raises(IncompatibleSchemaError) as excinfo:
            reg.register(TOPIC, A(S2))
        assert excinfo.value.result.strategy is CS.ALWAYS_INCOMPATIBLE  # type: ignore[union-attr]
        adm = reg.connect_producer(TOPIC, A(S2), name="p")
        assert not adm.accepted
        assert reg.connect_producer(TOPIC, A(S1), name="p").accepted

    def test_topic_beats_namespace_and_keyword_arguments_left_out_are_unchanged(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, compatibility=CS.FORWARD, allow_auto_update=False, validation_enforced=True)
        reg.set_namespace_policy(NAMESPACE, auto_update_strategy=AutoUpdateStrategy.Full)
        ns = reg.namespace_policy(NAMESPACE)
        assert (ns.compatibility, ns.allow_auto_update, ns.validation_enforced) == (CS.FORWARD, False, True)
        reg.set_topic_policy(TOPIC, compatibility=CS.BACKWARD_TRANSITIVE)
        eff = reg.effective_policy(TOPIC)
        assert (eff.compatibility.value, eff.compatibility.source) == (CS.BACKWARD_TRANSITIVE, PolicySource.TOPIC)
        assert (eff.admin_compatibility.value, eff.admin_compatibility.source) == (
            CS.BACKWARD_TRANSITIVE,
            PolicySource.TOPIC,
        )
        assert (eff.allow_auto_update.value, eff.allow_auto_update.source) == (False, PolicySource.NAMESPACE)
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=None)
        eff = reg.effective_policy(TOPIC)
        assert (eff.allow_auto_update.value, eff.allow_auto_update.source) == (True, PolicySource.BROKER_DEFAULT)

    def test_topic_policy_on_a_partition_applies_to_the_base_topic_or_is_refused(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_topic_policy(TOPIC, compatibility=CS.FORWARD)
        assert reg.effective_policy(TOPIC + "-partition-2").compatibility.value is CS.FORWARD
        assert reg.effective_policy(TOPIC.replace("persistent://", "non-persistent://")).compatibility.value in (
            CS.FORWARD,
            CS.FULL,
        )

    def test_validation_enforced_sources(self, make_reg: Callable[..., Registry]) -> None:
        reg = make_reg()
        reg.register(TOPIC, A(S1))
        assert reg.effective_policy(TOPIC).validation_enforced.value is False
        reg.set_topic_policy(TOPIC, validation_enforced=True)
        eff = reg.effective_policy(TOPIC).validation_enforced
        assert (eff.value, eff.source) == (True, PolicySource.TOPIC)
        assert not reg.connect_producer(TOPIC, None, name="p").accepted
        reg.set_topic_policy(TOPIC, validation_enforced=None)
        reg.set_namespace_policy(NAMESPACE, validation_enforced=True)
        assert reg.effective_policy(TOPIC).validation_enforced.value is True
        assert not reg.connect_producer(TOPIC, None, name="p").accepted
        reg.set_namespace_policy(NAMESPACE, validation_enforced=False)
        assert reg.connect_producer(TOPIC, None, name="p").accepted

        broker_enforced = make_reg(validation_enforced=True)
        broker_enforced.register(TOPIC, A(S1))
        broker_enforced.set_topic_policy(TOPIC, validation_enforced=False)
        assert not broker_enforced.connect_producer(TOPIC, None, name="p").accepted


SYSTEM_TOPIC = "persistent://acme/tests/__change_events"


class TestRule8SystemTopics:
    def test_system_topic_uses_always_compatible_on_the_connection_path(self, reg: Registry) -> None:
        reg.register(SYSTEM_TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, compatibility=CS.ALWAYS_INCOMPATIBLE, allow_auto_update=False)
        reg.set_topic_policy(SYSTEM_TOPIC, compatibility=CS.BACKWARD)
        eff = reg.effective_policy(SYSTEM_TOPIC)
        assert eff.is_system_topic is True
        assert (eff.compatibility.value, eff.compatibility.source) == (CS.ALWAYS_COMPATIBLE, PolicySource.SYSTEM_TOPIC)
        assert eff.admin_compatibility.value is CS.BACKWARD, "REST path: no system-topic rule"
        assert eff.allow_auto_update.value is True
        # Producers and consumers meet ALWAYS_COMPATIBLE and may always auto-update.
        adm = reg.connect_producer(SYSTEM_TOPIC, primitive(SchemaType.INT32), name="p")
        assert adm.accepted and adm.version == 1 and adm.registered
        consumer = reg.connect_consumer(SYSTEM_TOPIC, A(S3), subscription="s", name="c")
        assert consumer.accepted
        # The admin path uses the topic's strategy.
        with pytest.raises(IncompatibleSchemaError):
            reg.register(SYSTEM_TOPIC, A(S3))

    def test_system_topic_strategy_comes_from_the_broker(self, make_reg: Callable[..., Registry]) -> None:
        reg = make_reg(system_topic_compatibility=CS.FULL)
        reg.register(SYSTEM_TOPIC, A(S1))
        assert reg.effective_policy(SYSTEM_TOPIC).compatibility.value is CS.FULL
        assert not reg.connect_producer(SYSTEM_TOPIC, A(S3), name="p").accepted

    def test_ordinary_topic_is_not_a_system_topic(self, reg: Registry) -> None:
        reg.register("persistent://acme/tests/change_events", A(S1))
        assert reg.effective_policy("persistent://acme/tests/change_events").is_system_topic is False

    @pytest.mark.parametrize(
        ("topic", "system"),
        [
            # SystemTopicNamesTest.topicPoliciesSystemTopicNames and SystemTopicNames.isSystemTopic.
            ("persistent://acme/tests/__change_events-partition-1", True),
            ("persistent://acme/tests/__transaction_buffer_snapshot", True),
            ("persistent://acme/tests/my-sub__transaction_pending_ack", True),
            ("persistent://pulsar/system/anything", True),
            ("persistent://acme/tests/__change_events-diff-suffix", False),
            ("persistent://acme/tests/not_really__change_events", False),
            ("persistent://acme/tests/__transaction_buffer_snapshot_x", False),
            ("persistent://acme/tests/__transaction_log_0", False),
            ("persistent://acme/tests/__my_topic", False),
        ],
    )
    def test_system_topics_are_pulsars_own_list(self, reg: Registry, topic: str, system: bool) -> None:
        assert reg.effective_policy(topic).is_system_topic is system


# ====================== rule 9: Avro resolution details


def _r(fields: list[dict[str, object]], name: str = "R", ns: str = "org.example") -> SchemaInfo:
    return A(record(name, fields, ns))


ENUM_ABC = {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}
ENUM_AB = {"type": "enum", "name": "E", "symbols": ["A", "B"]}


class TestRule9AvroResolution:
    @pytest.mark.parametrize("strategy", CHECKED_STRATEGIES)
    @pytest.mark.parametrize(("old", "new"), [(ENUM_ABC, ENUM_AB), (ENUM_AB, ENUM_ABC)], ids=["removed", "added"])
    def test_enum_symbol_changes_pass_every_strategy(
        self, reg: Registry, strategy: CompatibilityStrategy, old: object, new: object
    ) -> None:
        reg.register(TOPIC, _r([field("e", old)]))
        assert reg.check(TOPIC, _r([field("e", new)]), strategy=strategy).compatible

    def test_enum_alias_matches_renamed_enum(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("e", ENUM_AB)]))
        renamed = {"type": "enum", "name": "E2", "aliases": ["E"], "symbols": ["A", "B"]}
        assert reg.check(TOPIC, _r([field("e", renamed)]), strategy=CS.BACKWARD).compatible

    def test_fixed_name_mismatch(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("h", {"type": "fixed", "name": "H", "size": 4})]))
        res = reg.check(TOPIC, _r([field("h", {"type": "fixed", "name": "G", "size": 4})]), strategy=CS.BACKWARD)
        assert not res.compatible and RuleCode.NAME_MISMATCH in codes(res)

    @pytest.mark.parametrize(
        ("writer", "reader"),
        [
            ("int", "long"),
            ("int", "float"),
            ("int", "double"),
            ("long", "float"),
            ("long", "double"),
            ("float", "double"),
            ("string", "bytes"),
            ("bytes", "string"),
        ],
    )
    def test_promotions(self, reg: Registry, writer: str, reader: str) -> None:
        reg.register(TOPIC, _r([field("x", writer)]))
        assert reg.check(TOPIC, _r([field("x", reader)]), strategy=CS.BACKWARD).compatible
        if {writer, reader} != {"string", "bytes"}:
            res = reg.check(TOPIC, _r([field("x", reader)]), strategy=CS.FORWARD)
            assert not res.compatible and RuleCode.TYPE_MISMATCH in codes(res)

    @pytest.mark.parametrize(
        ("writer", "reader"),
        [("long", "int"), ("boolean", "int"), ("string", "int"), ("double", "float"), ("int", "string")],
    )
    def test_non_promotions_rejected(self, reg: Registry, writer: str, reader: str) -> None:
        reg.register(TOPIC, _r([field("x", writer)]))
        res = reg.check(TOPIC, _r([field("x", reader)]), strategy=CS.BACKWARD)
        assert not res.compatible and RuleCode.TYPE_MISMATCH in codes(res)
        assert all(p.direction is Direction.BACKWARD for p in res.problems)

    def test_null_default_counts_as_a_default(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("a", "int")]))
        assert reg.check(
            TOPIC, _r([field("a", "int"), field("b", ["null", "string"], None)]), strategy=CS.FULL
        ).compatible

    def test_arrays_and_maps_recurse(self, reg: Registry) -> None:
        reg.register(
            TOPIC, _r([field("xs", {"type": "array", "items": "int"}), field("m", {"type": "map", "values": "string"})])
        )
        ok = _r([field("xs", {"type": "array", "items": "long"}), field("m", {"type": "map", "values": "bytes"})])
        assert reg.check(TOPIC, ok, strategy=CS.BACKWARD).compatible
        bad = _r([field("xs", {"type": "array", "items": "int"}), field("m", {"type": "map", "values": "int"})])
        res = reg.check(TOPIC, bad, strategy=CS.BACKWARD)
        assert not res.compatible and RuleCode.TYPE_MISMATCH in codes(res)

    def test_nested_record_missing_default_is_found_with_a_path(self, reg: Registry) -> None:
        inner_old = {"type": "record", "name": "Inner", "fields": [field("a", "int")]}
        inner_new = {"type": "record", "name": "Inner", "fields": [field("a", "int"), field("b", "int")]}
        reg.register(TOPIC, _r([field("inner", inner_old)]))
        res = reg.check(TOPIC, _r([field("inner", inner_new)]), strategy=CS.BACKWARD)
        assert not res.compatible
        problem = next(p for p in res.problems if p.code is RuleCode.READER_FIELD_WITHOUT_DEFAULT)
        assert problem.reader_path.startswith("/fields/0")

    def test_writer_record_vs_reader_union_with_other_record_name_is_compatible(self, reg: Registry) -> None:
        # avro-resolution.md: the resolver matches record branches structurally (SchemaCompatibility would not).
        reg.register(
            TOPIC,
            _r([field("r", {"type": "record", "name": "Inner", "namespace": "n1", "fields": [field("a", "int")]})]),
        )
        reader = _r(
            [
                field(
                    "r",
                    ["null", {"type": "record", "name": "Other", "namespace": "n2", "fields": [field("a", "int")]}],
                    None,
                )
            ]
        )
        assert reg.check(TOPIC, reader, strategy=CS.BACKWARD).compatible

    def test_writer_enum_vs_reader_union_enum_needs_full_name(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("e", {"type": "enum", "name": "E", "namespace": "n1", "symbols": ["A"]})]))
        reader = _r([field("e", ["null", {"type": "enum", "name": "E", "namespace": "n2", "symbols": ["A"]}], None)])
        res = reg.check(TOPIC, reader, strategy=CS.BACKWARD)
        assert not res.compatible
        assert codes(res) & {RuleCode.NO_MATCHING_UNION_BRANCH, RuleCode.TYPE_MISMATCH, RuleCode.NAME_MISMATCH}

    def test_record_name_not_compared_at_top_level(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("a", "int")], name="Old", ns="n1"))
        for strategy in CHECKED_STRATEGIES:
            assert reg.check(TOPIC, _r([field("a", "int")], name="New", ns="n2"), strategy=strategy).compatible

    def test_field_alias_is_applied_from_reader(self, reg: Registry) -> None:
        reg.register(TOPIC, _r([field("old", "int")]))
        assert reg.check(TOPIC, _r([field("new", "int", aliases=["old"])]), strategy=CS.BACKWARD).compatible
        res = reg.check(TOPIC, _r([field("new", "int")]), strategy=CS.BACKWARD)
        assert not res.compatible

    def test_aliases_are_not_applied_between_equal_schemas(self, reg: Registry) -> None:
        """Schema.applyAliases returns the writer as it is when writer.equals(reader) (avro-resolution.md §3.1):
        an equal copy reads field by field, where applying `b`'s alias `a` would collide with `a`."""
        fields = [field("a", "int"), field("b", "int", aliases=["a"])]
        reg.register(TOPIC, _r(fields))
        copy = SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(json.loads(_r(fields).schema), indent=2))
        for strategy in CHECKED_STRATEGIES:
            assert reg.check(TOPIC, copy, strategy=strategy).compatible, strategy
        res = reg.check(TOPIC, _r([*fields, field("c", "int", 0)]), strategy=CS.BACKWARD)
        assert not res.compatible and codes(res) == {RuleCode.DUPLICATE_FIELD}, "not equal: the aliases apply"

    def test_top_level_non_record_schemas(self, reg: Registry) -> None:
        reg.register(TOPIC, A('"int"'))
        assert reg.check(TOPIC, A('"long"'), strategy=CS.BACKWARD).compatible
        assert not reg.check(TOPIC, A('"long"'), strategy=CS.FORWARD).compatible


# ====================== rule 10: types without a checker, PN


class TestRule10UncheckedTypes:
    @pytest.mark.parametrize("strategy", [s for s in EVERY_STRATEGY if s is not CS.ALWAYS_INCOMPATIBLE])
    def test_protobuf_accepts_any_change(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        seed(
            reg,
            TOPIC,
            [SchemaInfo(type=SchemaType.PROTOBUF, schema=S1), SchemaInfo(type=SchemaType.PROTOBUF, schema=S5)],
        )
        use(reg, strategy)
        candidate = SchemaInfo(type=SchemaType.PROTOBUF, schema=record("Other", [field("x", "boolean")]))
        res = reg.check(TOPIC, candidate)
        assert res.compatible, res.problems
        assert reg.register(TOPIC, candidate).version == 2

    def test_protobuf_always_incompatible(self, reg: Registry) -> None:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.PROTOBUF, schema=S1))
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        res = reg.check(TOPIC, SchemaInfo(type=SchemaType.PROTOBUF, schema=S2))
        assert not res.compatible and codes(res) == {RuleCode.STRATEGY_FORBIDS_CHANGE}

    @pytest.mark.parametrize("strategy", CHECKED_STRATEGIES)
    def test_protobuf_native_root_rename_rejected(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        reg.register(TOPIC, pn_test(root="TestMessage"))
        res = reg.check(TOPIC, pn_test(root="SubMessage"), strategy=strategy)
        assert not res.compatible
        assert codes(res) == {RuleCode.ROOT_MESSAGE_CHANGED}
        message = res.problems[0].message
        assert "proto.TestMessage" in message and "proto.SubMessage" in message

    @pytest.mark.parametrize("strategy", CHECKED_STRATEGIES)
    def test_protobuf_native_field_changes_accepted(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        reg.register(TOPIC, pn_test())
        use(reg, strategy)
        changed = protobuf_native(
            {"TestMessage": [("renamed", 1, PB_INT64), ("other", 9, PB_STRING)], "SubMessage": []}, "TestMessage"
        )
        assert reg.check(TOPIC, changed).compatible
        assert reg.register(TOPIC, changed).version == 1

    def test_protobuf_native_package_change_is_a_root_change(self, reg: Registry) -> None:
        reg.register(TOPIC, protobuf_native({"M": [("a", 1, PB_INT32)]}, "M", package="p1"))
        res = reg.check(TOPIC, protobuf_native({"M": [("a", 1, PB_INT32)]}, "M", package="p2"))
        assert not res.compatible and codes(res) == {RuleCode.ROOT_MESSAGE_CHANGED}

    def test_protobuf_native_nested_root(self, reg: Registry) -> None:
        nested = {"Outer": {"Inner": [("a", 1, PB_INT32)]}}
        first = protobuf_native({"Outer": [("x", 1, PB_INT32)]}, "Outer.Inner", nested=nested)
        assert reg.register(TOPIC, first).version == 0
        same_root = protobuf_native({"Outer": [("y", 2, PB_INT64)]}, "Outer.Inner", nested=nested)
        assert reg.check(TOPIC, same_root).compatible
        assert not reg.check(TOPIC, protobuf_native({"Outer": [("x", 1, PB_INT32)]}, "Outer", nested=nested)).compatible

    def test_protobuf_native_always_compatible_accepts_root_rename(self, reg: Registry) -> None:
        reg.register(TOPIC, pn_test())
        use(reg, CS.ALWAYS_COMPATIBLE)
        assert reg.register(TOPIC, pn_test(root="SubMessage")).version == 1

    def test_protobuf_native_transitive_checks_every_root(self, reg: Registry) -> None:
        seed(reg, TOPIC, [pn_test(root="SubMessage"), pn_test()])
        assert reg.check(TOPIC, pn_test(PB_INT64), strategy=CS.FULL).compatible
        res = reg.check(TOPIC, pn_test(PB_INT64), strategy=CS.FULL_TRANSITIVE)
        assert not res.compatible and {p.version for p in res.problems} == {0}

    @pytest.mark.parametrize("strategy", CHECKED_STRATEGIES + [CS.ALWAYS_INCOMPATIBLE])
    def test_same_primitive_is_accepted(self, reg: Registry, strategy: CompatibilityStrategy) -> None:
        reg.register(TOPIC, primitive(SchemaType.DOUBLE))
        use(reg, strategy)
        assert reg.check(TOPIC, primitive(SchemaType.DOUBLE)).compatible
        assert reg.register(TOPIC, primitive(SchemaType.DOUBLE)).version == 0


# ====================== rule 11: KEY_VALUE


class TestRule11KeyValue:
    def test_value_sub_type_change_rejected(self, reg: Registry) -> None:
        reg.register(TOPIC, kv(FOO, BAR))
        res = reg.check(TOPIC, kv(FOO, S1, SchemaType.AVRO, SchemaType.JSON))
        assert not res.compatible and RuleCode.KEY_VALUE_PART_TYPE_CHANGED in codes(res)

    def test_key_and_value_checked_separately(self, reg: Registry) -> None:
        reg.register(TOPIC, kv(FOO, S1))
        use(reg, CS.BACKWARD)
        assert reg.check(TOPIC, kv(FOO, S2)).compatible
        res = reg.check(TOPIC, kv(FOO, S3))
        assert not res.compatible
        assert RuleCode.READER_FIELD_WITHOUT_DEFAULT in codes(res)
        assert {p.direction for p in res.problems} == {Direction.BACKWARD}

    def test_primitive_key_with_avro_value(self, reg: Registry) -> None:
        reg.register(TOPIC, kv(None, S1, SchemaType.INT32, SchemaType.AVRO))
        assert reg.register(TOPIC, kv(None, S2, SchemaType.INT32, SchemaType.AVRO)).version == 1
        # Same bytes as the latest with other sub-types would hit the identical-hash shortcut (§4.7 caveat).
        assert reg.check(TOPIC, kv(None, S2, SchemaType.INT64, SchemaType.AVRO)).compatible
        res = reg.check(TOPIC, kv(None, S1, SchemaType.INT64, SchemaType.AVRO))
        assert not res.compatible and RuleCode.KEY_VALUE_PART_TYPE_CHANGED in codes(res)
        got = reg.get(TOPIC)
        assert json.loads(got.schema) == {"key": "", "value": json.loads(S2)}
        assert got.properties["key.schema.type"] == "INT32"

    def test_missing_type_properties_mean_bytes_and_pass(self, reg: Registry) -> None:
        reg.register(TOPIC, kv(S1, S1, None, None))
        use(reg, CS.BACKWARD)
        assert reg.check(TOPIC, kv(S3, S3, None, None)).compatible
        assert reg.register(TOPIC, kv(S3, S3, None, None)).version == 1

    def test_kv_transitive(self, reg: Registry) -> None:
        seed(reg, TOPIC, [kv(FOO, S1), kv(FOO, S2)])
        assert reg.check(TOPIC, kv(FOO, S8), strategy=CS.BACKWARD).compatible
        res = reg.check(TOPIC, kv(FOO, S8), strategy=CS.BACKWARD_TRANSITIVE)
        assert not res.compatible and 0 in {p.version for p in res.problems}

    def test_kv_after_non_kv_is_a_type_change(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        res = reg.check(TOPIC, kv(S1, S1))
        assert not res.compatible
        assert codes(res) & {RuleCode.SCHEMA_TYPE_CHANGED, RuleCode.NOT_KEY_VALUE}
        res = reg.check(TOPIC, kv(S1, S1), strategy=CS.ALWAYS_COMPATIBLE)
        assert res.compatible

    def test_separated_encoding_is_accepted(self, reg: Registry) -> None:
        assert reg.register(TOPIC, kv(FOO, BAR, encoding="SEPARATED")).version == 0
        assert reg.get(TOPIC).properties["kv.encoding.type"] == "SEPARATED"
        assert reg.register(TOPIC, kv(FOO, BAR, encoding=None)).version == 0, "same bytes: dedup"


# ====================== rule 12: validation (see test_bad_input.py)


class TestRule12ValidationAccepts:
    @pytest.mark.parametrize(
        "text",
        [
            '"string"',
            '{"type":"array","items":"int"}',
            '{"type":"map","values":"long"}',
            '{"type":"enum","name":"E","symbols":["A"]}',
            '{"type":"fixed","name":"F","size":3}',
        ],
        ids=["string", "array", "map", "enum", "fixed"],
    )
    def test_avro_accepts_non_record_top_level(self, reg: Registry, text: str) -> None:
        assert reg.register(TOPIC, A(text)).version == 0

    def test_json_accepts_top_level_union(self, reg: Registry) -> None:
        assert reg.register(TOPIC, J('["null","string"]')).version == 0

    def test_lenient_names_allow_dollar(self, reg: Registry) -> None:
        text = record("Outer$Inner", [field("$field", "int")], "org.example.Outer$")
        assert reg.register(TOPIC, A(text)).version == 0

    def test_string_may_carry_null_data(self, reg: Registry) -> None:
        assert reg.register(TOPIC, primitive(SchemaType.STRING, "null")).version == 0
        assert reg.get(TOPIC).data == b"null"

    @pytest.mark.parametrize("schema_type", [SchemaType.NONE, SchemaType.EXTERNAL])
    def test_unvalidated_types(self, reg: Registry, schema_type: SchemaType) -> None:
        assert reg.register(TOPIC, SchemaInfo(type=schema_type, schema="anything at all")).version == 0

    @pytest.mark.parametrize(
        "schema_type",
        [t for t in SchemaType if t.is_primitive and t not in (SchemaType.NONE, SchemaType.BYTES)],
    )
    def test_every_primitive_with_empty_data(self, reg: Registry, schema_type: SchemaType) -> None:
        assert reg.register(TOPIC, primitive(schema_type)).version == 0
        assert reg.get(TOPIC).type is schema_type


# ====================== rule 13: producers


class TestRule13Producers:
    def test_auto_update_off_rejects_new_schema_even_on_fresh_topic(self, reg: Registry) -> None:
        reg.register("persistent://acme/tests/other", A(S1))  # creates the namespace
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
        adm = reg.connect_producer(TOPIC, A(S1), name="p")
        assert not adm.accepted and AUTO_UPDATE_DISABLED in adm.reason
        assert reg.history(TOPIC, include_deleted=True) == []
        assert reg.clients(TOPIC) == []

    def test_auto_update_off_accepts_any_matching_live_version(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S5), A(S2)])
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
        adm = reg.connect_producer(TOPIC, A(S1_PRETTY), name="p")
        assert adm.accepted and adm.version == 0 and not adm.registered

    def test_replicator_may_update_when_allowed(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
        assert not reg.connect_producer(TOPIC, A(S2), name="p").accepted
        adm = reg.connect_producer(TOPIC, A(S2), name="repl", replicator=True)
        assert adm.accepted and adm.version == 1 and adm.registered
        reg.set_namespace_policy(NAMESPACE, allow_auto_update_with_replicator=False)
        assert not reg.connect_producer(TOPIC, A(S5), name="repl2", replicator=True).accepted

    def test_producer_uses_effective_strategy(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.set_topic_policy(TOPIC, compatibility=CS.BACKWARD)
        adm = reg.connect_producer(TOPIC, A(S3), name="p")
        assert not adm.accepted
        assert adm.result is not None and not adm.result.compatible
        assert adm.result.strategy is CS.BACKWARD
        assert RuleCode.READER_FIELD_WITHOUT_DEFAULT in codes(adm.result)
        assert adm.reason
        reg.set_topic_policy(TOPIC, compatibility=CS.FORWARD)
        adm = reg.connect_producer(TOPIC, A(S3), name="p")
        assert adm.accepted and adm.version == 1 and adm.registered

    def test_producer_without_schema_is_not_recorded_as_schema_user(self, reg: Registry) -> None:
        adm = reg.connect_producer(TOPIC, None, name="p0")
        assert adm.accepted and adm.version is None and not adm.registered
        # No "topic in use" check for producers: the first producer schema is simply registered.
        adm = reg.connect_producer(TOPIC, A(S1), name="p1")
        assert adm.accepted and adm.version == 0 and adm.registered

    @pytest.mark.parametrize("schema_type", [SchemaType.BYTES, SchemaType.NONE])
    def test_bytes_producer_behaves_as_schemaless(self, reg: Registry, schema_type: SchemaType) -> None:
        reg.register(TOPIC, A(S1))
        adm = reg.connect_producer(TOPIC, SchemaInfo(type=schema_type, schema=""), name="p")
        assert adm.accepted and adm.version is None
        assert len(reg.history(TOPIC)) == 1
        reg.set_namespace_policy(NAMESPACE, validation_enforced=True)
        assert not reg.connect_producer(TOPIC, SchemaInfo(type=schema_type, schema=""), name="p2").accepted

    def test_clients_are_recorded_and_disconnected(self, reg: Registry) -> None:
        reg.connect_producer(TOPIC, A(S1), name="p1")
        reg.connect_consumer(TOPIC, A(S1), subscription="sub", name="c1")
        records = {(c.role, c.name) for c in reg.clients(TOPIC)}
        assert records == {(ClientRole.PRODUCER, "p1"), (ClientRole.CONSUMER, "c1")}
        consumer = next(c for c in reg.clients(TOPIC) if c.role is ClientRole.CONSUMER)
        assert consumer.subscription == "sub" and consumer.schema_type is SchemaType.AVRO
        reg.disconnect(TOPIC, name="p1")
        assert [(c.role, c.name) for c in reg.clients(TOPIC)] == [(ClientRole.CONSUMER, "c1")]

    def test_rejected_producer_is_not_recorded(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        adm = reg.connect_producer(TOPIC, A(S3), name="bad")
        assert isinstance(adm, Admission) and adm.role is ClientRole.PRODUCER and not adm.accepted
        assert reg.clients(TOPIC) == []


# ====================== rule 14: consumers


class TestRule14Consumers:
    def test_idle_topic_consumer_registers(self, reg: Registry) -> None:
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="sub", name="c")
        assert adm.accepted and adm.version == 0 and adm.registered
        assert adm.role is ClientRole.CONSUMER
        assert reg.get(TOPIC).data == S1.encode()

    def test_idle_topic_consumer_respects_auto_update(self, reg: Registry) -> None:
        reg.register("persistent://acme/tests/other", A(S1))
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="sub", name="c")
        assert not adm.accepted and AUTO_UPDATE_DISABLED in adm.reason

    @pytest.mark.parametrize(
        "info", [None, SchemaInfo(type=SchemaType.AUTO_CONSUME, schema="")], ids=["no-schema", "auto-consume"]
    )
    def test_consumer_without_schema_skips_schema_logic(self, reg: Registry, info: SchemaInfo | None) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        adm = reg.connect_consumer(TOPIC, info, subscription="sub", name="c")
        assert adm.accepted and not adm.registered
        assert len(reg.history(TOPIC)) == 1

    def test_in_use_without_schema_rejects_consumer_schema(self, reg: Registry) -> None:
        assert reg.connect_producer(TOPIC, None, name="p").accepted
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="sub", name="c")
        assert not adm.accepted
        assert NO_SCHEMA_ON_ACTIVE_TOPIC in adm.reason
        assert "AVRO" in adm.reason
        if adm.result is not None:
            assert RuleCode.NO_SCHEMA_ON_ACTIVE_TOPIC in codes(adm.result)
        assert reg.history(TOPIC, include_deleted=True) == []

    def test_in_use_without_schema_accepted_under_always_compatible(self, reg: Registry) -> None:
        assert reg.connect_producer(TOPIC, None, name="p").accepted
        use(reg, CS.ALWAYS_COMPATIBLE)
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="sub", name="c")
        assert adm.accepted and not adm.registered
        assert reg.history(TOPIC, include_deleted=True) == [], "nothing registered, even without a schema"

    def test_schemaless_consumer_puts_topic_in_use(self, reg: Registry) -> None:
        assert reg.connect_consumer(TOPIC, None, subscription="s0", name="c0").accepted
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="s1", name="c1")
        assert not adm.accepted and NO_SCHEMA_ON_ACTIVE_TOPIC in adm.reason

    def test_auto_consume_consumer_does_not_put_topic_in_use(self, reg: Registry) -> None:
        auto = SchemaInfo(type=SchemaType.AUTO_CONSUME, schema="")
        assert reg.connect_consumer(TOPIC, auto, subscription="s0", name="c0").accepted
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="s1", name="c1")
        assert adm.accepted and adm.registered and adm.version == 0

    def test_replicator_producer_does_not_put_topic_in_use(self, reg: Registry) -> None:
        assert reg.connect_producer(TOPIC, None, name="repl", replicator=True).accepted
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="s", name="c")
        assert adm.accepted and adm.registered

    def test_non_persistent_replicator_producer_puts_topic_in_use(self, reg: Registry) -> None:
        # §8.2: on a non-persistent topic any producer counts.
        topic = "non-persistent://acme/tests/np"
        assert reg.connect_producer(topic, None, name="repl", replicator=True).accepted
        adm = reg.connect_consumer(topic, A(S1), subscription="s", name="c")
        assert not adm.accepted and NO_SCHEMA_ON_ACTIVE_TOPIC in adm.reason

    def test_tombstoned_idle_topic_consumer_registers_even_under_always_incompatible(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        reg.delete(TOPIC)
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        adm = reg.connect_consumer(TOPIC, J(S3), subscription="s", name="c")
        assert adm.accepted and adm.registered and adm.version == 2

    def test_disconnect_makes_topic_idle_again(self, reg: Registry) -> None:
        assert reg.connect_producer(TOPIC, None, name="p").accepted
        reg.disconnect(TOPIC, name="p")
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="s", name="c")
        assert adm.accepted and adm.registered

    def test_consumer_on_forward_topic_is_checked_backward(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.FORWARD)
        # As a producer S3 would pass FORWARD (S1 reads S3); as a consumer S3 must read S1: no default for field2.
        assert reg.check(TOPIC, A(S3)).compatible
        adm = reg.connect_consumer(TOPIC, A(S3), subscription="s", name="c")
        assert not adm.accepted
        if adm.result is not None:
            assert {p.direction for p in adm.result.problems} == {Direction.BACKWARD}

    def test_full_transitive_consumer_must_also_be_readable(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S3))
        use(reg, CS.FULL)
        assert reg.connect_consumer(TOPIC, A(S1), subscription="s", name="c1").accepted, "FULL: BACKWARD only"
        reg.disconnect(TOPIC, name="c1")
        use(reg, CS.FULL_TRANSITIVE)
        adm = reg.connect_consumer(TOPIC, A(S1), subscription="s", name="c2")
        assert not adm.accepted

    @pytest.mark.parametrize(
        ("strategy", "accepted"), [(CS.BACKWARD, False), (CS.FULL_TRANSITIVE, False), (CS.ALWAYS_COMPATIBLE, True)]
    )
    def test_in_use_consumer_schema_is_only_checked_for_compatibility(
        self, reg: Registry, strategy: CS, accepted: bool
    ) -> None:
        # SchemaRegistryServiceImpl.checkConsumerCompatibility never runs SchemaDataValidator: an unparseable
        # schema is refused as incompatible (or admitted under ALWAYS_COMPATIBLE), never an invalid-schema error.
        reg.register(TOPIC, A(S1))
        use(reg, strategy)
        broken = A('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}')
        adm = reg.connect_consumer(TOPIC, broken, subscription="s", name="c")
        assert adm.accepted is accepted and not adm.registered
        assert len(reg.history(TOPIC)) == 1

    def test_consumer_type_change_rejected(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        adm = reg.connect_consumer(TOPIC, J(S1), subscription="s", name="c")
        assert not adm.accepted

    def test_always_compatible_consumer_accepts_anything_without_registering(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.ALWAYS_COMPATIBLE)
        adm = reg.connect_consumer(TOPIC, primitive(SchemaType.INT8), subscription="s", name="c")
        assert adm.accepted and not adm.registered
        assert len(reg.history(TOPIC)) == 1

    def test_always_incompatible_rejects_identical_consumer(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.ALWAYS_INCOMPATIBLE)
        assert reg.check(TOPIC, A(S1)).compatible, "the REST check has the identical shortcut"
        assert reg.connect_producer(TOPIC, A(S1), name="p").accepted, "the producer dedups"
        assert not reg.connect_consumer(TOPIC, A(S1), subscription="s", name="c").accepted


# ====================== rule 15: facade-level REST semantics


class TestRule15Facade:
    def test_errors_are_in_one_tree(self) -> None:
        assert issubclass(InvalidSchemaError, ValueError) and issubclass(InvalidSchemaError, RegistryError)
        assert issubclass(SchemaNotFoundError, NotFoundError)
        assert issubclass(IncompatibleSchemaError, RegistryError)
        assert issubclass(PoisonedHistoryError, RegistryError)

    def test_check_on_empty_history_is_compatible(self, reg: Registry) -> None:
        res = reg.check(TOPIC, A(S1))
        assert res.compatible and res.problems == () and res.checked_versions == ()
        assert res.strategy is CS.FULL

    def test_delete_returns_tombstone_version(self, reg: Registry) -> None:
        seed(reg, TOPIC, [A(S1), A(S2)])
        assert reg.delete(TOPIC) == 2

    def test_kv_rendering_uses_empty_string_for_primitive_parts(self, reg: Registry) -> None:
        reg.register(TOPIC, kv(None, None, SchemaType.STRING, SchemaType.INT64))
        assert json.loads(reg.get(TOPIC).schema) == {"key": "", "value": ""}
        assert reg.get(TOPIC).info.type is SchemaType.KEY_VALUE

    def test_listing_tenants_namespaces_topics(self, reg: Registry) -> None:
        reg.register("persistent://acme/orders/created", A(S1))
        reg.register("persistent://beta/x/y", A(S1))
        assert set(reg.tenants()) >= {"acme", "beta"}
        assert "acme/orders" in reg.namespaces("acme")
        assert "persistent://acme/orders/created" in reg.topics("acme/orders")
        assert reg.topics("beta/x") == ["persistent://beta/x/y"]


# ============================================================================ §4.8: invalid default poison

POISONED = record("Poison", [field("id", "int"), field("poisoned_field", "string", None)], "org.example")
POISONED_INT = record("PoisonInt", [field("n", "int", "not a number")], "org.example")


class TestPoisonedHistory:
    @pytest.mark.parametrize("schema", [POISONED, POISONED_INT], ids=["null-for-string", "text-for-int"])
    def test_first_registration_is_accepted(self, reg: Registry, schema: str) -> None:
        assert reg.register(TOPIC, A(schema)).version == 0

    @pytest.mark.parametrize("strategy", [CS.ALWAYS_COMPATIBLE, CS.FULL, CS.BACKWARD_TRANSITIVE])
    def test_later_put_fails_clearly_whatever_the_strategy(
        self, reg: Registry, strategy: CompatibilityStrategy
    ) -> None:
        reg.register(TOPIC, A(POISONED))
        use(reg, strategy)
        before = snapshot(reg)
        with pytest.raises(PoisonedHistoryError) as excinfo:
            reg.register(TOPIC, A(S1))
        assert "poisoned_field" in str(excinfo.value) or "0" in str(excinfo.value)
        assert snapshot(reg) == before

    def test_re_registering_the_poisoned_schema_fails_clearly(self, reg: Registry) -> None:
        reg.register(TOPIC, A(POISONED))
        with pytest.raises((PoisonedHistoryError, InvalidSchemaError)):
            reg.register(TOPIC, A(POISONED))
        assert len(reg.history(TOPIC)) == 1

    def test_candidate_with_invalid_default_on_valid_history(self, reg: Registry) -> None:
        reg.register(TOPIC, A(S1))
        use(reg, CS.ALWAYS_COMPATIBLE)
        with pytest.raises(InvalidSchemaError) as excinfo:
            reg.register(TOPIC, A(POISONED))
        assert "poisoned_field" in str(excinfo.value)
        assert len(reg.history(TOPIC)) == 1

    def test_producer_on_poisoned_history_is_refused_with_the_reason(self, reg: Registry) -> None:
        """Pulsar fails the producer's registration with an internal error; we refuse it and say why."""
        reg.register(TOPIC, A(POISONED))
        adm = reg.connect_producer(TOPIC, A(S1), name="p")
        assert (adm.accepted, adm.registered, adm.version) == (False, False, None)
        assert "invalid default for field 'poisoned_field'" in adm.reason and "HTTP 500" in adm.reason
        assert len(reg.history(TOPIC)) == 1

    @pytest.mark.parametrize(
        ("strategy", "compatible", "codes"),
        [
            (CS.ALWAYS_INCOMPATIBLE, False, [RuleCode.STRATEGY_FORBIDS_CHANGE]),
            (CS.ALWAYS_COMPATIBLE, True, []),
            (CS.BACKWARD, True, []),  # the candidate reads the poisoned writer: its default is never used
            (CS.BACKWARD_TRANSITIVE, True, []),
            (CS.FORWARD, False, [RuleCode.INVALID_DEFAULT]),  # the poisoned reader needs its default
            (CS.FORWARD_TRANSITIVE, False, [RuleCode.INVALID_DEFAULT]),
            (CS.FULL, False, [RuleCode.INVALID_DEFAULT]),
            (CS.FULL_TRANSITIVE, False, [RuleCode.INVALID_DEFAULT]),
        ],
        ids=lambda v: v.value if isinstance(v, CS) else None,
    )
    def test_check_on_poisoned_history_names_the_invalid_default_where_it_is_read(
        self, reg: Registry, strategy: CompatibilityStrategy, compatible: bool, codes: list[RuleCode]
    ) -> None:
        """§4.8: where the poisoned version must read the candidate, its invalid default is used; Pulsar's
        non-transitive check fails there with an internal error, ours is an incompatible verdict naming it."""
        reg.register(TOPIC, A(POISONED))
        result = reg.check(TOPIC, A(record("Poison", [field("id", "int")], "org.example")), strategy=strategy)
        assert (result.compatible, [p.code for p in result.problems]) == (compatible, codes)
        if codes == [RuleCode.INVALID_DEFAULT]:
            assert "poisoned_field" in result.problems[0].message

    def test_soft_delete_recovers(self, reg: Registry) -> None:
        reg.register(TOPIC, A(POISONED))
        assert reg.delete(TOPIC) == 1
        assert reg.register(TOPIC, A(S1)).version == 2
        assert reg.register(TOPIC, A(S2)).version == 3


@pytest.mark.parametrize("broker_flag", [True, False])
@pytest.mark.parametrize("namespace_flag", [None, True, False])
def test_namespace_allow_auto_update_in_force(broker_flag: bool, namespace_flag: bool | None) -> None:
    """GET isAllowAutoUpdateSchema (§2.2): the namespace's value when set, else the broker's."""
    from registry import BrokerConfig, NamespacePolicy
    from registry.policy._rules import namespace_allow_auto_update

    found = namespace_allow_auto_update(
        NamespacePolicy(allow_auto_update=namespace_flag), BrokerConfig(allow_auto_update=broker_flag)
    )
    expected = broker_flag if namespace_flag is None else namespace_flag
    source = PolicySource.BROKER_DEFAULT if namespace_flag is None else PolicySource.NAMESPACE
    assert (found.value, found.source) == (expected, source)


@pytest.mark.parametrize("broker_flag", [True, False])
@pytest.mark.parametrize("namespace_flag", [True, False])
def test_namespace_validation_enforced_applied(broker_flag: bool, namespace_flag: bool) -> None:
    """GET schemaValidationEnforced?applied=true (§7.2): the namespace flag OR the broker's."""
    from registry import BrokerConfig, NamespacePolicy
    from registry.policy._rules import namespace_validation_enforced

    found = namespace_validation_enforced(
        NamespacePolicy(validation_enforced=namespace_flag), BrokerConfig(validation_enforced=broker_flag)
    )
    assert found.value is (namespace_flag or broker_flag)
    assert found.source is (PolicySource.NAMESPACE if namespace_flag else PolicySource.BROKER_DEFAULT)
