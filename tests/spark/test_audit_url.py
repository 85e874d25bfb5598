"""`schema-explorer audit ... --url`: the audits read a live `schema-explorer serve` (Pulsar's admin v2 API)
and answer as they do over the registry file it serves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from cli.main import main
from serving import PROJECT_ROOT, seeded, served

pytestmark = pytest.mark.server  # `serve` as a child process


@pytest.fixture(scope="module")
def served_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(url, registry file): `schema-explorer serve` on a free loopback port over a seeded file."""
    folder = tmp_path_factory.mktemp("served")
    db = seeded(folder / "registry.db")
    with served(db, log_dir=folder) as url:
        yield url, db


def _table(folder: Path, name: str) -> list[str]:
    return sorted(map(str, pq.read_table(folder / name).to_pylist()))


def test_audits_over_url_answer_as_over_the_served_file(
    cli_spark: Any, served_file: tuple[str, Path], tmp_path: Path
) -> None:
    url, db = served_file
    messages = str(PROJECT_ROOT / "sample_data" / "messages")
    for source, value in (("--url", url), ("--db", str(db))):
        out = tmp_path / source.strip("-")
        assert main(["audit", "compat-matrix", source, value, "--out", str(out / "matrix")]) == 0
        assert main(["audit", "data", source, value, "--messages", messages, "--out", str(out / "data")]) == 0
    remote, embedded = tmp_path / "url", tmp_path / "db"
    assert len(_table(remote / "matrix", "compat_topics")) == 47
    tables = {"matrix": ("compat_matrix", "compat_topics"),
              "data": ("data_versions", "data_failures", "data_field_stats", "data_enum_counts")}  # fmt: skip
    for folder, name in ((folder, name) for folder, names in tables.items() for name in names):
        assert _table(remote / folder, name) == _table(embedded / folder, name), name


def test_progress_lines_and_the_run_record(
    cli_spark: Any, served_file: tuple[str, Path], tmp_path: Path, capsys: Any
) -> None:
    """`--progress json` reports Spark's status tracker on stderr, one JSON object per line, ending with every
    task done; the run record names the source, its change token and the time (pipeline/progress.py)."""
    import json

    from pipeline.progress import read_run_record
    from registry import Registry

    url, db = served_file
    out = tmp_path / "matrix"
    assert main(["audit", "compat-matrix", "--url", url, "--out", str(out), "--progress", "json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    last = lines[-1]["progress"]
    assert last["tasks"] > 0 and last["tasks_done"] == last["tasks"] and last["stages_done"] == last["stages"]
    record = read_run_record(out, "compat-matrix")
    assert record is not None and record["location"] == url and record["computed_at"] > 0
    assert record["change_token"] is None  # an admin API cannot say whether anything changed since
    assert main(["audit", "compat-matrix", "--db", str(db), "--out", str(out), "--progress", "none"]) == 0
    record = read_run_record(out, "compat-matrix")
    with Registry.open(db) as reg:
        assert record is not None and record["change_token"] == reg.change_token()
    assert record["location"] == str(db.resolve())


def test_progress_counts_stages_that_ran_between_two_polls(spark: Any) -> None:
    """A job quicker than the poll interval: the final report still counts its stages and tasks (polling only
    the active stages ended such a job at "0 of 0 tasks", which made this test's neighbour flaky on a fast run)."""
    import io
    import json

    from pipeline.progress import SparkProgress

    stream = io.StringIO()
    with SparkProgress(spark, "json", stream=stream, interval=3600):  # no poll happens inside the block
        spark.range(0, 1000, numPartitions=3).selectExpr("id % 7 AS k").groupBy("k").count().collect()
    last = json.loads(stream.getvalue().splitlines()[-1])["progress"]
    assert last["tasks"] >= 3 and last["tasks_done"] == last["tasks"]
    assert last["stages"] >= 1 and last["stages_done"] == last["stages"]
