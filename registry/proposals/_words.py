"""The words a proposal's state is shown in, one place for the app and the CLI (REST answers the same facts as
JSON): approvals as "1 of 2 (bob)", what an apply did, in the past tense, and the refusals a change introduces
(ALWAYS_INCOMPATIBLE left out). Two shells that each phrased these
had drifted ("0 of 2" in the app, "bob" or "-" in `proposals list`).
"""

from __future__ import annotations

from .._model import CompatibilityStrategy
from ._model import REFUSES_EVERY_CHANGE, Proposal, ProposalKind, ProposalReview, ProposalState, ReviewRules
from ._permissions import counted_approvals
from ._rules import judged_under


def approvals_text(proposal: Proposal, rules: ReviewRules) -> str:
    """The approvals of the current revision that count under the namespace's `rules` as they are now (an
    applied proposal: the rules frozen at apply, `judged_under`), out of those it needs, with who gave them:
    "1 of 2 (bob)", "0 of 1", "2 of 2 (bob, carol)"."""
    judged = judged_under(proposal, rules)
    counted = counted_approvals(proposal, judged)
    names = f" ({', '.join(a.user for a in counted)})" if counted else ""
    return f"{len(counted)} of {judged.required_approvals}{names}"


def rules_note(proposal: Proposal) -> str:
    """Which rules `approvals_text` counted an applied proposal under, as a phrase to follow it ("" when not
    applied: the rules in force now, as everywhere else)."""
    if proposal.state is not ProposalState.APPLIED:
        return ""
    if proposal.applied_rules is None:
        return " under the rules in force now (the rules at apply were not kept)"
    return " under the rules it was applied under"


def applied_text(proposal: Proposal, *, who: bool = True) -> str:
    """What applying the proposal did, from what it stored (never what applying "would" do): "" when it is not
    applied. A schema: the version stored, or the identical live version it found; a policy: the change made.
    "applied by alice: stored as version 14 of T"; without `who`, only what it stored."""
    if proposal.state is not ProposalState.APPLIED:
        return ""
    version = proposal.applied_version
    frozen = proposal.applied_review
    if proposal.kind is ProposalKind.POLICY:
        outcome = f"{proposal.target}: {proposal.revision.summary}"
    elif version is None:
        outcome = "nothing stored"
    elif frozen is not None and frozen.what_if is not None and frozen.what_if.duplicate_of == version:
        outcome = f"identical to live version {version} of {proposal.target}, so nothing new was stored"
    else:
        outcome = f"stored as version {version} of {proposal.target}"
    if not who:
        return outcome
    return f"applied{f' by {proposal.applied_by}' if proposal.applied_by else ''}: {outcome}"


def refusals_text(review: ProposalReview) -> str:
    """The count behind the "introduces a refusal" badge, out of the strategies it is counted over:
    "introduces a refusal under 0 of 7 strategies" (ALWAYS_INCOMPATIBLE, which refuses every change, left
    out and said so in its own row by `refusal_word`)."""
    return f"introduces a refusal under {len(review.introduced_refusals)} of {review.judged_strategies} strategies"


def refusal_word(review: ProposalReview, strategy: CompatibilityStrategy) -> str:
    """One strategy's row of "introduces a refusal": "yes", "no", or, for ALWAYS_INCOMPATIBLE, that it refuses
    every change (so it is no finding about this one, and is not counted)."""
    if strategy in REFUSES_EVERY_CHANGE:
        return EVERY_CHANGE
    return "yes" if (review.blocking or {}).get(strategy, False) else "no"


EVERY_CHANGE = "refuses every change (not counted)"
