"""The Compare page (issue 44): the connected registry against another, the drift table with its filters, the
hazards and the plan; Propose opens proposals in the connected registry (B) only for the topics it accepts;
`/compare?to=…` reopens it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from review_helpers import page_test, texts

from drift import HAZARDS, SAFE, STATES, build_files
from registry import Registry


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_files(tmp_path_factory.mktemp("drift"))


def test_the_drift_table_hazards_and_plan(built: tuple[Path, Path]) -> None:
    a, b = built
    at = page_test("compare", a)
    at.session_state["compare_to"] = str(b)
    at.run()
    assert not at.exception
    drift, _policies, hazards, plan = (frame.value for frame in at.dataframe)
    assert dict(zip(drift["topic"], drift["state"], strict=True)) == STATES
    assert dict(zip(hazards["topic"], hazards["reason"], strict=True)) == HAZARDS
    assert "READER_FIELD_WITHOUT_DEFAULT" in set(hazards["rule"])
    assert "not reached: replication stops at version 8" in set(plan["B's verdict"])
    at.multiselect(key="compare_states").set_value(["diverged"]).run()
    assert list(at.dataframe[0].value["topic"]) == ["persistent://initech/analytics/page-views"]
    at.multiselect(key="compare_states").set_value([]).run()
    at.selectbox(key="compare_namespace").set_value("initech/hr").run()
    assert list(at.dataframe[0].value["topic"]) == ["persistent://initech/hr/employee-records"]
    assert at.query_params["to"] in (str(b), [str(b)])
    at.selectbox(key="compare_topic").set_value("persistent://initech/analytics/page-views").run()
    assert not at.exception
    assert "Version 6: B's against A's" in texts(at)
    assert "referrer" in " ".join(str(h.value) for h in at.html)  # the side-by-side diff of the two version 6
    assert "Propose" not in " ".join(button.label for button in at.button)  # A is connected: nothing to propose


def test_a_link_reopens_it_and_a_missing_registry_is_an_error(built: tuple[Path, Path], tmp_path: Path) -> None:
    at = page_test("compare", built[0])
    at.query_params["to"] = str(tmp_path / "none.db")
    at.run()
    assert not at.exception
    assert at.error and not at.dataframe
    assert not (tmp_path / "none.db").exists()


def test_propose_into_the_connected_registry_only_for_the_safe_topics(built: tuple[Path, Path], tmp_path: Path) -> None:
    b = tmp_path / "b.db"
    shutil.copy(built[1], b)
    with Registry.open(b) as reg:
        before = {p.id for p in reg.proposals.list()}
    at = page_test("compare", b)
    at.session_state["compare_to"] = str(built[0])
    at.session_state["compare_direction"] = "into"
    at.run()
    assert not at.exception
    at.button(key="compare_propose").click().run()
    assert not at.exception
    assert "Opened proposal(s)" in texts(at)
    with Registry.open(b) as reg:
        made = [p for p in reg.proposals.list() if p.id not in before]
    assert {p.target for p in made} == SAFE


def test_an_export_file_or_a_parquet_export_folder_compares_as_its_registry(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    """The other side may be what `export` wrote (a JSON-lines file or a Parquet folder), as on the CLI: the
    same drift as against the registry file itself."""
    from cli.main import main

    a, b = built
    exported, folder = tmp_path / "b.jsonl", tmp_path / "b-parquet"
    assert main(["export", "--db", str(b), str(exported)]) == 0
    assert main(["export", "--db", str(b), "--format", "parquet", str(folder)]) == 0
    for other in (exported, folder):
        at = page_test("compare", a)
        at.session_state["compare_to"] = str(other)
        at.run()
        assert not at.exception and not at.error, other
        assert dict(zip(at.dataframe[0].value["topic"], at.dataframe[0].value["state"], strict=True)) == STATES
