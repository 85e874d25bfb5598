"""KEY_VALUE schema data (pulsar-semantics.md §5): the admin form `{"key": K, "value": V}`, the stored layout
`[len][key][len][value]`, the part types read from `key.schema.*` / `value.schema.*` properties, and the text
Pulsar's REST API renders back. A module of its own because a stored version renders itself through it."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import Any

from ._errors import InvalidSchemaError
from ._limits import check_json_depth
from ._text import preview
from ._types import KeyValueParts, SchemaData, SchemaType

KV_ENCODING = "kv.encoding.type"
KEY_VALUE_ENCODINGS = ("INLINE", "SEPARATED")
"""Pulsar's KeyValueEncodingType: the key travels inside the message value, or as the message key."""
KEY_VALUE_PART_TYPES = (SchemaType.AVRO, SchemaType.JSON, *(t for t in SchemaType if t.is_primitive))
"""The types a KEY_VALUE part is built from (`key_value_schema_info`): an Avro or JSON definition, or a
primitive, which has no text. Nested KEY_VALUE and the client-side AUTO* types are refused."""


def encode_key_value(schema: str | bytes) -> bytes:
    """Admin form `{"key": K, "value": V}` → `[len][key][len][value]`; binary input is taken as is."""
    if isinstance(schema, bytes):
        stripped = schema.lstrip()
        if not stripped.startswith(b"{"):
            return schema  # already the binary layout; validated by decode_key_value
        schema = schema.decode("utf-8", errors="replace")
    try:
        doc = json.loads(schema)
    except json.JSONDecodeError as exc:
        raise InvalidSchemaError(
            f'Invalid KEY_VALUE schema: not JSON ({exc}); expected {{"key": <schema>, "value": <schema>}}'
        ) from None
    if not isinstance(doc, dict) or "key" not in doc or "value" not in doc:
        raise InvalidSchemaError(
            f"Invalid KEY_VALUE schema {preview(schema.encode())!r}: "
            'expected a JSON object {"key": <schema>, "value": <schema>}'
        )
    key, value = (_part_bytes(doc[p]) for p in ("key", "value"))
    return struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value


def _part_bytes(part: Any) -> bytes:
    # SchemaUtils: each part re-serialised as compact JSON; a JSON "" is an empty (primitive) part.
    if part == "":
        return b""
    return json.dumps(part, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def split_key_value(data: bytes) -> tuple[bytes, bytes]:
    """The key and value parts of KEY_VALUE schema data: each a 4-byte big-endian length, then its bytes."""
    parts: list[bytes] = []
    offset = 0
    for which in ("key", "value"):
        if len(data) < offset + 4:
            raise InvalidSchemaError(
                f"Invalid KEY_VALUE schema data: {len(data)} bytes, too short for the {which} length prefix"
            )
        (length,) = struct.unpack_from(">i", data, offset)
        offset += 4
        if length < 0 or offset + length > len(data):
            raise InvalidSchemaError(
                f"Invalid KEY_VALUE schema data: {which} length {length} does not fit in "
                f"the {len(data) - offset} bytes left"
            )
        parts.append(data[offset : offset + length])
        offset += length
    if offset != len(data):
        raise InvalidSchemaError(
            f"Invalid KEY_VALUE schema data: {len(data) - offset} unexpected bytes after the value part"
        )
    return parts[0], parts[1]


def decode_key_value(schema: SchemaData, *, exact: bool = False) -> KeyValueParts:
    """Split KV bytes and read the sub-types from `key.schema.type` / `value.schema.type` (missing ⇒ BYTES).

    `exact` reads a part type as Pulsar's `KeyValueSchemaInfo.decodeSubSchemaInfo` does, with Java's
    `SchemaType.valueOf`: the exact upper-case name, so `avro` or an empty value is refused (Pulsar's broker
    answers those with an internal error, 500; we answer 422). Registrations and candidates are read
    `exact`; stored versions are read leniently, so a file written by an older release still reads back.
    `kv.encoding.type` is kept as given: the broker never reads it (only clients do, in
    `KeyValueSchemaInfo.decodeKeyValueEncodingType`), so any value is stored; empty or missing means INLINE.
    """
    parts = split_key_value(schema.data)
    props = schema.properties
    encoding = props.get(KV_ENCODING) or "INLINE"
    sub = []
    for which, part in zip(("key", "value"), parts, strict=True):
        type_name = props.get(f"{which}.schema.type", "BYTES")
        sub_type = _part_type(which, type_name, exact)
        if sub_type is SchemaType.KEY_VALUE:
            raise InvalidSchemaError(f"Invalid KEY_VALUE property {which}.schema.type: nested KEY_VALUE")
        sub_props_text = props.get(f"{which}.schema.properties") or "{}"
        check_json_depth(sub_props_text, f"Invalid KEY_VALUE property {which}.schema.properties")
        try:
            sub_props = json.loads(sub_props_text)
        except json.JSONDecodeError:
            raise InvalidSchemaError(
                f"Invalid KEY_VALUE property {which}.schema.properties={sub_props_text!r}: not a JSON object"
            ) from None
        if not isinstance(sub_props, dict):
            raise InvalidSchemaError(f"Invalid KEY_VALUE property {which}.schema.properties: not a JSON object")
        sub.append(SchemaData(sub_type, part, {str(k): str(v) for k, v in sub_props.items()}))
    return KeyValueParts(sub[0], sub[1], encoding)


def _part_type(which: str, type_name: str, exact: bool) -> SchemaType:
    problem = f"Invalid KEY_VALUE property {which}.schema.type={type_name!r}"
    if exact:
        try:
            return SchemaType(type_name)
        except ValueError:
            raise InvalidSchemaError(
                f"{problem}: not a schema type name (Pulsar reads it with SchemaType.valueOf: an exact upper-case "
                "name such as AVRO or STRING; the broker answers 500 to this)"
            ) from None
    try:
        return SchemaType.parse(type_name or "BYTES")
    except InvalidSchemaError:
        raise InvalidSchemaError(f"{problem}: not a schema type") from None


def render_schema_text(kind: SchemaType, data: bytes, properties: Mapping[str, str] | None = None) -> str:
    """The `data` text of Pulsar's GetSchemaResponse (KEY_VALUE as compact `{"key":…,"value":…}`, §5).

    As `SchemaUtils.convertKeyValueSchemaInfoDataToString`, a KEY_VALUE part whose type (from the
    properties) is primitive renders as `""` whatever bytes it holds; other parts as their JSON.
    """
    if kind is not SchemaType.KEY_VALUE:
        return data.decode("utf-8", errors="replace")
    try:
        parts = decode_key_value(SchemaData(kind, data, properties or {}))
    except InvalidSchemaError:
        return data.decode("utf-8", errors="replace")
    rendered = {}
    for which, part in (("key", parts.key), ("value", parts.value)):
        if properties is not None and part.type.is_primitive:
            rendered[which] = ""
            continue
        try:
            rendered[which] = json.loads(part.data.decode("utf-8")) if part.data else ""
        except (UnicodeDecodeError, json.JSONDecodeError):
            rendered[which] = part.data.decode("utf-8", errors="replace")
    return json.dumps(rendered, separators=(",", ":"), ensure_ascii=False)
