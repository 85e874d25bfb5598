"""From an admin-API SchemaInfo to the bytes the broker stores, and back; structural validation (§3.7, §5).

Every bad input is refused here with a message naming the bad value, before anything is stored.
"""

from __future__ import annotations

import json
from typing import Any

from ._errors import InvalidSchemaError
from ._key_value import KEY_VALUE_PART_TYPES, KV_ENCODING, decode_key_value, encode_key_value, render_schema_text
from ._limits import check_schema_input
from ._model import SchemaInfo
from ._pulsar_version import PulsarLine, avro_111_name_problem, current_line
from ._text import check_mapping, preview
from ._types import PRIMITIVE_TYPES, SchemaData, SchemaType
from .avro._json_legacy import jackson_schema
from .avro._nodes import AvroParseError, AvroSchema, Enum, Fixed, Record, Union, walk
from .avro._parser import is_name
from .avro._schema import parse_avro
from .protobuf._native import parse_protobuf_native

# Types whose data is not validated at all (§3.7).
_UNVALIDATED = frozenset({SchemaType.NONE, SchemaType.BYTES})


def checked_info(info: SchemaInfo) -> SchemaInfo:
    """`info` when it is a SchemaInfo; a facade call given anything else (a dict, a string) is refused."""
    if not isinstance(info, SchemaInfo):
        raise InvalidSchemaError(f"expected a SchemaInfo, got {type(info).__name__}")
    return info


def to_schema_data(info: SchemaInfo, *, validate: bool = True) -> SchemaData:
    """Encode an admin-API SchemaInfo as stored bytes (KEY_VALUE packed per §5) and validate it (§3.7)."""
    check_schema_input(info.type, info.schema)  # size and depth limits first: no parser sees what they refuse
    check_mapping(info.properties, "schema property", InvalidSchemaError)  # stored as given: must read back
    if info.type is SchemaType.KEY_VALUE:
        data = encode_key_value(info.schema)
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
        rules = current_line()
        if not rules.external:
            # 3.0/4.0 have no EXTERNAL validator or checker: the broker fails with an internal error (500).
            raise InvalidSchemaError(
                f"Schema type EXTERNAL is not supported by {rules.title}: it came with Pulsar 4.2 "
                "(this registry answers as the broker's line; an older broker answers with an internal error)"
            )
        return
    if kind is SchemaType.STRING:
        # The Python client sends the 4 bytes `null` for a STRING schema (§3.7).
        if schema.data not in (b"", b"null"):
            raise InvalidSchemaError(
                f"Invalid schema definition data for string schema : {preview(schema.data)!r} "
                "(a STRING schema's data must be empty)"
            )
        return
    if kind in PRIMITIVE_TYPES:
        if schema.data:
            raise InvalidSchemaError(
                "Invalid schema definition data for primitive schemas :length of schema data should be zero, "
                f"but {len(schema.data)} bytes is found ({kind} schema data: {preview(schema.data)!r})"
            )
        return
    if kind in (SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF):
        rules = current_line()
        try:
            parsed = parse_avro_data(schema.type, schema.data)
        except InvalidSchemaError:
            if kind is SchemaType.JSON and rules.legacy_json and jackson_schema(schema.data) is not None:
                return  # 3.0/4.0: the old Jackson JSON-Schema form (registry/avro/_json_legacy.py)
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


def parse_avro_data(kind: SchemaType, data: bytes, *, line: PulsarLine | None = None) -> AvroSchema:
    """Parse AVRO/JSON/PROTOBUF data as Avro with the name rules of the Pulsar line in force (or `line`),
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
    problem = line_problem(parsed, line or current_line(), text)
    if problem is not None:
        raise InvalidSchemaError(f"Invalid schema definition data for {kind} schema: {problem}")
    return parsed


def line_problem(parsed: AvroSchema, rules: PulsarLine, text: str) -> str | None:
    """What the line's Avro refuses in a schema our parser took (it takes the union of every line's rules):
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


# --- KEY_VALUE (§5) -------------------------------------------------------------------------------------------


def key_value_schema_info(
    key: SchemaInfo, value: SchemaInfo, *, encoding: str = "INLINE", name: str = "KeyValue"
) -> SchemaInfo:
    """Build the admin-form KEY_VALUE SchemaInfo from two parts, with Pulsar's property names (§5)."""

    def part(side: str, info: SchemaInfo) -> Any:
        if info.type not in KEY_VALUE_PART_TYPES:
            allowed = ", ".join(t.value for t in KEY_VALUE_PART_TYPES)
            raise InvalidSchemaError(f"a KEY_VALUE {side} part cannot be {info.type}; it can be one of {allowed}")
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
