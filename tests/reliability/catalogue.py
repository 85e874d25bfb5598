"""The bad-input catalogue: hostile or malformed requests, and what each must be refused with.

Each REST case is (id, method, path, body, headers, statuses, words): `body` is JSON-able (sent as JSON), or
bytes (sent raw, content-type application/json unless the headers say otherwise); `words` must all appear in
the `reason`. Pulsar answers 500 to several of these (noted "Pulsar: 500"); this registry answers a 4xx.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from schemas import S1

TOPIC_PATH = "/admin/v2/schemas/acme/tests/topic"
NS_PATH = "/admin/v2/namespaces/acme/tests"
KV_PROPS = {"key.schema.type": "AVRO", "value.schema.type": "AVRO"}
MB = 1024 * 1024


def deep_avro(levels: int) -> str:
    return '{"type":"array","items":' * levels + '"int"' + "}" * levels


def big_avro(size: int) -> str:
    return json.dumps({"type": "record", "name": "Big", "fields": [{"name": "f", "type": "string", "doc": "x" * size}]})


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def deep_descriptor(levels: int) -> str:
    """A PROTOBUF_NATIVE document whose FileDescriptorSet nests `levels` message types (encoded by hand: the
    protobuf library refuses to build one past its own depth limit)."""
    message = b""
    for i in reversed(range(levels)):
        message = _field(1, f"M{i}".encode()) + (_field(3, message) if message else b"")
    file = _field(1, b"deep.proto") + _field(2, b"deep") + _field(4, message) + _field(12, b"proto3")
    data = _field(1, file)
    return json.dumps(
        {
            "fileDescriptorSet": base64.b64encode(data).decode(),
            "rootMessageTypeName": "deep.M0",
            "rootFileDescriptorName": "deep.proto",
        }
    )


def _valid_descriptor_set() -> str:
    """A FileDescriptorSet holding test.proto with `proto.TestMessage`, base64 (what a good document carries)."""
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet()
    proto = files.file.add(name="test.proto", package="proto", syntax="proto3")
    proto.message_type.add(name="TestMessage")
    return base64.b64encode(files.SerializeToString()).decode()


def proto_doc(**fields: Any) -> str:
    doc = {
        "fileDescriptorSet": base64.b64encode(b"\x0a\x05hello").decode(),
        "rootMessageTypeName": "proto.TestMessage",
        "rootFileDescriptorName": "test.proto",
    }
    doc.update(fields)
    return json.dumps({k: v for k, v in doc.items() if v is not None})


def schema(kind: str, text: str, **properties: str) -> dict[str, Any]:
    return {"type": kind, "schema": text, "properties": properties}


def _wide_union(branches: int, duplicate: bool) -> str:
    kinds = (
        ["string"] * branches if duplicate else [{"type": "fixed", "name": f"F{i}", "size": 1} for i in range(branches)]
    )
    return json.dumps({"type": "record", "name": "U", "fields": [{"name": "u", "type": ["null", *kinds]}]})


POST = ("POST", TOPIC_PATH + "/schema")

# (id, method, path, body, headers, allowed statuses, words in the reason)
REST_CASES: list[Any] = [  # (name, method, path, body, headers, statuses, words), or a pytest.param of one
    # --- malformed bodies and wrong types
    ("malformed JSON body", *POST, b'{"type": "AVRO", "schema": ', {}, (400,), ("JSON",)),
    ("a body that is a list", *POST, [], {}, (400,), ("Invalid request",)),
    ("a body that is a string", *POST, "AVRO", {}, (400,), ("Invalid request",)),
    ("an empty body", *POST, b"", {}, (400,), ("Invalid request",)),
    ("no schema type", *POST, {"schema": S1}, {}, (400,), ("type", "Field required")),
    ("a schema that is a number", *POST, {"type": "AVRO", "schema": 42}, {}, (400,), ("schema",)),
    ("a schema that is an object", *POST, {"type": "AVRO", "schema": {"type": "string"}}, {}, (400,), ("schema",)),
    (
        "properties that are a list",
        *POST,
        {"type": "AVRO", "schema": S1, "properties": ["a"]},
        {},
        (400,),
        ("properties",),
    ),
    (
        "a property value that is an object",
        *POST,
        {"type": "AVRO", "schema": S1, "properties": {"a": {}}},
        {},
        (400,),
        ("properties",),
    ),
    (
        "a body nested 100,000 deep",
        *POST,
        b'{"type":"AVRO","schema":"","properties":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        {},
        (400,),
        (),
    ),
    ("invalid UTF-8 in the body", *POST, b'{"type":"AVRO","schema":"\xff\xfe"}', {}, (400,), ()),
    (
        "a text/plain body",
        *POST,
        json.dumps(schema("AVRO", S1)).encode(),
        {"content-type": "text/plain"},
        (400, 415),
        (),
    ),
    # --- schema types and data (Pulsar: 500 for an unknown type name)
    ("an unknown schema type", *POST, schema("AVRO2", S1), {}, (422,), ("AVRO2",)),
    ("a lowercase schema type (SchemaType.valueOf)", *POST, schema("avro", S1), {}, (422,), ("'avro'",)),
    ("KEYVALUE for KEY_VALUE (SchemaType.valueOf)", *POST, schema("KEYVALUE", ""), {}, (422,), ("'KEYVALUE'",)),
    ("a client-side schema type", *POST, schema("AUTO_CONSUME", ""), {}, (422,), ("AUTO_CONSUME", "client-side")),
    (
        "a non-empty INT32 schema",
        *POST,
        schema("INT32", "abc"),
        {},
        (422,),
        ("length of schema data should be zero", "abc"),
    ),
    ("a non-empty STRING schema", *POST, schema("STRING", "hello"), {}, (422,), ("hello",)),
    ("AVRO text that is not JSON", *POST, schema("AVRO", "not json"), {}, (422,), ("not valid JSON",)),
    ("an empty AVRO schema", *POST, schema("AVRO", ""), {}, (422,), ("empty",)),
    ("a top-level AVRO union", *POST, schema("AVRO", '["null","string"]'), {}, (422,), ("UNION",)),
    ("a record without a name", *POST, schema("AVRO", '{"type":"record","fields":[]}'), {}, (422,), ("name",)),
    (
        "an unknown named type",
        *POST,
        schema("AVRO", '{"type":"record","name":"R","fields":[{"name":"a","type":"Nope"}]}'),
        {},
        (422,),
        ("Nope",),
    ),
    ("a JSON schema that is not JSON", *POST, schema("JSON", "{oops"), {}, (422,), ("JSON",)),
    ("a BOM before the schema", *POST, schema("AVRO", "\ufeff" + S1), {}, (422,), ("JSON",)),
    ("a NUL character as schema", *POST, schema("AVRO", "\u0000"), {}, (422,), ("JSON",)),
    (
        "a lone surrogate in the schema",
        *POST,
        json.dumps(schema("AVRO", '{"type":"string","doc":"\ud800"}')).encode(),
        {},
        (422,),
        ("Unicode",),
    ),
    # --- PROTOBUF_NATIVE
    (
        "PROTOBUF_NATIVE text that is not JSON",
        *POST,
        schema("PROTOBUF_NATIVE", "message X {}"),
        {},
        (422,),
        ("PROTOBUF_NATIVE",),
    ),
    (
        "an invalid base64 descriptor",
        *POST,
        schema("PROTOBUF_NATIVE", proto_doc(fileDescriptorSet="@@not base64@@")),
        {},
        (422,),
        ("base64",),
    ),
    (
        "a descriptor that is not a FileDescriptorSet",
        *POST,
        schema("PROTOBUF_NATIVE", proto_doc()),
        {},
        (422,),
        ("PROTOBUF_NATIVE",),
    ),
    (
        "no root message name",
        *POST,
        schema("PROTOBUF_NATIVE", proto_doc(rootMessageTypeName=None, fileDescriptorSet=_valid_descriptor_set())),
        {},
        (422,),
        ("rootMessageTypeName",),
    ),
    (
        "a descriptor nested 200 messages deep",
        *POST,
        schema("PROTOBUF_NATIVE", deep_descriptor(200)),
        {},
        (422,),
        ("PROTOBUF_NATIVE",),
    ),
    # --- KEY_VALUE
    (
        "KEY_VALUE text that is not JSON",
        *POST,
        schema("KEY_VALUE", "k=v", **KV_PROPS),
        {},
        (422,),
        ("KEY_VALUE", "not JSON"),
    ),
    (
        "KEY_VALUE without a value",
        *POST,
        schema("KEY_VALUE", json.dumps({"key": json.loads(S1)}), **KV_PROPS),
        {},
        (422,),
        ('"value"',),
    ),
    (
        "a KEY_VALUE part type in lower case (Pulsar: 500 from SchemaType.valueOf)",
        *POST,
        schema("KEY_VALUE", json.dumps({"key": "", "value": ""}), **{"key.schema.type": "string"}),
        {},
        (422,),
        ("key.schema.type='string'", "SchemaType.valueOf"),
    ),
    (
        "an empty KEY_VALUE part type (Pulsar: 500 from SchemaType.valueOf)",
        *POST,
        schema("KEY_VALUE", json.dumps({"key": "", "value": ""}), **{"value.schema.type": ""}),
        {},
        (422,),
        ("value.schema.type=''",),
    ),
    (
        "a KEY_VALUE part type that does not exist",
        *POST,
        schema("KEY_VALUE", json.dumps({"key": "", "value": ""}), **{"key.schema.type": "BLOB"}),
        {},
        (422,),
        ("BLOB",),
    ),
    (
        "a KEY_VALUE value part that is not Avro",
        *POST,
        schema("KEY_VALUE", json.dumps({"key": json.loads(S1), "value": 5}), **KV_PROPS),
        {},
        (422,),
        ("value part",),
    ),
    # --- size and depth (Pulsar: stored, or 500 from its recursive parser)
    ("a 10 MB schema", *POST, schema("AVRO", big_avro(10 * MB)), {}, (413,), ("limit",)),
    ("a 2 MB schema", *POST, schema("AVRO", big_avro(2 * MB)), {}, (413,), ("2,097", "limit of 1,048,576 bytes")),
    (
        "a 10,000-deep AVRO schema",
        *POST,
        schema("AVRO", deep_avro(10_000)),
        {},
        (422,),
        ("nested more than 128 levels",),
    ),
    (
        "a 10,000-deep KEY_VALUE schema",
        *POST,
        schema("KEY_VALUE", '{"key":' + deep_avro(10_000) + ',"value":""}', **KV_PROPS),
        {},
        (422,),
        ("nested more than",),
    ),
    ("a 10,000-deep JSON schema", *POST, schema("JSON", deep_avro(10_000)), {}, (422,), ("nested more than",)),
    (
        "a 10,000-deep what-if candidate",
        "POST",
        "/explorer/v1/topics/acme/tests/topic/what-if",
        schema("AVRO", deep_avro(10_000)),
        {},
        (422,),
        ("nested more than",),
    ),
    (
        "a 10,000-deep compatibility check",
        "POST",
        TOPIC_PATH + "/compatibility",
        schema("AVRO", deep_avro(10_000)),
        {},
        (422,),
        ("nested more than",),
    ),
    ("a union of 20,000 duplicate branches", *POST, schema("AVRO", _wide_union(20_000, True)), {}, (422,), ("union",)),
    (
        "KEY_VALUE part properties nested 100,000 deep",
        *POST,
        schema(
            "KEY_VALUE",
            json.dumps({"key": "", "value": ""}),
            **{
                "key.schema.type": "STRING",
                "value.schema.type": "STRING",
                "key.schema.properties": "[" * 100_000 + "]" * 100_000,
            },
        ),
        {},
        (422,),
        ("key.schema.properties", "nested more than 128 levels"),
    ),
    # --- text that no UTF-8 reader could get back (a 500 on every later read, before)
    (
        "a lone surrogate in a property value",
        *POST,
        b'{"type":"AVRO","schema":' + json.dumps(S1).encode() + b',"properties":{"k":"\\ud800"}}',
        {},
        (422,),
        ("property 'k' value", "lone surrogate U+D800"),
    ),
    (
        "a NUL in a property key",
        *POST,
        {"type": "AVRO", "schema": S1, "properties": {"a\u0000b": "v"}},
        {},
        (422,),
        ("NUL character",),
    ),
    # --- names: invalid, traversal-like, unicode (Pulsar: 412)
    ("a tenant of two dots", "GET", "/admin/v2/schemas/%2E%2E/tests/topic/schema", None, {}, (404, 412), ()),
    ("a tenant with an encoded slash", "GET", "/admin/v2/schemas/a%2Fb/tests/topic/schema", None, {}, (404, 412), ()),
    (
        "a tenant with a space",
        "GET",
        "/admin/v2/schemas/bad%20tenant/tests/topic/schema",
        None,
        {},
        (412,),
        ("bad tenant",),
    ),
    (
        "a namespace with a NUL byte",
        "GET",
        "/admin/v2/schemas/acme/te%00sts/topic/schema",
        None,
        {},
        (412,),
        ("namespace",),
    ),
    (
        "a topic with a right-to-left override",
        "POST",
        "/admin/v2/schemas/acme/tests/ab%E2%80%AEcd/schema",
        schema("AVRO", S1),
        {},
        (412,),
        ("topic",),
    ),
    ("a topic with an emoji", "GET", "/admin/v2/schemas/acme/tests/%F0%9F%92%A5/schema", None, {}, (412,), ("topic",)),
    (
        "a topic with a zero-width space",
        "GET",
        "/admin/v2/schemas/acme/tests/a%E2%80%8Bb/schema",
        None,
        {},
        (412,),
        ("topic",),
    ),
    pytest.param(
        "a non-ASCII tenant",
        "PUT",
        "/admin/v2/tenants/%C3%A5cme",
        None,
        {},
        (412,),
        ("tenant",),
    ),
    ("a tenant of a thousand characters", "PUT", "/admin/v2/tenants/" + "a" * 1000, None, {}, (412,), ("tenant",)),
    ("a namespace under an unknown tenant", "PUT", "/admin/v2/namespaces/nobody/ns", None, {}, (404,), ("nobody",)),
    ("an audit target that walks up", "GET", "/explorer/v1/audit?target=../../etc/passwd", None, {}, (412,), ("..",)),
    # --- versions, policies, paging (Pulsar: 500 for a non-numeric version)
    ("a version that is not a number", "GET", TOPIC_PATH + "/schema/abc", None, {}, (400,), ("abc",)),
    # a negative long finds nothing, as in Pulsar; one that is no long is a 400 (Pulsar: 500 from parseLong)
    ("a negative version", "GET", TOPIC_PATH + "/schema/-1", None, {}, (404,), ("-1",)),
    ("a version of 30 digits", "GET", TOPIC_PATH + "/schema/" + "9" * 30, None, {}, (400,), ("64-bit",)),
    (
        "a strategy that does not exist",
        "PUT",
        NS_PATH + "/schemaCompatibilityStrategy",
        "SOMETIMES",
        {},
        (400,),
        ("Input should be", "BACKWARD"),
    ),
    ("a strategy that is a number", "PUT", NS_PATH + "/schemaCompatibilityStrategy", 3, {}, (400,), ()),
    ("a flag that is a string", "POST", NS_PATH + "/isAllowAutoUpdateSchema", "yes", {}, (400,), ()),
    ("a flag that is a number", "POST", NS_PATH + "/schemaValidationEnforced", 1, {}, (400,), ()),
    ("a page limit of zero", "GET", "/explorer/v1/topics?limit=0", None, {}, (400,), ("limit",)),
    ("a page limit of a billion", "GET", "/explorer/v1/topics?limit=1000000000", None, {}, (400,), ("limit",)),
    ("a search text of 10,000 characters", "GET", "/explorer/v1/topics?q=" + "x" * 10_000, None, {}, (400,), ("q",)),
    ("an audit limit of zero", "GET", "/explorer/v1/audit?limit=0", None, {}, (400,), ("limit",)),
    ("a method the route lacks", "PATCH", TOPIC_PATH + "/schema", None, {}, (405,), ()),
    # --- headers
    (
        "a Host that is not a loopback name (DNS rebinding)",
        "GET",
        "/admin/v2/tenants",
        None,
        {"Host": "evil.example"},
        (421,),
        ("--allow-host", "evil.example"),
    ),
    ("a Host that ends like a loopback name", "GET", TOPIC_PATH + "/schema", None, {"Host": "x.localhost"}, (421,), ()),
    ("20 kB of request headers", "GET", "/admin/v2/tenants", None, {"x-padding": "a" * 20_000}, (400, 431), ()),
    ("a 5 MB body of whitespace", *POST, b" " * (5 * MB), {}, (413,), ("limit of 4,194,304 bytes",)),
]


# --- valid but heavy: answered, within bounded memory and time (issue 18 items 3 and 10) ---------------------


def wide_avro(salt: str, fields: int = 9000) -> str:
    """A record of `fields` fields (some 600 KiB at the default), its doc salted so each text is new to every
    parse cache."""
    return json.dumps(
        {
            "type": "record",
            "name": "Wide",
            "doc": salt,
            "fields": [{"name": f"field_{n:05d}", "type": ["null", "string"], "default": None} for n in range(fields)],
        }
    )


def renamed_pair(fields: int = 1200) -> tuple[str, str]:
    """Two pretty-printed records (some 100 KiB at the default), every field renamed: only repeated lines match,
    the case that made difflib's text diff cubic (82 s for 46 KiB)."""
    old = [{"name": f"field_{n:05d}", "type": "string", "doc": "a field"} for n in range(fields)]
    new = [{**f, "name": f"renamed_{n:05d}"} for n, f in enumerate(old)]

    def text(fields: list[dict[str, str]]) -> str:
        return json.dumps({"type": "record", "name": "Wide", "fields": fields}, indent=2)

    return text(old), text(new)


EXPLORER_TOPIC = "/explorer/v1/topics/acme/tests/topic"
# (id, method, path, body of the n-th distinct request, status): each sent several times, a new large text each
# time; answered with `status`, and the server keeps none of them past its cache budget.
HEAVY_REST_CASES: list[tuple[str, str, str, Any, int]] = [
    (
        "distinct 600 KiB candidates to the explorer's diff",
        "POST",
        EXPLORER_TOPIC + "/diff",
        lambda n: {"candidate": schema("AVRO", wide_avro(f"diff {n}"))},
        200,
    ),
    (
        "distinct 600 KiB candidates to the version lookup",
        "POST",
        TOPIC_PATH + "/version",
        lambda n: schema("AVRO", wide_avro(f"lookup {n}")),
        200,  # {"version": -1}: no such version, as Pulsar answers
    ),
    (
        "distinct 600 KiB candidates to the upgrade plan",
        "POST",
        EXPLORER_TOPIC + "/upgrade-plan",
        lambda n: schema("AVRO", wide_avro(f"plan {n}")),
        200,
    ),
]
