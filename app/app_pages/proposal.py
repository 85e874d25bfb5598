"""One schema change proposal (`/proposal?id=N`): what it proposes, by whom, where it stands; its review computed
now by the core (`review_proposal`; an applied one shows the review frozen at apply and the version it stored);
the stale banner with Rebase; approvals and who still needs to approve; the discussion; and the steps this
session may take (app/proposal_steps.py). A bad or unknown id says so and shows nothing else.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import answers, links, session
from app.proposal_access import Steps, steps
from app.proposal_discussion import comment_box, show_comments
from app.proposal_review import show_review
from app.proposal_revisions import push_revision, revision_diff
from app.proposal_steps import DISCUSSION, REVISIONS, STEPS, approvals_panel, rebase_button
from app.render import code_span, escape_markdown, pretty_schema, show_error, when
from registry import (
    Actor,
    Proposal,
    ProposalKind,
    ProposalNotFoundError,
    ProposalReview,
    ProposalState,
    RegistryError,
    ReviewRules,
    SchemaRegistry,
    applied_text,
)

LAST = "proposal_last_id"  # session key: the proposal this session last opened (a visit without `id=` shows it)
STATE_COLOUR = {
    ProposalState.OPEN: "blue",
    ProposalState.APPROVED: "green",
    ProposalState.APPLIED: "violet",
    ProposalState.REJECTED: "red",
    ProposalState.WITHDRAWN: "gray",
    ProposalState.STALE: "orange",
}
PROPOSALS_PAGE = "app_pages/proposals.py"


def _linked_id() -> int | None:
    params = links.opened()
    if params:  # a new visit (a link, a reload): the answers of earlier steps are not shown again
        for where in (STEPS, DISCUSSION, REVISIONS):
            answers.forget(where)
    if "id" in params:
        number = links.whole_number("id", params["id"], minimum=1)
        if number is not None:
            st.session_state[LAST] = number
        else:
            st.session_state.pop(LAST, None)
        return number
    last = st.session_state.get(LAST)
    return int(last) if last is not None else None


def _header(proposal: Proposal, share: DeltaGenerator) -> None:
    with share:
        links.keep({"id": proposal.id})  # Copy link sits beside the title, at the top of a long page
        links.copy_link()
    what = "Schema change for" if proposal.kind is ProposalKind.SCHEMA else "Policy change for"
    st.markdown(
        f"{what} {code_span(links.short_topic(proposal.target) if '://' in proposal.target else proposal.target)}"
        f" · namespace {code_span(proposal.namespace)} · proposed by **{escape_markdown(proposal.author)}** "
        f"on {when(proposal.created_at)} · updated {when(proposal.updated_at)}"
    )
    with st.container(horizontal=True):
        st.badge(str(proposal.state), color=STATE_COLOUR[proposal.state])  # type: ignore[arg-type]
        st.badge(f"revision {proposal.revision.number} of {len(proposal.revisions)}", color="gray")
        if proposal.kind is ProposalKind.SCHEMA:
            base = "a topic without a schema" if proposal.base_version is None else f"v{proposal.base_version}"
            st.badge(f"base {base}", color="gray")
    # The title stays as its author wrote it; what the current revision changes is said from the revision.
    st.markdown(f"**Change** (revision {proposal.revision.number}): {code_span(proposal.revision.summary)}")
    if proposal.description:
        st.text(proposal.description)


def _final_banner(reg: SchemaRegistry, proposal: Proposal) -> None:
    if proposal.state is ProposalState.APPLIED:
        done = applied_text(proposal)
        st.success(
            escape_markdown(f"{done[:1].upper()}{done[1:]} (on {when(proposal.updated_at)})."),
            icon=":material/check_circle:",
        )
        if proposal.reason:
            st.warning(escape_markdown(f"Applied without its approvals. Reason: {proposal.reason}"))
        if proposal.applied_version is not None:
            st.page_link(
                "app_pages/topic.py",
                label=f"Open version {proposal.applied_version} on the Topic page",
                icon=":material/schema:",
                query_params={"topic": links.short_topic(proposal.target), "version": str(proposal.applied_version)},
            )
    elif proposal.state is ProposalState.REJECTED:
        st.error(escape_markdown(f"Rejected: {proposal.reason}"), icon=":material/block:")
    elif proposal.state is ProposalState.WITHDRAWN:
        st.info(f"Withdrawn by its author or an admin on {when(proposal.updated_at)}.", icon=":material/undo:")


def _stale_banner(
    reg: SchemaRegistry, proposal: Proposal, review: ProposalReview | None, actor: Actor | None, *, may_rebase: bool
) -> None:
    """Stale: what was stored since the base, and Rebase for the author or an admin."""
    if proposal.kind is ProposalKind.POLICY:
        text = f"Stale: the policies of {proposal.target} were changed since this proposal was made."
    elif review is not None and review.changed_since:
        since = ", ".join(str(v) for v in review.changed_since)
        label = "version" if len(review.changed_since) == 1 else "versions"
        base = "the topic had no schema" if proposal.base_version is None else f"its base, v{proposal.base_version}"
        text = f"Stale: {label} {since} {'was' if len(review.changed_since) == 1 else 'were'} stored since {base}."
    else:
        text = f"Stale: the topic's latest version is no longer v{proposal.base_version}, this proposal's base."
    with st.container(border=True):
        st.warning(
            escape_markdown(text + " It cannot be approved or applied until it is rebased onto the latest version."),
            icon=":material/sync_problem:",
        )
        if actor is not None and may_rebase:
            rebase_button(reg, proposal, actor)
        else:
            st.caption(escape_markdown(f"Only its author ({proposal.author}) or an admin can rebase it."))


def _candidate(proposal: Proposal) -> None:
    revision = proposal.revision
    if revision.schema is not None:
        text, language = pretty_schema(revision.schema.type, str(revision.schema.schema))
        st.caption(f"{revision.schema.type} · sha256 {revision.sha256}")
        if text:
            st.code(text, language=language, line_numbers=True, wrap_lines=True)
        else:
            st.info(f"{revision.schema.type} is a primitive type: Pulsar stores no schema definition for it.")
        if revision.schema.properties:
            st.dataframe(
                pd.DataFrame(sorted(revision.schema.properties.items()), columns=["property", "value"]),
                hide_index=True,
            )
    else:
        changes = {key: str(value) for key, value in (revision.policy or {}).items()}
        st.dataframe(pd.DataFrame(sorted(changes.items()), columns=["policy", "proposed"]), hide_index=True)


def _revisions(proposal: Proposal) -> None:
    rows = [
        {
            "revision": r.number,
            "author": r.author,
            "at": when(r.at),
            "base": "—"
            if proposal.kind is ProposalKind.POLICY
            else ("none" if r.base_version is None else r.base_version),
            "sha256": r.sha256[:16],
        }
        for r in reversed(proposal.revisions)
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption("A new revision (an edit, or a rebase) clears the approvals: they belong to one revision.")


def _review(reg: SchemaRegistry, proposal: Proposal) -> tuple[ProposalReview | None, bool]:
    """(the review to show, whether it is the one frozen at apply)."""
    if proposal.state is ProposalState.APPLIED and proposal.applied_review is not None:
        return proposal.applied_review, True
    try:
        return reg.proposals.review(proposal.id), False
    except RegistryError as exc:
        show_error(exc)
        return None, False


def render(reg: SchemaRegistry, proposal_id: int) -> None:
    try:
        proposal = reg.proposals.get(proposal_id)
    except ProposalNotFoundError:
        share = links.title_row(f"Proposal #{proposal_id}")
        with share:
            links.keep({"id": proposal_id})
            links.copy_link()
        st.error(f"There is no proposal #{proposal_id} in this registry.", icon=":material/search_off:")
        st.page_link(PROPOSALS_PAGE, label="See every proposal", icon=":material/rate_review:")
        return
    _header(proposal, links.title_row(f"#{proposal.id} · {escape_markdown(proposal.title)}"))
    _final_banner(reg, proposal)
    review, frozen = _review(reg, proposal)
    rules = _rules(reg, proposal)
    actor = session.actor()
    stale = proposal.state is ProposalState.STALE or (
        not proposal.state.final and review is not None and not frozen and review.stale
    )
    allowed = (
        steps(proposal, rules, actor, read_only=session.read_only(), stale=stale) if rules is not None else Steps()
    )
    if stale and not proposal.state.final:
        _stale_banner(reg, proposal, review, actor, may_rebase=allowed.rebase)
    with st.container(border=True):
        if rules is not None:
            approvals_panel(reg, proposal, rules, review, actor, allowed)
    tabs = st.tabs(["Review", "Discussion", "Candidate", "Revisions"], key="prop_tab")
    with tabs[0]:
        if review is not None:
            show_review(proposal, review, frozen=frozen, key=f"prop_{proposal.id}")
    with tabs[1]:
        st.caption(f"{len(proposal.comments)} comment(s). Everyone who can read the registry may comment.")
        show_comments(proposal)
        comment_box(reg, proposal, review, actor if allowed.comment else None)
    with tabs[2]:
        _candidate(proposal)
    with tabs[3]:
        _revisions(proposal)
        revision_diff(reg, proposal)
        if actor is not None and allowed.revise:
            push_revision(reg, proposal, actor)


def _rules(reg: SchemaRegistry, proposal: Proposal) -> ReviewRules | None:
    try:
        return reg.proposals.rules(proposal.namespace)
    except RegistryError as exc:
        show_error(exc)
        return None


def main() -> None:
    proposal_id = _linked_id()
    try:
        reg = session.registry()
    except RegistryError as exc:
        show_error(exc)
        return
    if proposal_id is None:
        st.title("Proposal")
        st.info("No proposal chosen: open one from the Proposals page.", icon=":material/rate_review:")
        st.page_link(PROPOSALS_PAGE, label="Proposals", icon=":material/rate_review:")
        links.keep({})
        return
    try:
        render(reg, proposal_id)
    except RegistryError as exc:
        show_error(exc)
    links.keep({"id": proposal_id})


main()
