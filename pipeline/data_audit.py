"""`audit data --messages DIR [--reader FILE --topic T]`: can the reader schema read every stored message?

Each message (archive row: topic, writer schema version, payload) is decoded with its writer schema and
resolved to the topic's reader schema: the latest live version, or a candidate schema file for one topic.

- The core decides compatibility: the (reader, writer version) pair is checked by `registry/` (Pulsar's
  BACKWARD check of the pair). If the core refuses the pair, each of that version's messages is a failure
  with the core's rule code and path; nothing is re-decided here.
- fastavro decodes: AVRO payloads with `schemaless_reader(writer, reader)` (Avro resolution); JSON payloads
  (UTF-8 JSON text, as Pulsar's JSON schema writes them) are parsed, checked against the writer schema by
  encoding them with it, then resolved the same way; PROTOBUF_NATIVE payloads are parsed with the writer's
  and then the reader's root message (protobuf wire compatibility).
- Primitive payloads (BOOLEAN, INT8..DOUBLE, STRING, BYTES, NONE, DATE, TIME, TIMESTAMP, INSTANT,
  LOCAL_DATE, LOCAL_TIME, LOCAL_DATE_TIME) are decoded as Pulsar's Java client encodes them, and refused
  where it refuses them (pipeline/_payload.py). KEY_VALUE messages are split as the writer's encoding says
  (INLINE: both parts in the payload; SEPARATED: the key in the message key, base64) and each part is read
  with its own codec; failures and statistics name the part ("key" or "value", null for other topics). A
  reader whose KEY_VALUE encoding differs from the writer's cannot split the message
  (KEY_VALUE_ENCODING_CHANGED), though the broker accepts the pair: it never reads kv.encoding.type.
- Data-level failures the schema check cannot see are counted too: enum symbols the reader lacks
  (ENUM_SYMBOL_UNKNOWN), payloads that do not decode with their writer schema (CORRUPT_PAYLOAD), protobuf
  payloads the reader's message cannot parse (WIRE_INCOMPATIBLE).
- Where Pulsar's rules accept a pair that fastavro's resolution refuses (e.g. a renamed record), the core's
  verdict wins: the messages are decoded with the writer schema alone and counted as readable
  (`decoded_with = "writer"` in data_versions).

Failure reasons: BAD_ROW (malformed archive row), UNKNOWN_TOPIC, UNKNOWN_VERSION (not a live version),
UNSUPPORTED_SCHEMA_TYPE (PROTOBUF and EXTERNAL payloads: the registry holds no descriptor to read them
with), UNPARSEABLE_SCHEMA, CORRUPT_PAYLOAD, ENUM_SYMBOL_UNKNOWN, WIRE_INCOMPATIBLE,
KEY_VALUE_ENCODING_CHANGED, READ_ERROR (any other decode error), or a core RuleCode
(e.g. READER_FIELD_WITHOUT_DEFAULT, TYPE_MISMATCH, SCHEMA_TYPE_CHANGED) when the core refuses the pair.

Field statistics describe the data as the reader sees it (after resolution), per topic, part and field
path (nested records joined with "."; null for a primitive value): how many values, how many nulls,
numeric ranges, date/time ranges, and the count of each enum symbol and boolean value, so a planned
change (make a field required, drop a symbol, narrow a type) can be checked against the data already
stored.

Tables (Parquet under OUT/):
  data_versions: topic, writer_version, reader_version, reader, schema_type, compatible, rule_code,
                 decoded_with, messages, readable, failed
  data_failures: topic, writer_version, part, field, reason, count, example
  data_field_stats: topic, part, field, type, values, nulls, null_rate, min, max, min_time, max_time
  data_enum_counts: topic, part, field, symbol, count
(`reader` is "latest" or "candidate"; writer_version is null for rows that name no usable version.)
"""

from __future__ import annotations

import binascii
import io
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time
from decimal import Decimal
from functools import partial
from typing import Any

import fastavro
import pyarrow as pa
from fastavro.read import SchemaResolutionError

from registry import (
    RegistryError,
    SchemaData,
    SchemaType,
    TopicName,
    answering_as,
    decode_key_value,
    pair_verdict,
    parse_protobuf_native,
)

from ._arrow import batches, schema
from ._payload import PayloadError, charset, decode_primitive, primitive_kind, separated_key, split_inline, time_text

MESSAGE_LIMIT = 300
Field = tuple[str | None, tuple[str, ...], str, str]
"""A field statistics are kept for: label (None for a primitive value), path, kind, type name."""
AVRO_TYPES = frozenset({SchemaType.AVRO, SchemaType.JSON})

OUTPUT = schema(
    ("kind", pa.string()), ("topic", pa.string()), ("writer_version", pa.int64()), ("part", pa.string()),
    ("field", pa.string()),
    ("reason", pa.string()), ("count", pa.int64()), ("example", pa.string()), ("type", pa.string()),
    ("nulls", pa.int64()), ("min", pa.float64()), ("max", pa.float64()), ("min_time", pa.string()),
    ("max_time", pa.string()), ("symbol", pa.string()), ("reader_version", pa.int64()), ("reader", pa.string()),
    ("schema_type", pa.string()), ("compatible", pa.bool_()), ("rule_code", pa.string()),
    ("decoded_with", pa.string()), ("readable", pa.int64()), ("failed", pa.int64()),
)  # fmt: skip


# --- what the driver ships to executors ---------------------------------------------------------------------


def schema_table(registry: Any, topics: list[str], candidate: tuple[str, SchemaData] | None) -> dict[str, Any]:
    """Per schema id: the live versions (type, data, properties) and the reader, from the core's registry.

    `candidate` = (schema id, schema) replaces the reader of that topic."""
    import uuid

    table: dict[str, Any] = {"_token": uuid.uuid4().hex, "_pulsar_version": registry.pulsar_version}
    for topic in topics:
        name = TopicName.parse(topic)
        live = registry.history(topic)
        if not live:
            continue
        versions = {e.version: (str(e.type), e.data, dict(e.properties)) for e in live}
        latest = live[-1]
        reader: tuple[int | None, str, bytes, dict[str, str], str] = (
            latest.version,
            str(latest.type),
            latest.data,
            dict(latest.properties),
            "latest",
        )
        if candidate is not None and candidate[0] == name.schema_id:
            cand = candidate[1]
            reader = (None, str(cand.type), cand.data, dict(cand.properties), "candidate")
        table[name.schema_id] = {"versions": versions, "reader": reader}
    return table


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
_PLANS: dict[str, dict[tuple[str, int], Plan]] = {}  # per schema table (its token): (topic, version) -> plan


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
    fields = []
    for f in root.fields:
        if f.type in numbers:
            kind, label = "number", "number"
        elif f.type in (F.TYPE_ENUM, F.TYPE_BOOL):
            kind, label = "symbol", "enum" if f.type == F.TYPE_ENUM else "bool"
        else:
            kind, label = "other", "message" if f.type == F.TYPE_MESSAGE else "scalar"
        fields.append((f.name, (f.name,), kind, label))
    return fields


# --- per partition of messages ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """Failures counted per (topic, version, KEY_VALUE part, field, reason), with the first example."""

    failures: dict[tuple[str | None, int | None, str | None, str | None, str], list[Any]] = field(default_factory=dict)

    def fail(
        self, topic: str | None, version: int | None, part: str | None, fld: str | None, reason: str, example: str
    ) -> None:
        key = (topic, version, part, fld, reason)
        slot = self.failures.get(key)
        if slot is None:
            self.failures[key] = [1, example[:MESSAGE_LIMIT]]
        else:
            slot[0] += 1


class PartitionAudit:
    """One partition's running totals. Arrow batches of archive rows go in (`add`); messages are grouped per
    (topic, writer version) and decoded with that pair's cached plan; counts, failures and field statistics
    accumulate across batches, and `rows()` gives one summary row per key at the end of the partition (Spark
    only reduces these small partials)."""

    def __init__(self, table: Mapping[str, Any]) -> None:
        self.table = table
        self.plans = _PLANS.setdefault(str(table.get("_token", id(table))), {})
        self.names: dict[str, str | None] = {}
        self.tally = Tally()
        self.versions: dict[tuple[str, int], list[int]] = {}  # -> [messages, readable, failed]
        # Readable datums waiting for statistics, per (topic, field list): all versions read by one reader
        # share a field list, so each topic's statistics are computed over large slices.
        # Keyed (topic, part, field list or plan); KEY_VALUE keys and values wait in their parts' slots.
        self.pending: dict[tuple[str, str | None, int], tuple[str, Plan, list[Any]]] = {}
        self.pending_count = 0
        # (topic, part, field, type) -> [values, nulls, min, max, min_time, max_time]
        self.stats: dict[tuple[str, str | None, str | None, str], list[Any]] = {}
        self.symbols: Counter[tuple[str, str | None, str | None, str]] = Counter()

    def schema_id(self, topic: str) -> str | None:
        if topic not in self.names:
            try:
                self.names[topic] = TopicName.parse(topic).schema_id
            except RegistryError:
                self.names[topic] = None
        return self.names[topic]

    def add(self, batch: pa.RecordBatch) -> None:
        """One Arrow batch of archive rows (topic, version, key, payload, payload_base64, bad)."""
        rows = batch.num_rows
        clean = (
            batch.column("bad").null_count == rows
            and batch.column("payload_base64").null_count == rows
            and batch.column("topic").null_count == 0
            and batch.column("version").null_count == 0
            and batch.column("payload").null_count == 0
        )
        if not clean:
            columns = ("topic", "version", "key", "payload", "payload_base64", "bad")
            self.add_rows(*(batch.column(c).to_pylist() for c in columns))
            return
        # Rows of a Parquet archive: grouped in Arrow (C++), not row by row in Python; message keys only where
        # there are some (SEPARATED KEY_VALUE topics).
        keyed = batch.column("key").null_count < rows
        grouped = (
            pa.Table.from_batches([batch.select(["topic", "version", "key", "payload"])])
            .group_by(["topic", "version"], use_threads=False)
            .aggregate([("payload", "list"), *([("key", "list")] if keyed else [])])
        )
        topics = grouped.column("topic").to_pylist()
        versions = grouped.column("version").to_pylist()
        payload_lists = grouped.column("payload_list").to_pylist()
        key_lists = grouped.column("key_list").to_pylist() if keyed else [None] * len(topics)
        for topic, version, payloads, keys in zip(topics, versions, payload_lists, key_lists, strict=True):
            schema_id = self.schema_id(topic)
            if schema_id is None:
                for _ in payloads:
                    self.tally.fail(topic, version, None, None, "BAD_ROW", f"invalid topic name {topic!r}")
                continue
            self.add_group(schema_id, version, payloads, keys)

    def add_rows(
        self,
        topics: list[Any],
        versions: list[Any],
        keys: list[Any],
        payloads: list[Any],
        encoded: list[Any],
        bad: list[Any],
    ) -> None:
        """Rows one by one: JSON-lines archives (base64 payloads) and batches with malformed rows."""
        groups: dict[tuple[str, int], tuple[list[bytes], list[str | None]]] = {}
        rows = zip(topics, versions, keys, payloads, encoded, bad, strict=True)
        for topic, version, key, payload, text, corrupt in rows:
            schema_id = self.schema_id(topic) if topic is not None else None
            if corrupt is not None or schema_id is None or version is None:
                reason = (
                    "not a JSON object with topic, version and payload"
                    if corrupt is not None
                    else "no topic"
                    if topic is None
                    else f"invalid topic name {topic!r}"
                    if schema_id is None
                    else "no version"
                )
                self.tally.fail(schema_id or topic, version, None, None, "BAD_ROW", reason)
                continue
            if payload is None:
                if text is None:
                    self.tally.fail(schema_id, version, None, None, "BAD_ROW", "no payload")
                    continue
                try:
                    payload = binascii.a2b_base64(text, strict_mode=True)
                except (binascii.Error, ValueError) as exc:
                    self.tally.fail(schema_id, version, None, None, "BAD_ROW", f"payload is not base64: {exc}")
                    continue
            group = groups.get((schema_id, version))
            if group is None:
                group = groups[(schema_id, version)] = ([], [])
            group[0].append(payload)
            group[1].append(key)
        for (schema_id, version), (group_payloads, group_keys) in groups.items():
            self.add_group(schema_id, version, group_payloads, group_keys)

    def add_group(
        self, schema_id: str, version: int, payloads: list[bytes], keys: list[str | None] | None = None
    ) -> None:
        key = (schema_id, version)
        plan = self.plans.get(key)
        if plan is None:
            plan = self.plans[key] = make_plan(self.table, schema_id, version)
        datums = decode_group(plan, payloads, self.tally, keys)
        counts = self.versions.get(key)
        if counts is None:
            counts = self.versions[key] = [0, 0, 0]
        counts[0] += len(payloads)
        counts[1] += len(datums)
        counts[2] += len(payloads) - len(datums)
        if not datums:
            return
        if plan.parts is not None:
            key_plan, value_plan = plan.parts
            self.hold(plan.topic, key_plan, [k for k, _ in datums])
            self.hold(plan.topic, value_plan, [v for _, v in datums])
        else:
            self.hold(plan.topic, plan, datums)
        if self.pending_count >= BUFFER_ROWS:
            self.fold_stats()

    def hold(self, topic: str, plan: Plan, datums: list[Any]) -> None:
        """Keep datums read by `plan` for the topic's statistics (folded in large slices)."""
        if not plan.fields:
            return
        # protobuf messages are read by their own plan's classes: never mixed with another plan's
        slot_key = (topic, plan.part, id(plan) if plan.codec == "protobuf" else id(plan.fields))
        slot = self.pending.get(slot_key)
        if slot is None:
            slot = self.pending[slot_key] = (topic, plan, [])
        slot[2].extend(datums)
        self.pending_count += len(datums)

    def fold_stats(self) -> None:
        for topic, plan, datums in self.pending.values():
            fold_field_stats(topic, plan, datums, self.stats, self.symbols)
        self.pending.clear()
        self.pending_count = 0

    def rows(self) -> list[dict[str, Any]]:
        self.fold_stats()
        rows: list[dict[str, Any]] = []
        for (topic, version), (messages, readable, failed) in self.versions.items():
            plan = self.plans[(topic, version)]
            rows.append(
                {
                    "kind": "version",
                    "topic": plan.topic,
                    "writer_version": plan.version,
                    "reader_version": plan.reader_version,
                    "reader": plan.reader_label,
                    "schema_type": plan.schema_type,
                    "compatible": plan.compatible,
                    "rule_code": plan.rule_code,
                    "decoded_with": _decoded_with(plan),
                    "count": messages,
                    "readable": readable,
                    "failed": failed,
                }
            )
        for (topic, version, part, fld, reason), (count, example) in self.tally.failures.items():
            rows.append(
                {
                    "kind": "failure",
                    "topic": topic,
                    "writer_version": version,
                    "part": part,
                    "field": fld,
                    "reason": reason,
                    "count": count,
                    "example": example,
                }
            )
        for (topic, part, label, type_name), (values, nulls, low, high, first, last) in self.stats.items():
            rows.append(
                {
                    "kind": "stat",
                    "topic": topic,
                    "part": part,
                    "field": label,
                    "type": type_name,
                    "count": values,
                    "nulls": nulls,
                    "min": low,
                    "max": high,
                    "min_time": first,
                    "max_time": last,
                }
            )
        for (topic, part, label, symbol), count in self.symbols.items():
            rows.append(
                {"kind": "symbol", "topic": topic, "part": part, "field": label, "symbol": symbol, "count": count}
            )
        return rows


def _decoded_with(plan: Plan) -> str | None:
    if plan.status != "ok" or not plan.codec:
        return None
    readers = plan.parts if plan.parts is not None else (plan,)
    return "writer+reader" if all(p.resolve and p.reader is not None for p in readers) else "writer"


class Undecodable(Exception):
    """Why one message (or one part of it) cannot be read: a failure reason, its field, and the detail."""

    def __init__(self, reason: str, detail: str, fld: str | None = None, part: str | None = None) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.field, self.part = reason, detail, fld, part


def decode_group(plan: Plan, payloads: list[bytes], tally: Tally, keys: list[str | None] | None = None) -> list[Any]:
    """The readable datums of one (topic, version) group; each failure goes to the tally with its reason.
    `keys` are the messages' keys (SEPARATED KEY_VALUE keys travel there); a KEY_VALUE datum is a (key,
    value) pair."""
    topic, version = plan.topic, plan.version
    if keys is None:
        keys = [None] * len(payloads)
    if plan.status != "ok":
        part = _status_part(plan)
        for payload, key in zip(payloads, keys, strict=True):
            try:
                if plan.codec:
                    decode_payload(plan, payload, key, writer_only=True)
            except Undecodable as broken:  # damaged data says more than the refused pair
                tally.fail(topic, version, broken.part, broken.field, "CORRUPT_PAYLOAD", broken.detail)
                continue
            tally.fail(topic, version, part, plan.status_field, plan.status, plan.status_detail or plan.status)
        return []
    if plan.codec == "protobuf":
        return _decode_protobuf(plan, payloads, tally)
    if plan.codec == "avro":
        return _decode_avro_group(plan, payloads, tally)
    datums = []
    for payload, key in zip(payloads, keys, strict=True):
        try:
            datums.append(decode_payload(plan, payload, key))
        except Undecodable as failed:
            tally.fail(topic, version, failed.part, failed.field, failed.reason, failed.detail)
    return datums


def _decode_avro_group(plan: Plan, payloads: list[bytes], tally: Tally) -> list[Any]:
    """AVRO messages, the bulk of most archives: fastavro in a tight loop; a message it refuses is decoded
    again through decode_payload, which names the reason (and may switch the plan to the writer alone)."""
    datums = []
    reader = plan.reader if plan.resolve else None
    writer = plan.writer
    for payload in payloads:
        buffer = io.BytesIO(payload)
        try:
            datum = fastavro.schemaless_reader(buffer, writer, reader)
            if buffer.tell() != len(payload):
                raise ValueError("bytes left over")
        except Exception:  # noqa: BLE001 - the reason comes from decode_payload below
            try:
                datums.append(decode_payload(plan, payload))
            except Undecodable as failed:
                tally.fail(plan.topic, plan.version, failed.part, failed.field, failed.reason, failed.detail)
            reader = plan.reader if plan.resolve else None
            continue
        datums.append(datum)
    return datums


def _status_part(plan: Plan) -> str | None:
    """The KEY_VALUE part a refused pair's problem is in, from its path (/key/... or /value/...)."""
    if plan.codec != "key_value" or not plan.status_field:
        return None
    head = plan.status_field.strip("/").split("/", 1)[0]
    return head if head in ("key", "value") else None


def decode_payload(plan: Plan, payload: bytes, key: str | None = None, *, writer_only: bool = False) -> Any:
    """One message read as the reader's client reads it (or with its writer schema alone); Undecodable
    says why not. AVRO and JSON through fastavro, primitives and KEY_VALUE framing as the Java client does
    (pipeline/_payload.py)."""
    codec = plan.codec
    try:
        if codec == "key_value":
            assert plan.parts is not None
            key_plan, value_plan = plan.parts
            key_bytes: bytes | None
            value_bytes: bytes | None
            if plan.encoding == "SEPARATED":
                try:
                    key_bytes, value_bytes = separated_key(key), payload
                except PayloadError as exc:
                    raise Undecodable("CORRUPT_PAYLOAD", str(exc), part="key") from None
            else:
                key_bytes, value_bytes = split_inline(payload)
            return (
                None if key_bytes is None else decode_payload(key_plan, key_bytes, writer_only=writer_only),
                None if value_bytes is None else decode_payload(value_plan, value_bytes, writer_only=writer_only),
            )
        if codec == "primitive":
            return decode_primitive(plan.writer, payload, plan.text_codec)
        if codec == "protobuf":
            return plan.writer.FromString(payload)
    except PayloadError as exc:
        raise Undecodable("CORRUPT_PAYLOAD", str(exc), part=plan.part) from None
    except Undecodable:
        raise
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends: counted, never fatal
        raise Undecodable("CORRUPT_PAYLOAD", f"{type(exc).__name__}: {exc}", part=plan.part) from None
    return _decode_avro(plan, payload, writer_only)


def _decode_avro(plan: Plan, payload: bytes, writer_only: bool) -> Any:
    """An AVRO (binary) or JSON (text) payload, resolved to the reader where there is one."""
    if plan.codec == "json":
        try:
            out = io.BytesIO()
            fastavro.schemaless_writer(out, plan.writer, json.loads(payload))  # checked against the writer
        except Exception as exc:  # noqa: BLE001 - JSONDecodeError, ValueError, TypeError...: counted
            not_json = isinstance(exc, ValueError) and "Expecting" in str(exc)
            what = "not JSON" if not_json else "does not match the writer"
            raise Undecodable("CORRUPT_PAYLOAD", f"{what}: {type(exc).__name__}: {exc}", part=plan.part) from None
        payload = out.getvalue()
    return _read_avro(plan, payload, None if writer_only or not plan.resolve else plan.reader)


def _read_avro(plan: Plan, payload: bytes, reader: Any) -> Any:
    buffer = io.BytesIO(payload)
    try:
        datum = fastavro.schemaless_reader(buffer, plan.writer, reader)
    except SchemaResolutionError as exc:
        text = str(exc)
        if "not found in reader symbol list" in text:
            enum = text.split("reader symbol list ", 1)[1].split(",", 1)[0].strip()
            fld = plan.enum_fields.get(enum) or plan.enum_fields.get(enum.rsplit(".", 1)[-1])
            raise Undecodable("ENUM_SYMBOL_UNKNOWN", text, fld, plan.part) from None
        if reader is None:
            raise Undecodable("READ_ERROR", text, part=plan.part) from None
        # Pulsar's rules accepted this pair (the core said so) but fastavro's resolution refuses it: the core
        # wins, so this topic's messages are decoded with the writer alone from now on (module docstring).
        plan.resolve = False
        plan.fields, plan.enum_fields = avro_fields(plan.writer)
        return _read_avro(plan, payload, None)
    except Exception as exc:  # noqa: BLE001 - EOFError, ValueError, UnicodeDecodeError... all counted
        raise Undecodable("CORRUPT_PAYLOAD", f"{type(exc).__name__}: {exc}", part=plan.part) from None
    if buffer.tell() != len(payload):
        raise Undecodable("CORRUPT_PAYLOAD", f"{len(payload) - buffer.tell()} bytes left over", part=plan.part)
    return datum


def _decode_protobuf(plan: Plan, payloads: list[bytes], tally: Tally) -> list[Any]:
    from google.protobuf.message import DecodeError

    datums = []
    for payload in payloads:
        try:
            message = plan.writer.FromString(payload)
        except (DecodeError, ValueError) as exc:
            tally.fail(plan.topic, plan.version, None, None, "CORRUPT_PAYLOAD", f"{type(exc).__name__}: {exc}")
            continue
        if plan.resolve and plan.reader is not None:
            try:
                message = plan.reader.FromString(payload)
            except (DecodeError, ValueError) as exc:
                tally.fail(plan.topic, plan.version, None, None, "WIRE_INCOMPATIBLE", f"{type(exc).__name__}: {exc}")
                continue
        datums.append(message)
    return datums


# --- statistics ------------------------------------------------------------------------------------------------


def fold_field_stats(
    topic: str,
    plan: Plan,
    datums: list[Any],
    stats: dict[tuple[str, str | None, str | None, str], list[Any]],
    symbols: Counter[tuple[str, str | None, str | None, str]],
) -> None:
    """Fold the statistics of these datums (read by `plan`) into the running totals: per (topic, part,
    field, type) [values, nulls, min, max, min_time, max_time]; per (topic, part, field, symbol) a count. A
    primitive value (a primitive topic, or a primitive KEY_VALUE part) is one field with no name."""
    protobuf = plan.codec == "protobuf"
    part = plan.part
    for label, path, kind, type_name in plan.fields:
        if not path:
            values = datums
        else:
            values = _protobuf_column(datums, path[0]) if protobuf else _column(datums, path)
        nulls = values.count(None)
        present = values if not nulls else [v for v in values if v is not None]
        key = (topic, part, label, type_name)
        total = stats.get(key)
        if total is None:
            total = stats[key] = [0, 0, None, None, None, None]
        total[0] += len(values)
        total[1] += nulls
        if present and kind == "number":
            numbers = [float(v) for v in present] if type_name == "decimal" else present
            _widen(total, 2, float(min(numbers)), float(max(numbers)))
        elif present and kind == "time":
            iso = partial(time_text, SchemaType(type_name)) if plan.codec == "primitive" else _iso
            _widen(total, 4, iso(min(present)), iso(max(present)))
        elif kind == "symbol":
            for symbol, count in Counter(present).items():
                text = ("true" if symbol else "false") if isinstance(symbol, bool) else str(symbol)
                symbols[(topic, part, label, text)] += count


def _widen(total: list[Any], at: int, low: Any, high: Any) -> None:
    if total[at] is None or low < total[at]:
        total[at] = low
    if total[at + 1] is None or high > total[at + 1]:
        total[at + 1] = high


def _column(datums: list[Any], path: tuple[str, ...]) -> list[Any]:
    first, *rest = path
    try:
        values = [d.get(first) for d in datums]  # record datums are dicts: the common case, without a check
    except AttributeError:
        values = [d.get(first) if isinstance(d, dict) else None for d in datums]
    for name in rest:
        values = [v.get(name) if isinstance(v, dict) else None for v in values]
    return values


def _protobuf_column(messages: list[Any], name: str) -> list[Any]:
    if not messages:
        return []
    descriptor = messages[0].DESCRIPTOR.fields_by_name[name]
    if descriptor.has_presence:
        values = [getattr(m, name) if m.HasField(name) else None for m in messages]
    else:
        values = [getattr(m, name) for m in messages]
    if descriptor.enum_type is not None:
        names = {v.number: v.name for v in descriptor.enum_type.values}
        values = [None if v is None else names.get(v, str(v)) for v in values]
    if descriptor.message_type is not None:
        values = [None if v is None else "set" for v in values]
    return values


def _iso(value: Any) -> str:
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


BUFFER_ROWS = 50_000  # readable datums held for statistics before they are folded into the totals


def make_mapper(shared: Any) -> Any:
    """The mapInArrow function over archive rows (topic, version, key, payload, payload_base64, bad); `shared` is
    the schema table or a Spark broadcast of it. Each partition emits one summary row per (topic, version),
    failure key, field and symbol."""

    def run(inputs: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = getattr(shared, "value", shared)
        audit = PartitionAudit(table)
        # The registry's Pulsar line for the checks and parses below (they call the core directly).
        with answering_as(table.get("_pulsar_version")):
            for batch in inputs:
                audit.add(batch)
            rows = audit.rows()
        yield from batches(rows, OUTPUT)

    return run


# --- on the driver: the partitions' partial rows, reduced into the four tables -------------------------------

TABLE_COLUMNS = {
    "data_versions": ["topic", "writer_version", "reader_version", "reader", "schema_type", "compatible",
                      "rule_code", "decoded_with", "messages", "readable", "failed"],
    "data_failures": ["topic", "writer_version", "part", "field", "reason", "count", "example"],
    "data_field_stats": ["topic", "part", "field", "type", "values", "nulls", "null_rate", "min", "max",
                         "min_time", "max_time"],
    "data_enum_counts": ["topic", "part", "field", "symbol", "count"],
}  # fmt: skip


def reduce_partials(partials: pa.Table) -> dict[str, pa.Table]:
    """The four tables from every partition's summary rows (a few thousand rows per partition: reduced on the
    driver in Arrow instead of by four Spark shuffles)."""
    import pyarrow.compute as pc

    def of(kind: str) -> pa.Table:
        return partials.filter(pc.equal(partials.column("kind"), kind))

    def reduce(kind: str, keys: list[str], aggregations: list[tuple[str, str, str]]) -> pa.Table:
        grouped = of(kind).group_by(keys, use_threads=False).aggregate([(c, f) for c, f, _ in aggregations])
        return grouped.rename_columns(keys + [name for _, _, name in aggregations])

    versions = reduce(
        "version",
        ["topic", "writer_version"],
        [("reader_version", "first", "reader_version"), ("reader", "first", "reader"),
         ("schema_type", "first", "schema_type"), ("compatible", "first", "compatible"),
         ("rule_code", "first", "rule_code"), ("decoded_with", "min", "decoded_with"),
         ("count", "sum", "messages"), ("readable", "sum", "readable"), ("failed", "sum", "failed")],
    )  # fmt: skip
    failures = reduce(
        "failure",
        ["topic", "writer_version", "part", "field", "reason"],
        [("count", "sum", "count"), ("example", "min", "example")],
    )
    stats = reduce(
        "stat",
        ["topic", "part", "field", "type"],
        [("count", "sum", "values"), ("nulls", "sum", "nulls"), ("min", "min", "min"), ("max", "max", "max"),
         ("min_time", "min", "min_time"), ("max_time", "max", "max_time")],
    )  # fmt: skip
    stats = stats.append_column(
        "null_rate", pc.divide(pc.cast(stats.column("nulls"), pa.float64()), stats.column("values"))
    )
    symbols = reduce("symbol", ["topic", "part", "field", "symbol"], [("count", "sum", "count")])
    tables = {"data_versions": versions, "data_failures": failures, "data_field_stats": stats,
              "data_enum_counts": symbols}  # fmt: skip
    return {name: tables[name].select(columns) for name, columns in TABLE_COLUMNS.items()}
