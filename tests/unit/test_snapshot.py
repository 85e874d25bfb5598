"""Snapshots (registry/_snapshot.py): an export imports back to a registry that answers every question alike,
byte for byte, and every malformed snapshot is refused with its line number."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from registry import (
    BrokerConfig,
    Registry,
    SchemaInfo,
    SchemaType,
    StorageError,
    export_snapshot,
    import_snapshot,
    seed_sample_data,
)
from registry._snapshot import dumps_records, read_snapshot_records, registry_from_records
from registry.storage._snapshot_values import SnapshotError


def _text(reg: Registry) -> str:
    out = io.StringIO()
    export_snapshot(reg, out)
    return out.getvalue()


def _facts(reg: Registry) -> list[object]:
    """Everything the facade says about a registry, in a comparable form."""
    facts: list[object] = [reg.broker, reg.tenants()]
    for tenant in reg.tenants():
        for ns in reg.namespaces(tenant):
            facts += [ns, reg.namespace_policy(ns)]
            for topic in reg.topics(ns):
                facts += [topic, reg.topic_policy(topic), reg.effective_policy(topic)]
                facts += [reg.history(topic, include_deleted=True)]
                live = reg.history(topic)
                if live:
                    facts.append(reg.check(topic, live[0].info).message)
    facts.append(reg.clients())
    return facts


def test_the_sample_registry_round_trips_exactly(reg: Registry, tmp_path: Path) -> None:
    seed_sample_data(reg)
    path = tmp_path / "sample.jsonl"
    lines = export_snapshot(reg, path)
    copy = import_snapshot(path)
    assert _facts(copy) == _facts(reg)
    assert _text(copy) == path.read_text(encoding="utf-8")
    assert lines == len(path.read_text(encoding="utf-8").splitlines())
    kinds = [json.loads(line)["kind"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert kinds[0] == "snapshot" and {"tenant", "namespace", "topic", "version", "client"} <= set(kinds)
    assert any(json.loads(line).get("deleted") for line in path.read_text(encoding="utf-8").splitlines())


def test_a_non_default_broker_and_binary_schema_bytes_round_trip() -> None:
    records = [
        {"kind": "snapshot", "format": 1, "broker": {"compatibility": "BACKWARD", "allow_auto_update": False}},
        {"kind": "tenant", "name": "t"},
        {"kind": "namespace", "name": "t/n", "policy": {}},
        {"kind": "topic", "name": "persistent://t/n/x", "namespace": "t/n", "policy": None},
        {"kind": "version", "topic": "t/n/x", "version": 0, "type": "NONE", "timestamp": 5, "schema_base64": "/wCA"},
    ]
    reg = registry_from_records(records)
    assert reg.broker == BrokerConfig(compatibility="BACKWARD", allow_auto_update=False)  # type: ignore[arg-type]
    assert reg.history("t/n/x")[0].data == b"\xff\x00\x80"
    text = _text(reg)
    assert '"schema_base64":"/wCA"' in text
    assert _text(import_snapshot(io.StringIO(text))) == text


def test_import_into_an_empty_registry_and_refuse_a_non_empty_one(tmp_path: Path) -> None:
    source = Registry.in_memory()
    source.register("t/n/x", SchemaInfo(type=SchemaType.STRING))
    text = _text(source)
    target = Registry.open(tmp_path / "r.db", create=True)
    import_snapshot(io.StringIO(text), into=target)
    assert _facts(target) == _facts(source)
    with pytest.raises(StorageError, match="not empty"):
        import_snapshot(io.StringIO(text), into=target)
    target.close()


HEADER = '{"kind":"snapshot","format":1}\n'
TOPIC = '{"kind":"topic","name":"t/n/x","namespace":"t/n"}\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty snapshot"),
        ("not json\n", "line 1: not JSON"),
        ("[1]\n", "expected a JSON object"),
        ('{"kind":"tenant","name":"t"}\n', "first line must be the snapshot header"),
        ('{"kind":"snapshot","format":3}\n', "unsupported snapshot format 3"),
        (HEADER + '{"kind":"bogus"}\n', "line 2: unknown kind 'bogus'"),
        (HEADER + HEADER, "a second snapshot header"),
        (HEADER + '{"kind":"tenant"}\n', "line 2: tenant record has no 'name'"),
        (HEADER + '{"kind":"version","topic":"t/n/x","version":"1","type":"AVRO"}\n', "'version' must be int"),
        (HEADER + '{"kind":"version","topic":"t/n/x","version":true,"type":"AVRO"}\n', "'version' must be int"),
        (HEADER + '{"kind":"version","topic":"t/n/x","version":0,"type":"WAT"}\n', "unknown schema type 'WAT'"),
        (HEADER + '{"kind":"version","topic":"t/n/x","version":0,"type":"NONE","schema_base64":"@@"}\n', "base64"),
        (
            HEADER + TOPIC + '{"kind":"version","topic":"t/n/x","version":1,"type":"NONE"}\n'
            '{"kind":"version","topic":"t/n/x","version":1,"type":"NONE"}\n',
            "line 4: version 1 of t/n/x comes after version 1",
        ),
        (HEADER + '{"kind":"namespace","name":"t/n","policy":{"compatibility":"SOMETIMES"}}\n', "SOMETIMES"),
        (HEADER + '{"kind":"client","topic":"t/n/x","role":"observer","name":"a"}\n', "observer"),
        (HEADER + '{"kind":"snapshot","format":1,"broker":{"colour":"red"}}\n', "second snapshot header"),
        ('{"kind":"snapshot","format":1,"broker":{"colour":"red"}}\n', "invalid broker settings"),
    ],
    ids=[
        "an empty file",
        "a line that is not JSON",
        "a line that is not an object",
        "no header",
        "an unknown format",
        "an unknown kind",
        "two headers",
        "a missing field",
        "a version as text",
        "a version as a boolean",
        "an unknown schema type",
        "bad base64",
        "versions out of order",
        "an unknown strategy",
        "an unknown client role",
        "a header in the middle",
        "unknown broker settings",
    ],
)
def test_a_malformed_snapshot_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(SnapshotError, match=message.replace("(", r"\(")):
        import_snapshot(io.StringIO(text))


def test_paths_that_are_not_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match="does not exist"):
        import_snapshot(tmp_path / "missing.jsonl")
    with pytest.raises(SnapshotError, match="is a directory"):
        import_snapshot(tmp_path)
    with pytest.raises(SnapshotError, match="is a directory"):
        export_snapshot(Registry.in_memory(), tmp_path)
    (tmp_path / "latin1.jsonl").write_bytes(b"\xff\xfe")
    with pytest.raises(SnapshotError, match="not UTF-8"):
        import_snapshot(tmp_path / "latin1.jsonl")


def test_records_read_back_to_the_same_text(tmp_path: Path) -> None:
    reg = Registry.in_memory()
    seed_sample_data(reg)
    path = tmp_path / "s.jsonl"
    export_snapshot(reg, path)
    assert dumps_records(read_snapshot_records(path)) == path.read_text(encoding="utf-8")
