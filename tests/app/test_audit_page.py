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
