"""`audit drift` (pipeline/drift.py): `compare` on Spark gives `compare`'s answers on the sample-built pair
(tests/drift.py), every state, policy difference, hazard and plan step, whichever way each side is read (a
registry file by key range, a snapshot by byte range, a Parquet export by file), and in `compare`'s output
forms; an input that cannot be read stops before Spark with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from drift import HAZARDS, POLICIES, STATES, build_files
from registry import export_snapshot
from registry import open as open_registry
from registry.compare import Comparison, compare_registries


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_files(tmp_path_factory.mktemp("drift"))


@pytest.fixture(scope="module")
def expected(pair: tuple[Path, Path]) -> Comparison:
    a, b = (open_registry(p, read_only=True) for p in pair)
    try:
        return compare_registries(a, b)
    finally:
        a.close()
        b.close()


def _answers(found: Comparison, *, include_same: bool = False) -> dict[str, Any]:
    """The comparison's JSON form without the two locations (each way of reading names its side its own way)."""
    doc = found.as_json(include_same=include_same)
    doc.pop("from"), doc.pop("to")
    return doc


def test_drift_on_spark_answers_as_compare(spark: Any, pair: tuple[Path, Path], expected: Comparison) -> None:
    from pipeline._open import load_source
    from pipeline.drift import run_drift

    found = run_drift(spark, load_source(db=str(pair[0])), load_source(db=str(pair[1])), include_same=True).comparison
    assert {t.topic: str(t.state) for t in found.drifted} == STATES
    assert {(p.target, p.field, str(p.from_value), str(p.to_value)) for p in found.policies} == {
        (t, f, str(x), str(y)) for t, f, x, y in POLICIES
    }
    assert {h.topic: str(h.reason) for h in found.hazards} == HAZARDS
    assert found.hazards == expected.hazards  # with their explanation objects (rule, direction, field, hint)
    assert found.plan == expected.plan and found.topics == expected.topics
    assert _answers(found, include_same=True) == _answers(expected, include_same=True)


def test_a_snapshot_and_a_parquet_export_compare_as_the_registries(
    spark: Any, pair: tuple[Path, Path], expected: Comparison, tmp_path: Path
) -> None:
    """A read as a snapshot file (byte ranges, shuffled into bundles), B as a Parquet export (its files): the
    same answers, the `same` topics counted though not listed."""
    from pipeline._open import load_source
    from pipeline._parquet_export import export_parquet
    from pipeline.drift import run_drift

    a, b = (open_registry(p, read_only=True) for p in pair)
    try:
        export_snapshot(a, tmp_path / "a.jsonl")
        export_parquet(b, str(pair[1]), str(tmp_path / "b-export"))
    finally:
        a.close()
        b.close()
    source, target = load_source(snapshot=str(tmp_path / "a.jsonl")), load_source(parquet=str(tmp_path / "b-export"))
    found = run_drift(spark, source, target).comparison
    assert found.summary == expected.summary and found.summary["same"] > 0
    assert _answers(found) == _answers(expected)


def test_the_command_prints_what_compare_prints(
    cli_spark: Any, pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    sides = ["--from", str(pair[0]), "--to", str(pair[1])]
    for form in (["--json"], ["--format", "markdown"], []):
        assert main(["compare", *sides, "--plan", *form]) == 1
        wanted = capsys.readouterr().out
        assert main(["audit", "drift", *sides, "--plan", "--progress", "none", *form]) == 1
        got = capsys.readouterr().out
        if form == ["--json"]:
            assert {**json.loads(got), "from": "", "to": ""} == {**json.loads(wanted), "from": "", "to": ""}
        else:  # the first line names the two sides
            assert got.splitlines()[1:] == wanted.splitlines()[1:] and len(got.splitlines()) > 10


def test_no_drift_exits_0(cli_spark: Any, pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "drift", "--from", str(pair[1]), "--to", str(pair[1]), "--progress", "none"]) == 0
    (counts,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("topics: ")]
    assert counts.endswith(" same") and "," not in counts  # e.g. "topics: 49 same"


@pytest.mark.parametrize(
    ("side", "message"),
    [
        ("{missing}", "--to: --db '{missing}': no registry file there"),
        ("{empty}", "--to: --parquet '{empty}': not a Parquet export: no registry table"),
        ("{bad}", "--to: {bad}, line 1: not JSON"),
    ],
    ids=["a missing file", "a folder that is not an export", "a snapshot that is not JSON lines"],
)
def test_bad_sides_stop_before_spark(
    side: str, message: str, pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    paths = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty"), "bad": str(tmp_path / "bad.jsonl")}
    assert main(["audit", "drift", "--from", str(pair[0]), "--to", side.format(**paths)]) == 2
    err = capsys.readouterr().err
    assert message.format(**paths) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "SparkContext" not in err


def test_a_topic_that_does_not_load_is_an_error_and_hides_no_other(sample_source: Any) -> None:
    """Fail closed, per key: a topic whose records do not load (or could not be read) is a problem row, which
    stops the run; the batch's other topics are still compared, as `same` here."""
    from pipeline.drift import Pair, compared, head_records

    keys = ["acme/orders/order-created", "acme/orders/order-status-changed", "initech/hr/employee-records"]
    good, bad, unread = sample_source.key_bundles(keys)
    broken = [dict(r, type="NOPE") if r["kind"] == "version" else r for r in bad.records]
    head = head_records(sample_source.header, list(sample_source.namespace_records.values()))
    sides = ((sample_source.header, head), (sample_source.header, head))
    batch = {
        good.key: Pair(records=[list(good.records), list(good.records)]),
        bad.key: Pair(records=[list(bad.records), broken]),
        unread.key: Pair(records=[list(unread.records), list(unread.records)], problem="B: 1 version row not read"),
    }
    rows, same = compared(batch, sides, include_same=False)
    assert same == 1 and [r["kind"] for r in rows] == ["problem", "problem"]
    assert {r["key"] for r in rows} == {bad.key, unread.key}
    assert "NOPE" in next(r["problem"] for r in rows if r["key"] == bad.key)


def test_a_part_not_wholly_read_stops_the_comparison(sample_source: Any) -> None:
    from pipeline._source import Planned, SourceError
    from pipeline.drift import check_reads

    read = {"kind": "read", "read_part": 3, "read_low": "acme/", "read_high": "globex/", "read_state": None}
    reads = [{**read, "side": 0, "read_error": None, "read_records": 10}]
    reads.append({**read, "side": 1, "read_error": "OperationalError: disk I/O error", "read_records": 4})
    with pytest.raises(SourceError, match=r"1 part\(s\) were not wholly read.*B part 3 \(acme/\.\.globex/\): Oper"):
        check_reads(reads, (sample_source, sample_source), [Planned(), Planned()])
    reads[1]["read_error"] = None
    with pytest.raises(SourceError, match="its end line counts 20 records but 4 were read"):
        check_reads(reads, (sample_source, sample_source), [Planned(), Planned(records=20)])
    assert len(check_reads(reads, (sample_source, sample_source), [Planned(), Planned()])) == 2


@pytest.mark.server
def test_b_served_admin_only_answers_as_compare_over_it(
    spark: Any, pair: tuple[Path, Path], expected: Comparison, tmp_path: Path
) -> None:
    """B as a broker shows it (`serve --admin-only`), read by namespace from the executors: the same states,
    hazards and plan as `compare` against the same URL, and as the registry files give."""
    import shutil

    from pipeline._open import load_source
    from pipeline.drift import run_drift
    from serving import served

    served_b = tmp_path / "b.db"
    shutil.copy(pair[1], served_b)
    with served(served_b, log_dir=tmp_path, admin_only=True) as url:
        found = run_drift(spark, load_source(db=str(pair[0])), load_source(url=url), include_same=True).comparison
        a, b = open_registry(pair[0], read_only=True), open_registry(url, read_only=True)
        try:
            over_url = compare_registries(a, b)
        finally:
            a.close()
            b.close()
    assert _answers(found, include_same=True) == _answers(over_url, include_same=True)
    assert {t.topic: str(t.state) for t in found.drifted} == STATES
    assert {h.topic: str(h.reason) for h in found.hazards} == HAZARDS and found.plan == expected.plan
