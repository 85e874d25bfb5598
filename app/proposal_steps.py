"""The steps a person takes on a proposal from its page: approve, reject with a reason, withdraw, rebase, apply
(an admin without the approvals only with a typed reason), each shown only where this session may take it
(app/proposal_access.py), none in a read-only session.

Each step is one core call as `session.actor()`, made from the button's callback: a click is never lost because
the proposal changed meanwhile (someone withdrew it in another tab): the core then refuses, and its message is
shown word for word. An approval or an apply names the revision on screen, and the core checks it inside its write
(RevisionChangedError when another revision was pushed since the page was drawn): nothing is written and the
page says so. The outcome is shown on the proposal as it is then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app import session
from app.proposal_access import Steps, approvers_of_revision, still_needed
from app.render import escape_markdown, show_error, when
from registry import (
    Actor,
    Proposal,
    ProposalReview,
    ProposalState,
    RegistryError,
    ReviewRules,
    RevisionChangedError,
    SchemaRegistry,
    StaleProposalError,
    counted_approvals,
    may_review,
)

T = TypeVar("T")
OUTCOME = "proposal_outcome"  # session key: (proposal id, "done" | "stale" | "error" | "warn", message or error)
REJECT_REASON = "prop_reject_reason"
OVERRIDE_REASON = "prop_override_reason"


def run_step(proposal_id: int, call: Callable[[], T], done: str | Callable[[T], str]) -> None:
    """Take one step (a button's callback) and remember its outcome for the run that follows, which shows the
    proposal after it. `done` says what happened (from the step's answer, when it is a function)."""
    try:
        answer = call()
    except StaleProposalError as exc:
        st.session_state[OUTCOME] = (proposal_id, "stale", exc)
    except RevisionChangedError as exc:
        warn(proposal_id, f"Nothing was done: {exc}. The page now shows the current revision.")
    except RegistryError as exc:
        st.session_state[OUTCOME] = (proposal_id, "error", exc)
    else:
        st.session_state[OUTCOME] = (proposal_id, "done", done if isinstance(done, str) else done(answer))
    session.clear_caches()  # a refused apply may still have marked the proposal stale


def warn(proposal_id: int, message: str) -> None:
    """A step not taken, and why (nothing was sent to the registry)."""
    st.session_state[OUTCOME] = (proposal_id, "warn", message)


def show_outcome(proposal_id: int) -> None:
    """The outcome of the step taken on this proposal since the previous run, once."""
    outcome = st.session_state.get(OUTCOME)
    if outcome is None or outcome[0] != proposal_id:
        return
    st.session_state.pop(OUTCOME, None)
    _, kind, value = outcome
    if kind == "done":
        st.success(escape_markdown(str(value)), icon=":material/check_circle:")
    elif kind == "stale":
        st.warning(escape_markdown(f"Not applied: {value}"), icon=":material/sync_problem:")
    elif kind == "warn":
        st.warning(escape_markdown(str(value)), icon=":material/info:")
    else:
        show_error(value)


def approvals_panel(
    reg: SchemaRegistry,
    proposal: Proposal,
    rules: ReviewRules,
    review: ProposalReview | None,
    actor: Actor | None,
    steps: Steps,
) -> None:
    """Approvals of the current revision, who still needs to approve, and the buttons this session may use."""
    counted = counted_approvals(proposal, rules)
    who = ", ".join(f"{a.user} ({when(a.at)})" for a in counted) or "none yet"
    st.markdown(
        f"**Approvals of revision {proposal.revision.number}**: {len(counted)} of {rules.required_approvals} "
        f"needed · {escape_markdown(who)}"
    )
    uncounted = [name for name in approvers_of_revision(proposal) if name not in {a.user for a in counted}]
    if uncounted:
        st.caption(escape_markdown(f"Not counted under the rules as they are now: {', '.join(uncounted)}."))
    if not proposal.state.final:
        needed = still_needed(proposal, rules)
        st.caption(escape_markdown(f"Still needed: {needed}." if needed else "The approvals suffice to apply it."))
    if session.read_only():
        st.caption("Read-only: this session cannot approve, reject, withdraw or apply.")
        return
    if actor is None:
        return
    _buttons(reg, proposal, review, actor, steps)
    if not proposal.state.final and not steps.approve and proposal.state is not ProposalState.STALE:
        why = may_review(proposal, rules, actor)
        if why is not None:
            st.caption(escape_markdown(f"You cannot approve it: {why}."))
        elif actor.name in approvers_of_revision(proposal):
            st.caption(f"You approved revision {proposal.revision.number}.")


def _buttons(
    reg: SchemaRegistry, proposal: Proposal, review: ProposalReview | None, actor: Actor, steps: Steps
) -> None:
    pid, number = proposal.id, proposal.revision.number
    if not (steps.approve or steps.reject or steps.withdraw or steps.apply):
        return
    with st.container(horizontal=True, vertical_alignment="center"):
        if steps.approve:
            st.button(
                "Approve",
                key="prop_approve",
                icon=":material/thumb_up:",
                help=f"Approves revision {proposal.revision.number}, the one on this page.",
                on_click=run_step,
                args=(
                    pid,
                    lambda: reg.approve_proposal(pid, actor=actor, revision=number),
                    f"You approved revision {number} of #{pid}.",
                ),
            )
        if steps.apply and not steps.apply_needs_reason:
            incompatible = review is not None and not review.compatible
            st.button(
                "Apply",
                key="prop_apply",
                type="primary",
                icon=":material/publish:",
                help="Applies exactly this revision, checked again against the registry as it is at the click."
                + (" Pulsar would refuse it now." if incompatible else ""),
                on_click=run_step,
                args=(pid, lambda: reg.apply_proposal(pid, actor=actor, revision=number), applied_text),
            )
        if steps.reject:
            with st.popover("Reject…", icon=":material/block:"):
                reason = st.text_area("Why (the author sees this)", key=REJECT_REASON, max_chars=2000)
                st.button(
                    "Reject the proposal",
                    key="prop_reject",
                    disabled=not reason.strip(),
                    on_click=run_step,
                    args=(
                        pid,
                        lambda: reg.reject_proposal(pid, st.session_state.get(REJECT_REASON, ""), actor=actor),
                        f"#{pid} was rejected.",
                    ),
                )
        if steps.withdraw:
            with st.popover("Withdraw…", icon=":material/undo:"):
                st.caption("Withdrawn is final: nobody can approve or apply it any more; comments stay open.")
                st.button(
                    "Withdraw the proposal",
                    key="prop_withdraw",
                    on_click=run_step,
                    args=(pid, lambda: reg.withdraw_proposal(pid, actor=actor), f"#{pid} was withdrawn."),
                )
        if steps.apply_needs_reason:
            with st.popover("Apply without the approvals…", icon=":material/gavel:"):
                st.caption(
                    "An admin may apply a proposal that lacks its approvals only with a written reason; the "
                    "proposal and the audit trail keep it."
                )
                reason = st.text_area("Reason", key=OVERRIDE_REASON, max_chars=2000)
                st.button(
                    "Apply anyway",
                    key="prop_apply_override",
                    type="primary",
                    disabled=not reason.strip(),
                    on_click=run_step,
                    args=(
                        pid,
                        lambda: reg.apply_proposal(
                            pid,
                            actor=actor,
                            override_reason=st.session_state.get(OVERRIDE_REASON, ""),
                            revision=number,
                        ),
                        lambda done: applied_text(done) + " Applied without the approvals; the reason is kept.",
                    ),
                )


def rebase_button(reg: SchemaRegistry, proposal: Proposal, actor: Actor) -> None:
    pid = proposal.id
    st.button(
        "Rebase",
        key="prop_rebase",
        type="primary",
        icon=":material/sync:",
        help="A new revision against the latest version: the change from its base is replayed on it, so what "
        "was stored since stays (a conflict is refused and named). Its approvals start over.",
        on_click=run_step,
        args=(
            pid,
            lambda: reg.rebase_proposal(pid, actor=actor),
            f"#{pid} was rebased onto the latest version: its change replayed on it, a new revision to be reviewed "
            "again (Revisions shows what changed).",
        ),
    )


def applied_text(proposal: Proposal) -> str:
    """What an apply did, from the proposal it returned."""
    if proposal.applied_version is None:
        return f"#{proposal.id} was applied: the policies of {proposal.target} are saved."
    return f"#{proposal.id} was applied: {proposal.target} now has version {proposal.applied_version}."
