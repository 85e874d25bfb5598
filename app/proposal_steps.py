"""The steps a person takes on a proposal from its page: approve, reject with a reason, withdraw, rebase, apply
(an admin without the approvals only with a typed reason), each shown only where this session may take it
(app/proposal_access.py), none in a read-only session.

Each step is one core call as `session.actor()`, made from the button's callback: a click is never lost because
the proposal changed meanwhile (someone withdrew it in another tab): the core then refuses, and its message is
shown word for word. An approval or an apply names the revision on screen, and the core checks it inside its write
(RevisionChangedError when another revision was pushed since the page was drawn): nothing is written and the
page says so. The answer is shown beside the buttons that made it, on the proposal as it is then, until the
next step (app/answers.py). A step that needs a reason is a form: the reason is read with the click.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from app import answers, session
from app.proposal_access import Steps, approvers_of_revision, still_needed
from app.render import escape_markdown, show_error, when
from app.roles import RolesFileError
from registry import (
    Actor,
    ApplyReadiness,
    Proposal,
    ProposalReview,
    ProposalState,
    RegistryError,
    ReviewRules,
    RevisionChangedError,
    Role,
    SchemaRegistry,
    StaleProposalError,
    apply_readiness,
    approvals_text,
    counted_approvals,
    judged_under,
    may_review,
    rules_note,
    same_person,
)

T = TypeVar("T")
REJECT_REASON = "prop_reject_reason"
OVERRIDE_REASON = "prop_override_reason"


STEPS, DISCUSSION, REVISIONS = "proposal_steps", "proposal_discussion", "proposal_revisions"  # where answers show


def run_step(proposal_id: int, call: Callable[[], T], done: str | Callable[[T], str], *, where: str = STEPS) -> None:
    """Take one step (a button's callback) and keep its answer beside the buttons at `where` (app/answers.py),
    shown on the proposal as it is after the step. `done` says what happened (from the step's answer, when it is
    a function)."""
    try:
        answer = call()
    except StaleProposalError as exc:
        answers.give(where, proposal_id, ("stale", exc))
    except RevisionChangedError as exc:
        warn(proposal_id, f"Nothing was done: {exc}. The page now shows the current revision.", where=where)
    except RegistryError as exc:
        answers.give(where, proposal_id, ("error", exc))
    else:
        answers.give(where, proposal_id, ("done", done if isinstance(done, str) else done(answer)))
    session.clear_caches()  # a refused apply may still have marked the proposal stale


def warn(proposal_id: int, message: str, *, where: str = STEPS) -> None:
    """A step not taken, and why (nothing was sent to the registry)."""
    answers.give(where, proposal_id, ("warn", message))


def show_outcome(proposal_id: int, where: str = STEPS) -> None:
    """The answer of the last step taken at `where` on this proposal, beside its buttons until the next step."""
    answers.show(where, proposal_id, _outcome)


def _outcome(outcome: tuple[str, Any]) -> None:
    kind, value = outcome
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
    """Approvals of the current revision (an applied proposal's under the rules it was applied under), who still
    needs to approve, why it cannot be applied now (in one place), and the buttons this session may use: Apply
    only where the core says an apply would go through (`apply_readiness`)."""
    judged = judged_under(proposal, rules)
    readiness = apply_readiness(proposal, rules, review, actor, may_approve=reviewer_roles())
    counted = counted_approvals(proposal, judged)
    st.markdown(
        f"**Approvals of revision {proposal.revision.number}**: "
        f"{escape_markdown(approvals_text(proposal, rules) + rules_note(proposal))}"
    )
    if counted:
        st.caption(escape_markdown("Approved " + ", ".join(f"by {a.user} on {when(a.at)}" for a in counted) + "."))
    uncounted = [name for name in approvers_of_revision(proposal) if name not in {a.user for a in counted}]
    if uncounted:
        st.caption(escape_markdown(f"Not counted under these rules: {', '.join(uncounted)}."))
    if not proposal.state.final:
        _readiness_note(proposal, rules, readiness)
    if session.read_only():
        st.caption("Read-only: this session cannot approve, reject, withdraw or apply.")
        return
    if actor is None:
        return
    _buttons(reg, proposal, actor, steps, readiness)
    show_outcome(proposal.id)
    if not proposal.state.final and not steps.approve and proposal.state is not ProposalState.STALE:
        why = may_review(proposal, rules, actor)
        if why is not None:
            st.caption(escape_markdown(f"You cannot approve it: {why}."))
        elif any(same_person(actor.name, name) for name in approvers_of_revision(proposal)):
            st.caption(f"You approved revision {proposal.revision.number}.")


def _readiness_note(proposal: Proposal, rules: ReviewRules, readiness: ApplyReadiness) -> None:
    """Says the approvals suffice only where an apply would go through; else every reason it would not, once."""
    if readiness.ready:
        st.caption("The approvals suffice to apply it.")
        return
    reasons = list(readiness.refusals)
    if readiness.missing:
        reasons.append(still_needed(proposal, rules, reviewer_roles()))
    st.warning(escape_markdown(f"It cannot be applied now: {'; '.join(reasons)}."), icon=":material/block:")
    if readiness.unable:
        st.caption(escape_markdown(f"Named reviewers who cannot approve it: {', '.join(readiness.unable)}."))


def reviewer_roles() -> Callable[[str], bool] | None:
    """Whether a named reviewer's role lets them approve, by the roles file in force (None without one: anyone
    else who may write is a producer; an unreadable file: nobody, as the session's own role is then viewer)."""
    roles = session.current_roles()
    if roles is None:
        return None
    if isinstance(roles, RolesFileError):
        return lambda name: False
    return lambda name: roles.role_of(name).at_least(Role.PRODUCER)


def _buttons(
    reg: SchemaRegistry,
    proposal: Proposal,
    actor: Actor,
    steps: Steps,
    readiness: ApplyReadiness,
) -> None:
    pid, number = proposal.id, proposal.revision.number
    apply = steps.apply and not steps.apply_needs_reason and readiness.ready
    override = steps.apply_needs_reason and readiness.overridable
    if not (steps.approve or steps.reject or steps.withdraw or apply or override):
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
                    lambda: reg.proposals.approve(pid, actor=actor, revision=number),
                    f"You approved revision {number} of #{pid}.",
                ),
            )
        if apply:
            st.button(
                "Apply",
                key="prop_apply",
                type="primary",
                icon=":material/publish:",
                help="Applies exactly this revision, checked again against the registry as it is at the click.",
                on_click=run_step,
                args=(pid, lambda: reg.proposals.apply(pid, actor=actor, revision=number), applied_text),
            )
        if steps.reject:
            with st.popover("Reject…", icon=":material/block:"), st.form("prop_reject_form", border=False):
                # A form: the reason and the click arrive together, so one click after typing rejects.
                st.text_area("Why (the author sees this)", key=REJECT_REASON, max_chars=2000)
                st.form_submit_button(
                    "Reject the proposal",
                    key="prop_reject",
                    on_click=_with_reason,
                    args=(
                        pid,
                        REJECT_REASON,
                        "Nothing was rejected: write why first (the author sees it).",
                        lambda reason: reg.proposals.reject(pid, reason, actor=actor),
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
                    args=(pid, lambda: reg.proposals.withdraw(pid, actor=actor), f"#{pid} was withdrawn."),
                )
        if override:
            with st.popover("Apply without the approvals…", icon=":material/gavel:"):
                st.caption(
                    "An admin may apply a proposal that lacks its approvals only with a written reason; the "
                    "proposal and the audit trail keep it."
                )
                with st.form("prop_override_form", border=False):
                    st.text_area("Reason", key=OVERRIDE_REASON, max_chars=2000)
                    st.form_submit_button(
                        "Apply anyway",
                        key="prop_apply_override",
                        type="primary",
                        on_click=_with_reason,
                        args=(
                            pid,
                            OVERRIDE_REASON,
                            "Nothing was applied: write the reason first (the proposal and the audit trail keep it).",
                            lambda reason: reg.proposals.apply(
                                pid, actor=actor, override_reason=reason, revision=number
                            ),
                            lambda done: applied_text(done) + " Applied without the approvals; the reason is kept.",
                        ),
                    )


def _with_reason(
    proposal_id: int, key: str, missing: str, call: Callable[[str], T], done: str | Callable[[T], str]
) -> None:
    """A form's submit callback for a step that needs a written reason: the reason is read as submitted with the
    click (never a button disabled until the box loses focus); an empty one takes no step and says so."""
    reason = str(st.session_state.get(key) or "")
    if not reason.strip():
        warn(proposal_id, missing)
        return
    run_step(proposal_id, lambda: call(reason), done)


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
            lambda: reg.proposals.rebase(pid, actor=actor),
            f"#{pid} was rebased onto the latest version: its change replayed on it, a new revision to be reviewed "
            "again (Revisions shows what changed).",
        ),
    )


def applied_text(proposal: Proposal) -> str:
    """What an apply did, from the proposal it returned."""
    if proposal.applied_version is None:
        return f"#{proposal.id} was applied: the policies of {proposal.target} are saved."
    return f"#{proposal.id} was applied: {proposal.target} now has version {proposal.applied_version}."
