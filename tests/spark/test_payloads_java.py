"""The data audit reads primitive and KEY_VALUE payloads as the Java client writes them: the bytes come from
the JDK itself (a source-file program run with `java`), built the way Pulsar's schema classes build them
(ByteBuffer big-endian, Float.floatToRawIntBits, Date.getTime, Instant epoch seconds + nanos, LocalDate
toEpochDay, LocalTime toNanoOfDay, String.getBytes(charset), KeyValue.encode), and the JDK's own
rendering of each value is what our decoding must mean."""

from __future__ import annotations

import shutil
import subprocess
from datetime import date, datetime, time

import pytest

import needs
from pipeline._payload import decode_primitive, split_inline, time_text
from registry import SchemaType

PROGRAM = r"""
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.*;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;

public class Encode {
    static void out(String type, byte[] bytes, Object shown) {
        System.out.println(type + " " + HexFormat.of().formatHex(bytes) + " " + shown);
    }
    static byte[] longs(long... values) {
        ByteBuffer b = ByteBuffer.allocate(8 * values.length);
        for (long v : values) b.putLong(v);
        return b.array();
    }
    public static void main(String[] args) {
        out("BOOLEAN", new byte[] {1}, true);
        out("BOOLEAN", new byte[] {0}, false);
        out("INT8", new byte[] {(byte) -7}, -7);
        out("INT16", ByteBuffer.allocate(2).putShort((short) -12345).array(), -12345);
        out("INT32", ByteBuffer.allocate(4).putInt(Integer.MIN_VALUE).array(), Integer.MIN_VALUE);
        out("INT64", ByteBuffer.allocate(8).putLong(Long.MAX_VALUE).array(), Long.MAX_VALUE);
        out("FLOAT", ByteBuffer.allocate(4).putInt(Float.floatToRawIntBits(-1.5e-3f)).array(), -1.5e-3f);
        out("DOUBLE", ByteBuffer.allocate(8).putLong(Double.doubleToLongBits(6.02214076e23)).array(), 6.02214076e23);
        long[] millis = {1712055600123L, -86400001L, 0L};
        for (long ms : millis) {
            Instant at = Instant.ofEpochMilli(ms);
            out("DATE", longs(new java.util.Date(ms).getTime()), at);
            out("TIME", longs(new java.sql.Time(ms).getTime()), at);
            out("TIMESTAMP", longs(new java.sql.Timestamp(ms).getTime()), at);
        }
        Instant[] instants = {Instant.parse("2024-04-02T11:00:00.123456789Z"), Instant.ofEpochSecond(-1, 500_000_000)};
        for (Instant i : instants) {
            out("INSTANT", ByteBuffer.allocate(12).putLong(i.getEpochSecond()).putInt(i.getNano()).array(),
                i.truncatedTo(ChronoUnit.MICROS));
        }
        for (LocalDate d : new LocalDate[] {LocalDate.of(2026, 11, 26), LocalDate.of(1969, 12, 31)}) {
            out("LOCAL_DATE", longs(d.toEpochDay()), d);
        }
        LocalTime t = LocalTime.of(23, 59, 58, 999_999_999);
        out("LOCAL_TIME", longs(t.toNanoOfDay()), t.truncatedTo(ChronoUnit.MICROS));
        LocalDateTime dt = LocalDateTime.of(1999, 12, 31, 23, 59, 59, 123_000_000);
        out("LOCAL_DATE_TIME", longs(dt.toLocalDate().toEpochDay(), dt.toLocalTime().toNanoOfDay()), dt);
        out("STRING", "Grüße, Zürich".getBytes(StandardCharsets.UTF_8), "UTF-8");
        out("STRING", "Grüße, Zürich".getBytes(StandardCharsets.ISO_8859_1), "ISO-8859-1");
        // KeyValue.encode: [int key length][key][int value length][value], -1 for a null part
        byte[] key = "k-1".getBytes(StandardCharsets.UTF_8);
        byte[] value = ByteBuffer.allocate(4).putInt(42).array();
        out("INLINE", ByteBuffer.allocate(4 + key.length + 4 + value.length)
            .putInt(key.length).put(key).putInt(value.length).put(value).array(), "k-1:42");
        out("INLINE", ByteBuffer.allocate(8 + value.length).putInt(-1).putInt(value.length).put(value).array(),
            "null:42");
    }
}
"""


@pytest.fixture(scope="module")
def java_lines(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes, str]]:
    needs.require("java")
    java = shutil.which("java")
    assert java is not None
    source = tmp_path_factory.mktemp("java") / "Encode.java"
    source.write_text(PROGRAM, encoding="utf-8")
    done = subprocess.run([java, str(source)], capture_output=True, text=True, timeout=120, check=True)
    lines = []
    for line in done.stdout.splitlines():
        kind, hexed, shown = line.split(" ", 2)
        lines.append((kind, bytes.fromhex(hexed), shown))
    assert len(lines) == 27
    return lines


def _java_time(kind: SchemaType, shown: str) -> object:
    if kind is SchemaType.LOCAL_DATE:
        return date.fromisoformat(shown)
    if kind is SchemaType.LOCAL_TIME:
        return time.fromisoformat(shown)
    return datetime.fromisoformat(shown)


def test_primitives_decode_to_what_java_wrote(java_lines: list[tuple[str, bytes, str]]) -> None:
    checked = set()
    for kind_name, payload, shown in java_lines:
        if kind_name in ("INLINE", "STRING"):
            continue
        kind = SchemaType(kind_name)
        value = decode_primitive(kind, payload)
        checked.add(kind)
        if kind is SchemaType.BOOLEAN:
            assert value is (shown == "true")
        elif kind in (SchemaType.FLOAT, SchemaType.DOUBLE):
            assert value == pytest.approx(float(shown), rel=1e-7)
        elif kind.name.startswith("INT"):
            assert value == int(shown)
        else:
            ours = time_text(kind, value)
            mine = _java_time(kind, ours.replace("+00:00", "Z"))
            assert mine == _java_time(kind, shown), (kind, ours, shown)
    assert len(checked) == 14  # every fixed-width and time type


def test_strings_decode_in_the_schema_charset(java_lines: list[tuple[str, bytes, str]]) -> None:
    from pipeline._payload import charset

    for kind_name, payload, shown in java_lines:
        if kind_name == "STRING":
            assert decode_primitive(SchemaType.STRING, payload, charset({"__charset": shown})) == "Grüße, Zürich"


def test_inline_key_values_split_as_java_joined_them(java_lines: list[tuple[str, bytes, str]]) -> None:
    for kind_name, payload, shown in java_lines:
        if kind_name != "INLINE":
            continue
        key, value = split_inline(payload)
        assert value is not None
        expected_key, expected_value = shown.split(":")
        assert (None if key is None else key.decode()) == (None if expected_key == "null" else expected_key)
        assert decode_primitive(SchemaType.INT32, value) == int(expected_value)
