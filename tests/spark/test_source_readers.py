"""The readers the audits run on: every task reads its own part of the source (key ranges of a SQLite file or a
PostgreSQL database, byte ranges of a snapshot file) and the tables equal those of the reader they replaced,
which held every record on the driver. A registry changed during an audit is reported as such (PostgreSQL's
exported snapshot keeps every task on the planned state instead), and a part whose read fails is counted with
its reason without failing the job."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import registry
from registry import Registry, SchemaInfo, SchemaType, import_snapshot

TABLES = {"compat": ("compat_matrix", "compat_topics"), "impact": ("policy_impact", "policy_impact_clients")}
ADDED = "persistent://acme/orders/added-during-the-audit"


def _tables(out: Path, names: tuple[str, ...]) -> dict[str, list[str]]:
    return {name: sorted(map(str, pq.read_table(out / name).to_pylist())) for name in names}


def _reads(out: Path) -> list[dict[str, Any]]:
    return pq.read_table(out / "source_reads").to_pylist()


def _audits(spark: Any, source: Any, out: Path) -> dict[str, list[str]]:
    from pipeline.jobs import run_compat_matrix, run_policy_impact

    run_compat_matrix(spark, source, out / "compat", partitions=3)
    run_policy_impact(spark, source, out / "impact", strategy="FULL_TRANSITIVE", partitions=3)
    return {**_tables(out / "compat", TABLES["compat"]), **_tables(out / "impact", TABLES["impact"])}


def _loaded(location: str, snapshot: Path) -> str:
    """`location` made a registry holding the snapshot (the sample registry, as the old reader reads it)."""
    reg = Registry.open(location, create=True)
    try:
        import_snapshot(snapshot, into=reg)
    finally:
        reg.close()
    return location


@pytest.fixture(scope="module")
def replaced(spark: Any, sample_source: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The tables of the reader the new ones replaced (every record on the driver, staged for the executors)."""
    return _audits(spark, sample_source, tmp_path_factory.mktemp("replaced"))


@pytest.fixture
def location(request: pytest.FixtureRequest, sample_snapshot: Path, tmp_path: Path) -> str:
    """The sample registry in a SQLite file or a fresh PostgreSQL database (the fixture's parameter)."""
    if request.param == "postgresql":
        return _loaded(request.getfixturevalue("postgres_url"), sample_snapshot)
    return _loaded(str(tmp_path / "registry.db"), sample_snapshot)


SQL = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("location", SQL, indirect=True)
def test_a_sql_registry_read_by_key_range_gives_the_replaced_readers_tables(
    spark: Any, location: str, replaced: dict[str, list[str]], tmp_path: Path
) -> None:
    from pipeline._open import load_source

    source = load_source(db=location)
    assert _audits(spark, source, tmp_path) == replaced
    reads = _reads(tmp_path / "compat")
    assert len(reads) == 3 and not [r for r in reads if r["error"]]  # three key ranges, each read by its task
    assert sum(r["topics"] for r in reads) == 47
    with registry.open(location, read_only=True) as reg:
        assert {r["state"] for r in reads} == {reg.change_token()}


def test_a_snapshot_file_read_by_byte_range_gives_the_replaced_readers_tables(
    spark: Any, sample_snapshot: Path, replaced: dict[str, list[str]], tmp_path: Path
) -> None:
    from pipeline._open import load_source

    source = load_source(snapshot=str(sample_snapshot))
    assert _audits(spark, source, tmp_path) == replaced
    reads = [r for r in _reads(tmp_path / "compat") if r["part"] >= 0]  # the byte ranges (not the assembling)
    assert len(reads) >= 2 and not [r for r in reads if r["error"]]
    assert reads[0]["low"] == "0" and reads[-1]["high"] == str(sample_snapshot.stat().st_size)


def test_a_parquet_export_gives_the_replaced_readers_tables(
    spark: Any, sample_snapshot: Path, replaced: dict[str, list[str]], tmp_path: Path
) -> None:
    """`export --format parquet` writes tables any Parquet reader reads (partition folders by tenant and
    namespace), and the audits read such a folder as their source."""
    import pyarrow.dataset as ds

    from cli.main import main
    from pipeline._open import load_source

    location = _loaded(str(tmp_path / "registry.db"), sample_snapshot)
    assert main(["export", "--format", "parquet", "--db", location, str(tmp_path / "export")]) == 0
    topics = ds.dataset(tmp_path / "export" / "topics", partitioning="hive").to_table().to_pylist()
    assert len(topics) == 47 and {(t["tenant"], t["namespace"]) for t in topics} >= {("acme", "orders")}
    versions = sample_snapshot.read_text(encoding="utf-8").count('"kind":"version"')
    assert ds.dataset(tmp_path / "export" / "versions").count_rows() == versions
    with registry.open(location, read_only=True) as reg:
        token = reg.change_token()
    source = load_source(parquet=str(tmp_path / "export"))
    assert _audits(spark, source, tmp_path / "out") == replaced
    reads = _reads(tmp_path / "out" / "compat")
    assert not [r for r in reads if r["error"]] and {r["state"] for r in reads} <= {None, token}


def _changed_after_planning(monkeypatch: pytest.MonkeyPatch, source: Any, location: str) -> None:
    """Make `source` plan its job, then register a new topic before any task reads."""
    planned_by = type(source).pinned

    @contextmanager
    def pinned_then_changed(self: Any) -> Iterator[Any]:
        with planned_by(self) as planned:
            with registry.open(location) as reg:
                reg.register(ADDED, SchemaInfo(type=SchemaType.STRING, schema=""))
            yield planned

    monkeypatch.setattr(type(source), "pinned", pinned_then_changed)


@pytest.mark.parametrize("location", SQL, indirect=True)
def test_a_registry_changed_during_an_audit(
    spark: Any, location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite cannot share one state between tasks: each reads its range in one transaction and the job names
    the ranges read from a newer state than the plan's. PostgreSQL's tasks all open the plan's snapshot."""
    from pipeline._open import load_source
    from pipeline.jobs import run_compat_matrix

    source = load_source(db=location)
    _changed_after_planning(monkeypatch, source, location)
    report = run_compat_matrix(spark, source, tmp_path, partitions=3)
    topics = {r["topic"] for r in pq.read_table(tmp_path / "compat_topics").to_pylist()}
    states = {r["state"] for r in _reads(tmp_path)}
    if location.startswith("postgresql"):
        assert not report.changed and states == {report.state}
        assert len(topics) == 47 and ADDED not in topics
        assert "changed during the run" not in str(report)
    else:
        assert report.changed and report.state is not None and states == {report.state + 1}
        assert len(topics) == 48 and ADDED in topics
        line = next(x for x in report.lines if "changed during the run" in x)
        assert f"change token {report.state} when planned, {report.state + 1} at the latest read" in line
        assert "3 parts read the newer state" in line and "may reflect it" in line


def _damaged(tmp_path: Path, sample_snapshot: Path, sql: str) -> str:
    """The sample registry in a SQLite file, then `sql` run on it directly: a stored value the registry refuses."""
    location = _loaded(str(tmp_path / "registry.db"), sample_snapshot)
    with sqlite3.connect(location) as db:
        db.execute(sql)
    db.close()
    return location


def test_a_part_whose_read_fails_is_counted_and_the_job_goes_on(
    spark: Any, sample_snapshot: Path, tmp_path: Path
) -> None:
    """A namespace policy that is not JSON stops the read of the key range holding that namespace's topics."""
    from pipeline._open import load_source
    from pipeline.jobs import run_compat_matrix

    location = _damaged(tmp_path, sample_snapshot, "UPDATE namespaces SET policy = 'x' WHERE name = 'initech/legacy'")
    report = run_compat_matrix(spark, load_source(db=location), tmp_path / "out", partitions=3)
    reads = _reads(tmp_path / "out")
    failed = [r for r in reads if r["error"]]
    assert len(reads) == 3 and len(failed) == 1 and "initech/legacy" in failed[0]["error"]
    topics = {t["topic"] for t in pq.read_table(tmp_path / "out" / "compat_topics").to_pylist()}
    assert topics and not [t for t in topics if "initech/legacy" in t]  # the other ranges' topics are judged
    assert sum(r["topics"] for r in reads if not r["error"]) <= len(topics)
    assert any("1 parts were not (wholly) read" in line and "initech/legacy" in line for line in report.lines)


def test_a_topic_whose_rows_cannot_be_read_is_counted_with_the_reason(
    spark: Any, sample_snapshot: Path, tmp_path: Path
) -> None:
    from pipeline._open import load_source
    from pipeline.jobs import run_compat_matrix

    sql = "UPDATE schemas SET type = 'NOT_A_TYPE' WHERE schema_id = 'acme/orders/order-created' AND version = 2"
    report = run_compat_matrix(spark, load_source(db=_damaged(tmp_path, sample_snapshot, sql)), tmp_path, partitions=3)
    assert not [r for r in _reads(tmp_path) if r["error"]]
    rows = {t["topic"]: t for t in pq.read_table(tmp_path / "compat_topics").to_pylist()}
    assert len(rows) == 47
    error = rows["persistent://acme/orders/order-created"]["error"]
    assert error.startswith("unreadable version 2 row: ValueError:") and "NOT_A_TYPE" in error
    assert [t for t, r in rows.items() if r["error"]] == ["persistent://acme/orders/order-created"]
    assert "1 topics could not be checked" in str(report)


def test_unreadable_snapshot_lines_are_counted_with_their_reason(
    spark: Any, sample_snapshot: Path, tmp_path: Path
) -> None:
    from pipeline._open import load_source
    from pipeline.jobs import run_compat_matrix

    lines = sample_snapshot.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"kind":"version"' in line)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join([*lines[:at], "{not json\n", *lines[at:]]), encoding="utf-8")
    report = run_compat_matrix(spark, load_source(snapshot=str(damaged)), tmp_path / "out", partitions=2)
    failed = [r for r in _reads(tmp_path / "out") if r["error"]]
    assert len(failed) == 1 and failed[0]["error"].startswith("1 line(s) not read; first: byte ")
    assert report.tables["compat_topics"] == 47
    assert not any("end line counts" in line for line in report.lines)  # the bad line is not a record


def test_the_command_exits_1_when_a_part_was_not_wholly_read(
    cli_spark: Any, sample_snapshot: Path, tmp_path: Path, capsys: Any
) -> None:
    """The tables are written, but a run that could not read all of its source is never a clean pass."""
    from cli.main import main

    location = _damaged(tmp_path, sample_snapshot, "UPDATE namespaces SET policy = 'x' WHERE name = 'initech/legacy'")
    argv = ["audit", "compat-matrix", "--db", location, "--out", str(tmp_path / "out"), "--progress", "none"]
    assert main([*argv, "--partitions", "3"]) == 1
    captured = capsys.readouterr()
    assert "1 parts were not (wholly) read" in captured.out
    assert captured.err.strip() == "1 part(s) of the source were not wholly read; see source_reads"
    assert pq.read_table(tmp_path / "out" / "compat_topics").num_rows > 0
