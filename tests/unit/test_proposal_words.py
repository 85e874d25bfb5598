"""The words a proposal's state is shown in (registry/proposals/_words.py, `Revision.summary`,
`ProposalReview.introduced_refusals`): the app and the CLI show these, so they must say what is true after the
steps a team takes: an approval under rules that change, a rebase onto another policy, an apply."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from proposal_world import ALICE, BOB, CAROL, NS, OPS, TOPIC, avro, proposal_registry
from registry import (
    CompatibilityStrategy,
    NamespacePolicyChange,
    Registry,
    ReviewRules,
    SchemaInfo,
    SchemaType,
    applied_text,
    approvals_text,
    from_json,
    refusal_word,
    refusals_text,
    to_json,
)
from registry import Proposal as ProposalValue

S = CompatibilityStrategy


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    with proposal_registry(tmp_path / "r.db") as reg:
        yield reg


def test_approvals_read_n_of_m_with_the_names_that_count(reg: Registry) -> None:
    reg.proposals.set_rules(NS, ReviewRules(required_approvals=2), actor=OPS)
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="t", actor=ALICE)
    rules = reg.proposals.rules(NS)
    assert approvals_text(made, rules) == "0 of 2"
    reg.proposals.approve(made.id, actor=BOB)
    assert approvals_text(reg.proposals.get(made.id), rules) == "1 of 2 (bob)"
    reg.proposals.approve(made.id, actor=CAROL)
    assert approvals_text(reg.proposals.get(made.id), rules) == "2 of 2 (bob, carol)"
    # Rules changed since: only carol's approval counts now.
    rules = reg.proposals.set_rules(NS, ReviewRules(required_approvals=1, reviewers=("carol",)), actor=OPS)
    assert approvals_text(reg.proposals.get(made.id), rules) == "1 of 1 (carol)"


def test_a_rebased_policy_proposal_says_what_its_current_revision_changes(reg: Registry) -> None:
    made = reg.proposals.propose_policy(
        NS,
        NamespacePolicyChange(compatibility="FULL_TRANSITIVE"),
        title="acme/orders: compatibility: BACKWARD → FULL_TRANSITIVE",
        actor=OPS,
    )
    assert made.revision.summary == "compatibility: BACKWARD → FULL_TRANSITIVE"
    reg.set_namespace_policy(NS, compatibility="FULL")  # someone else moves the base
    rebased = reg.proposals.rebase(made.id, actor=OPS)
    assert rebased.title == "acme/orders: compatibility: BACKWARD → FULL_TRANSITIVE"  # as its author wrote it
    assert rebased.revision.summary == "compatibility: FULL → FULL_TRANSITIVE"
    assert [r.summary for r in rebased.revisions] == [
        "compatibility: BACKWARD → FULL_TRANSITIVE",
        "compatibility: FULL → FULL_TRANSITIVE",
    ]
    doc = to_json(rebased)  # REST and --json carry it too, and a remote registry reads it back
    assert doc["revisions"][-1]["summary"] == "compatibility: FULL → FULL_TRANSITIVE"
    assert from_json(ProposalValue, doc) == rebased


def test_a_schema_revision_names_its_type_and_base(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="t", actor=ALICE)
    assert made.revision.summary == "AVRO schema against version 0"
    fresh = reg.proposals.propose_schema(f"persistent://{NS}/new-topic", avro(), title="t", actor=ALICE)
    assert fresh.revision.summary == "AVRO schema against a topic without a live schema"


def test_always_incompatible_is_left_out_of_the_refusals_a_change_introduces(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="compatible", actor=ALICE)
    review = reg.proposals.review(made.id)
    assert review.compatible and review.blocking is not None
    assert review.blocking[S.ALWAYS_INCOMPATIBLE] is True  # the raw per-strategy fact stays
    assert review.introduced_refusals == () and review.judged_strategies == len(review.blocking) - 1
    assert refusals_text(review) == f"introduces a refusal under 0 of {review.judged_strategies} strategies"
    assert refusal_word(review, S.ALWAYS_INCOMPATIBLE) == "refuses every change (not counted)"
    assert refusal_word(review, S.BACKWARD) == "no"


def test_a_change_that_breaks_counts_only_where_it_is_refused(reg: Registry) -> None:
    doc = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "int"}]}
    made = reg.proposals.propose_schema(
        TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc)), title="t", actor=ALICE
    )
    review = reg.proposals.review(made.id)
    assert S.BACKWARD in review.introduced_refusals and S.ALWAYS_INCOMPATIBLE not in review.introduced_refusals
    assert S.ALWAYS_COMPATIBLE not in review.introduced_refusals
    assert refusal_word(review, S.BACKWARD) == "yes"
    assert refusals_text(review).startswith(f"introduces a refusal under {len(review.introduced_refusals)} of ")


def test_an_applied_proposal_says_what_was_stored(reg: Registry) -> None:
    made = reg.proposals.propose_schema(TOPIC, avro("note"), title="t", actor=ALICE)
    assert applied_text(made) == ""
    reg.proposals.approve(made.id, actor=BOB)
    done = reg.proposals.apply(made.id, actor=ALICE)
    assert applied_text(done) == f"applied by alice: stored as version 1 of {TOPIC}"
    assert applied_text(done, who=False) == f"stored as version 1 of {TOPIC}"
    policy = reg.proposals.propose_policy(NS, NamespacePolicyChange(compatibility="FULL"), title="t", actor=OPS)
    reg.proposals.approve(policy.id, actor=BOB)
    done = reg.proposals.apply(policy.id, actor=OPS)
    assert applied_text(done) == f"applied by ops: {NS}: compatibility: BACKWARD → FULL"
