"""Schema change proposals in an embedded registry (registry/proposals/), as sequences a team goes through:
propose, review, approve, apply exactly what was approved; and what must be refused on the way."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, CAROL, NS, OPS, TOPIC, VIEWER, avro, proposal_registry
from registry import (
    Actor,
    ApprovalsMissingError,
    AuditAction,
    CompatibilityStrategy,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    NamespacePolicyChange,
    PermissionDeniedError,
    ProposalError,
    ProposalNotFoundError,
    ProposalState,
    ReadOnlyError,
    Registry,
    ReviewRules,
    RevisionChangedError,
    SchemaInfo,
    SchemaType,
    StaleProposalError,
    TopicPolicyChange,
)


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with proposal_registry(tmp_path / "r.db") as reg:
        yield reg


def test_a_proposal_is_reviewed_approved_and_applied_exactly(reg: Registry) -> None:
    made = reg.proposals.propose_schema(
        TOPIC, avro("note"), title="Add a note", description="for the warehouse", actor=ALICE
    )
    assert (made.state, made.base_version, made.revision.number, made.author) == (ProposalState.OPEN, 0, 1, "alice")
    assert reg.history(TOPIC)[-1].version == 0  # proposing registers nothing
    review = reg.proposals.review(made.id)
    assert review.compatible and not review.stale and review.strategy is CompatibilityStrategy.BACKWARD
    assert review.diff is not None and review.diff.old_version == 0 and review.line == reg.pulsar_version
    with pytest.raises(PermissionDeniedError, match="never reviews their own"):
        reg.proposals.approve(made.id, actor=ALICE)
    with pytest.raises(PermissionDeniedError, match="producer role"):
        reg.proposals.approve(made.id, actor=VIEWER)
    approved = reg.proposals.approve(made.id, actor=BOB)
    assert approved.state is ProposalState.APPROVED and approved.approvers == ("bob",)
    applied = reg.proposals.apply(made.id, actor=ALICE)
    assert (applied.state, applied.applied_version, applied.applied_by) == (ProposalState.APPLIED, 1, "alice")
    assert reg.get(TOPIC).data == avro("note").schema.encode() and reg.get(TOPIC).user == "alice"
    assert applied.applied_review is not None and applied.applied_review.compatible
    line = reg.audit_trail(TOPIC)[0]
    assert line.action is AuditAction.APPLY_PROPOSAL
    for fact in (f"proposal #{made.id} revision 1", "by alice", "approved by bob", "version 1", made.revision.sha256):
        assert fact in line.detail, (fact, line.detail)
    with pytest.raises(ProposalError, match="applied"):
        reg.proposals.apply(made.id, actor=ALICE)  # final: once


def test_a_new_revision_clears_the_approvals(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    revised = reg.proposals.revise(made.id, schema=avro("a", "b"), actor=ALICE)
    assert (revised.state, revised.approvals, revised.revision.number) == (ProposalState.OPEN, (), 2)
    with pytest.raises(ApprovalsMissingError):
        reg.proposals.apply(made.id, actor=ALICE)
    with pytest.raises(PermissionDeniedError, match="only the author"):
        reg.proposals.revise(made.id, schema=avro("c"), actor=BOB)
    reg.proposals.approve(made.id, actor=BOB)
    assert reg.proposals.apply(made.id, actor=ALICE).applied_version == 1
    assert reg.get(TOPIC).data == avro("a", "b").schema.encode()  # revision 2, the approved one


def test_an_approval_or_apply_naming_an_older_revision_writes_nothing(reg: Registry) -> None:
    """Bob reviews revision 1; alice pushes revision 2 before bob's click arrives: bob's approval (and an apply
    naming revision 1) is refused inside the write, and nothing is stored but the refusal's audit line."""
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    reg.proposals.revise(made.id, schema=avro("a", "b"), actor=ALICE)
    with pytest.raises(RevisionChangedError, match="at revision 2, newer than revision 1 \\(the one reviewed\\)"):
        reg.proposals.approve(made.id, actor=BOB, revision=1)
    assert reg.proposals.get(made.id).approvals == ()
    refused = [e for e in reg.audit_trail(TOPIC) if e.action is AuditAction.APPROVE_PROPOSAL]
    assert refused and str(refused[0].outcome) == "refused"
    approved = reg.proposals.approve(made.id, actor=BOB, revision=2)
    assert approved.state is ProposalState.APPROVED
    with pytest.raises(RevisionChangedError):
        reg.proposals.apply(made.id, actor=ALICE, revision=1)
    assert reg.history(TOPIC)[-1].version == 0
    for bad in (0, -1, True, "2"):
        with pytest.raises(InvalidArgumentError, match="a revision is a whole number from 1"):
            reg.proposals.apply(made.id, actor=ALICE, revision=bad)  # type: ignore[arg-type]
    assert reg.proposals.apply(made.id, actor=ALICE, revision=2).applied_version == 1


def test_two_approvals_required_and_an_admin_override_needs_a_reason(reg: Registry) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=OPS)
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    assert reg.proposals.approve(made.id, actor=BOB).state is ProposalState.OPEN
    assert reg.proposals.approve(made.id, actor=BOB).approvers == ("bob",)  # approving twice counts once
    with pytest.raises(ApprovalsMissingError, match="1 of the 2 approvals"):
        reg.proposals.apply(made.id, actor=ALICE)
    with pytest.raises(ApprovalsMissingError, match="written reason"):
        reg.proposals.apply(made.id, actor=OPS)
    with pytest.raises(PermissionDeniedError, match="only an admin"):
        reg.proposals.apply(made.id, actor=ALICE, override_reason="urgent")
    done = reg.proposals.apply(made.id, actor=OPS, override_reason="incident 42: the warehouse is down")
    assert done.reason == "incident 42: the warehouse is down" and done.applied_by == "ops"
    assert "WITHOUT the approvals by ops: incident 42" in reg.audit_trail(TOPIC)[0].detail


def test_reviewers_restrict_who_may_approve(reg: Registry) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, reviewers=("carol",)), actor=OPS)
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    with pytest.raises(PermissionDeniedError, match="not one of the reviewers"):
        reg.proposals.approve(made.id, actor=BOB)
    assert reg.proposals.approve(made.id, actor=CAROL).state is ProposalState.APPROVED
    with pytest.raises(PermissionDeniedError, match="admin"):
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=0), actor=ALICE)


def test_an_apply_after_a_direct_register_finds_it_stale_and_stores_nothing(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    reg.register(TOPIC, avro("z"))  # someone registers directly meanwhile: version 1
    assert reg.proposals.review(made.id).stale and reg.proposals.review(made.id).changed_since == (1,)
    with pytest.raises(StaleProposalError, match="since then: 1"):
        reg.proposals.apply(made.id, actor=ALICE)
    assert reg.proposals.get(made.id).state is ProposalState.STALE  # the mark commits, the apply does not
    assert [v.version for v in reg.history(TOPIC)] == [0, 1]
    rebased = reg.proposals.rebase(made.id, actor=ALICE)
    assert (rebased.state, rebased.base_version, rebased.approvals) == (ProposalState.OPEN, 1, ())
    reg.proposals.approve(made.id, actor=BOB)
    assert reg.proposals.apply(made.id, actor=ALICE).applied_version == 2


def test_a_proposal_whose_topic_was_deleted_is_stale(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    reg.delete(TOPIC)
    with pytest.raises(StaleProposalError):
        reg.proposals.apply(made.id, actor=ALICE)
    assert reg.proposals.rebase(made.id, actor=ALICE).base_version is None  # a new history after the delete


def test_an_apply_is_judged_under_the_strategy_in_force_at_apply(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro(required="sku"), title="a required field", actor=ALICE)
    reg.set_namespace_policy(NS, compatibility="FORWARD")  # compatible under FORWARD when proposed
    assert reg.proposals.review(made.id).compatible
    reg.proposals.approve(made.id, actor=BOB)
    reg.set_namespace_policy(NS, compatibility="BACKWARD")  # then the namespace changed
    assert not reg.proposals.review(made.id).compatible
    with pytest.raises(IncompatibleSchemaError):
        reg.proposals.apply(made.id, actor=ALICE)
    assert reg.proposals.get(made.id).state is ProposalState.APPROVED and len(reg.history(TOPIC)) == 1


def test_problems_are_marked_introduced_or_already_there(reg: Registry) -> None:
    """v1 already breaks v0 (registered under ALWAYS_COMPATIBLE); under BACKWARD_TRANSITIVE a candidate that
    only keeps v1's break is not the one that introduced it."""
    reg.set_namespace_policy(NS, compatibility="ALWAYS_COMPATIBLE")
    reg.register(TOPIC, avro(required="sku"))  # v1: a required field v0's data lacks
    reg.set_namespace_policy(NS, compatibility="BACKWARD_TRANSITIVE")
    keeps = reg.proposals.review(
        reg.proposals.propose_schema(TOPIC, avro("note", required="sku"), title="t", actor=ALICE).id
    )
    assert not keeps.compatible and keeps.problems and not any(p.introduced for p in keeps.problems)
    assert keeps.blocking is not None and not keeps.blocking[CompatibilityStrategy.BACKWARD_TRANSITIVE]
    adds = reg.proposals.review(reg.proposals.propose_schema(TOPIC, avro(required="qty"), title="t", actor=ALICE).id)
    assert any(p.introduced for p in adds.problems) and adds.blocking[CompatibilityStrategy.BACKWARD_TRANSITIVE]


def test_a_policy_proposal_is_previewed_and_applied_by_an_admin(reg: Registry) -> None:
    made = reg.proposals.propose_policy(
        NS, NamespacePolicyChange(compatibility="FULL_TRANSITIVE"), title="stricter", actor=ALICE
    )
    review = reg.proposals.review(made.id)
    assert review.preview is not None and review.preview.changes and not review.stale
    reg.proposals.approve(made.id, actor=BOB)
    with pytest.raises(PermissionDeniedError, match="admin role"):
        reg.proposals.apply(made.id, actor=ALICE)  # approvals are a gate, never a privilege
    assert reg.proposals.apply(made.id, actor=OPS).state is ProposalState.APPLIED
    assert reg.namespace_policy(NS).compatibility is CompatibilityStrategy.FULL_TRANSITIVE


def test_a_policy_proposal_goes_stale_when_the_policy_changes(reg: Registry) -> None:
    made = reg.proposals.propose_policy(
        TOPIC, TopicPolicyChange(compatibility="FORWARD"), title="topic own", actor=ALICE
    )
    reg.proposals.approve(made.id, actor=BOB)
    reg.set_topic_policy(TOPIC, validation_enforced=True)
    assert reg.proposals.review(made.id).stale
    with pytest.raises(StaleProposalError):
        reg.proposals.apply(made.id, actor=OPS)
    assert reg.topic_policy(TOPIC).compatibility is None


def test_two_reviewers_approving_at_once_both_count(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    with Registry.open(path, create=True) as reg:
        reg.create_namespace(NS)
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=OPS)
        made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    start = threading.Barrier(2)

    def approve(actor: Actor) -> None:
        with Registry.open(path) as handle:
            start.wait()
            handle.proposals.approve(made.id, actor=actor)

    threads = [threading.Thread(target=approve, args=(who,)) for who in (BOB, CAROL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with Registry.open(path) as reg:
        found = reg.proposals.get(made.id)
        assert sorted(found.approvers) == ["bob", "carol"] and found.state is ProposalState.APPROVED


def test_comments_are_kept_as_text_and_bad_ones_store_nothing(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=ALICE)
    note = reg.proposals.comment(made.id, "<script>alert(1)</script> why nullable?", path="/fields/1", actor=VIEWER)
    assert (note.id, note.user, note.path, note.revision) == (1, "victor", "/fields/1", 1)
    before = reg.proposals.get(made.id)
    for text in ("\ud800 lone", "   "):
        with pytest.raises(InvalidArgumentError):
            reg.proposals.comment(made.id, text, actor=BOB)
    assert reg.proposals.get(made.id) == before


def test_bad_input_is_refused_naming_it_and_stores_nothing(reg: Registry) -> None:
    with pytest.raises(ProposalNotFoundError, match="#99"):
        reg.proposals.get(99)
    for beyond in (2**63, 2**64 + 5):  # past every storage's id column: not there, never an OverflowError
        with pytest.raises(ProposalNotFoundError, match=f"#{beyond}"):
            reg.proposals.get(beyond)
        with pytest.raises(ProposalNotFoundError):
            reg.proposals.approve(beyond, actor=BOB)
    with pytest.raises(InvalidNameError):
        reg.proposals.propose_schema("persistent://acme/orders/bad/name/x", avro("a"), title="t", actor=ALICE)
    with pytest.raises(InvalidSchemaError):
        reg.proposals.propose_schema(
            TOPIC, SchemaInfo(type=SchemaType.AVRO, schema="{not json"), title="t", actor=ALICE
        )
    with pytest.raises(InvalidArgumentError, match="title"):
        reg.proposals.propose_schema(TOPIC, avro("a"), title=" ", actor=ALICE)
    with pytest.raises(PermissionDeniedError):
        reg.proposals.propose_schema(TOPIC, avro("a"), title="t", actor=VIEWER)
    with pytest.raises(InvalidArgumentError, match="unknown policy field"):
        reg.proposals.propose_policy(NS, NamespacePolicyChange.of({"retention": 5}), title="t", actor=ALICE)
    assert reg.proposals.list() == []


def test_a_one_mebibyte_candidate_round_trips(reg: Registry) -> None:
    fields = [{"name": f"f{i}", "type": ["null", "string"], "default": None, "doc": "x" * 200} for i in range(3700)]
    doc = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}, *fields]})
    assert 900_000 < len(doc) <= 1_048_576
    made = reg.proposals.propose_schema(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=doc), title="big", actor=ALICE)
    assert reg.proposals.get(made.id).revision.schema.schema == doc  # type: ignore[union-attr]


def test_everything_survives_a_restart_and_a_read_only_handle_only_reads(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with Registry.open(path, create=True) as reg:
        reg.create_namespace(NS)
        made = reg.proposals.propose_schema(TOPIC, avro(), title="first", actor=ALICE)
        reg.proposals.comment(made.id, "ok", actor=BOB)
        reg.proposals.approve(made.id, actor=BOB)
    with Registry.open(path) as again:
        found = again.proposals.get(made.id)
        assert (found.state, found.approvers, found.comments[0].text) == (ProposalState.APPROVED, ("bob",), "ok")
        view = again.read_only()
        assert view.proposals.list(state="approved") == [found]
        with pytest.raises(ReadOnlyError):
            view.proposals.apply(made.id, actor=ALICE)
        assert again.proposals.apply(made.id, actor=ALICE).applied_version == 0


def test_listing_filters_by_state_namespace_and_topic(reg: Registry) -> None:
    first = reg.proposals.propose_schema(TOPIC, avro("a"), title="one", actor=ALICE)
    second = reg.proposals.propose_policy(NS, NamespacePolicyChange(validation_enforced=True), title="two", actor=BOB)
    reg.proposals.withdraw(first.id, actor=ALICE)
    assert [p.id for p in reg.proposals.list()] == [second.id, first.id]
    assert [p.id for p in reg.proposals.list(state="withdrawn")] == [first.id]
    assert [p.id for p in reg.proposals.list(topic=TOPIC)] == [first.id]
    assert [p.id for p in reg.proposals.list(namespace=NS, state=ProposalState.OPEN)] == [second.id]
    with pytest.raises(InvalidArgumentError, match="unknown proposal state"):
        reg.proposals.list(state="merged")
