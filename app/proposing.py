"""Propose…: what What-if and Policies show beside their direct write, to have a change reviewed first. A title,
an optional description, and the change on screen become a proposal (`propose_schema` / `propose_policy` as
`session.actor()`); the page then links to it. Nothing is proposed in a read-only session (the popover is not
shown), and a viewer sees why they cannot.

The direct write beside it (Register, Save…) is offered only when the core allows it here (`write_button`, from
`allowed_steps`): disabled with the core's reason otherwise, the namespace's `require_proposals` rule shown
beside it, and the proposals still open on the same target named above it (`warn_open`).

The change proposed is the one on screen at the click: the caller passes a function that proposes exactly what
its widgets hold in this run (never the value of an earlier verdict), as Register does.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from app import answers, session
from app.render import escape_markdown, show_error
from registry import Actor, Proposal, ProposalsRequiredError, RegistryError
from registry.proposals._permissions import AllowedSteps, Step

PROPOSAL_PAGE = "app_pages/proposal.py"
SHOWN_OPEN = 5  # open proposals named by link in a warning; the rest are counted


def sentence(text: str) -> str:
    """The core's reason as a sentence of its own (a capital first letter, a full stop)."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def write_button(label: str, *, key: str, allowed: AllowedSteps, step: Step, help: str, disabled: bool = False) -> bool:
    """A direct write's button: enabled only when the core allows `step` here (else disabled, the core's reason
    as its help). True when it was clicked and the step is allowed: a click on a page drawn before the rules
    or the roles changed is judged under them as they are now, writes nothing, and the page shows why."""
    reason = allowed.reason(step)
    clicked = st.button(
        label,
        key=key,
        type="primary",
        disabled=disabled or reason is not None,
        help=escape_markdown(sentence(reason)) if reason is not None else help,
    )
    return clicked and reason is None  # a disabled button reports no click; checked here all the same


def show_rule(allowed: AllowedSteps, step: Step) -> None:
    """The namespace's `require_proposals` rule, beside the write it refuses, in the core's words."""
    refusal = allowed.refusal(step)
    if refusal is not None and refusal.error is ProposalsRequiredError:
        st.caption(escape_markdown(sentence(refusal.reason)), help="Set by an admin in the review rules (Policies).")


def warn_open(proposals: list[Proposal], what: str) -> None:
    """Proposals still open on the target this page writes: a direct write now would overtake them (they turn
    stale), so the page names them, with a link to each."""
    if not proposals:
        return
    listed = ", ".join(f"#{p.id} {p.title!r} ({p.state})" for p in proposals[:SHOWN_OPEN])
    more = f" and {len(proposals) - SHOWN_OPEN} more" if len(proposals) > SHOWN_OPEN else ""
    with st.container(border=True):
        st.warning(
            escape_markdown(
                f"{len(proposals)} proposal(s) not yet applied change {what}: {listed}{more}. A direct write "
                "here makes them stale; their reviewers would have to start again."
            ),
            icon=":material/rate_review:",
        )
        for proposal in proposals[:SHOWN_OPEN]:
            st.page_link(
                PROPOSAL_PAGE,
                label=f"Open proposal #{proposal.id}",
                icon=":material/open_in_new:",
                query_params={"id": str(proposal.id)},
            )


def propose_popover(
    where: str,
    submit: Callable[[str, str, Actor], Proposal],
    *,
    allowed: AllowedSteps,
    default_title: str = "",
    what: str = "this change",
    subject: str = "",
) -> None:
    """The Propose… popover of the page `where` ("whatif", "pol_ns", "pol_topic": also its widget keys'
    prefix), about `subject` (the topic or namespace on screen), offered when the core allows proposing here.
    `submit(title, description, actor)` makes the proposal from the change on screen; its answer is shown by
    `show_proposed` beside the popover."""
    if session.read_only():
        return
    actor = session.actor()
    if actor is None:
        return
    title_key = f"{where}_propose_title"
    if default_title and not st.session_state.get(title_key):
        st.session_state[title_key] = default_title
    refused = allowed.reason(Step.PROPOSE)
    if refused is not None:
        st.button(
            "Propose…",
            key=f"{where}_propose_denied",
            icon=":material/rate_review:",
            disabled=True,
            help=escape_markdown(sentence(refused)),
        )
        return
    with st.popover(
        "Propose…", icon=":material/rate_review:", help=f"Have {what} reviewed and approved before it is applied."
    ):
        st.caption(f"A proposal of {what}, as on screen now: reviewers approve it, then it is applied as approved.")
        # A form: the title, the description and the click arrive together, so one click after typing proposes.
        with st.form(f"{where}_propose_form", border=False, enter_to_submit=False):
            title = st.text_input("Title", key=title_key, max_chars=200)
            description = st.text_area("Description (optional)", key=f"{where}_propose_description", height=100)
            if st.form_submit_button("Propose", key=f"{where}_propose", type="primary"):
                try:
                    made = submit(title, description, actor)
                except RegistryError as exc:
                    answers.give(where, subject, exc)
                else:
                    answers.give(where, subject, (made.id, made.title))
                    st.session_state.pop(title_key, None)
                    st.session_state.pop(f"{where}_propose_description", None)
                    session.clear_caches()
                st.rerun()


def show_proposed(where: str, subject: str = "") -> None:
    """The answer of the last Propose on this page about `subject`, beside its button until the next write: a
    link to the new proposal, or the core's refusal (app/answers.py)."""
    answers.show(where, subject, _proposed)


def _proposed(value: tuple[int, str] | BaseException) -> None:
    if isinstance(value, BaseException):
        show_error(value)
        return
    number, title = value
    with st.container(border=True):
        st.success(
            escape_markdown(f"Proposal #{number} opened: {title}. Nothing is applied until it is approved."),
            icon=":material/rate_review:",
        )
        st.page_link(
            "app_pages/proposal.py",
            label=f"Open proposal #{number}",
            icon=":material/open_in_new:",
            query_params={"id": str(number)},
        )
