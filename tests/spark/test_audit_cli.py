"""`schema-explorer audit`: unreadable inputs stop with one clear line (exit 2) before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["compat-matrix", "--snapshot", "{missing}"], "does not exist"),
        (["compat-matrix", "--snapshot", "{bad}"], "line 1: not JSON"),
        (["compat-matrix", "--db", "{missing}"], "no registry file there"),
        (["compat-matrix", "--snapshot", "{snap}", "--master", "lokal[2]"], "is not a Spark master: use local[*]"),
        (["policy-impact", "--snapshot", "{snap}", "--strategy", "SOMETIMES"], "unknown compatibility strategy"),
        (["policy-impact", "--snapshot", "{snap}", "--strategy", "FULL", "--namespace", "x/y"], "is not in"),
        (["data", "--snapshot", "{snap}", "--messages", "{missing}"], "no such folder"),
        (["data", "--snapshot", "{snap}", "--messages", "{empty}"], "no archive files"),
        (["data", "--snapshot", "{snap}", "--messages", "{msgs}", "--reader", "{bad}"], "go together"),
        (
            [
                "data",
                "--snapshot",
                "{snap}",
                "--messages",
                "{msgs}",
                "--reader",
                "{bad}",
                "--topic",
                "acme/orders/order-created",
            ],
            "--reader",
        ),
        (
            [
                "data",
                "--snapshot",
                "{snap}",
                "--messages",
                "{msgs}",
                "--reader",
                "{bad}",
                "--topic",
                "acme/orders/order-notes",
            ],
            "AVRO and JSON topics",
        ),
    ],
    ids=[
        "a missing snapshot",
        "a snapshot that is not JSON lines",
        "a missing registry file",
        "a master Spark does not know",
        "an unknown strategy",
        "an unknown namespace",
        "a missing archive folder",
        "an archive folder without archive files",
        "a reader without a topic",
        "a reader that is not an Avro schema",
        "a reader for a STRING topic",
    ],
)
def test_bad_inputs_stop_before_spark(
    args: list[str], message: str, sample_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.txt").write_text("not json\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    paths = {
        "missing": str(tmp_path / "missing"),
        "bad": str(tmp_path / "bad.txt"),
        "snap": str(sample_snapshot),
        "empty": str(tmp_path / "empty"),
        "msgs": str(ROOT / "sample_data" / "messages"),
    }
    argv = ["audit", *[a.format(**paths) for a in args], "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and "SparkContext" not in err


def test_out_must_be_a_folder(sample_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert main(["audit", "compat-matrix", "--snapshot", str(sample_snapshot), "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_a_parquet_folder_with_a_missing_or_foreign_table_stops_before_spark(
    sample_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    db, export = tmp_path / "registry.db", tmp_path / "export"
    assert main(["import", str(sample_snapshot), "--db", str(db)]) == 0
    assert main(["export", "--format", "parquet", "--db", str(db), str(export)]) == 0

    def audit() -> str:
        argv = [
            "audit",
            "compat-matrix",
            "--parquet",
            str(export),
            "--out",
            str(tmp_path / "out"),
            "--progress",
            "none",
        ]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "SparkContext" not in err
        return err

    capsys.readouterr()
    shutil.rmtree(export / "versions")
    assert "no versions table" in audit()
    pq.write_table(pa.table({"topic": ["a"], "schema_id": [1]}), tmp_path / "foreign.parquet")
    (export / "versions").mkdir()
    shutil.copy(tmp_path / "foreign.parquet", export / "versions" / "part-00000.parquet")
    assert "the versions table is not an export of this tool: column 'schema_id' is int64, expected string" in audit()
    assert main(["audit", "compat-matrix", "--parquet", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    assert "no such folder" in capsys.readouterr().err
