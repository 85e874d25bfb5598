"""The Spark audits equal the core's answers computed directly on the same sample data, and bad rows are
counted, never fatal. One SparkSession (conftest.py) serves every test."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from registry import CompatibilityStrategy, Registry
from registry._compatibility import Versioned, can_read, check_with_latest
from registry._types import SchemaData

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ROOT / "sample_data" / "messages"


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    return pq.read_table(out / table).to_pylist()


def _data(entry: Any) -> SchemaData:
    return SchemaData(entry.type, entry.data, entry.properties)


@pytest.fixture(scope="module")
def matrix(spark: Any, sample_source: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipeline.jobs import run_compat_matrix

    out = tmp_path_factory.mktemp("matrix")
    report = run_compat_matrix(spark, sample_source, out, max_versions=20, partitions=3)
    assert report.tables["compat_topics"] == 47
    assert not (out / "_staging").exists()  # the files the tasks read are gone with the job
    return out


def test_compat_matrix_equals_the_cores_pairwise_verdicts(matrix: Path, sample_registry: Registry) -> None:
    got = {(r["topic"], r["reader_version"], r["writer_version"]): r for r in _rows(matrix, "compat_matrix")}
    expected = 0
    for topic in {r["topic"] for r in _rows(matrix, "compat_topics")}:
        live = sample_registry.history(topic)
        for reader in live:
            for writer in live:
                if reader.version == writer.version:
                    continue
                expected += 1
                row = got[(topic, reader.version, writer.version)]
                result = check_with_latest(
                    [Versioned(writer.version, _data(writer))], _data(reader), CompatibilityStrategy.BACKWARD
                )
                assert row["compatible"] == result.compatible, (topic, reader.version, writer.version)
                assert row["readable"] == (not can_read(_data(reader), _data(writer)))
                if not result.compatible:
                    assert row["rule_code"] == str(result.problems[0].code)
                    assert row["reader_path"] == result.problems[0].reader_path
    assert len(got) == expected


def test_compat_topics_say_which_versions_are_still_mutually_readable(matrix: Path) -> None:
    topics = {r["topic"]: r for r in _rows(matrix, "compat_topics")}
    assert all(r["error"] is None for r in topics.values())
    created = topics["persistent://acme/orders/order-created"]
    assert (created["live_versions"], created["pairs"], created["incompatible_pairs"]) == (14, 182, 0)
    assert created["readable_since"] == 0
    # employee-records was built under ALWAYS_COMPATIBLE: only the latest version reads itself
    assert topics["persistent://initech/hr/employee-records"]["readable_since"] == 7
    returns = topics["persistent://acme/orders/returns"]
    assert returns["live_versions"] == 2  # the tombstone cut v0-v2 off


def test_compat_matrix_filters_and_bounds_versions(spark: Any, sample_source: Any, tmp_path: Path) -> None:
    from pipeline.jobs import run_compat_matrix

    run_compat_matrix(spark, sample_source, tmp_path, namespace="acme/orders", max_versions=3)
    topics = _rows(tmp_path, "compat_topics")
    assert {r["namespace"] for r in topics} == {"acme/orders"}
    assert max(r["checked_versions"] for r in topics) == 3
    assert {r["reader_version"] for r in _rows(tmp_path, "compat_matrix") if "order-created" in r["topic"]} == {
        11,
        12,
        13,
    }


def test_policy_impact_equals_registry_policy_impact(
    spark: Any, sample_source: Any, sample_registry: Registry, tmp_path: Path
) -> None:
    from pipeline.jobs import run_policy_impact

    run_policy_impact(spark, sample_source, tmp_path, strategy="FULL_TRANSITIVE", partitions=4)
    rows = {r["topic"]: r for r in _rows(tmp_path, "policy_impact")}
    clients = Counter(r["topic"] for r in _rows(tmp_path, "policy_impact_clients"))
    expected_topics = 0
    for tenant in sample_registry.tenants():
        for ns in sample_registry.namespaces(tenant):
            for impact in sample_registry.policy_impact(ns, "FULL_TRANSITIVE").topics:
                expected_topics += 1
                row = rows[impact.topic]
                assert row["refused_versions"] == list(impact.refused_versions), impact.topic
                assert row["overridden"] == impact.overridden
                assert row["latest_refused"] == impact.latest_refused
                assert row["current_strategy"] == str(impact.current.value)
                assert row["refused_clients"] == len(impact.refused_clients) == clients[impact.topic]
                if impact.first_problem is not None:
                    assert row["rule_code"] == str(impact.first_problem.code)
    assert len(rows) == expected_topics == 47
    assert rows["persistent://initech/analytics/tps-reports"]["overridden"]
    assert rows["persistent://initech/hr/employee-records"]["refused_versions"]


def test_policy_impact_of_one_namespace(spark: Any, sample_source: Any, tmp_path: Path) -> None:
    from pipeline.jobs import run_policy_impact

    run_policy_impact(spark, sample_source, tmp_path, strategy="backward", namespace="initech/hr")
    rows = _rows(tmp_path, "policy_impact")
    assert {r["namespace"] for r in rows} == {"initech/hr"} and len(rows) == 4
    assert {r["proposed"] for r in rows} == {"BACKWARD"}


def _archive_rows(folder: Path) -> list[dict[str, Any] | None]:
    rows: list[dict[str, Any] | None] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                rows.append(None)
    return rows


@pytest.fixture(scope="module")
def data_out(spark: Any, sample_source: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipeline._archive import find_archive
    from pipeline.jobs import run_data_audit

    out = tmp_path_factory.mktemp("data")
    run_data_audit(spark, sample_source, out, find_archive(str(MESSAGES)))
    return out


def test_data_audit_verdicts_equal_the_cores(data_out: Path, sample_registry: Registry) -> None:
    versions = {(r["topic"], r["writer_version"]): r for r in _rows(data_out, "data_versions")}
    archived: Counter[tuple[str, int]] = Counter()
    for row in _archive_rows(MESSAGES):
        if row is not None and isinstance(row.get("version"), int) and row["payload"] != "%%%":
            archived[(row["topic"].split("://")[1], row["version"])] += 1
    known = {t.split("://")[1] for t in {r["topic"] for r in _archive_rows(MESSAGES) if r}} - {
        "acme/orders/order-archived"
    }
    for (topic, version), count in archived.items():
        live = {e.version: e for e in sample_registry.history(topic)} if topic in known else {}
        row = versions[(topic, version)]
        assert row["messages"] == count
        if version not in live:
            continue
        latest = sample_registry.get(topic)
        verdict = check_with_latest(
            [Versioned(version, _data(live[version]))], _data(latest), CompatibilityStrategy.BACKWARD
        )
        assert row["compatible"] == verdict.compatible, (topic, version)
        assert row["reader_version"] == latest.version
        if not verdict.compatible:
            assert row["readable"] == 0
            assert row["rule_code"] == str(verdict.problems[0].code)


def test_data_audit_counts_every_damaged_row_with_its_reason(data_out: Path) -> None:
    failures: Counter[str] = Counter()
    for r in _rows(data_out, "data_failures"):
        failures[r["reason"]] += r["count"]
    # damaged.jsonl: a cut-off line, a truncated payload, version 99, an unknown topic, a payload not base64,
    # an INT32 of 3 bytes, a SEPARATED key that is not base64, an INLINE key length past the end
    assert failures["BAD_ROW"] == 2
    assert failures["CORRUPT_PAYLOAD"] == 4
    assert failures["UNKNOWN_VERSION"] == 1
    assert failures["UNKNOWN_TOPIC"] == 1
    rules = {r["reason"] for r in _rows(data_out, "data_failures")}
    assert {"READER_FIELD_WITHOUT_DEFAULT", "TYPE_MISMATCH"} <= rules
    corrupt = {(r["topic"], r["part"]): r["example"] for r in _rows(data_out, "data_failures")
               if r["reason"] == "CORRUPT_PAYLOAD"}  # fmt: skip
    assert corrupt[("globex/iot/battery-level", None)].startswith("Size of data received by IntSchema is not 4")
    assert "is not base64" in corrupt[("acme/payments/payment-methods", "key")]
    assert "key length 256 does not fit" in corrupt[("initech/hr/badge-swipes", None)]


def test_data_audit_reads_key_value_and_primitive_messages(data_out: Path, sample_registry: Registry) -> None:
    versions = {(r["topic"], r["writer_version"]): r for r in _rows(data_out, "data_versions")}
    kinds = {r["schema_type"] for r in versions.values()}
    assert {"KEY_VALUE", "BOOLEAN", "STRING", "INT32", "INT64", "DOUBLE", "NONE"} <= kinds
    assert all(r["rule_code"] != "UNSUPPORTED_SCHEMA_TYPE" for r in versions.values())
    # every readable KEY_VALUE and primitive message read with its reader: both parts, INLINE and SEPARATED
    for (topic, version), row in versions.items():
        if row["schema_type"] in ("KEY_VALUE", "BOOLEAN", "STRING", "INT32", "INT64", "DOUBLE", "NONE"):
            assert row["readable"] >= (12 if row["compatible"] else 0), (topic, version)
            assert row["readable"] + row["failed"] == row["messages"]
    assert versions[("initech/hr/badge-swipes", 0)]["rule_code"] == "TYPE_MISMATCH"
    (refused,) = [r for r in _rows(data_out, "data_failures") if r["topic"] == "initech/hr/badge-swipes"
                  and r["writer_version"] == 0]  # fmt: skip
    assert (refused["part"], refused["reason"], refused["count"]) == ("value", "TYPE_MISMATCH", 12)
    stats = {(r["topic"], r["part"], r["field"]): r for r in _rows(data_out, "data_field_stats")}
    # SEPARATED: the key part comes from the message key, its fields counted like the value's
    assert stats[("acme/payments/payment-methods", "key", "customerId")]["values"] == 24
    assert stats[("acme/payments/payment-methods", "value", "token")]["values"] == 24
    # a primitive key part and a primitive topic: one unnamed field of the primitive's type
    assert stats[("initech/hr/badge-swipes", "key", None)]["type"] == "INT64"
    battery = stats[("globex/iot/battery-level", None, None)]
    assert (battery["type"], battery["values"]) == ("INT32", 12) and 0 <= battery["min"] <= battery["max"] <= 100
    paused = [r for r in _rows(data_out, "data_enum_counts") if r["topic"] == "acme/inventory/restock-paused"]
    assert {r["symbol"] for r in paused} <= {"true", "false"} and sum(r["count"] for r in paused) == 12


def test_data_audit_field_statistics(data_out: Path) -> None:
    stats = {(r["topic"], r["field"]): r for r in _rows(data_out, "data_field_stats")}
    channel = stats[("acme/orders/order-created", "channel")]
    assert channel["type"] == "enum" and channel["nulls"] == 0 and channel["values"] == 168
    symbols = {
        r["symbol"]: r["count"]
        for r in _rows(data_out, "data_enum_counts")
        if (r["topic"], r["field"]) == ("acme/orders/order-created", "channel")
    }
    assert sum(symbols.values()) == 168
    numbers = [r for r in stats.values() if r["type"] in ("int", "long", "double") and r["values"] > r["nulls"]]
    assert numbers and all(r["min"] <= r["max"] for r in numbers)
    assert any(r["topic"] == "acme/payments/ledger-entries" for r in stats.values())  # PROTOBUF_NATIVE decoded


def test_a_malformed_archive_is_counted_not_fatal(spark: Any, sample_source: Any, tmp_path: Path) -> None:
    from pipeline._archive import find_archive
    from pipeline.jobs import run_data_audit

    good = next(r for r in _archive_rows(MESSAGES) if r and r["topic"].endswith("order-created") and r["version"] == 13)
    lines = [
        json.dumps(good),
        json.dumps(good),
        "{not json at all",
        json.dumps({**good, "version": "thirteen"}),
        json.dumps({**good, "payload": base64.b64encode(b"\x02\xff\xff").decode()}),
        json.dumps({**good, "payload": "!!"}),
        json.dumps({**good, "topic": "a/b/c/d"}),
        json.dumps({"version": 13, "payload": good["payload"]}),
        "",
    ]
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / "part.jsonl").write_text("\n".join(lines), encoding="utf-8")
    run_data_audit(spark, sample_source, tmp_path / "out", find_archive(str(archive)))
    reasons: Counter[str] = Counter()
    for r in _rows(tmp_path / "out", "data_failures"):
        reasons[r["reason"]] += r["count"]
    assert reasons == {"BAD_ROW": 5, "CORRUPT_PAYLOAD": 1}
    (row,) = [r for r in _rows(tmp_path / "out", "data_versions") if r["writer_version"] == 13]
    assert (row["messages"], row["readable"], row["failed"]) == (3, 2, 1)


def test_a_candidate_reader_is_checked_by_the_core(spark: Any, sample_source: Any, tmp_path: Path) -> None:
    from pipeline._archive import find_archive
    from pipeline.jobs import run_data_audit

    latest = json.loads((ROOT / "sample_data/schemas/acme/orders/order-status-changed/v4.avsc").read_text())
    latest["fields"].append({"name": "reasonCode", "type": "string"})  # required, no default
    candidate = tmp_path / "candidate.avsc"
    candidate.write_text(json.dumps(latest), encoding="utf-8")
    run_data_audit(
        spark,
        sample_source,
        tmp_path / "out",
        find_archive(str(MESSAGES)),
        reader=str(candidate),
        topic="acme/orders/order-status-changed",
    )
    rows = [r for r in _rows(tmp_path / "out", "data_versions") if r["topic"] == "acme/orders/order-status-changed"]
    assert rows and all(r["reader"] == "candidate" and r["readable"] == 0 for r in rows)
    assert all(r["rule_code"] == "READER_FIELD_WITHOUT_DEFAULT" for r in rows)


def test_bundles_the_driver_holds_reach_executors_as_files_not_inside_tasks(
    spark: Any, sample_source: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DataFrame made from the driver's rows ships them inside its tasks (158 MB tasks at 10,000 topics); the
    bundles of a registry held by the driver are staged as Parquet and scanned by the executors."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    from pipeline import _staged, compat_matrix
    from pipeline._tasks import with_reads

    monkeypatch.setattr(_staged, "BUNDLES_PER_BATCH", 5)  # the sample's topics then span several row groups
    bundles = sample_source.key_bundles(sorted(sample_source._keys()))
    job = compat_matrix.make_job(sample_source.header, 20)
    frame = _staged.staged_frame(spark, bundles, job, with_reads(compat_matrix.OUTPUT), 3, tmp_path / "work")
    plan = frame._jdf.queryExecution().executedPlan().toString()
    assert "FileScan parquet" in plan and "LocalTableScan" not in plan and "ExistingRDD" not in plan
    assert frame.rdd.getNumPartitions() == 3
    topics = {r["topic"] for r in frame.filter(F.col("kind") == "topic").select("topic").collect()}
    assert topics == set(sample_source.topic_names())
    # what one executor holds at once is bounded: row groups of BUNDLES_PER_BATCH bundles
    groups = [pq.ParquetFile(f).metadata for f in (tmp_path / "work").rglob("*.parquet")]
    sizes = [m.row_group(i).num_rows for m in groups for i in range(m.num_row_groups)]
    assert len(sizes) >= 9 and max(sizes) == 5 and sum(sizes) == len(bundles)


def test_the_code_archive_is_an_importable_copy_of_the_project(tmp_path: Path) -> None:
    """What a cluster's executors import (SparkContext.addPyFile): every source of registry/ and pipeline/, no
    compiled module, and it imports from the zip ahead of any installed copy."""
    import subprocess
    import sys
    import zipfile

    from pipeline._spark import code_archive

    archive = code_archive()
    names = zipfile.ZipFile(archive).namelist()
    assert {"registry/__init__.py", "registry/avro/_schema.py", "pipeline/jobs.py"} <= set(names)
    assert not [n for n in names if not n.endswith(".py")]
    code = f"import sys; sys.path.insert(0, {str(archive)!r}); import registry, pipeline.jobs; print(registry.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{archive}/registry/__init__.py"
