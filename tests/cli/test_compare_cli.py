"""`schema-explorer compare --from A --to B` (issue 44): the drift of two registries built from the sample,
as text, JSON and Markdown; exit 0 for none, 1 for drift, 2 for an error in one line; `--propose` opens
proposals in B only for the topics B would accept; and B served by `serve --admin-only` compares the same."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import registry
from drift import HAZARDS, POLICIES, SAFE, STATES, build_files
from registry import Registry
from serving import served

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_files(tmp_path_factory.mktemp("drift"))


@pytest.fixture
def pair(built: tuple[Path, Path], tmp_path: Path) -> tuple[str, str]:
    """Private copies, for the commands that write into B."""
    copies = []
    for path in built:
        copies.append(str(tmp_path / path.name))
        shutil.copy(path, copies[-1])
    return copies[0], copies[1]


def test_json_reports_each_difference_exactly(built: tuple[Path, Path], cli: Cli) -> None:
    code, out, err = cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--json", "--plan")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert {t["topic"]: t["state"] for t in doc["topics"]} == STATES
    assert {(p["target"], p["field"], str(p["from"]), str(p["to"])) for p in doc["policies"]} == {
        (t, f, str(x), str(y)) for t, f, x, y in POLICIES
    }
    assert {h["topic"]: h["reason"] for h in doc["hazards"]} == HAZARDS
    assert {p["topic"] for p in doc["plan"] if p["safe"]} == SAFE
    assert {(p["target"], p["field"], str(p["from"]), str(p["to"])) for p in doc["policies"]} == {
        (t, f, str(x), str(y)) for t, f, x, y in POLICIES
    }
    assert doc["summary"]["same"] == 41
    every = json.loads(cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--json", "--all")[1])
    assert len(every["topics"]) == 41 + len(STATES)


def test_text_and_markdown(built: tuple[Path, Path], cli: Cli) -> None:
    code, out, _ = cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--plan")
    assert code == 1
    assert "to_behind        persistent://initech/hr/employee-records  A v9  B v7" in out
    assert "version 9 (AVRO): not reached: replication stops at version 8" in out
    assert "READER_FIELD_WITHOUT_DEFAULT at /fields/7" in out
    code, out, _ = cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--format", "markdown")
    assert code == 1
    assert "| `persistent://acme/orders/b-only` | only_in_to | - | 0 |" in out


def test_no_drift_exits_0_and_an_error_is_one_line(built: tuple[Path, Path], cli: Cli, tmp_path: Path) -> None:
    code, out, _ = cli("compare", "--from", str(built[0]), "--to", str(built[0]))
    assert code == 0 and "topics: " in out
    code, out, err = cli("compare", "--from", str(built[0]), "--to", str(tmp_path / "none.db"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "no registry in" in err
    assert not (tmp_path / "none.db").exists()  # never made on the spot
    code, _, err = cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--to-token", "t")
    assert code == 2 and "--to-token only applies" in err


def test_propose_opens_proposals_only_for_the_safe_topics(pair: tuple[str, str], cli: Cli) -> None:
    with Registry.open(pair[1]) as b:
        before = {p.id for p in b.proposals.list()}
    code, out, err = cli("compare", "--from", pair[0], "--to", pair[1], "--propose", "--as", "ops", "--json")
    assert (code, err) == (1, "")
    opened = json.loads(out)["proposals"]
    assert {p["topic"] for p in opened} == SAFE
    with Registry.open(pair[1]) as b:
        made = [p for p in b.proposals.list() if p.id not in before]
        assert {(p.target, p.author) for p in made} == {(t, "ops") for t in SAFE}
        assert {p.id for p in made} == {p["id"] for p in opened}


@pytest.mark.server
def test_b_served_admin_only_compares_the_same(built: tuple[Path, Path], cli: Cli, tmp_path: Path) -> None:
    """A broker shows a history from its last tombstone on (sample topics `returns` and `kpi-snapshot` have
    one in the middle): both sides are compared as a broker shows them, so nothing drifts that is not there."""
    served_b = tmp_path / "b.db"
    shutil.copy(built[1], served_b)
    with served(served_b, log_dir=tmp_path, admin_only=True) as url:
        code, out, err = cli("compare", "--from", str(built[0]), "--to", url, "--json", "--plan")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert {t["topic"]: t["state"] for t in doc["topics"]} == STATES
    assert {h["topic"]: h["reason"] for h in doc["hazards"]} == HAZARDS
    assert {p["topic"] for p in doc["plan"] if p["safe"]} == SAFE
    assert {(p["target"], p["field"], str(p["from"]), str(p["to"])) for p in doc["policies"]} == {
        (t, f, str(x), str(y)) for t, f, x, y in POLICIES
    }


def test_an_export_file_compares_as_its_registry(built: tuple[Path, Path], cli: Cli, tmp_path: Path) -> None:
    exported = tmp_path / "b.jsonl"
    assert cli("export", "--db", str(built[1]), str(exported))[0] == 0
    code, out, err = cli("compare", "--from", str(built[0]), "--to", str(exported), "--json")
    assert (code, err) == (1, "")
    doc = json.loads(out)
    assert {t["topic"]: t["state"] for t in doc["topics"]} == STATES
    assert {h["topic"]: h["reason"] for h in doc["hazards"]} == HAZARDS
    code, _, err = cli("compare", "--from", str(built[0]), "--to", str(exported), "--propose")
    assert code == 2 and "an export file is read-only: proposals are opened in a registry" in err


def test_a_parquet_export_folder_compares_as_its_registry(built: tuple[Path, Path], cli: Cli, tmp_path: Path) -> None:
    """Either side may be a Parquet export folder (`export --format parquet`), read-only; a folder that is not
    one is refused in one line naming what is missing."""
    export_a, export_b = tmp_path / "a-export", tmp_path / "b-export"
    assert cli("export", "--format", "parquet", "--db", str(built[0]), str(export_a))[0] == 0
    assert cli("export", "--format", "parquet", "--db", str(built[1]), str(export_b))[0] == 0
    wanted = json.loads(cli("compare", "--from", str(built[0]), "--to", str(built[1]), "--json", "--plan", "--all")[1])
    for a, b in ((export_a, built[1]), (built[0], export_b), (export_a, export_b)):
        code, out, err = cli("compare", "--from", str(a), "--to", str(b), "--json", "--plan", "--all")
        assert (code, err) == (1, "")
        assert {**json.loads(out), "from": "", "to": ""} == {**wanted, "from": "", "to": ""}
    code, _, err = cli("compare", "--from", str(built[0]), "--to", str(export_b), "--propose")
    assert code == 2 and "a Parquet export folder is read-only: proposals are opened in a registry" in err
    (tmp_path / "empty").mkdir()
    code, out, err = cli("compare", "--from", str(built[0]), "--to", str(tmp_path / "empty"))
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert f"--to '{tmp_path / 'empty'}': not a Parquet export: no registry table" in err


@pytest.mark.server
def test_propose_into_b_served_opens_them_there(built: tuple[Path, Path], cli: Cli, tmp_path: Path) -> None:
    served_b = tmp_path / "b.db"
    shutil.copy(built[1], served_b)
    with Registry.open(served_b) as b:
        before = {p.id for p in b.proposals.list()}
    with served(served_b, log_dir=tmp_path) as url:
        code, out, err = cli("compare", "--from", str(built[0]), "--to", url, "--propose", "--json")
        assert (code, err) == (1, "")
        assert {p["topic"] for p in json.loads(out)["proposals"]} == SAFE
    with Registry.open(served_b) as b:
        assert {p.target for p in b.proposals.list() if p.id not in before} == SAFE


@pytest.mark.server
def test_propose_into_a_plain_broker_opens_them_in_its_workspace(
    built: tuple[Path, Path], cli: Cli, tmp_path: Path
) -> None:
    served_b = tmp_path / "b.db"
    shutil.copy(built[1], served_b)
    with served(served_b, log_dir=tmp_path, admin_only=True) as url:
        code, out, err = cli("compare", "--from", str(built[0]), "--to", url, "--propose", "--json")
        assert (code, err) == (1, "")
        assert {p["topic"] for p in json.loads(out)["proposals"]} == SAFE
        with registry.open(url) as b:  # the per-user workspace of that broker's URL
            assert {p.target for p in b.proposals.list()} == SAFE
        shared = tmp_path / "team-workspace.db"  # or the team's workspace, named
        code, out, err = cli(
            "compare", "--from", str(built[0]), "--to", url, "--propose", "--workspace", str(shared), "--json"
        )
        assert (code, err) == (1, "")
        with registry.open(url, workspace=str(shared)) as b:
            assert {p.target for p in b.proposals.list()} == SAFE
    code, _, err = cli("compare", "--from", str(built[0]), "--to", str(served_b), "--workspace", str(shared))
    assert code == 2 and "--workspace only applies when --to is a plain broker's URL" in err
