"""How a proposal's review (`ProposalReview`, computed by the core) is shown: the same verdict, strategy table,
problems, advisories, admission, upgrade order and diff as What-if shows for a candidate (app/review.py), plus
what only a proposal has: each problem marked introduced or already there, whether the candidate introduces a
refusal under each strategy, the Pulsar line it was judged as, and for a policy proposal its preview.

Values in, Streamlit elements out: no rule is decided here. User text stays text (app/review.py's rules).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.render import escape_markdown
from app.review import (
    BAD,
    GOOD,
    RISK,
    VERDICT_SHADE,
    shaded,
    show_consequences,
    show_diff,
    show_preview,
    show_strategy_table,
    show_verdict,
    show_wrapped,
)
from registry import Proposal, ProposalKind, ProposalReview
from registry.proposals._model import ReviewedProblem
from registry.proposals._words import applied_text, refusal_word, refusals_text
from registry.views.tables import strategy_frame

INTRODUCED, ALREADY_THERE = "introduced", "already there"
_ORIGIN_SHADE = {INTRODUCED: BAD, ALREADY_THERE: RISK}
_BLOCKING_SHADE = {"yes": BAD, "no": GOOD}


def problems_table(problems: tuple[ReviewedProblem, ...]) -> pd.DataFrame:
    """One row per problem under the strategy in force, first whether this change introduces it."""
    rows = [
        {
            "this change": INTRODUCED if item.introduced else ALREADY_THERE,
            "code": str(item.problem.code),
            "direction": str(item.problem.direction),
            "version": item.problem.version,
            "path": item.problem.path,
            "message": item.problem.message,
            "hint": item.problem.hint,
        }
        for item in problems
    ]
    columns = ["this change", "code", "direction", "version", "path", "message", "hint"]
    return pd.DataFrame(rows, columns=columns)


def show_review(proposal: Proposal, review: ProposalReview, *, frozen: bool, key: str) -> None:
    """The review of the proposal's current revision: `frozen` when it is the one kept at apply."""
    when = "as it was when the proposal was applied" if frozen else "computed now from the registry as it is"
    st.caption(f"Judged as Pulsar {escape_markdown(review.line)}, {when}.")
    if proposal.kind is ProposalKind.POLICY:
        _policy_review(proposal, review)
        return
    _schema_review(proposal, review, frozen=frozen, key=key)


def _schema_review(proposal: Proposal, review: ProposalReview, *, frozen: bool, key: str) -> None:
    what_if = review.what_if
    if what_if is None:
        st.info("The core returned no verdict for this proposal.")
        return
    if frozen:  # applied: what it stored, never what applying "would" do
        judged = f"{what_if.effective.value} (from the {what_if.effective.source})"
        st.success(escape_markdown(f"Accepted under {judged} at apply: {applied_text(proposal, who=False)}."))
    else:
        show_verdict(what_if, doing="Applying")
    with st.container(horizontal=True):
        introduced = review.introduced_problems
        already = len(review.problems) - introduced
        st.badge(f"{introduced} problem(s) introduced", color="red" if introduced else "green")
        if already:
            st.badge(f"{already} already there", color="orange", help="The base version already fails these.")
        refusals = review.introduced_refusals
        in_force = what_if.effective.value in refusals
        st.badge(
            refusals_text(review),
            color="red" if in_force else ("orange" if refusals else "green"),
            help="Strategies under which this change itself would be refused (not a refusal the base already "
            "had): "
            + (", ".join(map(str, refusals)) or "none")
            + ("; the strategy in force among them." if in_force else ".")
            + " ALWAYS_INCOMPATIBLE refuses every change, so it is not counted.",
        )
    if review.problems:
        st.markdown(f"**Problems under {what_if.effective.value}** (the strategy in force)")
        frame = problems_table(review.problems)
        show_wrapped(frame, tuple(frame.columns))
        st.caption(
            "introduced: this change causes it. already there: the base version fails it too (a transitive "
            "strategy checks every live version), so it is not this change's doing."
        )

    st.subheader("Under each strategy")
    frame = strategy_frame(what_if)
    frame.insert(2, "introduces a refusal", [refusal_word(review, s) for s in what_if.by_strategy])
    show_strategy_table(
        shaded(frame, VERDICT_SHADE, "accepted").map(
            lambda v: f"background-color: {_BLOCKING_SHADE[v]}" if v in _BLOCKING_SHADE else "",
            subset=["introduces a refusal"],
        ),
        tuple(frame.columns),
    )
    show_consequences(what_if)
    st.subheader(f"Diff against the base (v{proposal.base_version})" if review.diff else "Diff")
    if review.diff is None:
        base = proposal.base_version
        st.info(
            "The topic had no live schema when this was proposed: the candidate would be its first version."
            if base is None
            else f"The base version {base} is no longer live, so there is nothing to diff against."
        )
    else:
        show_diff(review.diff, old_label=f"v{proposal.base_version} (base)", new_label="proposal", key=f"{key}_diff")


def _policy_review(proposal: Proposal, review: ProposalReview) -> None:
    st.markdown("**The change**")
    before = proposal.revision.base_policy
    rows = [
        {
            "policy": field.replace("_", " "),
            "stored when proposed": _shown(getattr(before, field, None)),
            "proposed": _shown(value),
        }
        for field, value in (proposal.revision.policy or {}).items()
    ]
    st.table(pd.DataFrame(rows, columns=["policy", "stored when proposed", "proposed"]), hide_index=True)
    if review.preview is None:
        st.info("The core returned no preview for this proposal.")
        return
    if not review.preview.changes:
        st.info("Nothing would change: the stored policy already has these values.")
        return
    show_preview(review.preview)


def _shown(value: object) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return str(value).lower()
    return str(getattr(value, "value", value))
