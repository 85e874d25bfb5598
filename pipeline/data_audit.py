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

This module is what the job runs: the table shipped to executors, the mapper over archive rows and the
reduction of the partitions' partial rows; the plans are in _data_plan.py, decoding per partition in
_data_decode.py and field statistics in _data_stats.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from registry import TopicName
from registry._pulsar_version import answering_as
from registry._types import SchemaData

from ._arrow import batches, schema
from ._data_decode import PartitionAudit

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
