"""The Audit page: charts and tables of the Spark pipeline's Parquet tables, or how to produce them.

The tables are written here without Spark, from the pipeline's own row builders (pipeline/compat_matrix.py,
pipeline/policy_impact.py) and the documented data_* columns, so the page reads exactly what the jobs write.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from review_helpers import page_test

from registry import CompatibilityStrategy, Registry, seed_sample_data

pytest.importorskip("pyarrow")
compat_matrix = pytest.importorskip("pipeline.compat_matrix")
policy_impact = pytest.importorskip("pipeline.policy_impact")

ORDER_CREATED = "persistent://acme/orders/order-created"
EMPLOYEES = "persistent://initech/hr/employee-records"


def write(folder: Path, name: str, frame: pd.DataFrame) -> None:
    (folder / name).mkdir(parents=True)
    frame.to_parquet(folder / name / "part-00000.parquet", index=False)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    reg = Registry.in_memory()
    seed_sample_data(reg)
    rows = [
        row for topic in (ORDER_CREATED, EMPLOYEES) for row in compat_matrix.topic_rows(reg, *_parts(topic), topic, 20)
    ]
    write(
        folder,
        "compat_matrix",
        pd.DataFrame([r for r in rows if r["kind"] == "pair"]).reindex(columns=compat_matrix.PAIR_COLUMNS),
    )
    write(
        folder,
        "compat_topics",
        pd.DataFrame([r for r in rows if r["kind"] == "topic"]).reindex(columns=compat_matrix.TOPIC_COLUMNS),
    )
    impact = policy_impact.namespace_rows(reg, "initech/hr", CompatibilityStrategy.FULL_TRANSITIVE)
    topics = pd.DataFrame([r for r in impact if r["kind"] == "topic"]).reindex(columns=policy_impact.TOPIC_COLUMNS)
    write(folder, "policy_impact", topics)
    clients = pd.DataFrame([r for r in impact if r["kind"] == "client"]).reindex(columns=policy_impact.CLIENT_COLUMNS)
    write(folder, "policy_impact_clients", clients)
    write(
        folder,
        "data_versions",
        pd.DataFrame(
            {
                "topic": ["acme/inventory/stock-levels"] * 2,
                "writer_version": [0, 5],
                "reader_version": [5, 5],
                "reader": ["latest"] * 2,
                "schema_type": ["AVRO"] * 2,
                "compatible": [False, True],
                "rule_code": ["READER_FIELD_WITHOUT_DEFAULT", None],
                "decoded_with": [None, "reader"],
                "messages": [12, 30],
                "readable": [0, 30],
                "failed": [12, 0],
            }
        ),
    )
    write(
        folder,
        "data_failures",
        pd.DataFrame(
            {
                "topic": ["acme/inventory/stock-levels"],
                "writer_version": [0],
                "field": ["/fields/5"],
                "reason": ["READER_FIELD_WITHOUT_DEFAULT"],
                "count": [12],
                "example": ["field 'reorderPoint' (int) is in the reader but not in the writer"],
            }
        ),
    )
    return folder


def _parts(topic: str) -> tuple[str, str]:
    tenant, namespace = topic.split("://", 1)[1].split("/")[:2]
    return tenant, f"{tenant}/{namespace}"


def audit_page(folder: Path, tmp_path: Path, **kwargs: object) -> object:
    at = page_test("audit", tmp_path / "registry.db", **kwargs)  # type: ignore[arg-type]
    at.session_state["audit_dir"] = str(folder)
    return at.run()


def test_compat_matrix_heatmap_and_topic_table(outputs: Path, tmp_path: Path) -> None:
    at = audit_page(outputs, tmp_path, topic=EMPLOYEES)
    assert not at.exception
    assert at.selectbox(key="audit_topic").value == EMPLOYEES
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Topics checked"] == "2"
    assert int(metrics["Topics with an incompatible pair"]) >= 1
    at.radio(key="audit_value").set_value("readable").run()
    assert not at.exception
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")


def test_policy_impact_and_data_audit_tables(outputs: Path, tmp_path: Path) -> None:
    at = audit_page(outputs, tmp_path)
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Latest change would be refused"]) >= 1
    assert metrics["Failed"] == "12"
    frames = [d.value for d in at.dataframe]
    assert any("READER_FIELD_WITHOUT_DEFAULT" in set(f.get("reason", [])) for f in frames)


def test_missing_outputs_explain_how_to_produce_them(tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    at = audit_page(empty, tmp_path)
    assert not at.exception
    assert at.warning and "does not exist yet" in at.warning[0].value
    commands = [c.value for c in at.code]
    assert any(c.startswith("schema-explorer audit compat-matrix --db ") and str(empty) in c for c in commands)
    assert any("audit policy-impact" in c and "--strategy" in c for c in commands)
    assert any("audit data" in c and "--messages" in c for c in commands)


def test_a_damaged_table_is_a_short_message(tmp_path: Path) -> None:
    folder = tmp_path / "damaged"
    for name in ("compat_matrix", "compat_topics"):
        (folder / name).mkdir(parents=True)
        (folder / name / "part-00000.parquet").write_bytes(b"not parquet")
    at = audit_page(folder, tmp_path)
    assert not at.exception
    assert any("Cannot read the tables" in e.value for e in at.error)


def test_the_missing_table_name_shows_without_a_stray_backslash(tmp_path: Path) -> None:
    at = audit_page(tmp_path / "nothing-here", tmp_path)
    info = " ".join(i.value for i in at.info)
    assert "`compat_matrix`" in info and "compat\\_matrix" not in info


def _with_record(outputs: Path, tmp_path: Path, **record: object) -> Path:
    import json
    import shutil

    folder = tmp_path / "out"
    shutil.copytree(outputs, folder)
    (folder / "_runs").mkdir()
    (folder / "_runs" / "compat-matrix.json").write_text(json.dumps({"job": "compat-matrix", **record}))
    return folder


def test_tables_say_where_and_when_they_were_computed(outputs: Path, tmp_path: Path, db: Path) -> None:
    with Registry.open(db) as reg:
        token = reg.change_token()
    location = str(db.resolve())
    current = _with_record(outputs, tmp_path, location=location, change_token=token, computed_at=1_700_000_000_000)
    at = page_test("audit", db)
    at.session_state["audit_dir"] = str(current)
    at.run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "2023-11-14 22:13:20 UTC" in captions and location in captions
    assert not [w for w in at.warning if "compat" in w.value or "registry" in w.value]
    with Registry.open(db) as reg:  # a write after the run: the tables now predate the registry
        reg.set_namespace_policy("acme/orders", validation_enforced=True, user="test")
    at.run()
    assert any("changed since these tables were computed" in w.value for w in at.warning)


def test_tables_of_another_registry_or_of_unknown_source_are_flagged(outputs: Path, tmp_path: Path, db: Path) -> None:
    other = _with_record(outputs, tmp_path, location="/elsewhere/registry.db", change_token=1, computed_at=1)
    at = page_test("audit", db)
    at.session_state["audit_dir"] = str(other)
    at.run()
    assert any("come from another registry" in w.value for w in at.warning)
    at = page_test("audit", db)
    at.session_state["audit_dir"] = str(outputs)  # tables without a run record
    at.run()
    assert any("no record of their source" in w.value for w in at.warning)
