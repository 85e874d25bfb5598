"""What this session may do to a proposal, so that a page shows only the steps it may take: the core decides
(`may_review`, `counted_approvals`, `apply_role`, registry/proposals/), this module only asks it for the person
on screen. Nothing here is a permission: the core checks every step again when it is taken, and a refusal
shows its message. Without Streamlit, so it is tested on plain values.

Over a remote `schema-explorer serve` the server names the person by the token, not by the app's name for
them: what is offered here is the app's best guess, and the server's answer stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from registry import (
    Actor,
    Proposal,
    ProposalState,
    ReviewRules,
    Role,
    apply_readiness,
    apply_role,
    counted_approvals,
    may_review,
    same_person,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Steps:
    """The steps this session may take on one proposal now, each False in a read-only session."""

    comment: bool = False
    approve: bool = False
    reject: bool = False
    withdraw: bool = False
    rebase: bool = False
    revise: bool = False  # push a new revision (the author, or an admin), as `revise_proposal` allows
    apply: bool = False
    apply_needs_reason: bool = False  # only an admin's override can apply it: the approvals are missing

    @property
    def any(self) -> bool:
        return any((self.comment, self.approve, self.reject, self.withdraw, self.rebase, self.revise, self.apply))


def steps(proposal: Proposal, rules: ReviewRules, actor: Actor | None, *, read_only: bool, stale: bool) -> Steps:
    """The steps `actor` may take on `proposal` under `rules`; `stale`: the review computed now found its base
    no longer the latest (the stored state may still say open until someone tries to apply it)."""
    if actor is None or read_only:
        return Steps()
    final = proposal.state.final
    is_stale = stale or proposal.state is ProposalState.STALE
    mine = same_person(actor.name, proposal.author)  # one person in any spelling (registry/_identity.py)
    mine_or_admin = mine or actor.role is Role.ADMIN
    if final:
        return Steps(comment=True)  # the discussion goes on after the fact
    reviewer = may_review(proposal, rules, actor) is None
    approved_already = any(same_person(actor.name, name) for name in approvers_of_revision(proposal))
    enough = len(counted_approvals(proposal, rules)) >= rules.required_approvals
    may_apply = not is_stale and actor.role.at_least(apply_role(proposal.kind))
    return Steps(
        comment=True,
        approve=reviewer and not is_stale and not approved_already,
        reject=not mine and (reviewer or actor.role is Role.ADMIN),
        withdraw=mine_or_admin,
        rebase=is_stale and mine_or_admin,
        revise=mine_or_admin and actor.role.at_least(Role.PRODUCER),
        apply=may_apply and (enough or actor.role is Role.ADMIN),
        apply_needs_reason=may_apply and not enough and actor.role is Role.ADMIN,
    )


def approvers_of_revision(proposal: Proposal) -> tuple[str, ...]:
    """Who approved the current revision (approvals of an earlier revision were cleared by the core)."""
    return tuple(a.user for a in proposal.approvals if a.revision == proposal.revision.number)


def waiting_for(proposal: Proposal, rules: ReviewRules, actor: Actor | None) -> bool:
    """Still missing approvals under the rules as they are now (a stored "approved" can lack them again after the
    rules changed), not theirs, theirs to approve under the rules, and not yet approved by them in this revision.
    Stale proposals are the caller's to leave out (it takes a look at the registry)."""
    return (
        actor is not None
        and proposal.state in (ProposalState.OPEN, ProposalState.APPROVED)
        and len(counted_approvals(proposal, rules)) < rules.required_approvals
        and not same_person(proposal.author, actor.name)
        and may_review(proposal, rules, actor) is None
        and not any(same_person(actor.name, name) for name in approvers_of_revision(proposal))
    )


def still_needed(proposal: Proposal, rules: ReviewRules, may_approve: Callable[[str], bool] | None = None) -> str:
    """Who still needs to approve, in words: "" when the approvals suffice. Named reviewers who cannot approve
    (its authors, or, where `may_approve` knows roles, a viewer) are never listed (registry `apply_readiness`)."""
    readiness = apply_readiness(proposal, rules, None, may_approve=may_approve)
    missing = readiness.missing
    if missing <= 0:
        return ""
    more = f"{missing} more approval{'s' if missing != 1 else ''}"
    left = readiness.reviewers_left
    if left is None:
        authors = " or ".join(dict.fromkeys((proposal.author, proposal.revision.author)))
        return f"{more}, from any producer or admin other than {authors}"
    if not left:
        return f"{more}, but no reviewer of {proposal.namespace} is left to give them: an admin may apply it"
    return f"{more}, from the reviewers of {proposal.namespace}: {', '.join(left)}"
