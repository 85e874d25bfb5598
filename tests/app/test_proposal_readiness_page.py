"""The proposal page says whether the proposal can be applied, in one place, as the core decides it: never
"The approvals suffice" nor an Apply button where the apply would be refused (a candidate Pulsar refuses, a
stale base, approvals missing after the rules changed); an applied proposal's approvals under the rules it was
applied under; nobody who cannot approve listed as still needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from proposal_helpers import (
    ALICE,
    BOB,
    NS,
    OPS,
    TOPIC,
    VICTOR,
    actor,
    button_labels,
    proposal_page,
    propose,
    said,
    use_roles,
    with_field,
)

from registry import Registry, ReviewRules

SUFFICE = "The approvals suffice to apply it."


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


def test_an_approved_candidate_pulsar_refuses_offers_no_apply_and_says_why(db: Path) -> None:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_schema(
            TOPIC, with_field(db, "tier", required=True), title="Tier", actor=actor(ALICE)
        )
        reg.proposals.approve(made.id, actor=actor(BOB))
    for who in (ALICE, OPS):
        at = proposal_page(db, made.id, who)
        assert not at.exception
        shown = said(at)
        assert SUFFICE not in shown
        assert "It cannot be applied now: Pulsar would refuse it under BACKWARD" in shown
        labels = button_labels(at)
        assert "Apply" not in labels and "Apply anyway" not in labels


def test_raising_the_required_approvals_takes_the_apply_away(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
    assert "Apply" in button_labels(proposal_page(db, pid, ALICE))
    with Registry.open(db) as reg:
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=actor(OPS))
    at = proposal_page(db, pid, ALICE)
    shown = said(at)
    assert f"1 of 2 ({BOB})" in shown and SUFFICE not in shown
    assert "It cannot be applied now: 1 more approval, from any producer or admin other than alice@acme.io" in shown
    assert "Apply" not in button_labels(at) and "open" in shown  # the badge: the stored state moved too


def test_an_applied_proposal_shows_the_rules_it_was_applied_under(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
        reg.proposals.apply(pid, actor=actor(ALICE))
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=actor(OPS))
    shown = said(proposal_page(db, pid, ALICE))
    assert f"1 of 1 ({BOB}) under the rules it was applied under" in shown and "1 of 2" not in shown


def test_a_viewer_named_as_reviewer_is_never_still_needed(db: Path) -> None:
    with Registry.open(db) as reg:
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, reviewers=(VICTOR, BOB)), actor=actor(OPS))
    pid = propose(db)
    shown = said(proposal_page(db, pid, ALICE))
    assert "1 more approval, from the reviewers of acme/orders: bob@acme.io." in shown
    assert "Named reviewers who cannot approve it: victor@acme.io." in shown


def test_a_stale_proposal_says_so_where_the_apply_would_be(db: Path) -> None:
    pid = propose(db)
    with Registry.open(db) as reg:
        reg.proposals.approve(pid, actor=actor(BOB))
        reg.register(TOPIC, with_field(db, "other"), user=BOB)
    at = proposal_page(db, pid, ALICE)
    shown = said(at)
    assert SUFFICE not in shown and "It cannot be applied now: it is stale: its base, version 13" in shown
    assert "Apply" not in button_labels(at)
    assert "Approve" not in button_labels(proposal_page(db, pid, OPS))
