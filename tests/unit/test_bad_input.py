"""Bad input: every malformed schema or name raises the right error, names the bad value, and changes nothing.

pulsar-semantics.md §3.7 (structural validation, REST 422), §5 (KEY_VALUE), §6 (PROTOBUF_NATIVE), §1 (names).
"""

from __future__ import annotations

import base64
import json

import pytest

from registry import (
    CompatibilityStrategy,
    IncompatibleSchemaError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    PolicyError,
    Registry,
    RegistryError,
    SchemaInfo,
    SchemaNotFoundError,
    SchemaType,
)
from schemas import NAMESPACE, S1, TOPIC, avro_info, file_descriptor_set, json_info, record


def snapshot(reg: Registry, topic: str = TOPIC) -> list[tuple[int, SchemaType, bytes, bool]]:
    return [(v.version, v.type, v.data, v.deleted) for v in reg.history(topic, include_deleted=True)]


def names_value(error: BaseException, needles: tuple[str, ...]) -> bool:
    text = str(error).lower()
    return any(n.lower() in text for n in needles)


def pn_doc(**overrides: object) -> SchemaInfo:
    fds = file_descriptor_set({"TestMessage": [("a", 1, 5)]})
    doc: dict[str, object] = {
        "fileDescriptorSet": base64.b64encode(fds).decode(),
        "rootMessageTypeName": "proto.TestMessage",
        "rootFileDescriptorName": "test.proto",
    }
    for key, value in overrides.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=json.dumps(doc))


def kv_raw(schema: str, **props: str) -> SchemaInfo:
    base = {"key.schema.type": "AVRO", "value.schema.type": "AVRO"}
    base.update(props)
    return SchemaInfo(type=SchemaType.KEY_VALUE, schema=schema, properties=base)


GOOD_AVRO_DOC = json.loads(S1)

INVALID_SCHEMAS = [
    # §3.7 AVRO / JSON / PROTOBUF: must parse as Avro (lenient names, no default validation)
    pytest.param(avro_info('{"type": "record", "name": '), ("AVRO",), id="avro-malformed-json"),
    pytest.param(avro_info(""), ("AVRO",), id="avro-empty-text"),
    pytest.param(avro_info('["null","string"]'), ("UNION",), id="avro-top-level-union"),
    pytest.param(avro_info(record("1Bad", [{"name": "f", "type": "int"}])), ("1Bad",), id="avro-record-name-digit"),
    pytest.param(
        avro_info(record("R", [{"name": "bad-name", "type": "int"}])), ("bad-name",), id="avro-field-name-hyphen"
    ),
    pytest.param(avro_info('{"type":"record","name":"R"}'), ("fields",), id="avro-record-missing-fields"),
    pytest.param(avro_info(record("R", [{"name": "f", "type": "Nope"}])), ("Nope",), id="avro-unknown-type-name"),
    pytest.param(avro_info('"strin"'), ("strin",), id="avro-unknown-primitive"),
    pytest.param(
        avro_info(record("R", [{"name": "dup", "type": "int"}, {"name": "dup", "type": "long"}])),
        ("dup",),
        id="avro-duplicate-field",
    ),
    pytest.param(
        avro_info('{"type":"enum","name":"E","symbols":["A","A"]}'), ("A", "symbol"), id="avro-duplicate-enum-symbol"
    ),
    pytest.param(avro_info('{"type":"fixed","name":"F"}'), ("size", "F"), id="avro-fixed-without-size"),
    pytest.param(json_info("{"), ("JSON",), id="json-malformed"),
    pytest.param(
        json_info('{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}'),
        ("JSON", "object"),
        id="json-schema-draft-document",
    ),
    pytest.param(SchemaInfo(type=SchemaType.PROTOBUF, schema="message Foo {}"), ("PROTOBUF",), id="protobuf-not-avro"),
    # §3.7 primitives: data must be empty (STRING may be exactly `null`)
    pytest.param(SchemaInfo(type=SchemaType.INT32, schema="abc"), ("INT32", "3 bytes", "abc"), id="int32-with-data"),
    pytest.param(
        SchemaInfo(type=SchemaType.BOOLEAN, schema="true"), ("BOOLEAN", "4 bytes", "true"), id="boolean-with-data"
    ),
    pytest.param(SchemaInfo(type=SchemaType.STRING, schema="hello"), ("hello",), id="string-with-data"),
    pytest.param(SchemaInfo(type=SchemaType.STRING, schema="NULL"), ("NULL",), id="string-with-uppercase-null"),
    pytest.param(
        SchemaInfo(type=SchemaType.LOCAL_DATE_TIME, schema=" "),
        ("LOCAL_DATE_TIME", "1 bytes"),
        id="local-date-time-with-space",
    ),
    # §3.7 client-side types
    pytest.param(SchemaInfo(type=SchemaType.AUTO_CONSUME, schema=""), ("AUTO_CONSUME",), id="auto-consume-type"),
    pytest.param(SchemaInfo(type=SchemaType.AUTO, schema=""), ("AUTO",), id="auto-type"),
    pytest.param(SchemaInfo(type=SchemaType.AUTO_PUBLISH, schema=""), ("AUTO_PUBLISH",), id="auto-publish-type"),
    # §6 PROTOBUF_NATIVE
    pytest.param(
        SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema="not json"),
        ("ProtobufNative", "PROTOBUF_NATIVE"),
        id="pn-not-json",
    ),
    pytest.param(pn_doc(fileDescriptorSet=None), ("fileDescriptorSet",), id="pn-missing-descriptor-set"),
    pytest.param(pn_doc(fileDescriptorSet="!!!not base64!!!"), ("base64", "fileDescriptorSet"), id="pn-bad-base64"),
    pytest.param(
        pn_doc(fileDescriptorSet=base64.b64encode(b"\xff\xff\xff\xff").decode()),
        ("fileDescriptorSet", "descriptor", "ProtobufNative"),
        id="pn-garbage-descriptor-bytes",
    ),
    pytest.param(pn_doc(rootMessageTypeName="proto.Nope"), ("proto.Nope", "Nope"), id="pn-unknown-root-message"),
    pytest.param(pn_doc(rootFileDescriptorName="other.proto"), ("other.proto",), id="pn-unknown-root-file"),
    pytest.param(pn_doc(rootMessageTypeName=None), ("rootMessageTypeName",), id="pn-missing-root-name"),
    # §5 KEY_VALUE
    pytest.param(kv_raw("not json"), ("KEY_VALUE", "KeyValue", "key"), id="kv-not-json"),
    pytest.param(kv_raw(json.dumps({"key": GOOD_AVRO_DOC})), ("value",), id="kv-missing-value"),
    pytest.param(
        kv_raw(json.dumps(["key", "value"])), ("KEY_VALUE", "KeyValue", "object", "key"), id="kv-not-an-object"
    ),
    pytest.param(
        kv_raw(json.dumps({"key": GOOD_AVRO_DOC, "value": GOOD_AVRO_DOC}), **{"key.schema.type": "NOPE"}),
        ("NOPE",),
        id="kv-unknown-key-type",
    ),
    pytest.param(
        kv_raw(json.dumps({"key": {"type": "record", "name": "R"}, "value": GOOD_AVRO_DOC})),
        ("key", "fields"),
        id="kv-invalid-avro-key",
    ),
    pytest.param(
        kv_raw(json.dumps({"key": GOOD_AVRO_DOC, "value": GOOD_AVRO_DOC}), **{"value.schema.type": "INT32"}),
        ("INT32", "value"),
        id="kv-primitive-value-with-data",
    ),
    pytest.param(
        kv_raw(json.dumps({"key": GOOD_AVRO_DOC, "value": ""}), **{"value.schema.type": "AUTO_CONSUME"}),
        ("AUTO_CONSUME",),
        id="kv-client-side-value-type",
    ),
]


@pytest.mark.parametrize(("bad", "needles"), INVALID_SCHEMAS)
def test_invalid_schema_is_refused_and_nothing_changes(
    reg: Registry, bad: SchemaInfo, needles: tuple[str, ...]
) -> None:
    reg.register(TOPIC, avro_info(S1))
    reg.set_namespace_policy(NAMESPACE, compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    before = snapshot(reg)
    with pytest.raises(InvalidSchemaError) as excinfo:
        reg.register(TOPIC, bad)
    assert isinstance(excinfo.value, ValueError)
    assert names_value(excinfo.value, needles), f"{excinfo.value!s} should name one of {needles}"
    with pytest.raises(InvalidSchemaError):
        reg.check(TOPIC, bad)
    assert snapshot(reg) == before


@pytest.mark.parametrize(("bad", "needles"), INVALID_SCHEMAS[:8])
def test_invalid_schema_on_empty_history_is_refused(reg: Registry, bad: SchemaInfo, needles: tuple[str, ...]) -> None:
    with pytest.raises(InvalidSchemaError):
        reg.register(TOPIC, bad)
    assert snapshot(reg) == []


@pytest.mark.parametrize(("bad", "needles"), INVALID_SCHEMAS[:3] + INVALID_SCHEMAS[14:16])
def test_invalid_schema_from_a_producer_is_refused(reg: Registry, bad: SchemaInfo, needles: tuple[str, ...]) -> None:
    reg.register(TOPIC, avro_info(S1))
    reg.set_namespace_policy(NAMESPACE, compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    before = snapshot(reg)
    try:
        adm = reg.connect_producer(TOPIC, bad, name="p")
    except InvalidSchemaError:
        pass
    else:
        assert not adm.accepted and adm.reason
    assert snapshot(reg) == before
    assert reg.clients(TOPIC) == []


def test_unknown_schema_type_name() -> None:
    with pytest.raises(InvalidSchemaError, match="FOO"):
        SchemaInfo(type="FOO", schema="")  # type: ignore[arg-type]


def test_schema_type_names_parse_in_any_case() -> None:
    assert SchemaInfo(type="avro", schema=S1).type is SchemaType.AVRO  # type: ignore[arg-type]


def test_string_null_is_the_one_allowed_string_data(reg: Registry) -> None:
    assert reg.register(TOPIC, SchemaInfo(type=SchemaType.STRING, schema="null")).version == 0


def test_incompatible_is_not_invalid(reg: Registry) -> None:
    reg.register(TOPIC, avro_info(S1))
    with pytest.raises(IncompatibleSchemaError) as excinfo:
        reg.register(TOPIC, json_info(S1))
    assert not isinstance(excinfo.value, InvalidSchemaError)


# ------------------------------------------------------------------------------------------- names

BAD_TOPICS = [
    pytest.param("", ("topic", "''", '""'), id="empty"),
    pytest.param("persistent://acme/tests/", ("persistent://acme/tests/",), id="empty-local-name"),
    pytest.param("persistent:///tests/x", ("persistent:///tests/x", "tenant"), id="empty-tenant"),
    pytest.param("persistent://acme//x", ("persistent://acme//x", "namespace"), id="empty-namespace"),
    pytest.param("persistent://../tests/x", ("..",), id="dot-dot-tenant"),
    pytest.param("persistent://acme/../x", ("..",), id="dot-dot-namespace"),
    pytest.param("bogus://acme/tests/x", ("bogus",), id="unknown-domain"),
    pytest.param("acme/tests", ("acme/tests",), id="namespace-only"),
    pytest.param("persistent://acme/tests", ("persistent://acme/tests",), id="full-name-without-local-part"),
    pytest.param("persistent://ac me/tests/x", ("ac me",), id="space-in-tenant"),
    pytest.param("acme/te#sts/x", ("te#sts",), id="hash-in-namespace"),
]


@pytest.mark.parametrize(("name", "needles"), BAD_TOPICS)
def test_invalid_topic_name(reg: Registry, name: str, needles: tuple[str, ...]) -> None:
    with pytest.raises(InvalidNameError) as excinfo:
        reg.register(name, avro_info(S1))
    assert isinstance(excinfo.value, ValueError)
    assert names_value(excinfo.value, needles), f"{excinfo.value!s} should name one of {needles}"
    for call in (
        lambda: reg.get(name),
        lambda: reg.check(name, avro_info(S1)),
        lambda: reg.history(name),
        lambda: reg.delete(name),
        lambda: reg.effective_policy(name),
        lambda: reg.connect_producer(name, avro_info(S1), name="p"),
        lambda: reg.set_topic_policy(name, compatibility=CompatibilityStrategy.FULL),
    ):
        with pytest.raises(InvalidNameError):
            call()
    assert reg.tenants() == []


BAD_NAMESPACES = [
    pytest.param("", ("namespace", "''", '""'), id="empty"),
    pytest.param("acme", ("acme",), id="tenant-only"),
    pytest.param("acme/", ("acme/",), id="empty-namespace-part"),
    pytest.param("/tests", ("/tests",), id="empty-tenant-part"),
    pytest.param("acme/..", ("..",), id="dot-dot-namespace"),
    pytest.param("../tests", ("..",), id="dot-dot-tenant"),
    pytest.param("ac me/tests", ("ac me",), id="space"),
    pytest.param("acme/te#sts", ("te#sts",), id="hash"),
]


@pytest.mark.parametrize(("name", "needles"), BAD_NAMESPACES)
def test_invalid_namespace_name(reg: Registry, name: str, needles: tuple[str, ...]) -> None:
    with pytest.raises(InvalidNameError) as excinfo:
        reg.set_namespace_policy(name, compatibility=CompatibilityStrategy.BACKWARD)
    assert names_value(excinfo.value, needles), f"{excinfo.value!s} should name one of {needles}"
    with pytest.raises(InvalidNameError):
        reg.namespace_policy(name)
    with pytest.raises(InvalidNameError):
        reg.topics(name)
    assert reg.tenants() == []


@pytest.mark.parametrize("tenant", ["", "..", "a/b", "ac me"])
def test_invalid_tenant_name(reg: Registry, tenant: str) -> None:
    with pytest.raises(InvalidNameError):
        reg.namespaces(tenant)


def test_valid_names_with_pulsar_characters(reg: Registry) -> None:
    # Pulsar's NamedEntity allows [-=:.\w]; local names may use more.
    name = "persistent://my-tenant_1/ns.v2=a:b/orders-created.v1"
    assert reg.register(name, avro_info(S1)).version == 0
    assert reg.get(name).topic == "my-tenant_1/ns.v2=a:b/orders-created.v1"


def test_unknown_strategy_is_a_policy_error(reg: Registry) -> None:
    reg.register(TOPIC, avro_info(S1))
    with pytest.raises(PolicyError) as excinfo:
        reg.set_namespace_policy(NAMESPACE, compatibility="SOMETIMES")  # type: ignore[arg-type]
    assert "SOMETIMES" in str(excinfo.value)
    assert reg.namespace_policy(NAMESPACE).compatibility is CompatibilityStrategy.UNDEFINED


def test_unknown_version_is_not_found(reg: Registry) -> None:
    reg.register(TOPIC, avro_info(S1))
    for version in (1, 10**12):
        with pytest.raises(SchemaNotFoundError):
            reg.get(TOPIC, version=version)
    # A negative version is outside the trimmed list (404) or refused as malformed; the spec leaves it open.
    with pytest.raises((SchemaNotFoundError, InvalidVersionError)):
        reg.get(TOPIC, version=-1)


def test_every_bad_input_error_is_a_registry_error() -> None:
    for error in (InvalidSchemaError, InvalidNameError, PolicyError):
        assert issubclass(error, RegistryError) and issubclass(error, ValueError)


@pytest.mark.parametrize("side", ["key", "value"])
def test_a_key_value_part_that_is_not_json_is_an_invalid_schema_naming_the_part(side: str) -> None:
    from registry._schema_data import key_value_schema_info

    bad, good = SchemaInfo(type=SchemaType.AVRO, schema="{not json"), SchemaInfo(type=SchemaType.STRING)
    parts = (bad, good) if side == "key" else (good, bad)
    with pytest.raises(InvalidSchemaError, match=f"KEY_VALUE {side} schema"):
        key_value_schema_info(*parts)
