"""Import is all or nothing: a snapshot cut short (even at a line boundary) or holding a bad record is refused
whole, exit 1 naming the line, and the target registry is unchanged; a new target file is never made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from registry import Registry, SchemaInfo, SchemaType, seed_sample_data
from registry._snapshot import read_snapshot_records, registry_from_records
from registry.storage._snapshot_values import SnapshotError


@pytest.fixture(scope="module")
def backup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample registry exported, once for the module: the tests read it and write their cut copies elsewhere."""
    folder = tmp_path_factory.mktemp("backup")
    db = folder / "source.db"
    with Registry.open(db, create=True) as reg:
        seed_sample_data(reg)
    out = folder / "backup.jsonl"
    assert main(["export", "--db", str(db), str(out)]) == 0
    return out


def _empty_target(tmp_path: Path) -> Path:
    target = tmp_path / "target.db"
    Registry.open(target, create=True).close()
    return target


def _export(db: Path, tmp_path: Path) -> bytes:
    out = tmp_path / "check.jsonl"
    assert main(["export", "--db", str(db), str(out)]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("cut", [1, 40, 300], ids=["last line", "forty lines", "most of it"])
def test_a_backup_cut_at_a_line_boundary_is_refused_and_the_target_unchanged(
    backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], cut: int
) -> None:
    lines = backup.read_text(encoding="utf-8").splitlines(keepends=True)
    cut_file = tmp_path / "cut.jsonl"
    cut_file.write_text("".join(lines[:-cut]), encoding="utf-8")
    target = _empty_target(tmp_path)
    before = _export(target, tmp_path)
    capsys.readouterr()
    assert main(["import", "--db", str(target), str(cut_file)]) == 1
    error = capsys.readouterr().err
    assert f"stops at line {len(lines) - cut}" in error and "nothing was imported" in error
    assert _export(target, tmp_path) == before
    assert main(["import", "--db", str(tmp_path / "new.db"), str(cut_file)]) == 1
    assert not (tmp_path / "new.db").exists()


def test_a_backup_cut_inside_a_line_is_refused_naming_the_line(backup: Path, tmp_path: Path, capsys) -> None:
    data = backup.read_bytes()
    cut_file = tmp_path / "cut.jsonl"
    cut_file.write_bytes(data[: len(data) // 2])
    capsys.readouterr()
    assert main(["import", "--db", str(tmp_path / "new.db"), str(cut_file)]) == 1
    assert "not JSON" in capsys.readouterr().err
    assert not (tmp_path / "new.db").exists()


@pytest.mark.parametrize(
    ("version", "said"),
    [(-1, "must be >= 0"), (1.5, "must be int"), (True, "must be int"), (2**64, "out of range"), ("3", "must be int")],
    ids=["negative", "a fraction", "a boolean", "past a long", "text"],
)
def test_a_bad_version_number_is_refused_naming_its_line(
    backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: object, said: str
) -> None:
    lines = backup.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "version")
    record = json.loads(lines[at])
    record["version"] = version
    lines[at] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["import", "--db", str(tmp_path / "new.db"), str(bad)]) == 1
    error = capsys.readouterr().err
    assert f"line {at + 1}" in error and said in error
    assert not (tmp_path / "new.db").exists()


def test_a_client_version_past_a_long_is_refused_not_a_traceback(backup: Path, tmp_path: Path, capsys) -> None:
    lines = backup.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "client")
    record = json.loads(lines[at])
    record["connected_at"] = 10**30
    lines[at] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["import", "--db", str(tmp_path / "new.db"), str(bad)]) == 1
    assert f"line {at + 1}" in capsys.readouterr().err


def test_loading_into_a_file_is_one_transaction(tmp_path: Path) -> None:
    """Records that only fail once loaded (a history out of order) leave the target as it was."""
    target = _empty_target(tmp_path)
    topic = "persistent://t/n/x"
    records = [
        {"kind": "snapshot", "format": 1},
        {"kind": "tenant", "name": "t"},
        {"kind": "namespace", "name": "t/n"},
        {"kind": "topic", "name": topic},
        {"kind": "version", "topic": "t/n/x", "version": 1, "type": "NONE", "_line": 5},
        {"kind": "version", "topic": "t/n/x", "version": 0, "type": "NONE", "_line": 6},
    ]
    with Registry.open(target) as reg:
        with pytest.raises(SnapshotError, match="line 6: version 0 of t/n/x comes after version 1"):
            registry_from_records(records, into=reg)
    with Registry.open(target) as reg:
        assert reg.tenants() == [] and reg.history(topic, include_deleted=True) == []
        reg.register(topic, SchemaInfo(type=SchemaType.STRING))  # and it still works


def test_a_format_1_file_without_an_end_line_still_reads(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text('{"kind":"snapshot","format":1}\n{"kind":"tenant","name":"t"}\n', encoding="utf-8")
    assert [r["kind"] for r in read_snapshot_records(old)] == ["snapshot", "tenant"]


def test_a_new_target_that_appears_during_the_import_is_never_overwritten(backup: Path, tmp_path: Path) -> None:
    """Two commands at once: while this import loads, another command creates the same file. The import refuses
    naming the file (a UserError: exit 2) rather than replace it, and leaves no temporary file behind."""
    import cli.backup

    target = tmp_path / "new.db"

    def records_then_a_rival() -> Iterator[dict[str, Any]]:
        yield from read_snapshot_records(backup)
        with Registry.open(target, create=True) as rival:
            rival.create_tenant("rival")

    with pytest.raises(cli.backup.UserError, match="appeared while the snapshot was imported"):
        cli.backup._import_new_file(records_then_a_rival(), target)
    with Registry.open(target) as reg:
        assert reg.tenants() == ["rival"]
    assert [p.name for p in tmp_path.iterdir()] == ["new.db"]  # no temporary file or folder left beside it
