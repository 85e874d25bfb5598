"""What this session may do, so that a page shows only the steps it may take: the core decides every one
(`allowed_steps`, registry/proposals/_permissions.py), this module only asks it for the person on screen. Nothing
here is a permission: the core checks every step again when it is taken, and a refusal shows its message.
Without Streamlit, so it is tested on plain values.

Over a remote `schema-explorer serve` the server names the person by the token, not by the app's name for
them: what is offered here is the app's best guess, and the server's answer stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from registry import (
    Actor,
    AllowedSteps,
    NotFoundError,
    NotSupportedError,
    Proposal,
    ProposalKind,
    ProposalState,
    ReviewRules,
    SchemaRegistry,
    Step,
    allowed_steps,
    apply_readiness,
    counted_approvals,
)

OPEN_LIMIT = 200  # the open proposals a page looks through for the one it warns about


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
    allowed = allowed_steps(actor, rules, proposal, stale=stale, read_only=read_only)
    is_stale = stale or proposal.state is ProposalState.STALE
    return Steps(
        comment=allowed.allows(Step.COMMENT),
        approve=allowed.allows(Step.APPROVE),
        reject=allowed.allows(Step.REJECT),
        withdraw=allowed.allows(Step.WITHDRAW),
        rebase=is_stale and allowed.allows(Step.REVISE),
        revise=allowed.allows(Step.REVISE),
        apply=allowed.allows(Step.APPLY) or allowed.allows(Step.OVERRIDE),
        apply_needs_reason=not allowed.allows(Step.APPLY) and allowed.allows(Step.OVERRIDE),
    )


def rules_of(reg: SchemaRegistry, namespace: str) -> ReviewRules:
    """The namespace's review rules; the defaults where the registry keeps none (a plain broker)."""
    try:
        return reg.proposals.rules(namespace)
    except (NotSupportedError, NotFoundError):
        return ReviewRules()


def allowed_in(reg: SchemaRegistry, namespace: str, actor: Actor | None, *, read_only: bool) -> AllowedSteps:
    """What this session may do in `namespace` (register, delete, set a policy, propose, edit the review rules),
    asked of the core with the namespace's review rules as stored now."""
    return allowed_steps(actor, rules_of(reg, namespace), namespace=namespace, read_only=read_only)


def open_proposals(reg: SchemaRegistry, target: str, *, kind: ProposalKind, namespace: str = "") -> list[Proposal]:
    """The proposals not yet final that would change `target` (a topic's base name, or a namespace when
    `namespace` names it): a direct write there now would make them stale or overtake them."""
    try:
        if namespace:
            found = reg.proposals.list(namespace=namespace, limit=OPEN_LIMIT)
            found = [p for p in found if p.target == namespace]
        else:
            found = reg.proposals.list(topic=target, limit=OPEN_LIMIT)
    except (NotSupportedError, NotFoundError):
        return []
    return [p for p in found if p.kind is kind and not p.state.final]


def approvers_of_revision(proposal: Proposal) -> tuple[str, ...]:
    """Who approved the current revision (approvals of an earlier revision were cleared by the core)."""
    return tuple(a.user for a in proposal.approvals if a.revision == proposal.revision.number)


def waiting_for(proposal: Proposal, rules: ReviewRules, actor: Actor | None) -> bool:
    """Still missing approvals under the rules as they are now (a stored "approved" can lack them again after the
    rules changed), and the core would take `actor`'s approval now (not theirs, not a revision they wrote, theirs
    to approve under the rules, not yet approved by them in this revision). Stale proposals are the caller's to
    leave out (it takes a look at the registry)."""
    return (
        actor is not None
        and proposal.state in (ProposalState.OPEN, ProposalState.APPROVED)
        and len(counted_approvals(proposal, rules)) < rules.required_approvals
        and allowed_steps(actor, rules, proposal).allows(Step.APPROVE)
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
