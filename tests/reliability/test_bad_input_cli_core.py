"""The bad-input catalogue for the CLI and for the core as the app and notebooks call it: each case is one line
on stderr and exit 2 (CLI) or a RegistryError naming the problem (core), never a traceback, and the registry
is unchanged."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from catalogue import big_avro, deep_avro

from cli.main import main
from registry import (
    InvalidSchemaError,
    InvalidVersionError,
    Registry,
    RegistryError,
    SchemaInfo,
    SchemaNotFoundError,
    SchemaType,
    export_snapshot,
)
from schemas import S1

TOPIC = "persistent://acme/tests/topic"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "registry.db"
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=S1))
    return path


def state(db: Path) -> str:
    out = io.StringIO()
    with Registry.open(db, create=True) as reg:
        export_snapshot(reg, out, audit=False)
    return out.getvalue()


# (id, files to write {name: bytes}, argv after the command's --db, words in the error)
CLI_CASES: list[Any] = [
    (
        "a schema file that does not exist",
        {},
        ["upload", "-t", TOPIC, "--file", "{dir}/missing.avsc"],
        ("no such file",),
    ),
    ("a folder as schema file", {}, ["upload", "-t", TOPIC, "--file", "{dir}"], ("directory",)),
    (
        "an unknown --type",
        {"s.avsc": S1.encode()},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc", "--type", "NOPE"],
        ("NOPE",),
    ),
    (
        "a file for a primitive type",
        {"s.txt": b"hello"},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.txt", "--type", "INT32"],
        ("no schema text",),
    ),
    (
        "a schema file that is not UTF-8",
        {"s.avsc": b'{"type":"\xff"}'},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc"],
        ("not UTF-8",),
    ),
    pytest.param(
        "a 10,000-deep schema file",
        {"s.avsc": deep_avro(10_000).encode()},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc"],
        ("nested more than",),
    ),
    pytest.param(
        "a 10,000-deep check",
        {"s.avsc": deep_avro(10_000).encode()},
        ["check", "-t", TOPIC, "--file", "{dir}/s.avsc"],
        ("nested more than",),
    ),
    (
        "a 2 MB schema file",
        {"s.avsc": big_avro(2 * 1024 * 1024).encode()},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc"],
        ("limit of 1,048,576",),
    ),
    (
        "a schema file that is not JSON",
        {"s.avsc": b"record X {}"},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc"],
        ("not valid JSON",),
    ),
    (
        "a traversal-like topic",
        {"s.avsc": S1.encode()},
        ["upload", "-t", "../../etc/passwd", "--file", "{dir}/s.avsc"],
        ("..",),
    ),
    ("a topic with a control character", {}, ["get", "-t", "acme/tests/a\tb"], ("topic",)),
    (
        "a property without a value",
        {"s.avsc": S1.encode()},
        ["upload", "-t", TOPIC, "--file", "{dir}/s.avsc", "--property", "novalue"],
        ("KEY=VALUE",),
    ),
    (
        "a strategy that does not exist",
        {},
        ["policy", "set", "--namespace", "acme/tests", "--compatibility", "SOMETIMES"],
        ("SOMETIMES",),
    ),
    ("a version that is not live", {}, ["get", "-t", TOPIC, "--version", "7"], ("version 7",)),
    ("a snapshot that is not JSON", {"s.jsonl": b"not json\n"}, ["import", "{dir}/s.jsonl"], ("line 1",)),
    (
        "a snapshot with versions out of order",
        {
            "s.jsonl": (
                b'{"kind":"snapshot","format":1}\n{"kind":"version","topic":"t/n/x","version":1,"type":"NONE"}\n'
                b'{"kind":"version","topic":"t/n/x","version":0,"type":"NONE"}\n'
            )
        },
        ["import", "{dir}/s.jsonl"],
        ("line 3",),
    ),
    (
        "a snapshot cut at a line boundary",
        {"s.jsonl": b'{"kind":"snapshot","format":2}\n{"kind":"tenant","name":"t"}\n'},
        ["import", "{dir}/s.jsonl"],
        ("stops at line 2 without its end line",),
    ),
    (
        "a snapshot version past a long",
        {
            "s.jsonl": b'{"kind":"snapshot","format":1}\n'
            b'{"kind":"version","topic":"t/n/x","version":18446744073709551616,"type":"NONE"}\n'
        },
        ["import", "{dir}/s.jsonl"],
        ("line 2", "out of range"),
    ),
    ("a snapshot that does not exist", {}, ["import", "{dir}/missing.jsonl"], ("does not exist",)),
    (
        "a registry file that does not exist",
        {"s.avsc": S1.encode()},
        ["check", "-t", TOPIC, "--file", "{dir}/s.avsc", "--db", "{dir}/typo.db"],
        ("no registry at", "typo.db"),
    ),
    (
        "an --url that is not http",
        {"s.avsc": S1.encode()},
        ["check", "-t", TOPIC, "--file", "{dir}/s.avsc", "--url", "ftp://host:8080"],
        ("ftp://host:8080", "only http:// and https://"),
    ),
    (
        "an --url without a scheme",
        {"s.avsc": S1.encode()},
        ["check", "-t", TOPIC, "--file", "{dir}/s.avsc", "--url", "host:8080"],
        ("host:8080", "not an http:// or https:// URL"),
    ),
    ("an export into a missing folder", {}, ["export", "{dir}/no/such/folder/x.jsonl"], ("does not exist",)),
]


def _params(cases: list[Any]) -> list[Any]:
    params = []
    for case in cases:
        values, marks = (case.values, case.marks) if hasattr(case, "values") else (case, ())
        params.append(pytest.param(*values[1:], id=values[0], marks=marks))
    return params


@pytest.mark.parametrize(("files", "argv", "words"), _params(CLI_CASES))
def test_cli_bad_input_is_one_line_and_refused(
    db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, bytes],
    argv: list[str],
    words: tuple[str, ...],
) -> None:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    before = state(db)
    args = [a.replace("{dir}", str(tmp_path)) for a in argv]
    command, rest = args[0], args[1:]
    target = ["--db", str(db)] if command != "policy" and "--url" not in rest else []
    if command == "policy":
        rest = [rest[0], "--db", str(db), *rest[1:]]
    code = main([command, *target, *rest])
    err = capsys.readouterr().err
    refused_snapshot = command == "import" and "does not exist" not in words
    assert code == (1 if refused_snapshot else 2), err  # a bad snapshot is refused whole (exit 1), not misused
    assert "Traceback" not in err and err.count("\n") <= 3, err
    for word in words:
        assert word in err, (word, err)
    assert state(db) == before


def test_cli_bad_database_files_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    assert main(["get", "--db", str(garbage), "-t", TOPIC]) == 2
    assert "file is not a database" in capsys.readouterr().err
    assert main(["get", "--db", str(tmp_path), "-t", TOPIC]) == 2
    assert "directory" in capsys.readouterr().err


# --- the core, as the app's candidate widget and the notebooks call it -------------------------------------------


def _kv_binary(*chunks: bytes) -> SchemaInfo:
    props = {"key.schema.type": "AVRO", "value.schema.type": "AVRO"}
    return SchemaInfo(type=SchemaType.KEY_VALUE, schema=b"".join(chunks), properties=props)


KEY = S1.encode()
CORE_CASES: list[tuple[str, object, type[RegistryError], str]] = [
    ("KEY_VALUE too short for a length", _kv_binary(b"\x00\x00"), InvalidSchemaError, "too short"),
    ("KEY_VALUE with a negative key length", _kv_binary(struct.pack(">i", -5), KEY), InvalidSchemaError, "length -5"),
    (
        "KEY_VALUE with a key length past the end",
        _kv_binary(struct.pack(">i", 10_000), KEY),
        InvalidSchemaError,
        "10000",
    ),
    (
        "KEY_VALUE without a value length",
        _kv_binary(struct.pack(">i", len(KEY)), KEY),
        InvalidSchemaError,
        "value length",
    ),
    (
        "KEY_VALUE with bytes after the value",
        _kv_binary(struct.pack(">i", 0), struct.pack(">i", 0), b"junk"),
        InvalidSchemaError,
        "unexpected bytes",
    ),
    (
        "a 10,000-deep KEY_VALUE binary part",
        _kv_binary(struct.pack(">i", 0), struct.pack(">i", 60_006), deep_avro(10_000).encode()),
        InvalidSchemaError,
        "nested more than",
    ),
    (
        "a 10 MB BYTES schema",
        SchemaInfo(type=SchemaType.BYTES, schema=b"\0" * (10 * 1024 * 1024)),
        InvalidSchemaError,
        "limit",
    ),
    ("a dict instead of a SchemaInfo", {"type": "AVRO", "schema": S1}, InvalidSchemaError, "SchemaInfo"),
    (
        "KEY_VALUE part properties nested 100,000 deep",
        SchemaInfo(
            type=SchemaType.KEY_VALUE,
            schema='{"key": "", "value": ""}',
            properties={
                "key.schema.type": "STRING",
                "value.schema.type": "STRING",
                "value.schema.properties": "[" * 100_000 + "]" * 100_000,
            },
        ),
        InvalidSchemaError,
        "value.schema.properties is nested more than 128 levels",
    ),
    (
        "a lone surrogate in a property value",
        SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"k": "a\ud800"}),
        InvalidSchemaError,
        "property 'k' value contains a lone surrogate U+D800 at index 1",
    ),
    (
        "a NUL in a property key",
        SchemaInfo(type=SchemaType.AVRO, schema=S1, properties={"a\x00": "v"}),
        InvalidSchemaError,
        "contains a NUL character",
    ),
]


@pytest.mark.parametrize(("info", "error", "words"), _params(CORE_CASES))
def test_core_bad_schema_is_a_named_registry_error(db: Path, info: object, error: type, words: str) -> None:
    before = state(db)
    with Registry.open(db, create=True) as reg:
        for call in (reg.register, reg.check, reg.what_if):
            with pytest.raises(error) as caught:
                call(TOPIC, info)  # type: ignore[operator]
            assert words in str(caught.value)
    assert state(db) == before


def test_core_bad_versions_are_named(db: Path) -> None:
    with Registry.open(db, create=True) as reg:
        for version in ("abc", True, "1e3"):
            with pytest.raises(InvalidVersionError, match="whole number"):
                reg.get(TOPIC, version)  # type: ignore[arg-type]
        with pytest.raises(InvalidVersionError, match="64-bit"):
            reg.get(TOPIC, 2**63)
        with pytest.raises(SchemaNotFoundError, match="no live version -1"):
            reg.get(TOPIC, -1)  # Pulsar parses -1 as a long and finds nothing: 404


def test_the_cli_and_core_catalogue_sizes() -> None:
    assert len(CLI_CASES) + len(CORE_CASES) >= 25
    ids = [p.id for p in _params(CLI_CASES + CORE_CASES)]
    assert len(set(ids)) == len(ids) and json.dumps(ids)
