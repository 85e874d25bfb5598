"""The app says a proposal's state in the core's words (registry/proposals/_words.py), the same as
`schema-explorer proposals list` and `show`: approvals "1 of 2 (bob)", what the current revision changes after a
rebase, what an apply stored (never "Applying would be accepted"), and refusals a compatible change introduces
with ALWAYS_INCOMPATIBLE left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, NS, OPS, actor, app_page, proposal_page, propose, said, use_roles

from cli.main import main as cli_main
from registry import NamespacePolicyChange, Registry, ReviewRules

TITLE = "acme/orders: compatibility: BACKWARD → FULL_TRANSITIVE"


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def listed(db: Path, who: str) -> dict[int, dict[str, str]]:
    at = app_page("proposals", db, who, show="all").run()
    assert not at.exception
    frame = next(d.value for d in at.main.dataframe if "link" in d.value.columns)
    return {int(row["id"]): dict(row) for _, row in frame.iterrows()}


def test_the_app_and_the_cli_list_the_same_approvals(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Registry.open(db) as reg:
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=actor(OPS))
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
    shown = listed(db, ALICE)[pid]["approvals"]
    assert shown == f"1 of 2 ({BOB})"
    capsys.readouterr()
    assert cli_main(["proposals", "list", "--db", str(db)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(f"#{pid} "))
    assert f"  {shown}  " in row
    page = proposal_page(db, pid, ALICE)
    assert f"**Approvals of revision 1**: {shown}" in said(page)


def test_a_rebased_policy_proposal_shows_what_its_current_revision_changes(db: Path) -> None:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_policy(
            NS, NamespacePolicyChange(compatibility="FULL_TRANSITIVE"), title=TITLE, actor=actor(OPS)
        )
        reg.set_namespace_policy(NS, compatibility="FULL", user=OPS)
        reg.proposals.rebase(made.id, actor=actor(OPS))
    at = proposal_page(db, made.id, ALICE)
    assert not at.exception
    shown = said(at)
    assert TITLE in shown  # the title as its author wrote it
    assert "**Change** (revision 2): `compatibility: FULL → FULL_TRANSITIVE`" in shown
    assert listed(db, ALICE)[made.id]["change"] == "compatibility: FULL → FULL_TRANSITIVE"


def test_a_compatible_change_introduces_no_refusal_and_once_applied_says_what_it_stored(db: Path) -> None:
    pid = propose(db)
    at = proposal_page(db, pid, BOB)
    shown = said(at)
    assert "introduces a refusal under 0 of 7 strategies" in shown
    strategies = next(d.value for d in at.dataframe if "introduces a refusal" in d.value.columns)
    words = dict(zip(strategies.iloc[:, 0].astype(str), strategies["introduces a refusal"], strict=True))
    assert words["ALWAYS_INCOMPATIBLE"] == "refuses every change (not counted)"
    assert set(words.values()) == {"no", "refuses every change (not counted)"}

    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
        reg.proposals.apply(pid, actor=actor(ALICE))
    at = proposal_page(db, pid, BOB)
    assert not at.exception
    shown = said(at)
    assert "would be" not in shown and "Applying" not in shown
    stored = "stored as version 14 of persistent://acme/orders/order-created"
    assert f"Applied by {ALICE}: {stored} (on " in shown  # the banner
    assert f"Accepted under BACKWARD (from the namespace) at apply: {stored}." in shown  # the review
