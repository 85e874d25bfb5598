"""Who may do what (registry/proposals/_permissions.py): one table the core's steps raise from and the shells ask,
and a namespace whose review rules require proposals, where no direct schema or policy write gets through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, NS, OPS, TOPIC, VIEWER, avro, proposal_registry
from registry import (
    Actor,
    AuditOutcome,
    InvalidArgumentError,
    NamespacePolicyChange,
    PermissionDeniedError,
    ProposalsRequiredError,
    Registry,
    ReviewRules,
    Step,
    allowed_steps,
    export_snapshot,
    import_snapshot,
)

DIRECT = (Step.REGISTER, Step.DELETE, Step.SET_POLICY, Step.PROPOSE, Step.EDIT_RULES, Step.ADMINISTER)


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with proposal_registry(tmp_path / "r.db", compatibility=None) as reg:
        yield reg


@pytest.mark.parametrize(
    ("actor", "allowed"),
    [
        (VIEWER, set()),
        (ALICE, {Step.REGISTER, Step.PROPOSE}),
        (OPS, set(DIRECT)),
    ],
)
def test_the_direct_steps_follow_the_role(actor: Actor, allowed: set[Step]) -> None:
    steps = allowed_steps(actor, ReviewRules(), namespace=NS)
    assert {s for s in DIRECT if steps.allows(s)} == allowed
    for step in set(DIRECT) - allowed:
        assert f"{actor.name} is a {actor.role}" in (steps.reason(step) or "")
        with pytest.raises(PermissionDeniedError):
            steps.require(step)


def test_nobody_and_a_read_only_session_may_write_nothing() -> None:
    for steps in (allowed_steps(None, ReviewRules()), allowed_steps(OPS, ReviewRules(), read_only=True)):
        assert not any(steps.allows(step) for step in Step)


def test_require_proposals_refuses_every_direct_write_for_every_role() -> None:
    rules = ReviewRules(require_proposals=True)
    for actor, steps_of_role in ((ALICE, (Step.REGISTER,)), (OPS, (Step.REGISTER, Step.SET_POLICY, Step.DELETE))):
        steps = allowed_steps(actor, rules, namespace=NS)
        assert steps.allows(Step.PROPOSE)
        for step in steps_of_role:
            reason = steps.reason(step) or ""
            assert f"the review rules of {NS} require proposals" in reason
            with pytest.raises(ProposalsRequiredError):
                steps.require(step)
    assert "schema-explorer propose" in (allowed_steps(ALICE, rules, namespace=NS).reason(Step.REGISTER) or "")
    assert allowed_steps(OPS, rules, namespace=NS).allows(Step.EDIT_RULES)  # how the rule is turned off


def test_the_proposal_steps_follow_the_person_and_the_state(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ALICE)
    rules = ReviewRules()
    author = allowed_steps(ALICE, rules, made)
    assert {s for s in Step if author.allows(s)} >= {Step.COMMENT, Step.WITHDRAW, Step.REVISE}
    assert not author.allows(Step.APPROVE) and not author.allows(Step.REJECT) and not author.allows(Step.APPLY)
    bob = allowed_steps(BOB, rules, made)
    assert bob.allows(Step.APPROVE) and bob.allows(Step.REJECT) and not bob.allows(Step.WITHDRAW)
    assert "0 of the 1 approvals" in (bob.reason(Step.APPLY) or "")
    assert "only an admin" in (bob.reason(Step.OVERRIDE) or "")
    assert allowed_steps(OPS, rules, made).allows(Step.OVERRIDE)
    viewer = allowed_steps(VIEWER, rules, made)
    assert [s for s in Step if viewer.allows(s)] == [Step.COMMENT]
    stale = allowed_steps(BOB, rules, made, stale=True)
    assert "stale" in (stale.reason(Step.APPROVE) or "") and "stale" in (stale.reason(Step.APPLY) or "")
    withdrawn = reg.proposals.withdraw(made.id, actor=ALICE)
    assert [s for s in Step if allowed_steps(OPS, rules, withdrawn).allows(s)] == [
        Step.REGISTER,
        Step.DELETE,
        Step.SET_POLICY,
        Step.PROPOSE,
        Step.COMMENT,
        Step.EDIT_RULES,
        Step.ADMINISTER,
        Step.MANAGE_WEBHOOKS,
    ]


def test_an_admin_who_revised_a_proposal_cannot_approve_that_revision(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ALICE)
    revised = reg.proposals.revise(made.id, schema=avro("note", "memo"), actor=OPS)
    assert revised.revision.author == "ops"
    with pytest.raises(PermissionDeniedError, match="ops wrote revision 2 of proposal #1"):
        reg.proposals.approve(made.id, actor=OPS)
    assert reg.proposals.get(made.id).approvals == ()
    approved = reg.proposals.approve(made.id, actor=BOB)  # someone else reviews it
    done = reg.proposals.apply(approved.id, actor=ALICE)
    line = reg.audit_trail(TOPIC)[0]
    assert line.detail.startswith("proposal #1 revision 2 by alice, ops, approved by bob:")
    assert "WITHOUT" not in line.detail and done.applied_version == 1


def test_an_override_is_marked_in_the_audit_line(reg: Registry) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1), actor=OPS)
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ALICE)
    reg.proposals.revise(made.id, schema=avro("memo"), actor=ALICE)
    reg.proposals.apply(made.id, actor=OPS, override_reason="incident 7")
    detail = reg.audit_trail(TOPIC)[0].detail
    assert "revision 2 by alice, approved by nobody" in detail
    assert detail.endswith("; applied WITHOUT the approvals by ops: incident 7")


def test_require_proposals_refuses_direct_writes_and_the_proposal_applies(reg: Registry) -> None:
    reg.set_namespace_policy(NS, compatibility="BACKWARD")
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, require_proposals=True), actor=OPS)
    assert reg.proposals.rules(NS).require_proposals
    before = reg.history(TOPIC)
    refusals = [
        lambda: reg.register(TOPIC, avro("note"), user="ops"),
        lambda: reg.set_namespace_policy(NS, compatibility="FULL", user="ops"),
        lambda: reg.set_topic_policy(TOPIC, compatibility="FULL", user="ops"),
        lambda: reg.delete(TOPIC, user="ops"),
        lambda: reg.delete(TOPIC, force=True, user="ops"),
    ]
    for write in refusals:
        with pytest.raises(ProposalsRequiredError, match=f"review rules of {NS} require proposals"):
            write()
    assert reg.history(TOPIC) == before
    assert reg.namespace_policy(NS).compatibility == "BACKWARD"
    trail = reg.audit_trail(NS, limit=len(refusals))
    assert all(line.outcome is AuditOutcome.REFUSED and "require proposals" in line.detail for line in trail)
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="Note", actor=ALICE)
    reg.proposals.approve(made.id, actor=BOB)
    assert reg.proposals.apply(made.id, actor=ALICE).applied_version == 1  # the way a change is made here
    policy = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="Full", actor=ALICE)
    reg.proposals.apply(policy.id, actor=OPS, override_reason="hotfix")
    assert str(reg.namespace_policy(NS).compatibility) == "FULL"
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=1), actor=OPS)  # turned off: writes go through
    assert reg.register(TOPIC, avro("note", "memo")).version == 2


def test_rules_stored_before_require_proposals_read_as_false(reg: Registry, tmp_path: Path) -> None:
    reg._storage.put_setting(f"review_rules:{NS}", '{"required_approvals":2,"reviewers":["bob"]}')
    assert reg.proposals.rules(NS) == ReviewRules(required_approvals=2, reviewers=("bob",))
    assert reg.register(TOPIC, avro("note")).stored


def test_require_proposals_survives_a_snapshot(reg: Registry, tmp_path: Path) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=0, require_proposals=True), actor=OPS)
    snapshot = tmp_path / "s.jsonl"
    export_snapshot(reg, snapshot)
    assert '"require_proposals":true' in snapshot.read_text().replace(" ", "")
    with Registry.open(tmp_path / "copy.db", create=True) as copy:
        import_snapshot(snapshot, into=copy)
        assert copy.proposals.rules(NS).require_proposals
        with pytest.raises(ProposalsRequiredError):
            copy.register(TOPIC, avro("note"))


def test_a_bad_require_proposals_value_is_refused(reg: Registry) -> None:
    with pytest.raises(InvalidArgumentError, match="require_proposals must be true or false"):
        reg.proposals.set_rules(NS, ReviewRules(require_proposals="yes"), actor=OPS)  # type: ignore[arg-type]
    assert not reg.proposals.rules(NS).require_proposals


@pytest.mark.postgres
def test_require_proposals_is_kept_and_read_back_on_postgresql(postgres_url: str) -> None:
    with Registry.open(postgres_url, create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.register(TOPIC, avro())
        reg._storage.put_setting(f"review_rules:{NS}", '{"required_approvals":2,"reviewers":[]}')  # before the rule
        assert reg.proposals.rules(NS) == ReviewRules(required_approvals=2)
        reg.proposals.set_rules(NS, ReviewRules(required_approvals=2, require_proposals=True), actor=OPS)
    with Registry.open(postgres_url) as again:  # another connection reads what was stored
        assert again.proposals.rules(NS) == ReviewRules(required_approvals=2, require_proposals=True)
        with pytest.raises(ProposalsRequiredError):
            again.set_topic_policy(TOPIC, compatibility="FULL", user="ops")
        assert again.topic_policy(TOPIC).compatibility is None
