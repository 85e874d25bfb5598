"""A proposal's open or approved state follows the review rules in force: changing the rules moves the stored
state in the same transaction, so the listing, its state filter and the counts say what an apply says; an
applied proposal keeps the rules it was applied under; rules nobody can meet are refused; a stale proposal is
never approved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, CAROL, NS, OPS, TOPIC, avro, proposal_registry
from registry import (
    Actor,
    ApprovalsMissingError,
    AuditAction,
    AuditOutcome,
    InvalidArgumentError,
    NamespacePolicyChange,
    ProposalState,
    Registry,
    ReviewRules,
    Role,
    StaleProposalError,
    apply_readiness,
)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "r.db"


@pytest.fixture
def reg(path: Path) -> Iterator[Registry]:
    with proposal_registry(path, compatibility=None, namespaces=("acme/other",)) as reg:
        yield reg


def states(reg: Registry) -> dict[int, ProposalState]:
    return {p.id: p.state for p in reg.proposals.list()}


def filtered(reg: Registry, state: ProposalState) -> list[int]:
    return sorted(p.id for p in reg.proposals.list(state=state))


def test_raising_the_required_approvals_moves_an_approved_proposal_back_to_open(reg: Registry, path: Path) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    assert reg.proposals.approve(made.id, actor=BOB).state is ProposalState.APPROVED
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=OPS)
    assert reg.proposals.get(made.id).state is ProposalState.OPEN
    assert filtered(reg, ProposalState.APPROVED) == [] and filtered(reg, ProposalState.OPEN) == [made.id]
    counts = reg.proposals.counts()
    assert (counts[ProposalState.OPEN], counts[ProposalState.APPROVED]) == (1, 0)
    with pytest.raises(ApprovalsMissingError, match="1 of the 2 approvals"):  # apply says the same
        reg.proposals.apply(made.id, actor=ALICE)
    rules_lines = [e for e in reg.audit_trail(NS, limit=10) if e.action is AuditAction.SET_REVIEW_RULES]
    assert rules_lines[0].detail.endswith(f"; #{made.id} approved → open")
    # a second approval under the new rules makes it approved again
    assert reg.proposals.approve(made.id, actor=CAROL).state is ProposalState.APPROVED
    reg.close()
    with Registry.open(path) as again:  # the stored state is what a restart reads
        assert filtered(again, ProposalState.APPROVED) == [made.id]


def test_no_approvals_needed_makes_an_open_proposal_approved_and_back(reg: Registry) -> None:
    first = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    other = reg.proposals.propose_schema(TOPIC, avro("memo"), title="Add a memo", actor=BOB)
    reg.proposals.withdraw(other.id, actor=BOB)
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=0), actor=OPS)
    assert states(reg) == {first.id: ProposalState.APPROVED, other.id: ProposalState.WITHDRAWN}
    assert reg.proposals.counts()[ProposalState.APPROVED] == 1
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1), actor=OPS)
    assert states(reg) == {first.id: ProposalState.OPEN, other.id: ProposalState.WITHDRAWN}
    assert reg.proposals.counts()[ProposalState.APPROVED] == 0


def test_naming_reviewers_uncounts_the_approvals_of_others(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, reviewers=("carol", "dave")), actor=OPS)
    assert reg.proposals.get(made.id).state is ProposalState.OPEN
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1), actor=OPS)
    assert reg.proposals.get(made.id).state is ProposalState.APPROVED


def test_rules_of_one_namespace_leave_the_others_proposals_alone(reg: Registry) -> None:
    reg.register("persistent://acme/other/t", avro())
    here = reg.proposals.propose_schema(TOPIC, avro("note"), title="here", actor=ALICE)
    there = reg.proposals.propose_schema("persistent://acme/other/t", avro("note"), title="there", actor=ALICE)
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=0), actor=OPS)
    assert states(reg) == {here.id: ProposalState.APPROVED, there.id: ProposalState.OPEN}


def test_an_applied_proposal_keeps_the_rules_it_was_applied_under(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    applied = reg.proposals.apply(made.id, actor=ALICE)
    assert applied.applied_rules == ReviewRules(required_approvals=1)
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, reviewers=("carol", "dave")), actor=OPS)
    kept = reg.proposals.get(made.id)
    assert kept.state is ProposalState.APPLIED and kept.applied_rules == ReviewRules(required_approvals=1)


def test_rules_nobody_can_meet_are_refused_and_nothing_changes(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    with pytest.raises(InvalidArgumentError, match="3 approvals from 1 named reviewer .carol.: no proposal"):
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=3, reviewers=("carol",)), actor=OPS)
    assert reg.proposals.rules(NS) == ReviewRules() and reg.proposals.get(made.id).state is ProposalState.APPROVED
    assert reg.audit_trail(NS, limit=1)[0].outcome is AuditOutcome.REFUSED
    done = reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, reviewers=("carol", "dave")), actor=OPS)
    assert done.required_approvals == 2  # as many reviewers as approvals is fine


def test_approving_a_stale_proposal_is_refused_and_marks_it_stale(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    reg.register(TOPIC, avro("memo"))  # someone registers directly: the base is no longer the latest
    assert reg.proposals.get(made.id).state is ProposalState.OPEN  # nobody has looked yet
    with pytest.raises(StaleProposalError, match="nothing was approved: it was made against version 0"):
        reg.proposals.approve(made.id, actor=BOB)
    stored = reg.proposals.get(made.id)
    assert stored.state is ProposalState.STALE and stored.approvals == ()
    with pytest.raises(StaleProposalError):  # and again, once it is marked
        reg.proposals.approve(made.id, actor=CAROL)
    rebased = reg.proposals.rebase(made.id, actor=ALICE)
    assert reg.proposals.approve(rebased.id, actor=BOB).state is ProposalState.APPROVED


def test_approving_a_policy_proposal_after_the_policy_changed_is_refused(reg: Registry) -> None:
    made = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="Go full", actor=ALICE)
    reg.set_namespace_policy(NS, compatibility="FORWARD")
    with pytest.raises(StaleProposalError, match="the policy was changed"):
        reg.proposals.approve(made.id, actor=BOB)
    assert reg.proposals.get(made.id).state is ProposalState.STALE


def test_readiness_names_every_reason_an_apply_would_be_refused(reg: Registry) -> None:
    refused = reg.proposals.propose_schema(TOPIC, avro("note"), title="ok", actor=ALICE)
    rules = reg.proposals.rules(NS)
    fresh = apply_readiness(reg.proposals.get(refused.id), rules, reg.proposals.review(refused.id), ALICE)
    assert (fresh.refusals, fresh.missing, fresh.overridable, fresh.ready) == ((), 1, True, False)
    reg.proposals.approve(refused.id, actor=BOB)
    assert apply_readiness(reg.proposals.get(refused.id), rules, reg.proposals.review(refused.id), ALICE).ready
    viewer = Actor("victor", Role.VIEWER)
    as_viewer = apply_readiness(reg.proposals.get(refused.id), rules, reg.proposals.review(refused.id), viewer)
    assert as_viewer.refusals == ("applying a schema proposal needs the producer role; victor is a viewer",)
    reg.register(TOPIC, avro("memo"))
    moved = apply_readiness(reg.proposals.get(refused.id), rules, reg.proposals.review(refused.id), ALICE)
    assert moved.refusals == ("it is stale: its base, version 0, is no longer the latest; rebase it and have it "
                              "reviewed again",)  # fmt: skip
    assert not moved.ready and not moved.overridable


def test_readiness_never_counts_on_a_reviewer_who_cannot_approve(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="ok", actor=ALICE)
    rules = ReviewRules(required_approvals=2, reviewers=("alice", "bob", "victor", "carol"))
    found = apply_readiness(made, rules, None, may_approve=lambda name: name != "victor")
    assert found.reviewers_left == ("bob", "carol") and found.unable == ("alice", "victor")
    assert apply_readiness(made, ReviewRules(), None).reviewers_left is None  # anyone who may write


@pytest.mark.postgres
def test_the_rules_move_the_state_on_postgresql_too(postgres_url: str) -> None:
    with Registry.open(postgres_url, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.register(TOPIC, avro())
        made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
        reg.proposals.approve(made.id, actor=BOB)
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=OPS)
        assert filtered(reg, ProposalState.OPEN) == [made.id] and reg.proposals.counts()[ProposalState.APPROVED] == 0


def test_a_proposal_made_where_no_approval_is_needed_is_approved_at_once(reg: Registry) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=0), actor=OPS)
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Add a note", actor=ALICE)
    policy = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="Go full", actor=ALICE)
    assert (made.state, policy.state) == (ProposalState.APPROVED, ProposalState.APPROVED)
    assert filtered(reg, ProposalState.APPROVED) == [made.id, policy.id]
