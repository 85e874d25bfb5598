"""Whether a proposal could be applied now, and who may still approve it: what a proposal's page says in one
place, decided here so that no shell says "the approvals suffice" or offers Apply where the apply would be
refused (a stale base, a candidate Pulsar would refuse, a final state, a role too low, approvals missing).

Values in, a value out: the review the shell already has (`review_proposal`), the rules in force, and, where
the shell knows the roles of people by name (the app's roles file), which named reviewers could approve at
all; the core itself knows only names. The apply itself checks everything again inside its write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .._identity import among
from ._model import Actor, Proposal, ProposalKind, ProposalReview, ProposalState, ReviewRules
from ._permissions import apply_role, counted_approvals
from ._rules import judged_under


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyReadiness:
    """What stands between a proposal and its apply now.

    `refusals`: what no approval and no override gets past (each a clause, "it is stale: ..."). `counted` of
    `required` approvals count under the rules it is judged by (an applied proposal: those frozen at apply).
    `reviewers_left`: the named reviewers who may still give one (None: any producer or admin other than the
    authors); `unable`: named reviewers who cannot approve it (the author, or a role too low where known)."""

    refusals: tuple[str, ...]
    counted: int
    required: int
    reviewers_left: tuple[str, ...] | None
    unable: tuple[str, ...] = ()

    @property
    def missing(self) -> int:
        return max(0, self.required - self.counted)

    @property
    def ready(self) -> bool:
        """An apply now would go through with the approvals it has (no override needed)."""
        return not self.refusals and not self.missing

    @property
    def overridable(self) -> bool:
        """Only the approvals are missing: an admin may apply it anyway, with a written reason."""
        return not self.refusals and self.missing > 0


def apply_readiness(
    proposal: Proposal,
    rules: ReviewRules,
    review: ProposalReview | None,
    actor: Actor | None = None,
    *,
    may_approve: Callable[[str], bool] | None = None,
) -> ApplyReadiness:
    """Where `proposal` stands under `rules` (those in force; an applied proposal is judged by its own), with
    `review` computed now (None: not known, so nothing is said about the candidate), for `actor` (None: for
    anyone). `may_approve(name)` says whether a named reviewer's role lets them approve, where a shell knows."""
    judged = judged_under(proposal, rules)
    counted = counted_approvals(proposal, judged)
    authors = {proposal.author, proposal.revision.author}
    left: tuple[str, ...] | None = None
    unable: tuple[str, ...] = ()
    if judged.reviewers:
        done = [a.user for a in counted]
        able = [n for n in judged.reviewers if not among(n, authors) and (may_approve is None or may_approve(n))]
        unable = tuple(n for n in judged.reviewers if n not in able)
        left = tuple(n for n in able if not among(n, done))
    return ApplyReadiness(
        refusals=_refusals(proposal, review, actor),
        counted=len(counted),
        required=judged.required_approvals,
        reviewers_left=left,
        unable=unable,
    )


def _refusals(proposal: Proposal, review: ProposalReview | None, actor: Actor | None) -> tuple[str, ...]:
    if proposal.state.final:
        return (f"it is {proposal.state}",)
    found = []
    if proposal.state is ProposalState.STALE or (review is not None and review.stale):
        found.append(f"it is stale: {_moved(proposal)}; rebase it and have it reviewed again")
    what_if = None if review is None else review.what_if
    if what_if is not None and not what_if.registration.accepted:
        found.append(f"Pulsar would refuse it under {what_if.effective.value}: {what_if.registration.reason}")
    if actor is not None:
        needed = apply_role(proposal.kind)
        if not actor.role.at_least(needed):
            found.append(f"applying a {proposal.kind} proposal needs the {needed} role; {actor.name} is a {actor.role}")
    return tuple(found)


def _moved(proposal: Proposal) -> str:
    if proposal.kind is ProposalKind.POLICY:
        return "the policy it was made against was changed"
    if proposal.base_version is None:
        return "the topic has a live schema now"
    return f"its base, version {proposal.base_version}, is no longer the latest"
