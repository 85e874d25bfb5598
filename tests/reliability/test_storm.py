"""Concurrency: REST and embedded writers on one SQLite file, mixing compatible, incompatible, duplicate and
deleting writes on shared topics. Nothing acknowledged is lost, no version number is taken twice or skipped,
every acknowledged version reads back, and the checker itself catches each kind of damage."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
import storm

from registry import Registry, SchemaInfo, SchemaType

pytestmark = [pytest.mark.timeout(120), pytest.mark.server, pytest.mark.slow]


def test_a_mixed_storm_loses_and_duplicates_nothing(workdir: Path) -> None:
    db = workdir / "storm.db"
    names = storm.prepare(db, 2)
    server = storm.Server(db, workdir / "serve.log").start()
    try:
        files, _, problems = storm.storm(
            db=db, url=server.url, workdir=workdir, rest_workers=2, facade_workers=2, ops=40,
            topic_names=names, deadline_s=60,
        )  # fmt: skip
        assert problems == []
        results = storm.read_results(files)
        report = storm.verify(db, results, url=server.url)
    finally:
        server.stop()
    figures = report.as_dict()
    print(json.dumps({k: v for k, v in figures.items() if k != "problems"}))
    assert report.clean, report.problems[:10]
    assert report.writes + report.reads == 4 * 40 and report.errors == 0
    assert report.refused > 0 and report.tombstones > 0, "the mix must include refusals and deletes"
    kinds = {(r["mode"], r["kind"], r["status"]) for r in results}
    for mode in ("rest", "facade"):
        assert {(mode, "compatible", "ok"), (mode, "delete", "ok")} <= kinds


# --- the checker catches damage --------------------------------------------------------------------------------


def _small_history(db: Path) -> list[dict[str, object]]:
    """Three acknowledged writes on one topic, recorded as a worker would."""
    names = storm.prepare(db, 1)
    results: list[dict[str, object]] = []
    with Registry.open(db, create=True) as reg:
        for i in range(3):
            text = storm.schema_text([(f"f{i}", False)])
            version = reg.register(names[0], SchemaInfo(type=SchemaType.AVRO, schema=text), user="test").version
            results.append(
                {"kind": "compatible", "topic": names[0], "status": "ok", "version": version,
                 "digest": storm.digest(text)}
            )  # fmt: skip
    return results


def _damage(db: Path, sql: str, *params: object) -> None:
    con = sqlite3.connect(db)
    with con:
        con.execute(sql, params)
    con.close()


def test_the_checker_sees_a_clean_history_as_clean(workdir: Path) -> None:
    db = workdir / "r.db"
    assert storm.verify(db, _small_history(db)).clean


def test_the_checker_counts_a_lost_and_skipped_version(workdir: Path) -> None:
    db = workdir / "r.db"
    results = _small_history(db)
    _damage(db, "DELETE FROM schemas WHERE version = 1")
    report = storm.verify(db, results)
    assert (report.lost, report.skipped_versions, report.clean) == (1, 1, False)


def test_the_checker_counts_a_changed_version_as_lost(workdir: Path) -> None:
    db = workdir / "r.db"
    results = _small_history(db)
    _damage(db, "UPDATE schemas SET data = ? WHERE version = 2", storm.BASE.encode())
    assert storm.verify(db, results).lost == 1


def test_the_checker_counts_a_duplicate_stored_schema(workdir: Path) -> None:
    db = workdir / "r.db"
    results = _small_history(db)
    _damage(db, "UPDATE schemas SET data = (SELECT data FROM schemas WHERE version = 0) WHERE version = 2")
    assert storm.verify(db, results).dedup_failures == 1


def test_the_checker_counts_an_incompatible_version(workdir: Path) -> None:
    db = workdir / "r.db"
    results = _small_history(db)
    required = storm.schema_text([("f0", False), ("must", True)])
    _damage(db, "UPDATE schemas SET data = ? WHERE version = 2", required.encode())
    assert storm.verify(db, results).incompatible_accepted == 1


def test_the_checker_counts_a_missing_audit_entry(workdir: Path) -> None:
    db = workdir / "r.db"
    results = _small_history(db)
    _damage(db, "DELETE FROM audit WHERE detail LIKE '%version 1'")
    assert storm.verify(db, results).audit_missing == 1
