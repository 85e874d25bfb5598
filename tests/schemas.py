"""Schemas the registry tests share: pulsar-semantics.md §9.1 / §9.2 base schemas and small builders.

Every constant is the *text* a Pulsar admin client would post (compact JSON unless a test needs otherwise).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import descriptor_pb2

from registry import SchemaInfo, SchemaType

_MISSING = object()


# --------------------------------------------------------------------------------------------------- builders


def field(name: str, type_: Any, default: Any = _MISSING, **extra: Any) -> dict[str, Any]:
    """One Avro record field; `extra` carries aliases, doc, order or custom attributes."""
    out: dict[str, Any] = {"name": name, "type": type_}
    if default is not _MISSING:
        out["default"] = default
    out.update(extra)
    return out


def record_dict(name: str, fields: list[dict[str, Any]], namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "record", "name": name}
    if namespace is not None:
        out["namespace"] = namespace
    out["fields"] = fields
    out.update(extra)
    return out


def avro(schema: Any, *, pretty: bool = False) -> str:
    """Serialise an Avro schema tree as compact JSON (or indented, for whitespace-only variants)."""
    if pretty:
        return json.dumps(schema, indent=4)
    return json.dumps(schema, separators=(",", ":"))


def record(name: str, fields: list[dict[str, Any]], namespace: str | None = None, **extra: Any) -> str:
    """An Avro record schema as compact JSON text."""
    return avro(record_dict(name, fields, namespace, **extra))


def info(text: str, type_: SchemaType = SchemaType.AVRO, **properties: str) -> SchemaInfo:
    return SchemaInfo(type=type_, schema=text, properties=dict(properties))


def avro_info(text: str) -> SchemaInfo:
    return SchemaInfo(type=SchemaType.AVRO, schema=text, properties={})


def json_info(text: str) -> SchemaInfo:
    return SchemaInfo(type=SchemaType.JSON, schema=text, properties={})


def primitive(type_: SchemaType, data: str = "") -> SchemaInfo:
    return SchemaInfo(type=type_, schema=data, properties={})


def kv(
    key: str | None,
    value: str | None,
    key_type: SchemaType | None = SchemaType.AVRO,
    value_type: SchemaType | None = SchemaType.AVRO,
    *,
    encoding: str | None = "INLINE",
) -> SchemaInfo:
    """A KEY_VALUE SchemaInfo in the admin-API form of pulsar-semantics.md §5.

    `key` / `value` are Avro JSON texts, or None for a primitive part (rendered as ""). A `None` sub-type leaves
    the `*.schema.type` property out (Pulsar then decodes the part as BYTES).
    """
    doc = {
        "key": json.loads(key) if key is not None else "",
        "value": json.loads(value) if value is not None else "",
    }
    props: dict[str, str] = {}
    if key_type is not None:
        props["key.schema.type"] = key_type.value
        props["key.schema.name"] = ""
        props["key.schema.properties"] = "{}"
    if value_type is not None:
        props["value.schema.type"] = value_type.value
        props["value.schema.name"] = ""
        props["value.schema.properties"] = "{}"
    if encoding is not None:
        props["kv.encoding.type"] = encoding
    return SchemaInfo(type=SchemaType.KEY_VALUE, schema=json.dumps(doc, separators=(",", ":")), properties=props)


# Protobuf field types, for readability in tests.
PB_INT32 = descriptor_pb2.FieldDescriptorProto.TYPE_INT32
PB_INT64 = descriptor_pb2.FieldDescriptorProto.TYPE_INT64
PB_STRING = descriptor_pb2.FieldDescriptorProto.TYPE_STRING
PB_DOUBLE = descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE
PB_MESSAGE = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE


def file_descriptor_set(
    messages: dict[str, list[tuple[str, int, int] | tuple[str, int, int, str]]],
    *,
    package: str = "proto",
    file_name: str = "test.proto",
    nested: dict[str, dict[str, list[tuple[str, int, int]]]] | None = None,
) -> bytes:
    """A serialised FileDescriptorSet with one proto3 file; fields are (name, number, type[, type_name])."""
    fdp = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    for msg_name, fields in messages.items():
        msg = fdp.message_type.add(name=msg_name)
        for spec in fields:
            f = msg.field.add(
                name=spec[0], number=spec[1], type=spec[2], label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
            )
            if len(spec) == 4:
                f.type_name = spec[3]
        for nested_name, nested_fields in (nested or {}).get(msg_name, {}).items():
            inner = msg.nested_type.add(name=nested_name)
            for n_name, n_number, n_type in nested_fields:
                inner.field.add(
                    name=n_name, number=n_number, type=n_type, label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
                )
    return descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()


def protobuf_native(
    messages: dict[str, list[Any]],
    root: str,
    *,
    package: str = "proto",
    file_name: str = "test.proto",
    nested: dict[str, dict[str, list[tuple[str, int, int]]]] | None = None,
) -> SchemaInfo:
    """A PROTOBUF_NATIVE SchemaInfo (pulsar-semantics.md §6); `root` is the message name without the package."""
    fds = file_descriptor_set(messages, package=package, file_name=file_name, nested=nested)
    doc = {
        "fileDescriptorSet": base64.b64encode(fds).decode("ascii"),
        "rootMessageTypeName": f"{package}.{root}" if package else root,
        "rootFileDescriptorName": file_name,
    }
    return SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=json.dumps(doc), properties={})


# Upstream ProtobufNativeSchemaCompatibilityCheckTest uses test.proto (package `proto`) with TestMessage and
# SubMessage; these are hand-built equivalents.
PN_TEST_MESSAGE_FIELDS = [("stringField", 1, PB_STRING), ("doubleField", 2, PB_DOUBLE), ("intField", 6, PB_INT32)]
PN_SUB_MESSAGE_FIELDS = [("foo", 1, PB_STRING), ("bar", 2, PB_DOUBLE)]


def pn_test(int_type: int = PB_INT32, root: str = "TestMessage") -> SchemaInfo:
    fields = [("stringField", 1, PB_STRING), ("doubleField", 2, PB_DOUBLE), ("intField", 6, int_type)]
    return protobuf_native({"TestMessage": fields, "SubMessage": PN_SUB_MESSAGE_FIELDS}, root)


# --------------------------------------------------------------------------------------------------- §9.1 s1..s8

# BaseAvroSchemaCompatibilityTest: records named DefaultTest in this namespace.
BASE_NS = "org.apache.pulsar.broker.service.schema.AvroSchemaCompatibilityCheckTest"


def base(fields: list[dict[str, Any]]) -> str:
    return record("DefaultTest", fields, BASE_NS)


S1 = base([field("field1", "string")])
S2 = base([field("field1", "string"), field("field2", "string", "foo")])
S3 = base([field("field1", "string"), field("field2", "string")])
S4 = base([field("field1_v2", "string", aliases=["field1"])])
S5 = base([field("field1", ["null", "string"])])
S6 = base([field("field1", ["null", "string", "int"])])
S7 = base([field("field1", "string"), field("field2", "string", "foo"), field("field3", "string", "bar")])
S8 = base([field("field1", "string"), field("field2", "string")])

BASE = {"s1": S1, "s2": S2, "s3": S3, "s4": S4, "s5": S5, "s6": S6, "s7": S7, "s8": S8}

# --------------------------------------------------------------------------------------------------- §9.2 Persons

PERSON_NS = "org.apache.pulsar.schema.Schemas"
P1 = record("PersonOne", [field("id", "int")], PERSON_NS)
P2 = record("PersonTwo", [field("id", "int"), field("name", "string", "Tom")], PERSON_NS)
P3 = record("PersonThree", [field("id", "int"), field("name", "string")], PERSON_NS)
P4 = record("PersonFour", [field("id", "int"), field("name", "string"), field("age", "int")], PERSON_NS)

# --------------------------------------------------------------------------------------------------- §9.2 auto-update

# AdminApiSchemaAutoUpdateTest: reflect schemas with nullable strings, @AvroAlias(space="blah", alias="data").
AUTO_NS = "org.apache.pulsar.broker.admin.AdminApiSchemaAutoUpdateTest"
_FOO = field("foo", ["null", "string"], None)
V1 = record("V1Data", [_FOO, field("bar", "int")], AUTO_NS, aliases=["blah.data"])
V2 = record("V2Data", [_FOO], AUTO_NS, aliases=["blah.data"])
V3 = record("V3Data", [_FOO, field("bar", "int"), field("baz", "long")], AUTO_NS, aliases=["blah.data"])
V4 = record("V4Data", [_FOO, field("bar", "int"), field("blah", "int", 10)], AUTO_NS, aliases=["blah.data"])

# --------------------------------------------------------------------------------------------------- KV Foo / Bar

# KeyValueSchemaCompatibilityCheckTest: Foo{field1,field2:String, field3:int, field4:Bar}, Bar{field1:boolean}.
KV_NS = "org.apache.pulsar.broker.service.schema.KeyValueSchemaCompatibilityCheckTest"
BAR_DICT = record_dict("Bar", [field("field1", "boolean")], KV_NS)
BAR = avro(BAR_DICT)
FOO = record(
    "Foo",
    [
        field("field1", ["null", "string"], None),
        field("field2", ["null", "string"], None),
        field("field3", "int"),
        field("field4", ["null", BAR_DICT], None),
    ],
    KV_NS,
)

# A JSON-Schema (draft) document, as old Jackson-based JSON schemas were: not an Avro schema (§4.3).
JSON_SCHEMA_DRAFT = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "id": "urn:jsonschema:org:apache:pulsar:Foo",
        "type": "object",
        "properties": {"field1": {"type": "string"}, "field2": {"type": "integer"}},
    }
)

# --------------------------------------------------------------------------------------------------- helpers

TOPIC = "persistent://acme/tests/topic"
NAMESPACE = "acme/tests"


def namespace_of(topic: str) -> str:
    rest = topic.split("://", 1)[-1]
    tenant, ns, _ = rest.split("/", 2)
    return f"{tenant}/{ns}"


def seed(reg: Any, topic: str, infos: list[SchemaInfo]) -> list[int]:
    """Register `infos` oldest first whatever their compatibility, leaving the namespace strategy UNDEFINED.

    The first schema needs no check (empty history, §3.3 step 3); the rest go in under a namespace
    ALWAYS_COMPATIBLE, which is cleared afterwards. Returns the versions.
    """
    from registry import CompatibilityStrategy

    versions: list[int] = []
    if not infos:
        return versions
    namespace = namespace_of(topic)
    versions.append(reg.register(topic, infos[0]).version)
    reg.set_namespace_policy(namespace, compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    for item in infos[1:]:
        versions.append(reg.register(topic, item).version)
    reg.set_namespace_policy(namespace, compatibility=CompatibilityStrategy.UNDEFINED)
    return versions
