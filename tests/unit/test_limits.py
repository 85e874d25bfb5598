"""Schema input limits (registry/_limits.py): size and nesting depth, refused before any parser runs, never a
RecursionError; defaults, the environment and `limited(...)` change them."""

from __future__ import annotations

import json

import pytest

from registry import InvalidSchemaError, Registry, SchemaInfo, SchemaType
from registry._limits import (
    Limits,
    SchemaTooLargeError,
    check_schema_input,
    current_limits,
    limited,
    nesting_depth,
    set_limits,
)
from schemas import S1, TOPIC, kv, record


def nested_arrays(levels: int) -> str:
    return '{"type":"array","items":' * levels + '"int"' + "}" * levels


def nested_records(levels: int) -> str:
    heads = (f'{{"type":"record","name":"R{i}","fields":[{{"name":"f","type":' for i in range(levels))
    return "".join(heads) + '"int"' + "}]}" * levels


def test_defaults_are_sane() -> None:
    limits = Limits()
    assert limits.max_schema_bytes == 1_048_576
    assert limits.max_depth == 128


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b'"int"', 0),
        (b"{}", 1),
        (b'{"a":[{"b":[]}]}', 4),
        (b'{"doc":"[[[[{{{{ \\" [[[["}', 1),
        (b'"unterminated [[[', 3),
        (b"]]]][", 1),
    ],
    ids=["a bare string", "an empty object", "alternating objects and arrays", "brackets in strings", "unterminated",
         "stray closers"],
)  # fmt: skip
def test_nesting_depth(text: bytes, depth: int) -> None:
    assert nesting_depth(text) == depth


def test_nesting_depth_stops_early() -> None:
    assert nesting_depth(b"[" * 10_000, stop_at=5) == 5


@pytest.mark.parametrize(
    "schema",
    [nested_arrays(10_000), nested_records(10_000), "[" * 100_000, nested_records(330)],
    ids=["10,000 nested arrays", "10,000 nested records", "100,000 brackets", "330 nested records (once a "
         "RecursionError in what-if)"],
)  # fmt: skip
@pytest.mark.parametrize("call", ["register", "check", "what_if", "find_version", "diff"])
def test_deep_nesting_is_an_invalid_schema_never_a_recursion_error(schema: str, call: str) -> None:
    reg = Registry.in_memory()
    reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1))
    info = SchemaInfo(type=SchemaType.AVRO, schema=schema)
    with pytest.raises(InvalidSchemaError, match="nested more than 128 levels deep"):
        if call == "diff":
            reg.diff(TOPIC, info)
        else:
            getattr(reg, call)(TOPIC, info)
    assert len(reg.history(TOPIC, include_deleted=True)) == 1


def test_depth_at_the_limit_passes_every_path() -> None:
    reg = Registry.in_memory()
    schema = nested_records(42)  # 3 levels each + the innermost: 126 levels
    assert nesting_depth(schema.encode()) <= current_limits().max_depth
    info = SchemaInfo(type=SchemaType.AVRO, schema=schema)
    assert reg.register(TOPIC, info).version == 0
    assert reg.what_if(TOPIC, info).result.compatible
    assert reg.diff(TOPIC, 0, info).changes == ()


def test_deep_key_value_admin_form_is_refused_before_json_parsing() -> None:
    reg = Registry.in_memory()
    text = '{"key":' + nested_arrays(5_000) + ',"value":' + S1 + "}"
    info = SchemaInfo(type=SchemaType.KEY_VALUE, schema=text, properties=kv(S1, S1).properties)
    with pytest.raises(InvalidSchemaError, match="nested more than"):
        reg.register(TOPIC, info)


def test_oversized_schema_names_size_and_limit() -> None:
    reg = Registry.in_memory()
    big = record("Big", [{"name": "f", "type": "string", "doc": "x" * (10 * 1024 * 1024)}])
    with pytest.raises(SchemaTooLargeError) as caught:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=big))
    assert f"{len(big):,} bytes" in str(caught.value) and "1,048,576" in str(caught.value)
    assert isinstance(caught.value, InvalidSchemaError)
    assert reg.history(TOPIC, include_deleted=True) == []


def test_size_applies_to_unparsed_types_too() -> None:
    with pytest.raises(SchemaTooLargeError):
        check_schema_input(SchemaType.BYTES, b"\0" * 2_000_000)
    check_schema_input(SchemaType.BYTES, b"[" * 1000)  # never parsed: depth does not apply


def test_lone_surrogate_is_invalid_schema_text() -> None:
    reg = Registry.in_memory()
    with pytest.raises(InvalidSchemaError, match="not valid Unicode"):
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema='{"type":"string","doc":"\ud800"}'))


def test_limited_changes_limits_for_a_block() -> None:
    reg = Registry.in_memory()
    info = SchemaInfo(type=SchemaType.AVRO, schema=S1)
    with limited(max_schema_bytes=10):
        with pytest.raises(SchemaTooLargeError, match="limit of 10 bytes"):
            reg.register(TOPIC, info)
    with limited(max_depth=1):
        with pytest.raises(InvalidSchemaError, match="more than 1 levels"):
            reg.register(TOPIC, info)
    assert current_limits() == Limits()
    assert reg.register(TOPIC, info).version == 0


def test_set_limits_returns_the_previous_ones() -> None:
    previous = set_limits(Limits(max_depth=7))
    try:
        assert current_limits().max_depth == 7
    finally:
        assert set_limits(previous).max_depth == 7


def test_limits_from_the_environment() -> None:
    env = {"SCHEMA_EXPLORER_MAX_SCHEMA_BYTES": "2_000_000", "SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH": " 50 "}
    assert Limits.from_env(env) == Limits(max_schema_bytes=2_000_000, max_depth=50)
    assert Limits.from_env({}) == Limits()


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"SCHEMA_EXPLORER_MAX_SCHEMA_BYTES": "lots"}, "SCHEMA_EXPLORER_MAX_SCHEMA_BYTES must be a whole number"),
        ({"SCHEMA_EXPLORER_MAX_SCHEMA_DEPTH": "0"}, "max_depth must be a whole number >= 1, got 0"),
    ],
    ids=["not a number", "zero"],
)
def test_bad_limits_from_the_environment_are_named(env: dict[str, str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Limits.from_env(env)


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10"], ids=["zero", "negative", "a boolean", "a float", "text"])
def test_limits_must_be_positive_whole_numbers(value: object) -> None:
    with pytest.raises(ValueError, match="whole number >= 1"):
        Limits(max_depth=value)  # type: ignore[arg-type]


def test_a_schema_just_under_the_size_limit_passes_the_scan() -> None:
    """Its speed against json.loads is bench/bench_limits.py's."""
    fields = [{"name": f"f{i}", "type": ["null", {"type": "map", "values": "string"}]} for i in range(12_000)]
    text = json.dumps({"type": "record", "name": "R", "fields": fields})
    assert 500_000 < len(text) < current_limits().max_schema_bytes
    check_schema_input(SchemaType.AVRO, text)
