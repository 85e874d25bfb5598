"""Types the broker stores differently from how they are posted (pulsar-semantics.md §1)."""

from __future__ import annotations

import pytest

from registry import CompatibilityStrategy, IncompatibleSchemaError, Registry, RuleCode, SchemaInfo, SchemaType

TOPIC = "persistent://acme/raw/frames"


def test_bytes_is_stored_and_read_back_as_none() -> None:
    # §1: "stored enum = Java value + 1; any negative Java type is stored (and read back) as NONE".
    reg = Registry.in_memory()
    assert reg.register(TOPIC, SchemaInfo(SchemaType.BYTES, "")).version == 0
    assert reg.get(TOPIC).type is SchemaType.NONE


def test_reposting_bytes_meets_the_stored_none_as_a_type_change() -> None:
    # Derived from §1 and §3.4: dedup compares the posted type (BYTES) with the stored one (NONE).
    reg = Registry.in_memory()
    reg.register(TOPIC, SchemaInfo(SchemaType.BYTES, ""))
    with pytest.raises(IncompatibleSchemaError) as refused:
        reg.register(TOPIC, SchemaInfo(SchemaType.BYTES, ""))
    assert refused.value.result is not None
    assert refused.value.result.problems[0].code is RuleCode.SCHEMA_TYPE_CHANGED
    reg.set_topic_policy(TOPIC, compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    assert reg.register(TOPIC, SchemaInfo(SchemaType.BYTES, "")).version == 1


def test_strict_registry_refuses_a_policy_on_an_unknown_namespace() -> None:
    # Pulsar answers 404 "Namespace does not exist" (§7.2); a strict registry must not create it on the way.
    from registry import NamespaceNotFoundError

    reg = Registry.in_memory(auto_create=False)
    reg.create_tenant("acme")
    with pytest.raises(NamespaceNotFoundError, match="acme/raw"):
        reg.set_namespace_policy("acme/raw", compatibility=CompatibilityStrategy.BACKWARD)
    assert reg.namespaces("acme") == []


@pytest.mark.parametrize("encoding", ["INLINE", "SEPARATED"])
def test_key_value_parts_inverts_key_value_schema_info(encoding: str) -> None:
    from registry._schema_data import key_value_parts, key_value_schema_info

    key = SchemaInfo(type=SchemaType.AVRO, schema='{"type":"record","name":"K","fields":[]}', properties={"a": "1"})
    value = SchemaInfo(type=SchemaType.INT64)
    parts = key_value_parts(key_value_schema_info(key, value, encoding=encoding))
    assert parts == (key, SchemaInfo(type=SchemaType.INT64, schema=""), encoding)


def test_key_value_parts_of_another_type_names_it() -> None:
    from registry import InvalidSchemaError
    from registry._schema_data import key_value_parts

    with pytest.raises(InvalidSchemaError, match="not a KEY_VALUE schema: AVRO"):
        key_value_parts(SchemaInfo(type=SchemaType.AVRO, schema='"string"'))


@pytest.mark.parametrize("kind", [SchemaType.KEY_VALUE, SchemaType.AUTO_CONSUME, SchemaType.PROTOBUF_NATIVE])
def test_a_key_value_part_of_a_type_it_cannot_take_is_refused(kind: SchemaType) -> None:
    from registry import InvalidSchemaError
    from registry._key_value import KEY_VALUE_PART_TYPES
    from registry._schema_data import key_value_schema_info

    assert kind not in KEY_VALUE_PART_TYPES
    with pytest.raises(InvalidSchemaError, match=f"a KEY_VALUE value part cannot be {kind}; it can be one of AVRO"):
        key_value_schema_info(SchemaInfo(type=SchemaType.STRING), SchemaInfo(type=kind, schema="{}"))
