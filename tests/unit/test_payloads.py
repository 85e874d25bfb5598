"""The data audit's reading of primitive and KEY_VALUE messages, without Spark: one partition's audit
(PartitionAudit) over archive rows, and the decoders' refusals in the Java client's words. The JDK itself
checks the byte layouts in tests/spark/test_payloads_java.py."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pyarrow as pa
import pytest

from pipeline import data_audit
from pipeline._data_decode import PartitionAudit
from pipeline._payload import PayloadError, decode_primitive, encode_inline, encode_primitive, split_inline
from registry import CompatibilityStrategy, Registry, SchemaInfo, SchemaType
from registry._schema_data import key_value_schema_info

NS = "acme/kv"
RECORD = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"},
                                                        {"name": "qty", "type": "int"}]}  # fmt: skip
KEY = {"type": "record", "name": "OrderKey", "fields": [{"name": "shop", "type": "string"}]}


def _avro(doc: dict[str, Any], datum: dict[str, Any]) -> bytes:
    import io

    import fastavro

    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(doc), datum)
    return out.getvalue()


def _kv(encoding: str, key: SchemaInfo | None = None) -> SchemaInfo:
    key = key or SchemaInfo(SchemaType.AVRO, json.dumps(KEY))
    return key_value_schema_info(key, SchemaInfo(SchemaType.AVRO, json.dumps(RECORD)), encoding=encoding)


@pytest.fixture
def registry() -> Registry:
    reg = Registry.in_memory()
    reg.create_tenant("acme")
    reg.create_namespace(NS)
    reg.set_namespace_policy(NS, compatibility=CompatibilityStrategy.ALWAYS_COMPATIBLE)
    reg.register(f"{NS}/inline", _kv("INLINE"))
    reg.register(f"{NS}/separated", _kv("SEPARATED"))
    reg.register(f"{NS}/switched", _kv("INLINE"))
    reg.register(f"{NS}/switched", _kv("SEPARATED", SchemaInfo(SchemaType.AVRO, json.dumps({**KEY, "doc": "v1"}))))
    reg.register(f"{NS}/counter", SchemaInfo(SchemaType.INT32))
    reg.register(f"{NS}/moment", SchemaInfo(SchemaType.INSTANT))
    reg.register(f"{NS}/latin", SchemaInfo(SchemaType.STRING, properties={"__charset": "ISO-8859-1"}))
    reg.register(f"{NS}/nocharset", SchemaInfo(SchemaType.STRING, properties={"__charset": "EBCDIC-Klingon"}))
    return reg


def _audit(registry: Registry, rows: list[tuple[str, int, str | None, bytes]]) -> list[dict[str, Any]]:
    topics = sorted({t for t, *_ in rows})
    table = data_audit.schema_table(registry, [f"{NS}/{t}" for t in topics], None)
    batch = pa.RecordBatch.from_pydict(
        {
            "topic": pa.array([f"persistent://{NS}/{t}" for t, *_ in rows], pa.string()),
            "version": pa.array([v for _, v, _, _ in rows], pa.int64()),
            "key": pa.array([k for _, _, k, _ in rows], pa.string()),
            "payload": pa.array([p for *_, p in rows], pa.binary()),
            "payload_base64": pa.array([None] * len(rows), pa.string()),
            "bad": pa.array([None] * len(rows), pa.string()),
        }
    )
    audit = PartitionAudit(table)
    audit.add(batch)
    return audit.rows()


def _of(rows: list[dict[str, Any]], kind: str, topic: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["kind"] == kind and r["topic"] == f"{NS}/{topic}"]


def test_inline_key_values_read_both_parts_and_null_parts(registry: Registry) -> None:
    key, value = _avro(KEY, {"shop": "s1"}), _avro(RECORD, {"id": "o1", "qty": 3})
    rows = _audit(
        registry,
        [
            ("inline", 0, None, encode_inline(key, value)),
            ("inline", 0, None, encode_inline(None, value)),  # a null key: length -1
            ("inline", 0, None, encode_inline(key, None)),
            ("inline", 0, None, encode_inline(key, value)[:-1]),  # value cut short
            ("inline", 0, None, encode_inline(b"\x01", value)),  # key not an OrderKey
        ],
    )
    (version,) = _of(rows, "version", "inline")
    assert (version["count"], version["readable"], version["failed"]) == (5, 3, 2)
    failures = {(r["part"], r["reason"]) for r in _of(rows, "failure", "inline")}
    assert failures == {(None, "CORRUPT_PAYLOAD"), ("key", "CORRUPT_PAYLOAD")}
    stats = {(r["part"], r["field"]): r for r in _of(rows, "stat", "inline")}
    assert (stats[("key", "shop")]["count"], stats[("key", "shop")]["nulls"]) == (3, 1)
    assert (stats[("value", "qty")]["min"], stats[("value", "qty")]["nulls"]) == (3.0, 1)


def test_separated_keys_come_from_the_message_key(registry: Registry) -> None:
    key, value = _avro(KEY, {"shop": "s2"}), _avro(RECORD, {"id": "o2", "qty": 7})
    encoded = base64.b64encode(key).decode()
    rows = _audit(
        registry,
        [
            ("separated", 0, encoded, value),
            ("separated", 0, None, value),  # no key: Pulsar's consumer reads KeyValue(null, value)
            ("separated", 0, "@@@", value),  # a key that is not base64
            ("separated", 0, encoded, encode_inline(key, value)),  # an INLINE payload on a SEPARATED topic
        ],
    )
    (version,) = _of(rows, "version", "separated")
    assert (version["readable"], version["failed"]) == (2, 2)
    assert version["decoded_with"] == "writer+reader"
    failures = {(r["part"], r["reason"]): r["example"] for r in _of(rows, "failure", "separated")}
    assert "is not base64" in failures[("key", "CORRUPT_PAYLOAD")]
    assert ("value", "CORRUPT_PAYLOAD") in failures
    shop = next(r for r in _of(rows, "stat", "separated") if r["field"] == "shop")
    assert (shop["part"], shop["count"], shop["nulls"]) == ("key", 2, 1)


def test_a_reader_with_another_encoding_cannot_split_the_message(registry: Registry) -> None:
    key, value = _avro(KEY, {"shop": "s3"}), _avro(RECORD, {"id": "o3", "qty": 1})
    rows = _audit(registry, [("switched", 0, None, encode_inline(key, value)), ("switched", 0, None, b"\x00")])
    (version,) = _of(rows, "version", "switched")
    # the broker accepts the pair (it never reads kv.encoding.type); the reader's client cannot split it
    assert version["compatible"] is True and version["readable"] == 0
    reasons = {r["reason"]: r["example"] for r in _of(rows, "failure", "switched")}
    assert "written INLINE, read SEPARATED" in reasons["KEY_VALUE_ENCODING_CHANGED"]
    assert "INLINE payload of 1 bytes" in reasons["CORRUPT_PAYLOAD"]  # damage is named before the pair


def test_primitive_topics_are_decoded_and_refused_as_the_java_client_does(registry: Registry) -> None:
    rows = _audit(
        registry,
        [
            ("counter", 0, None, encode_primitive(SchemaType.INT32, -5)),
            ("counter", 0, None, encode_primitive(SchemaType.INT32, 70)),
            ("counter", 0, None, b"\x00\x00\x00\x00\x01"),
            ("moment", 0, None, struct.pack(">qi", 1_700_000_000, 250_000_000)),
            ("moment", 0, None, struct.pack(">qi", 1_700_000_000, 0) + b"extra"),  # InstantSchema ignores it
            ("moment", 0, None, b"\x00" * 11),
            ("latin", 0, None, "Zürich".encode("latin-1")),
            ("nocharset", 0, None, b"text"),
        ],
    )
    counter = next(r for r in _of(rows, "stat", "counter"))
    assert (counter["field"], counter["type"], counter["min"], counter["max"]) == (None, "INT32", -5.0, 70.0)
    (failure,) = _of(rows, "failure", "counter")
    assert failure["example"] == "Size of data received by IntSchema is not 4 (5 bytes)"
    moment = next(r for r in _of(rows, "stat", "moment"))
    assert (moment["min_time"], moment["max_time"]) == ("2023-11-14T22:13:20+00:00", "2023-11-14T22:13:20.250000+00:00")
    assert [r["example"] for r in _of(rows, "failure", "moment")] == [
        "BufferUnderflowException: INSTANT needs 12 bytes, got 11"
    ]
    assert next(r for r in _of(rows, "version", "latin"))["readable"] == 1
    (unparseable,) = _of(rows, "failure", "nocharset")
    assert unparseable["reason"] == "UNPARSEABLE_SCHEMA" and "EBCDIC-Klingon" in unparseable["example"]


@pytest.mark.parametrize(
    ("kind", "size", "schema"),
    [(SchemaType.INT8, 1, "ByteSchema"), (SchemaType.INT16, 2, "ShortSchema"), (SchemaType.INT64, 8, "LongSchema"),
     (SchemaType.FLOAT, 4, "FloatSchema"), (SchemaType.DOUBLE, 8, "DoubleSchema"),
     (SchemaType.BOOLEAN, 1, "BooleanSchema"), (SchemaType.DATE, 8, "LongSchema"),
     (SchemaType.LOCAL_TIME, 8, "LongSchema")],
)  # fmt: skip
def test_fixed_width_values_of_another_size_are_refused(kind: SchemaType, size: int, schema: str) -> None:
    with pytest.raises(PayloadError, match=f"Size of data received by {schema} is not {size}"):
        decode_primitive(kind, b"\x00" * (size + 1))


def test_strings_never_fail_and_bytes_pass_through() -> None:
    assert decode_primitive(SchemaType.STRING, b"ok \xff") == "ok \ufffd"  # Java's new String replaces
    assert decode_primitive(SchemaType.BYTES, b"\x00\xff") == b"\x00\xff"
    assert decode_primitive(SchemaType.NONE, b"") == b""
    assert decode_primitive(SchemaType.BOOLEAN, b"\x07") is True  # any non-zero byte


def test_inline_framing_errors_name_the_part() -> None:
    with pytest.raises(PayloadError, match="ends before the value length"):
        split_inline(struct.pack(">i", 0))
    with pytest.raises(PayloadError, match="key length -2 does not fit"):
        split_inline(struct.pack(">i", -2))
    assert split_inline(encode_inline(None, None)) == (None, None)
