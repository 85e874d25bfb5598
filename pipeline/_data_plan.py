"""The data audit's plan per (topic, writer version): how its messages are decoded and resolved to the reader,
and which of the reader's fields statistics are kept for. The core decides the pair's compatibility; the plan
only records its verdict (pipeline/data_audit.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import fastavro

from registry import RegistryError, SchemaType
from registry._compatibility import pair_verdict
from registry._key_value import decode_key_value
from registry._types import SchemaData
from registry.protobuf._native import parse_protobuf_native

from ._payload import charset, primitive_kind

MESSAGE_LIMIT = 300
Field = tuple[str | None, tuple[str, ...], str, str]
"""A field statistics are kept for: label (None for a primitive value), path, kind, type name."""
AVRO_TYPES = frozenset({SchemaType.AVRO, SchemaType.JSON})

# --- per (topic, writer version): the plan --------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    topic: str
    version: int | None
    status: str = "ok"  # "ok", or the reason every message of this version fails with
    status_field: str | None = None
    status_detail: str | None = None
    codec: str = ""  # "avro" | "json" | "protobuf" | "primitive" | "key_value"
    writer: Any = None  # parsed Avro schema, protobuf class, or the primitive SchemaType
    reader: Any = None
    resolve: bool = True
    fields: list[Field] = field(default_factory=list)  # label, path, kind, type
    enum_fields: dict[str, str] = field(default_factory=dict)  # enum name -> field label
    part: str | None = None  # "key" or "value": this plan reads one part of a KEY_VALUE message
    parts: tuple[Plan, Plan] | None = None  # KEY_VALUE: the key's and the value's plans
    encoding: str = ""  # KEY_VALUE: the writer's INLINE or SEPARATED
    text_codec: str = "utf-8"  # STRING: the reader's __charset
    reader_version: int | None = None
    reader_label: str | None = None
    schema_type: str | None = None
    compatible: bool | None = None
    rule_code: str | None = None


# Worker-process caches. Spark reuses a Python worker across tasks (spark.python.worker.reuse, its default), so
# the core's verdict on a schema pair, the parsed fastavro schemas and the reader's field list are built once
# per worker, not once per Arrow batch or partition; identical pairs of different topics share one entry.
_PAIRS: dict[tuple[Any, ...], Plan] = {}
_FIELDS: dict[bytes, tuple[list[Field], dict[str, str]]] = {}
PLANS: dict[str, dict[tuple[str, int], Plan]] = {}  # per schema table (its token): (topic, version) -> plan


def make_plan(table: Mapping[str, Any], schema_id: str, version: int) -> Plan:
    """The plan for one (topic, writer version): what is wrong with it, or how to decode its messages."""
    entry = table.get(schema_id) if schema_id != "_token" else None
    plan = Plan(topic=schema_id, version=version)
    if entry is None:
        plan.status, plan.status_detail = "UNKNOWN_TOPIC", f"no topic {schema_id} with a live schema in the registry"
        return plan
    reader_version, reader_type, reader_data, reader_props, reader_label = entry["reader"]
    plan.reader_version, plan.reader_label = reader_version, reader_label
    written = entry["versions"].get(version)
    if written is None:
        live = sorted(entry["versions"])
        plan.status = "UNKNOWN_VERSION"
        plan.status_detail = f"version {version} is not a live version of {schema_id} (live: {live[0]}..{live[-1]})"
        return plan
    # The version is part of the key: the core's problems name the version they fail against.
    key = (version, written[0], written[1], tuple(sorted(written[2].items())), reader_type, reader_data,
           tuple(sorted(reader_props.items())))  # fmt: skip
    pair = _PAIRS.get(key)
    if pair is None:
        writer = SchemaData(SchemaType(written[0]), written[1], written[2])
        reader = SchemaData(SchemaType(reader_type), reader_data, reader_props)
        try:
            pair = pair_plan(writer, reader, version)
        except Exception as exc:  # a schema fastavro or protobuf cannot load: counted, never fatal
            pair = Plan(topic="", version=version, status="UNPARSEABLE_SCHEMA")
            pair.status_detail = f"{type(exc).__name__}: {exc}"
        _PAIRS[key] = pair
    # A copy: decoding may switch a plan to the writer alone (see decode_payload), for this topic only.
    parts = None if pair.parts is None else (replace(pair.parts[0]), replace(pair.parts[1]))
    return replace(pair, topic=schema_id, reader_version=reader_version, reader_label=reader_label, parts=parts)


def pair_plan(writer: SchemaData, reader: SchemaData, version: int) -> Plan:
    """What depends only on the pair: the core's verdict, the codec, parsed schemas, the reader's fields."""
    plan = Plan(topic="", version=version, schema_type=str(writer.type))
    # The core's verdict on the pair: can the reader read data written with this version (Pulsar BACKWARD)?
    try:
        verdict = pair_verdict(reader, writer, version)
    except RegistryError as exc:
        plan.status, plan.status_detail = "UNPARSEABLE_SCHEMA", str(exc)[:MESSAGE_LIMIT]
        return plan
    plan.compatible = verdict.compatible
    first = verdict.first
    if first is not None:
        plan.rule_code = str(first.code)
        plan.status, plan.status_field, plan.status_detail = str(first.code), first.path or None, first.message
    if writer.type is SchemaType.KEY_VALUE:
        written = decode_key_value(writer)
        read = decode_key_value(reader) if reader.type is SchemaType.KEY_VALUE else None
        plan.codec, plan.encoding = "key_value", written.encoding
        plan.parts = (
            codec_plan(Plan("", version, part="key"), written.key, read.key if read else None),
            codec_plan(Plan("", version, part="value"), written.value, read.value if read else None),
        )
        if plan.status == "ok" and read is not None and read.encoding != written.encoding:
            # The broker never compares encodings (only clients read kv.encoding.type), so the core accepts the
            # pair; a consumer with the reader schema would split the payload its own way.
            plan.status = "KEY_VALUE_ENCODING_CHANGED"
            plan.status_detail = (
                f"written {written.encoding}, read {read.encoding}: the reader's client looks for the key "
                + ("in the message key" if read.encoding == "SEPARATED" else "inside the payload")
            )
        return plan
    codec_plan(plan, writer, reader)
    if not plan.codec and plan.status == "ok":
        plan.status = "UNSUPPORTED_SCHEMA_TYPE"
        plan.status_detail = f"{writer.type} payloads are not decoded by the data audit"
    return plan


def codec_plan(plan: Plan, writer: SchemaData, reader: SchemaData | None) -> Plan:
    """Set how `plan` decodes one schema's payloads (a whole message, or one KEY_VALUE part): the codec, the
    parsed writer and reader, and the fields statistics are kept for. `reader` None, or of another type,
    means the messages are read with the writer alone (the core has already refused such a pair)."""
    same = reader is not None and reader.type is writer.type
    if writer.type in AVRO_TYPES:
        plan.codec = "avro" if writer.type is SchemaType.AVRO else "json"
        # parse_schema's hint marks the result as parsed: without it schemaless_reader re-parses both schemas
        # on every message.
        plan.writer = fastavro.parse_schema(json.loads(writer.data))
        if reader is not None and reader.type in AVRO_TYPES:
            plan.reader = fastavro.parse_schema(json.loads(reader.data))
            plan.fields, plan.enum_fields = reader_fields(reader.data)
        else:
            plan.fields, plan.enum_fields = reader_fields(writer.data)
            plan.resolve = False
    elif writer.type is SchemaType.PROTOBUF_NATIVE:
        from google.protobuf import message_factory

        plan.codec = "protobuf"
        plan.writer = message_factory.GetMessageClass(parse_protobuf_native(writer.data).root)
        if reader is not None and reader.type is SchemaType.PROTOBUF_NATIVE:
            root = parse_protobuf_native(reader.data).root
            plan.reader = message_factory.GetMessageClass(root)
            plan.fields = protobuf_fields(root)
        else:
            plan.resolve = False
    elif writer.type.is_primitive:
        plan.codec, plan.writer = "primitive", writer.type
        plan.reader, plan.resolve = (reader.type, True) if same and reader else (None, False)
        # The consumer decodes a STRING with its own schema's charset.
        plan.text_codec = charset(dict((reader if same and reader else writer).properties))
        plan.fields = [(None, (), primitive_kind(writer.type), str(writer.type))]
    return plan


def reader_fields(data: bytes) -> tuple[list[Field], dict[str, str]]:
    """avro_fields of an Avro schema text, one list per schema per worker: every version read by the same
    reader shares it, so a topic's statistics are computed over all its versions at once."""
    found = _FIELDS.get(data)
    if found is None:
        found = _FIELDS[data] = avro_fields(json.loads(data))
    return found


# --- the reader's fields, for statistics -----------------------------------------------------------------------

_NUMBERS = frozenset({"int", "long", "float", "double"})
_TIMES = frozenset({"date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros",
                    "local-timestamp-millis", "local-timestamp-micros"})  # fmt: skip


def avro_fields(doc: Any) -> tuple[list[Field], dict[str, str]]:
    """(label, path, kind, type) for each field of the record (nested records through nullable unions),
    kind one of number/time/symbol/other; and enum name -> field label."""
    fields: list[Field] = []
    enums: dict[str, str] = {}
    named: dict[str, Any] = {}

    def walk(node: Any, path: tuple[str, ...], depth: int) -> None:
        if isinstance(node, dict) and node.get("type") == "record":
            named[node.get("name", "")] = node
            if depth > 8:
                return
            for f in node.get("fields", []):
                visit(f.get("type"), (*path, f.get("name", "")), depth)

    def visit(node: Any, path: tuple[str, ...], depth: int) -> None:
        label = ".".join(path)
        if isinstance(node, list):
            branches = [b for b in node if b != "null"]
            if len(branches) == 1:
                visit(branches[0], path, depth)
            else:
                fields.append((label, path, "other", "union"))
            return
        if isinstance(node, str) and node in named:
            node = named[node]
        if isinstance(node, dict):
            kind = node.get("type")
            logical = node.get("logicalType")
            if kind == "record":
                walk(node, path, depth + 1)
                return
            if kind == "enum":
                named[node.get("name", "")] = node
                enums[node.get("name", "")] = label
                fields.append((label, path, "symbol", "enum"))
                return
            if logical in _TIMES:
                fields.append((label, path, "time", logical))
                return
            if logical == "decimal":
                fields.append((label, path, "number", "decimal"))
                return
            if isinstance(kind, str) and kind in _NUMBERS:
                fields.append((label, path, "number", kind))
                return
            fields.append((label, path, "symbol" if kind == "boolean" else "other", str(logical or kind)))
            return
        if node in _NUMBERS:
            fields.append((label, path, "number", node))
        elif node == "boolean":
            fields.append((label, path, "symbol", "boolean"))
        else:
            fields.append((label, path, "other", str(node)))

    walk(doc, (), 0)
    return fields, enums


def protobuf_fields(root: Any) -> list[Field]:
    """Top-level fields of the reader's root message (numbers, enums, booleans; others counted only)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    numbers = {
        F.TYPE_DOUBLE, F.TYPE_FLOAT, F.TYPE_INT32, F.TYPE_INT64, F.TYPE_UINT32, F.TYPE_UINT64,
        F.TYPE_SINT32, F.TYPE_SINT64, F.TYPE_FIXED32, F.TYPE_FIXED64, F.TYPE_SFIXED32, F.TYPE_SFIXED64,
    }  # fmt: skip
    fields: list[Field] = []
    for f in root.fields:
        if f.type in numbers:
            kind, label = "number", "number"
        elif f.type in (F.TYPE_ENUM, F.TYPE_BOOL):
            kind, label = "symbol", "enum" if f.type == F.TYPE_ENUM else "bool"
        else:
            kind, label = "other", "message" if f.type == F.TYPE_MESSAGE else "scalar"
        fields.append((f.name, (f.name,), kind, label))
    return fields
