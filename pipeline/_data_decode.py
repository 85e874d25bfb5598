"""The data audit per partition of archive rows: each message decoded with its writer schema and resolved to the
reader's (fastavro, protobuf, Pulsar's primitive encodings), failures counted by reason, readable datums kept
for statistics (pipeline/data_audit.py).
"""

from __future__ import annotations

import binascii
import io
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fastavro
import pyarrow as pa
from fastavro.read import SchemaResolutionError

from registry import (
    RegistryError,
    TopicName,
)

from ._data_plan import MESSAGE_LIMIT, PLANS, Plan, avro_fields, make_plan
from ._data_stats import fold_field_stats
from ._payload import PayloadError, decode_primitive, separated_key, split_inline

BUFFER_ROWS = 50_000  # readable datums held for statistics before they are folded into the totals
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
        self.plans = PLANS.setdefault(str(table.get("_token", id(table))), {})
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
        for (failed_topic, failed_version, part, fld, reason), (count, example) in self.tally.failures.items():
            rows.append(
                {
                    "kind": "failure",
                    "topic": failed_topic,
                    "writer_version": failed_version,
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


class UndecodableError(Exception):
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
            except UndecodableError as broken:  # damaged data says more than the refused pair
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
        except UndecodableError as failed:
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
            except UndecodableError as failed:
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
    """One message read as the reader's client reads it (or with its writer schema alone); UndecodableError
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
                    raise UndecodableError("CORRUPT_PAYLOAD", str(exc), part="key") from None
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
        raise UndecodableError("CORRUPT_PAYLOAD", str(exc), part=plan.part) from None
    except UndecodableError:
        raise
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends: counted, never fatal
        raise UndecodableError("CORRUPT_PAYLOAD", f"{type(exc).__name__}: {exc}", part=plan.part) from None
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
            raise UndecodableError("CORRUPT_PAYLOAD", f"{what}: {type(exc).__name__}: {exc}", part=plan.part) from None
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
            raise UndecodableError("ENUM_SYMBOL_UNKNOWN", text, fld, plan.part) from None
        if reader is None:
            raise UndecodableError("READ_ERROR", text, part=plan.part) from None
        # Pulsar's rules accepted this pair (the core said so) but fastavro's resolution refuses it: the core
        # wins, so this topic's messages are decoded with the writer alone from now on (module docstring).
        plan.resolve = False
        plan.fields, plan.enum_fields = avro_fields(plan.writer)
        return _read_avro(plan, payload, None)
    except Exception as exc:  # noqa: BLE001 - EOFError, ValueError, UnicodeDecodeError... all counted
        raise UndecodableError("CORRUPT_PAYLOAD", f"{type(exc).__name__}: {exc}", part=plan.part) from None
    if buffer.tell() != len(payload):
        raise UndecodableError("CORRUPT_PAYLOAD", f"{len(payload) - buffer.tell()} bytes left over", part=plan.part)
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
