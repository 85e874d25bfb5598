"""Several servers, one registry: two `schema-explorer serve` processes on one PostgreSQL database, with
embedded writers beside them, storm shared topics and lose, duplicate and skip nothing; a policy set through
one server is in force on the other at once; kill -9 rounds leave every acknowledged write readable."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import storm

pytestmark = [pytest.mark.timeout(300), pytest.mark.server, pytest.mark.slow, pytest.mark.postgres]


def test_two_servers_and_embedded_writers_on_one_database_lose_nothing(postgres_url: str, workdir: Path) -> None:
    names = storm.prepare(postgres_url, 2)
    one = storm.Server(postgres_url, workdir / "one.log").start()
    other = storm.Server(postgres_url, workdir / "other.log").start()
    try:
        files, _, problems = storm.storm(
            db=postgres_url, url=one.url, urls=[one.url, other.url], workdir=workdir, rest_workers=4,
            facade_workers=2, ops=30, topic_names=names, deadline_s=120,
        )  # fmt: skip
        assert problems == []
        results = storm.read_results(files)
        report = storm.verify(postgres_url, results, url=one.url)
        through_other = storm.verify(postgres_url, results, url=other.url)
    finally:
        one.stop()
        other.stop()
    print(json.dumps({k: v for k, v in report.as_dict().items() if k != "problems"}))
    assert report.clean, report.problems[:10]
    assert through_other.unreadable == 0, through_other.problems[:10]
    assert report.writes + report.reads == 6 * 30 and report.errors == 0
    assert report.acknowledged > 0 and report.refused > 0


def test_a_policy_set_through_one_server_is_in_force_on_the_other_at_once(postgres_url: str, workdir: Path) -> None:
    (topic,) = storm.prepare(postgres_url, 1)
    path = topic.split("://", 1)[1]
    namespace = path.rsplit("/", 1)[0]
    one = storm.Server(postgres_url, workdir / "one.log").start()
    other = storm.Server(postgres_url, workdir / "other.log").start()
    try:
        base = {"type": "AVRO", "schema": storm.schema_text(), "properties": {}}
        assert httpx.post(f"{one.url}/admin/v2/schemas/{path}/schema", json=base).status_code == 200
        wider = {**base, "schema": storm.schema_text([("extra", True)])}
        for strategy, accepted in (("ALWAYS_INCOMPATIBLE", False), ("ALWAYS_COMPATIBLE", True)):
            put = httpx.put(f"{one.url}/admin/v2/namespaces/{namespace}/schemaCompatibilityStrategy", json=strategy)
            assert put.status_code in (200, 204)
            got = httpx.get(f"{other.url}/admin/v2/namespaces/{namespace}/schemaCompatibilityStrategy")
            assert got.json() == strategy
            answer = httpx.post(f"{other.url}/admin/v2/schemas/{path}/schema", json=wider)
            assert (answer.status_code == 200) is accepted, answer.text
    finally:
        one.stop()
        other.stop()


def test_kill_9_rounds_keep_every_acknowledged_write(postgres_url: str, workdir: Path) -> None:
    names = storm.prepare(postgres_url, 2)
    all_files: list[Path] = []
    for number in range(2):
        files, figures = storm.crash_round(
            db=postgres_url, workdir=workdir, number=number, topic_names=names, ops=200, kill_after_acks=15
        )
        all_files += files
        assert figures["acknowledged"] >= 15
        report = storm.verify(postgres_url, storm.read_results(all_files))
        assert report.clean, (number, report.problems[:10])
