"""What each step makes of a proposal, as pure functions from a proposal, its namespace's review rules and the
person asking to the next proposal (or a refusal naming why); who may take a step is `_permissions.py`'s
decision (`allowed_steps`), which each step here asks first.

Approvals are a gate, never a privilege: applying needs the role the direct change needs (a producer for a
schema, an admin for a policy), on top of the approvals. Neither the author nor whoever wrote the current
revision approves it; a new revision clears the approvals; approving twice counts once. An admin may apply
without the approvals only with a written reason, which the proposal and the audit trail keep.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .._errors import (
    ApprovalsMissingError,
    InvalidArgumentError,
    PermissionDeniedError,
    ProposalError,
    RevisionChangedError,
)
from .._identity import among
from .._text import blank, check_text
from ._model import (
    Actor,
    Approval,
    Comment,
    Proposal,
    ProposalReview,
    ProposalState,
    ReviewRules,
    Revision,
    Role,
)
from ._permissions import Step, allowed_steps
from ._permissions import counted_approvals as counted_approvals  # decided there, asked for here too
from ._pointer import checked_path

TITLE_MAX = 200
DESCRIPTION_MAX = 20_000
COMMENT_MAX = 10_000
REASON_MAX = 2_000
NAME_MAX = 300
MAX_APPROVALS = 5
MAX_REVIEWERS = 100


def checked_text(value: object, what: str, limit: int, *, required: bool) -> str:
    """User text as stored: a string of valid Unicode (no lone surrogates), stripped, within `limit` characters,
    and when `required` with a visible character (not only invisible or format ones: registry/_text.py);
    InvalidArgumentError naming `what` otherwise."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be text, not {type(value).__name__}")
    text = check_text(value, what, InvalidArgumentError).strip()
    if required and not text:
        raise InvalidArgumentError(f"{what} must not be empty")
    if required and blank(text):
        raise InvalidArgumentError(f"{what} shows nothing: it holds only invisible or format characters")
    if len(text) > limit:
        raise InvalidArgumentError(f"{what} is {len(text):,} characters long; at most {limit:,} are kept")
    return text


def checked_actor(actor: object) -> Actor:
    if not isinstance(actor, Actor):
        raise InvalidArgumentError("actor must be an Actor(name, role): who asks, and with which role")
    name = checked_text(actor.name, "the person's name", NAME_MAX, required=True)
    return Actor(name, Role(actor.role))


def checked_rules(required_approvals: object, reviewers: object, require_proposals: object = False) -> ReviewRules:
    """Review rules as given over REST or by the app: 0 to 5 approvals, reviewers as distinct names, whether
    direct writes are refused (true or false, nothing else)."""
    if isinstance(required_approvals, bool) or not isinstance(required_approvals, int):
        raise InvalidArgumentError("required_approvals must be a whole number from 0 to 5")
    if not 0 <= required_approvals <= MAX_APPROVALS:
        raise InvalidArgumentError(f"required_approvals is {required_approvals}: choose 0 to {MAX_APPROVALS}")
    if isinstance(reviewers, str) or not isinstance(reviewers, list | tuple):
        raise InvalidArgumentError("reviewers must be a list of names (empty: anyone who may write)")
    if len(reviewers) > MAX_REVIEWERS:
        raise InvalidArgumentError(f"reviewers names {len(reviewers)} people; at most {MAX_REVIEWERS}")
    names: list[str] = []
    for name in reviewers:  # one person named twice (`alice`, `Alice`) is one reviewer (registry/_identity.py)
        checked = checked_text(name, "a reviewer's name", NAME_MAX, required=True)
        if not among(checked, names):
            names.append(checked)
    if not isinstance(require_proposals, bool):
        raise InvalidArgumentError("require_proposals must be true or false")
    return ReviewRules(
        required_approvals=required_approvals,
        reviewers=tuple(names),
        require_proposals=require_proposals,
    )


def require_satisfiable(rules: ReviewRules, namespace: str, may_approve: Callable[[str], bool] | None = None) -> None:
    """Refuses rules no proposal could ever meet (InvalidArgumentError naming why): more approvals than named
    reviewers who can approve, when reviewers are named. The core knows names, not roles: a shell that knows
    the roles of people by name (the app's roles file) passes `may_approve`, so that a viewer named as the only
    reviewer is refused there too. A snapshot import takes what was stored as it was (a backup is restored, not
    judged). Rules that are not even well formed are refused first, as `checked_rules` refuses them."""
    rules = checked_rules(rules.required_approvals, list(rules.reviewers), rules.require_proposals)
    if not rules.reviewers:
        return
    able = [name for name in rules.reviewers if may_approve is None or may_approve(name)]
    if rules.required_approvals <= len(able):
        return
    unable = [name for name in rules.reviewers if name not in able]
    named = len(able)
    whom = f"{named} named reviewer{'s' if named != 1 else ''}" + (f" ({', '.join(able)})" if able else "")
    why = f"; {', '.join(unable)} cannot approve (a viewer, or nobody known by that name)" if unable else ""
    raise InvalidArgumentError(
        f"{namespace} would need {rules.required_approvals} approval{'s' if rules.required_approvals != 1 else ''} "
        f"from {whom}{why}: no proposal could ever be "
        f"approved. Name at least {rules.required_approvals} reviewers who may approve, or ask for fewer approvals"
    )


def judged_under(proposal: Proposal, rules: ReviewRules) -> ReviewRules:
    """The review rules a proposal's approvals are counted under: those frozen at apply for an applied
    proposal (when kept), else `rules`, the ones in force now."""
    if proposal.state is ProposalState.APPLIED and proposal.applied_rules is not None:
        return proposal.applied_rules
    return rules


def require_role(actor: Actor, role: Role, what: str) -> None:
    if not actor.role.at_least(role):
        raise PermissionDeniedError(f"{what} needs the {role} role; {actor.name} is a {actor.role}")


def require_revision(proposal: Proposal, revision: int | None) -> None:
    """The revision a person reviewed (None: whichever is current) must still be the proposal's current one."""
    if revision is None:
        return
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise InvalidArgumentError(f"a revision is a whole number from 1, not {revision!r}")
    current = proposal.revision.number
    if revision != current:
        newer = "newer than" if current > revision else "not"
        raise RevisionChangedError(
            f"proposal #{proposal.id} is at revision {current}, {newer} revision {revision} (the one reviewed): "
            f"review revision {current}, then try again"
        )


def _open(proposal: Proposal, what: str) -> None:
    if proposal.state.final:
        raise ProposalError(f"proposal #{proposal.id} is {proposal.state}: it cannot be {what} any more")


def state_for(proposal: Proposal, rules: ReviewRules) -> ProposalState:
    """Open or approved, by the approvals the current revision has; final and stale states stay."""
    if proposal.state.final or proposal.state is ProposalState.STALE:
        return proposal.state
    enough = len(counted_approvals(proposal, rules)) >= rules.required_approvals
    return ProposalState.APPROVED if enough else ProposalState.OPEN


def approve(proposal: Proposal, rules: ReviewRules, actor: Actor, now: int) -> Proposal:
    refusal = allowed_steps(actor, rules, proposal).refusal(Step.APPROVE)
    if refusal is not None and refusal.done:
        return proposal  # approving twice counts once
    if refusal is not None:
        raise refusal.exception()
    approvals = (*proposal.approvals, Approval(revision=proposal.revision.number, user=actor.name, at=now))
    approved = replace(proposal, approvals=approvals, updated_at=now)
    return replace(approved, state=state_for(approved, rules))


def reject(proposal: Proposal, rules: ReviewRules, actor: Actor, reason: str, now: int) -> Proposal:
    _open(proposal, "rejected")
    text = checked_text(reason, "the reason for rejecting", REASON_MAX, required=True)
    allowed_steps(actor, rules, proposal).require(Step.REJECT)
    return replace(proposal, state=ProposalState.REJECTED, reason=text, updated_at=now)


def withdraw(proposal: Proposal, actor: Actor, now: int) -> Proposal:
    allowed_steps(actor, ReviewRules(), proposal).require(Step.WITHDRAW)  # the rules do not matter to it
    return replace(proposal, state=ProposalState.WITHDRAWN, updated_at=now)


def revise(proposal: Proposal, rules: ReviewRules, actor: Actor, revision: Revision, now: int) -> Proposal:
    """A new revision (an edit, or a rebase onto the new latest version): what approvals there were belonged
    to the previous one, so none count any more. The author revises; an admin may rebase anyone's."""
    allowed_steps(actor, rules, proposal).require(Step.REVISE)
    revised = replace(
        proposal,
        revisions=(*proposal.revisions, revision),
        approvals=(),
        state=ProposalState.OPEN,
        updated_at=now,
    )
    return replace(revised, state=state_for(revised, rules))


def comment(proposal: Proposal, actor: Actor, text: object, path: object, now: int) -> tuple[Proposal, Comment]:
    """Anyone who may read may comment, on a final proposal too (the discussion goes on after the fact)."""
    body = checked_text(text, "the comment", COMMENT_MAX, required=True)
    where = checked_path(proposal, path)  # a JSON pointer into the candidate, or "" (registry/proposals/_pointer.py)
    made = Comment(
        id=max((c.id for c in proposal.comments), default=0) + 1,
        user=actor.name,
        at=now,
        text=body,
        revision=proposal.revision.number,
        path=where,
    )
    return replace(proposal, comments=(*proposal.comments, made), updated_at=now), made


def check_apply(proposal: Proposal, rules: ReviewRules, actor: Actor, override_reason: str | None) -> str:
    """Refuses an apply that may not happen; returns the override reason ("" when the approvals suffice)."""
    allowed = allowed_steps(actor, rules, proposal)
    refusal = allowed.refusal(Step.APPLY)
    if refusal is None:
        return ""
    if refusal.error is not ApprovalsMissingError or override_reason is None or not str(override_reason).strip():
        raise refusal.exception()
    allowed.require(Step.OVERRIDE)
    return checked_text(override_reason, "the override reason", REASON_MAX, required=True)


def applied(
    proposal: Proposal,
    rules: ReviewRules,
    actor: Actor,
    now: int,
    review: ProposalReview,
    reason: str,
    version: int | None,
) -> Proposal:
    return replace(
        proposal,
        state=ProposalState.APPLIED,
        applied_by=actor.name,
        applied_version=version,
        applied_review=review,
        applied_rules=rules,
        reason=reason or proposal.reason,
        updated_at=now,
    )


def stale(proposal: Proposal, now: int) -> Proposal:
    return replace(proposal, state=ProposalState.STALE, updated_at=now)
