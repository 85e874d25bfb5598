"""Message payloads as Pulsar's Java client writes them, for the types fastavro and protobuf do not read:
the primitive schemas and the KEY_VALUE framing (pulsar-client, org.apache.pulsar.client.impl.schema).

Primitives: BOOLEAN one byte (non-zero is true), INT8/INT16/INT32/INT64 and FLOAT/DOUBLE big-endian of
their width, DATE/TIME/TIMESTAMP an INT64 of epoch milliseconds, LOCAL_DATE an INT64 epoch day, LOCAL_TIME an
INT64 nano of day, INSTANT 12 bytes (INT64 epoch seconds, INT32 nanos), LOCAL_DATE_TIME 16 bytes (INT64 epoch
day, INT64 nano of day), STRING the text in the schema's `__charset` (UTF-8 when unset), BYTES and NONE the
bytes as they are. What the client refuses is refused here with its words: a fixed-width value of another
size ("Size of data received by IntSchema is not 4"), a short INSTANT or LOCAL_DATE_TIME (a
BufferUnderflowException; longer ones are read, the extra bytes ignored, as the client does). STRING never
fails: Java's `new String(bytes, charset)` replaces what it cannot decode.

KEY_VALUE: INLINE payloads are `[int32 key length][key][int32 value length][value]`, a length of -1 being a
null part; SEPARATED payloads hold the value alone, and the key travels as the message key, the standard
base64 of the key schema's bytes (the producer sets `partition_key_b64_encoded`). A SEPARATED message
without a key reads as a null key, as `MessageImpl.getKeyBytes` gives the consumer.

Time values decode to sortable numbers (or pairs of them) and become ISO text only for a statistic's
minimum and maximum (`time_text`), so values beyond Python's datetime range are still read.
"""

from __future__ import annotations

import binascii
import codecs
import struct
from datetime import UTC, date, datetime, timedelta
from typing import Any

from registry import SchemaType

FIXED = {
    SchemaType.INT8: (">b", "ByteSchema"),
    SchemaType.INT16: (">h", "ShortSchema"),
    SchemaType.INT32: (">i", "IntSchema"),
    SchemaType.INT64: (">q", "LongSchema"),
    SchemaType.FLOAT: (">f", "FloatSchema"),
    SchemaType.DOUBLE: (">d", "DoubleSchema"),
    # java.util.Date, java.sql.Time and java.sql.Timestamp as LongSchema of getTime(); LocalDate as
    # LongSchema of toEpochDay(), LocalTime of toNanoOfDay()
    SchemaType.DATE: (">q", "LongSchema"),
    SchemaType.TIME: (">q", "LongSchema"),
    SchemaType.TIMESTAMP: (">q", "LongSchema"),
    SchemaType.LOCAL_DATE: (">q", "LongSchema"),
    SchemaType.LOCAL_TIME: (">q", "LongSchema"),
}
UNCHECKED = {SchemaType.INSTANT: (">qi", 12), SchemaType.LOCAL_DATE_TIME: (">qq", 16)}
NUMBERS = frozenset({SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64, SchemaType.FLOAT,
                     SchemaType.DOUBLE})  # fmt: skip
TIMES = frozenset({SchemaType.DATE, SchemaType.TIME, SchemaType.TIMESTAMP, SchemaType.INSTANT,
                   SchemaType.LOCAL_DATE, SchemaType.LOCAL_TIME, SchemaType.LOCAL_DATE_TIME})  # fmt: skip
CHARSET = "__charset"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PayloadError(ValueError):
    """A payload the Java client would refuse to decode; the message says what the client says."""


def primitive_kind(kind: SchemaType) -> str:
    """number, time, symbol (BOOLEAN: each value counted) or other (STRING, BYTES, NONE): statistics."""
    if kind in NUMBERS:
        return "number"
    if kind in TIMES:
        return "time"
    return "symbol" if kind is SchemaType.BOOLEAN else "other"


def charset(properties: dict[str, str]) -> str:
    """The Python codec of a STRING schema's `__charset` (Java names: UTF-8, ISO-8859-1, US-ASCII, UTF-16...);
    ValueError naming it when Python has no such codec (Java's Charset.forName fails the schema too)."""
    name = properties.get(CHARSET) or "UTF-8"
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise ValueError(f"STRING schema property {CHARSET}={name!r} is not a known charset") from None


def decode_primitive(kind: SchemaType, payload: bytes, encoding: str = "utf-8") -> Any:
    """One primitive value as the Java client decodes it (time types as sortable numbers, see time_text)."""
    fixed = FIXED.get(kind)
    if fixed is not None:
        fmt, schema = fixed
        size = struct.calcsize(fmt)
        if len(payload) != size:
            raise PayloadError(f"Size of data received by {schema} is not {size} ({len(payload)} bytes)")
        return struct.unpack(fmt, payload)[0]
    unchecked = UNCHECKED.get(kind)
    if unchecked is not None:
        fmt, size = unchecked
        if len(payload) < size:
            raise PayloadError(f"BufferUnderflowException: {kind} needs {size} bytes, got {len(payload)}")
        return struct.unpack_from(fmt, payload)
    if kind is SchemaType.BOOLEAN:
        if len(payload) != 1:
            raise PayloadError(f"Size of data received by BooleanSchema is not 1 ({len(payload)} bytes)")
        return payload[0] != 0
    if kind is SchemaType.STRING:
        return payload.decode(encoding, errors="replace")
    if kind in (SchemaType.BYTES, SchemaType.NONE):
        return payload
    raise PayloadError(f"{kind} is not a primitive schema type")


def encode_primitive(kind: SchemaType, value: Any, encoding: str = "utf-8") -> bytes:
    """A primitive value as the Java client encodes it (time types given as decode_primitive returns them):
    how sample and benchmark archives are written, and the inverse the tests hold decode_primitive to."""
    fixed = FIXED.get(kind)
    if fixed is not None:
        return struct.pack(fixed[0], value)
    unchecked = UNCHECKED.get(kind)
    if unchecked is not None:
        return struct.pack(unchecked[0], *value)
    if kind is SchemaType.BOOLEAN:
        return b"\x01" if value else b"\x00"
    if kind is SchemaType.STRING:
        return str(value).encode(encoding)
    if kind in (SchemaType.BYTES, SchemaType.NONE):
        return bytes(value)
    raise PayloadError(f"{kind} is not a primitive schema type")


def encode_inline(key: bytes | None, value: bytes | None) -> bytes:
    """An INLINE KEY_VALUE payload (KeyValue.encode): each part its length (-1 for null), then its bytes."""
    out = b""
    for part in (key, value):
        out += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    return out


def time_text(kind: SchemaType, value: Any) -> str:
    """ISO text of a decoded time value: UTC for DATE, TIME, TIMESTAMP and INSTANT (epoch based), local
    (no zone) for LOCAL_*; the raw number where it lies beyond Python's datetime range."""
    try:
        if kind in (SchemaType.DATE, SchemaType.TIME, SchemaType.TIMESTAMP):
            return (EPOCH + timedelta(milliseconds=value)).isoformat()
        if kind is SchemaType.INSTANT:
            seconds, nanos = value
            return (EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)).isoformat()
        if kind is SchemaType.LOCAL_DATE:
            return (date(1970, 1, 1) + timedelta(days=value)).isoformat()
        if kind is SchemaType.LOCAL_TIME:
            return (datetime(1970, 1, 1) + timedelta(microseconds=value // 1000)).time().isoformat()
        if kind is SchemaType.LOCAL_DATE_TIME:
            day, nanos = value
            return (datetime(1970, 1, 1) + timedelta(days=day, microseconds=nanos // 1000)).isoformat()
    except (OverflowError, ValueError):
        pass
    return str(value)


def split_inline(payload: bytes) -> tuple[bytes | None, bytes | None]:
    """The key and value bytes of an INLINE KEY_VALUE payload (None for a part written as null)."""
    parts: list[bytes | None] = []
    offset = 0
    for which in ("key", "value"):
        if len(payload) < offset + 4:
            raise PayloadError(f"KEY_VALUE INLINE payload of {len(payload)} bytes ends before the {which} length")
        (length,) = struct.unpack_from(">i", payload, offset)
        offset += 4
        if length == -1:
            parts.append(None)
            continue
        if length < 0 or offset + length > len(payload):
            raise PayloadError(
                f"KEY_VALUE INLINE payload: {which} length {length} does not fit in the {len(payload) - offset} "
                "bytes left"
            )
        parts.append(payload[offset : offset + length])
        offset += length
    return parts[0], parts[1]


def separated_key(key: str | None) -> bytes | None:
    """The key bytes of a SEPARATED KEY_VALUE message from its message key (base64), None when it has none."""
    if key is None:
        return None
    try:
        return binascii.a2b_base64(key, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise PayloadError(
            f"message key {key[:40]!r} is not base64 ({exc}): a SEPARATED KEY_VALUE producer sends the key "
            "schema's bytes in base64"
        ) from None
