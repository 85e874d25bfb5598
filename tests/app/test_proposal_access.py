"""What the proposal page offers each person (app/proposal_access.py), on proposals made through the core: the
core's rules decide, this only asks them for the person on screen; read-only offers nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, CAROL, NS, OPS, TOPIC, VICTOR, actor, with_field

from app.proposal_access import Steps, steps, still_needed, waiting_for
from registry import Actor, Proposal, Registry, ReviewRules, Role


@pytest.fixture
def reg(db: Path) -> Iterator[Registry]:
    with Registry.open(db) as opened:
        yield opened


@pytest.fixture
def made(reg: Registry, db: Path) -> Proposal:
    return reg.proposals.propose_schema(TOPIC, with_field(db, "note"), title="Note", actor=actor(ALICE))


RULES = ReviewRules()


def test_the_author_may_withdraw_but_neither_approve_nor_reject(made: Proposal) -> None:
    offered = steps(made, RULES, actor(ALICE), read_only=False, stale=False)
    assert offered == Steps(comment=True, withdraw=True, revise=True)  # and push a new revision


def test_the_author_under_another_spelling_is_the_author(reg: Registry, made: Proposal) -> None:
    """`ALICE@acme.io` or a Cyrillic `а` spelling (an identity proxy's header, a roles file) is alice."""
    for spelling in (ALICE.upper(), "\u0430" + ALICE[1:]):
        other = Actor(spelling, Role.PRODUCER)
        assert steps(made, RULES, other, read_only=False, stale=False) == Steps(
            comment=True, withdraw=True, revise=True
        )
        assert not waiting_for(made, RULES, other)
    approved = reg.proposals.approve(made.id, actor=actor(BOB))
    assert not waiting_for(approved, ReviewRules(required_approvals=2), Actor(BOB.upper(), Role.PRODUCER))
    assert still_needed(approved, ReviewRules(required_approvals=2, reviewers=(BOB, ALICE.upper(), CAROL))) == (
        f"1 more approval, from the reviewers of {NS}: {CAROL}"
    )


def test_a_producer_may_approve_and_reject_and_apply_only_once_approved(reg: Registry, made: Proposal) -> None:
    assert steps(made, RULES, actor(BOB), read_only=False, stale=False) == Steps(
        comment=True, approve=True, reject=True
    )
    approved = reg.proposals.approve(made.id, actor=actor(CAROL))
    assert steps(approved, RULES, actor(BOB), read_only=False, stale=False).apply
    assert not steps(approved, RULES, actor(CAROL), read_only=False, stale=False).approve  # approved already


def test_an_admin_may_apply_without_approvals_only_with_a_reason(made: Proposal) -> None:
    offered = steps(made, RULES, actor(OPS), read_only=False, stale=False)
    assert offered.apply and offered.apply_needs_reason and offered.withdraw and offered.reject


def test_a_viewer_and_a_read_only_session(made: Proposal) -> None:
    assert steps(made, RULES, actor(VICTOR), read_only=False, stale=False) == Steps(comment=True)
    assert steps(made, RULES, actor(OPS), read_only=True, stale=False) == Steps()
    assert steps(made, RULES, None, read_only=False, stale=False) == Steps()


def test_a_stale_proposal_is_rebased_not_approved_or_applied(made: Proposal) -> None:
    offered = steps(made, RULES, actor(ALICE), read_only=False, stale=True)
    assert offered.rebase and not offered.apply
    bob = steps(made, RULES, actor(BOB), read_only=False, stale=True)
    assert not bob.approve and not bob.rebase and not bob.apply


def test_a_final_proposal_only_takes_comments(reg: Registry, made: Proposal) -> None:
    withdrawn = reg.proposals.withdraw(made.id, actor=actor(ALICE))
    assert steps(withdrawn, RULES, actor(OPS), read_only=False, stale=False) == Steps(comment=True)


def test_waiting_for_and_still_needed_follow_the_named_reviewers(reg: Registry, made: Proposal) -> None:
    rules = ReviewRules(required_approvals=2, reviewers=(BOB, CAROL, ALICE))
    assert waiting_for(made, rules, actor(BOB)) and not waiting_for(made, rules, actor(OPS))
    assert not waiting_for(made, rules, actor(ALICE))  # the author, though a named reviewer
    assert still_needed(made, rules) == f"2 more approvals, from the reviewers of {NS}: {BOB}, {CAROL}"
    assert still_needed(made, RULES) == f"1 more approval, from any producer or admin other than {ALICE}"
    lonely = ReviewRules(required_approvals=1, reviewers=(ALICE,))
    assert "no reviewer of acme/orders is left to give them: an admin may apply it" in still_needed(made, lonely)
