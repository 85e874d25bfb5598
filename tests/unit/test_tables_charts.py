"""registry.views.tables, registry.views.charts and registry.views.notebook over the sample registry: the
columns the app and the notebooks rely on, charts that validate against Vega-Lite, and a compatibility
matrix that agrees with the Spark job's, pair for pair."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pytest

from registry import (
    CompatibilityStrategy,
    Registry,
    RegistryError,
    RegistryNotFoundError,
    SchemaInfo,
    SchemaType,
    seed_sample_data,
)
from registry.views import charts, notebook, tables

RETURNS = "persistent://acme/orders/returns"  # a tombstone in its history, recorded clients
STOCK = "persistent://acme/inventory/stock-levels"  # pairs that do not read each other


@pytest.fixture(scope="module")
def reg() -> Registry:
    reg = Registry.in_memory()
    seed_sample_data(reg)
    return reg


@pytest.fixture(scope="module")
def what_if(reg: Registry) -> Any:
    doc = json.loads(reg.get(RETURNS).schema)
    doc["fields"].append({"name": "refundChannel", "type": "string"})
    return reg.what_if(RETURNS, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc)))


def test_the_core_facade_imports_without_pandas_or_altair() -> None:
    code = "import sys, registry; print(sorted(m for m in ('pandas', 'altair', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- tables -----------------------------------------------------------------------------------------------------


def test_topics_frame_has_one_row_per_topic_with_typed_columns(reg: Registry) -> None:
    frame = tables.topics_frame(reg.search_topics(limit=100))
    assert list(frame.columns) == list(tables.TOPIC_COLUMNS)
    assert len(frame) == 47 and frame["topic"].is_unique
    assert str(frame["updated_at"].dtype).startswith("datetime64") and str(frame["updated_at"].dt.tz) == "UTC"
    assert str(frame["latest_version"].dtype) == "Int64"
    row = frame.set_index("topic").loc[RETURNS]
    assert (row["schema_type"], row["versions"], row["latest_version"], row["strategy"]) == ("AVRO", 2, 5, "BACKWARD")


def test_history_frame_keeps_tombstones(reg: Registry) -> None:
    frame = tables.history_frame(reg.history(RETURNS, include_deleted=True))
    assert list(frame.columns) == list(tables.HISTORY_COLUMNS)
    assert list(frame["version"]) == [0, 1, 2, 3, 4, 5]
    assert list(frame["deleted"]) == [False, False, False, True, False, False]
    assert frame["registered_at"].is_monotonic_increasing


def test_strategy_frame_is_the_8_strategies(what_if: Any) -> None:
    frame = tables.strategy_frame(what_if).set_index("strategy")
    assert list(frame.index) == [s.value for s in CompatibilityStrategy if s.value != "UNDEFINED"]
    assert frame["effective"].sum() == 1 and frame.loc["BACKWARD", "effective"]
    assert not frame.loc["BACKWARD", "accepted"] and frame.loc["FORWARD", "accepted"]
    assert frame.loc["BACKWARD", "rule_code"] == "READER_FIELD_WITHOUT_DEFAULT"
    assert frame.loc["BACKWARD", "upgrade_order"] == "consumers first"


def test_problem_advisory_change_client_plan_and_impact_frames(reg: Registry, what_if: Any) -> None:
    problems = tables.problems_frame(what_if.result)
    assert list(problems.columns) == list(tables.PROBLEM_COLUMNS)
    assert problems.loc[0, "code"] == "READER_FIELD_WITHOUT_DEFAULT" and problems.loc[0, "version"] == 5
    assert list(tables.advisories_frame(what_if).columns) == list(tables.ADVISORY_COLUMNS)
    changes = tables.changes_frame(what_if.diff)
    assert list(changes.columns) == list(tables.CHANGE_COLUMNS)
    assert changes.loc[0, "kind"] == "FIELD_ADDED" and changes.loc[0, "is_breaking"]
    assert tables.changes_frame(None).empty
    clients = tables.clients_frame(reg.clients(RETURNS))
    assert set(clients["role"]) == {"producer", "consumer"} and str(clients["version"].dtype) == "Int64"
    plan = tables.upgrade_plan_frame(what_if.plan)
    assert list(plan.columns) == list(tables.PLAN_COLUMNS) and list(plan["step"]) == sorted(plan["step"])
    impact = tables.policy_impact_frame(reg.policy_impact("acme/orders", "FULL_TRANSITIVE"))
    assert len(impact) == 8 and impact.set_index("topic").loc["persistent://acme/orders/order-cancelled", "overridden"]


def test_empty_inputs_give_empty_frames_with_the_columns() -> None:
    assert list(tables.history_frame([]).columns) == list(tables.HISTORY_COLUMNS)
    assert list(tables.topics_frame([]).columns) == list(tables.TOPIC_COLUMNS)
    assert tables.problems_frame(()).empty


def test_compatibility_matrix_has_every_ordered_pair(reg: Registry) -> None:
    frame = tables.compatibility_matrix(reg, STOCK)
    assert list(frame.columns) == list(tables.COMPAT_MATRIX_COLUMNS)
    live = len(reg.history(STOCK))
    assert len(frame) == live * (live - 1)
    refused = frame[~frame["compatible"]]
    assert not refused.empty and refused["rule_code"].notna().all()
    assert frame[frame["compatible"]]["rule_code"].isna().all()
    assert set(frame["topic"]) == {STOCK} and set(frame["namespace"]) == {"acme/inventory"}


def test_compatibility_matrix_agrees_with_the_spark_job_row_for_row(reg: Registry) -> None:
    job = pytest.importorskip("pipeline.compat_matrix")
    for topic in (STOCK, RETURNS, "persistent://initech/hr/employee-records", "persistent://initech/hr/org-chart"):
        ours = tables.compatibility_matrix(reg, topic)
        name = topic.split("://", 1)[1].split("/")
        rows = [r for r in job.topic_rows(reg, name[0], f"{name[0]}/{name[1]}", topic, 20) if r["kind"] == "pair"]
        theirs = pd.DataFrame(rows)[list(tables.COMPAT_MATRIX_COLUMNS)]
        key = ["reader_version", "writer_version"]
        left = ours.sort_values(key).reset_index(drop=True)
        right = theirs.sort_values(key).reset_index(drop=True)
        for column in ("reader_version", "writer_version", "compatible", "readable", "rule_code"):
            assert list(left[column].astype(object)) == list(right[column].astype(object)), (topic, column)


# --- charts -----------------------------------------------------------------------------------------------------


def spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    return chart.to_dict()  # validates against the Vega-Lite schema


def test_charts_are_themed_for_light_and_dark() -> None:
    frame = pd.DataFrame(
        {"topic": ["t", "t"], "reader_version": [0, 1], "writer_version": [1, 0], "compatible": [True, False]}
    ).assign(rule_code=[None, "TYPE_MISMATCH"])
    config = spec(charts.compatibility_heatmap(frame))["config"]
    assert config["background"] == "transparent"
    assert config["axis"]["labelColor"] == config["legend"]["labelColor"] == charts.TEXT_COLOR


def test_version_timeline_marks_tombstones(reg: Registry) -> None:
    chart = spec(charts.version_timeline(reg.history(RETURNS, include_deleted=True)))
    assert len(chart["layer"]) == 3
    points = chart["layer"][1]
    assert points["encoding"]["shape"]["scale"]["range"] == ["circle", "cross"]
    assert {t["field"] for t in points["encoding"]["tooltip"]} >= {"version", "type", "registered_at", "user"}
    data = next(iter(chart["datasets"].values()))
    assert [row["status"] for row in data].count("tombstone (deleted)") == 1
    assert spec(charts.version_timeline([]))


def test_compatibility_heatmap_from_the_matrix(reg: Registry) -> None:
    frame = tables.compatibility_matrix(reg, STOCK)
    chart = spec(charts.compatibility_heatmap(frame))
    rect = chart["layer"][0]
    assert rect["encoding"]["x"]["field"] == "writer_version" and rect["encoding"]["y"]["field"] == "reader_version"
    assert {t["field"] for t in rect["encoding"]["tooltip"]} >= {"rule_code", "message", "readable"}
    data = next(iter(chart["datasets"].values()))
    assert sum(row["verdict"] == "same version" for row in data) == len(reg.history(STOCK))
    assert spec(charts.compatibility_heatmap(frame, value="readable"))


def test_compatibility_heatmap_facets_several_topics_and_filters_one(reg: Registry) -> None:
    frame = pd.concat([tables.compatibility_matrix(reg, t) for t in (STOCK, RETURNS)])
    assert "facet" in spec(charts.compatibility_heatmap(frame))
    single = spec(charts.compatibility_heatmap(frame, topic=RETURNS))
    assert "facet" not in single and RETURNS in single["title"]["text"]


def test_compatibility_heatmap_names_a_missing_column() -> None:
    frame = pd.DataFrame({"topic": ["t"], "reader_version": [0], "writer_version": [1], "compatible": [True]})
    with pytest.raises(ValueError, match="readable"):
        charts.compatibility_heatmap(frame.assign(rule_code=[None]), value="readable")


def test_strategy_matrix_chart_outlines_the_effective_strategy(what_if: Any) -> None:
    chart = spec(charts.strategy_matrix_chart(what_if))
    assert chart["layer"][0]["encoding"]["y"]["sort"][0] == "ALWAYS_INCOMPATIBLE"
    data = next(iter(chart["datasets"].values()))
    assert [row["strategy"] for row in data if row["effective"]] == ["BACKWARD"]
    assert len(data) == 8


# --- notebook helpers -------------------------------------------------------------------------------------------


def test_topics_pages_through_everything(reg: Registry) -> None:
    assert len(notebook.topics(reg, page_size=5)) == 47
    assert set(notebook.topics(reg, namespace="acme/orders", schema_types=["avro"])["schema_type"]) == {"AVRO"}


def test_history_is_a_sequence_that_displays(reg: Registry) -> None:
    history = notebook.history(reg, RETURNS)
    assert len(history) == 6 and history[-1].version == 5 and history.version(3).deleted
    assert repr(history) == f"History({RETURNS!r}, versions=[0, 1, 2, 3†, 4, 5])"
    assert "tombstone" in history._repr_html_() and len(history.frame()) == 6
    assert spec(history.chart())
    with pytest.raises(KeyError, match="no version 9"):
        history.version(9)


def record(*more: dict[str, Any]) -> SchemaInfo:
    fields = [{"name": "a", "type": "string"}, *more]
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps({"type": "record", "name": "R", "fields": fields}))


def small_registry(target: Registry) -> Registry:
    target.set_namespace_policy("acme/orders", compatibility="BACKWARD")
    target.register(RETURNS, record())
    target.connect_consumer(RETURNS, None, subscription="s", name="c")
    return target


@pytest.mark.parametrize("storage", ["sqlite file", "memory"])
def test_a_scratch_copy_is_independent(storage: str, tmp_path: Path) -> None:
    original = small_registry(
        Registry.open(tmp_path / "a b#.db", create=True) if storage == "sqlite file" else Registry.in_memory()
    )
    scratch = notebook.scratch_copy(original, tmp_path / "scratch.db")
    try:
        assert scratch.location == str(tmp_path / "scratch.db")
        assert notebook.topics(scratch).equals(notebook.topics(original))
        assert scratch.clients() == original.clients()
        scratch.set_namespace_policy("acme/orders", compatibility="FULL_TRANSITIVE")
        scratch.register(RETURNS, record({"name": "b", "type": "int", "default": 0}))
        assert scratch.effective_policy(RETURNS).compatibility.value is CompatibilityStrategy.FULL_TRANSITIVE
        assert original.effective_policy(RETURNS).compatibility.value is CompatibilityStrategy.BACKWARD
        assert len(scratch.history(RETURNS)) == 2 and len(original.history(RETURNS)) == 1
        with pytest.raises(RegistryError, match="exists"):
            notebook.scratch_copy(original, tmp_path / "scratch.db")
    finally:
        scratch.close()
        original.close()


def test_open_registry_seeds_an_empty_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seeded: list[str] = []
    monkeypatch.setattr(notebook, "seed_sample_data", lambda reg: seeded.append(reg.location))
    notebook.open_registry(tmp_path / "a.db").close()
    with pytest.raises(RegistryNotFoundError, match="no registry at"):
        notebook.open_registry(tmp_path / "b.db", seed_if_empty=False)
    assert not (tmp_path / "b.db").exists()
    with Registry.open(tmp_path / "c.db", create=True) as full:
        full.create_tenant("t")
    notebook.open_registry(tmp_path / "c.db").close()
    monkeypatch.setenv("SCHEMA_EXPLORER_DB", str(tmp_path / "d.db"))
    notebook.open_registry().close()
    assert seeded == [str(tmp_path / "a.db"), str(tmp_path / "d.db")]


def test_audit_output_is_read_when_present_and_explained_when_not(reg: Registry, tmp_path: Path) -> None:
    assert notebook.find_audit_dir(tmp_path / "missing") is None
    with pytest.raises(FileNotFoundError, match="schema-explorer audit compat-matrix"):
        notebook.read_audit(tmp_path / "missing")
    (tmp_path / "out" / "compat_matrix").mkdir(parents=True)
    tables.compatibility_matrix(reg, STOCK).to_parquet(tmp_path / "out" / "compat_matrix" / "part-0.parquet")
    found = notebook.find_audit_dir(tmp_path / "out")
    assert found is not None
    audit = notebook.read_audit(found)
    assert list(audit) == ["compat_matrix"] and len(audit["compat_matrix"]) == 30
    assert spec(charts.compatibility_heatmap(audit["compat_matrix"]))
    assert notebook.audit_command("x.db", out="o") == "schema-explorer audit compat-matrix --db x.db --out o"
