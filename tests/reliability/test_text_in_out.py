"""Only valid text in, always readable out; refused writes leave short audit lines.

A lone surrogate or NUL in a property, once stored, made every later read of the topic fail to encode: a
traceback in `get`, a 500 over REST, an export that died halfway. Now such text is refused on the way in
(InvalidSchemaError, 422, exit 2) and files written before that still read, serve, export and import, with the
surrogate shown as its escape. Control characters print escaped in the terminal.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from registry import (
    AuditOutcome,
    InvalidSchemaError,
    Registry,
    SchemaInfo,
    SchemaType,
    export_snapshot,
    import_snapshot,
)
from serving import PROJECT_ROOT, served

TOPIC = "persistent://acme/orders/created"
AVSC = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]})


def _cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args], cwd=cwd, env=env, capture_output=True, input=stdin, timeout=120
    )


@pytest.mark.parametrize(
    ("properties", "named"),
    [
        ({"owner": "\ud800"}, "'owner' value contains a lone surrogate U+D800 at index 0"),
        ({"ok": "x", "\udfff-key": "v"}, "key '\\\\udfff-key' contains a lone surrogate U+DFFF"),
        ({"owner": "team\x00b"}, "'owner' value contains a NUL character at index 4"),
    ],
    ids=["surrogate in a value", "surrogate in a key", "NUL in a value"],
)
def test_a_property_that_is_not_valid_text_is_refused_and_nothing_stored(properties, named) -> None:
    reg = Registry.in_memory()
    with pytest.raises(InvalidSchemaError, match=re.escape(named)):
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=AVSC, properties=properties))
    with pytest.raises(InvalidSchemaError):
        reg.check(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=AVSC, properties=properties))
    assert reg.history(TOPIC) == []


@pytest.mark.server
def test_a_surrogate_property_over_rest_is_a_422_naming_it(workdir: Path) -> None:
    db = workdir / "r.db"
    Registry.open(db, create=True).close()
    with served(db, log_dir=workdir) as url:
        body = json.dumps({"type": "AVRO", "schema": AVSC, "properties": {"owner": "\ud800"}})  # \ud800 escape
        answer = httpx.post(
            f"{url}/admin/v2/schemas/acme/orders/created/schema",
            content=body,
            headers={"content-type": "application/json"},
            timeout=30,
        )
        assert answer.status_code == 422, answer.text
        assert "lone surrogate U+D800" in answer.json()["reason"]
        assert httpx.get(f"{url}/admin/v2/schemas/acme/orders/created/schema", timeout=30).status_code == 404


def _legacy_file(path: Path) -> None:
    """A registry file as an older version wrote it: a property holding a lone surrogate (JSON-escaped)."""
    with Registry.open(path, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=AVSC, properties={"owner": "placeholder"}))
    with sqlite3.connect(path) as db:
        changed = db.execute(
            "UPDATE schemas SET properties = ? WHERE version = 0", (json.dumps({"owner": "\ud800x", "\udc00": "k"}),)
        ).rowcount
        assert changed == 1


@pytest.mark.server
def test_a_file_from_before_the_check_still_reads_serves_exports_and_imports(workdir: Path) -> None:
    db = workdir / "legacy.db"
    _legacy_file(db)
    with Registry.open(db) as reg:
        assert reg.get(TOPIC).properties == {"owner": "\\ud800x", "\\udc00": "k"}
    done = _cli("get", "--db", str(db), "-t", TOPIC, cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert b"\\ud800x" in done.stdout
    done = _cli("export", "--db", str(db), str(workdir / "backup.jsonl"), cwd=workdir)
    assert done.returncode == 0, done.stderr
    lines = (workdir / "backup.jsonl").read_text(encoding="utf-8").splitlines()
    copy = import_snapshot(lines, into=Registry.in_memory())
    assert copy.get(TOPIC).properties == {"owner": "\\ud800x", "\\udc00": "k"}
    with served(db, log_dir=workdir) as url:
        for path in ("schema", "schemas", "schema/0"):
            answer = httpx.get(f"{url}/admin/v2/schemas/acme/orders/created/{path}", timeout=30)
            assert answer.status_code == 200, (path, answer.text)
            assert "\\ud800x" in answer.text or "\\\\ud800x" in answer.text


def test_get_prints_control_characters_escaped(workdir: Path) -> None:
    db = workdir / "r.db"
    doc = "order \x1b]0;pwned\x07\x1b[2J done"
    schema = json.dumps({"type": "record", "name": "Order", "doc": doc, "fields": []}, ensure_ascii=False)
    with Registry.open(db, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=schema, properties={"note": "a\x1b[31mb"}))
    done = _cli("get", "--db", str(db), "-t", TOPIC, cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    assert b"note = a\\x1b[31mb" in done.stdout
    done = _cli("get", "--db", str(db), "-t", TOPIC, "--json", cwd=workdir)
    assert json.loads(done.stdout)["properties"]["note"] == "a\x1b[31mb"  # JSON carries it, escaped by JSON


def test_the_cli_stops_reading_input_at_the_limit(workdir: Path) -> None:
    db = workdir / "r.db"
    Registry.open(db, create=True).close()
    endless = b"{" + b" " * (8 * 1024 * 1024)
    done = _cli("check", "--db", str(db), "-t", TOPIC, "--type", "AVRO", "--file", "-", cwd=workdir, stdin=endless)
    assert done.returncode == 2
    assert b"standard input is over" in done.stderr and b"limited to 1,048,576 bytes" in done.stderr


def test_a_refused_write_keeps_a_digest_size_and_at_most_1_kib_of_its_input(workdir: Path) -> None:
    db = workdir / "r.db"
    big = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "f", "type": "nope" * 200_000}]})
    with Registry.open(db, create=True) as reg:
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=AVSC))
        size_before = db.stat().st_size
        for _ in range(10):
            with pytest.raises(InvalidSchemaError):
                reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=big))
        refused = [e for e in reg.audit_trail(TOPIC) if e.outcome is AuditOutcome.REFUSED]
    assert len(refused) == 10
    digest = hashlib.sha256(big.encode()).hexdigest()
    for entry in refused:
        assert len(entry.detail.encode()) <= 1024
        assert f"{len(big.encode()):,} bytes, sha256 {digest}" in entry.detail
    wal = Path(f"{db}-wal")
    grown = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0) - size_before
    assert grown < len(big)  # ten refused 800 kB inputs grew the file by less than one of them


def test_an_export_of_a_legacy_file_is_valid_utf8_json_lines(workdir: Path) -> None:
    db = workdir / "legacy.db"
    _legacy_file(db)
    out = workdir / "out.jsonl"
    with Registry.open(db) as reg, out.open("w", encoding="utf-8") as handle:
        export_snapshot(reg, handle)
    for line in out.read_bytes().decode("utf-8").splitlines():
        json.loads(line)
