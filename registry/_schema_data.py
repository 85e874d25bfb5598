"""From an admin-API SchemaInfo to the bytes the broker stores, and back; structural validation (§3.7, §5).

Every bad input is refused here with a message naming the bad value, before anything is stored.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._avro_schema import AvroParseError, AvroSchema, Enum, Fixed, Record, Union, is_name, parse_avro, walk
from ._errors import InvalidSchemaError
from ._json_legacy import jackson_schema
from ._limits import check_json_depth, check_schema_input
from ._model import PRIMITIVE_TYPES, SchemaInfo, SchemaType
from ._protobuf_native import parse_protobuf_native
from ._pulsar_version import PulsarProfile, avro_111_name_problem, in_force
from ._text import check_mapping

KV_ENCODING = "kv.encoding.type"
# Types whose data is not validated at all (§3.7).
_UNVALIDATED = frozenset({SchemaType.NONE, SchemaType.BYTES})


@dataclass(frozen=True, slots=True)
class SchemaData:
    """What the registry stores and compares: type, raw bytes, properties (Pulsar's `SchemaData`)."""

    type: SchemaType
    data: bytes
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KeyValueParts:
    key: SchemaData
    value: SchemaData
    encoding: str


def to_schema_data(info: SchemaInfo, *, validate: bool = True) -> SchemaData:
    """Encode an admin-API SchemaInfo as stored bytes (KEY_VALUE packed per §5) and validate it (§3.7)."""
    check_schema_input(info.type, info.schema)  # size and depth limits first: no parser sees what they refuse
    check_mapping(info.properties, "schema property", InvalidSchemaError)  # stored as given: must read back
    if info.type is SchemaType.KEY_VALUE:
        data = _encode_key_value(info.schema)
    else:
        data = info.schema.encode("utf-8") if isinstance(info.schema, str) else bytes(info.schema)
    result = SchemaData(info.type, data, dict(info.properties))
    if validate:
        validate_schema_data(result)
    return result


def validate_schema_data(schema: SchemaData) -> None:
    """SchemaDataValidator: raise InvalidSchemaError naming the problem, or return."""
    kind = schema.type
    if kind.is_client_side:
        raise InvalidSchemaError(f"Schema {kind} is a client-side schema type and cannot be registered")
    if kind in _UNVALIDATED:
        return
    if kind is SchemaType.EXTERNAL:
        rules = in_force()
        if not rules.external:
            # 3.0/4.0 have no EXTERNAL validator or checker: the broker fails with an internal error (500).
            raise InvalidSchemaError(
                f"Schema type EXTERNAL is not supported by {rules.title}: it came with Pulsar 4.2 "
                "(this registry answers as the broker's profile; an older broker answers with an internal error)"
            )
        return
    if kind is SchemaType.STRING:
        # The Python client sends the 4 bytes `null` for a STRING schema (§3.7).
        if schema.data not in (b"", b"null"):
            raise InvalidSchemaError(
                f"Invalid schema definition data for string schema : {_preview(schema.data)!r} "
                "(a STRING schema's data must be empty)"
            )
        return
    if kind in PRIMITIVE_TYPES:
        if schema.data:
            raise InvalidSchemaError(
                "Invalid schema definition data for primitive schemas :length of schema data should be zero, "
                f"but {len(schema.data)} bytes is found ({kind} schema data: {_preview(schema.data)!r})"
            )
        return
    if kind in (SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF):
        rules = in_force()
        try:
            parsed = parse_avro_data(schema.type, schema.data)
        except InvalidSchemaError:
            if kind is SchemaType.JSON and rules.legacy_json and jackson_schema(schema.data) is not None:
                return  # 3.0/4.0: the old Jackson JSON-Schema form (registry/_json_legacy.py)
            raise
        if kind is SchemaType.AVRO and isinstance(parsed.root, Union):
            raise InvalidSchemaError(
                "Invalid schema definition data for AVRO schema: Avro schema typed [UNION] is not supported"
            )
        return
    if kind is SchemaType.PROTOBUF_NATIVE:
        parse_protobuf_native(schema.data)
        return
    if kind is SchemaType.KEY_VALUE:
        parts = decode_key_value(schema, exact=True)
        for part, which in ((parts.key, "key"), (parts.value, "value")):
            try:
                validate_schema_data(part)
            except InvalidSchemaError as exc:
                raise InvalidSchemaError(f"Invalid KEY_VALUE schema, {which} part: {exc}") from None
        return
    raise InvalidSchemaError(f"schema type {kind} is not supported by this registry")


def parse_avro_data(kind: SchemaType, data: bytes, *, profile: PulsarProfile | None = None) -> AvroSchema:
    """Parse AVRO/JSON/PROTOBUF data as Avro with the name rules of the Pulsar profile in force (or `profile`),
    defaults not validated; InvalidSchemaError if not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidSchemaError(f"Invalid schema definition data for {kind} schema: not UTF-8 text") from None
    if not text.strip():
        raise InvalidSchemaError(f"Invalid schema definition data for {kind} schema: the schema is empty")
    try:
        parsed = parse_avro(text)
    except AvroParseError as exc:
        raise InvalidSchemaError(f"Invalid schema definition data for {kind} schema: {exc}") from None
    problem = profile_problem(parsed, profile or in_force(), text)
    if problem is not None:
        raise InvalidSchemaError(f"Invalid schema definition data for {kind} schema: {problem}")
    return parsed


def profile_problem(parsed: AvroSchema, rules: PulsarProfile, text: str) -> str | None:
    """What the profile's Avro refuses in a schema our parser took (it takes the union of every line's rules):
    on Avro 1.11 (3.0, 4.0) a `$` in a name, field name or symbol, or an enum/fixed defined twice; on Avro 1.12
    with Pulsar's validator (master) a namespace part that is not a name. `text` is what was parsed."""
    if not rules.repeated_definitions and parsed.repeated:
        return f"can't redefine: {parsed.repeated[0]} (Avro {rules.avro} refuses a second definition of a name)"
    if rules.namespaces_validated:
        for named in parsed.named.values():
            space = named.namespace
            if space and any(not part or not is_name(part) for part in space.split(".")):
                return (
                    f"illegal namespace {json.dumps(space)} of {named.name}: each part must be a name (letters, "
                    f"digits, '_' or '$', not starting with a digit), as Avro {rules.avro} requires"
                )
    # Among ASCII names, Avro 1.11's rule refuses only what holds a `$`: the walk is for texts that may (a `$`,
    # a JSON `\u` escape that could spell one, or non-ASCII letters, where the two rules differ too).
    if not rules.dollar_in_names and ("$" in text or "\\u" in text or not text.isascii()):
        for name in _names(parsed):
            problem = avro_111_name_problem(name)
            if problem is not None:
                return f"{problem} (Avro {rules.avro} names take letters, digits and '_', not '$')"
    return None


def _names(parsed: AvroSchema) -> list[str]:
    """Every name Avro 1.11's validateName sees: named types' simple names, field names, enum symbols."""
    names: list[str] = []
    for node in walk(parsed.root):
        if isinstance(node, Record):
            names.append(node.name)
            names.extend(f.name for f in node.fields)
        elif isinstance(node, Enum):
            names.append(node.name)
            names.extend(node.symbols)
        elif isinstance(node, Fixed):
            names.append(node.name)
    return names


def _preview(data: bytes, limit: int = 60) -> str:
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("…" if len(data) > limit else "")


# --- KEY_VALUE (§5) -------------------------------------------------------------------------------------------


def _encode_key_value(schema: str | bytes) -> bytes:
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
            f"Invalid KEY_VALUE schema {_preview(schema.encode())!r}: "
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


def key_value_schema_info(
    key: SchemaInfo, value: SchemaInfo, *, encoding: str = "INLINE", name: str = "KeyValue"
) -> SchemaInfo:
    """Build the admin-form KEY_VALUE SchemaInfo from two parts, with Pulsar's property names (§5)."""

    def part(side: str, info: SchemaInfo) -> Any:
        if info.type in PRIMITIVE_TYPES or not info.text.strip():
            return ""
        try:
            return json.loads(info.text)
        except (ValueError, RecursionError) as exc:
            raise InvalidSchemaError(f"the KEY_VALUE {side} schema ({info.type}) is not valid JSON: {exc}") from None

    props = {
        "key.schema.name": key.name,
        "key.schema.type": str(key.type),
        "key.schema.properties": json.dumps(dict(sorted(key.properties.items())), separators=(",", ":")),
        "value.schema.name": value.name,
        "value.schema.type": str(value.type),
        "value.schema.properties": json.dumps(dict(sorted(value.properties.items())), separators=(",", ":")),
        KV_ENCODING: encoding,
    }
    text = json.dumps(
        {"key": part("key", key), "value": part("value", value)}, separators=(",", ":"), ensure_ascii=False
    )
    return SchemaInfo(type=SchemaType.KEY_VALUE, schema=text, properties=props, name=name)


def key_value_parts(info: SchemaInfo) -> tuple[SchemaInfo, SchemaInfo, str]:
    """The inverse of key_value_schema_info: (key part, value part, encoding) of an admin-form KEY_VALUE schema,
    with the parts' types and properties from its `key.schema.*` / `value.schema.*` properties (§5)."""
    if info.type is not SchemaType.KEY_VALUE:
        raise InvalidSchemaError(f"not a KEY_VALUE schema: {info.type}")
    parts = decode_key_value(to_schema_data(info, validate=False))

    def as_info(part: SchemaData, name: str) -> SchemaInfo:
        text = render_schema_text(part.type, part.data)
        return SchemaInfo(type=part.type, schema=text, properties=dict(part.properties), name=name)

    props = info.properties
    return (
        as_info(parts.key, props.get("key.schema.name", "")),
        as_info(parts.value, props.get("value.schema.name", "")),
        parts.encoding,
    )
