"""A proposal's discussion: every comment with who wrote it, when, on which revision and where, and a box to
add one, optionally on a place in the candidate: a JSON pointer the core checks (registry/proposals/_pointer.py),
offered from the diff's changes, the problems and the advisories (`comment_paths`), or typed.

Comment text and paths are what people type, so they are only ever shown with `st.text` (no markdown, no
HTML): a comment that holds `<script>` or `**bold**`, or a path stored before paths were checked that holds a
newline and `![x](…)`, shows exactly those characters.
"""

from __future__ import annotations

import streamlit as st

from app import session
from app.proposal_steps import DISCUSSION, run_step, show_outcome, warn
from app.render import escape_markdown, when
from registry import Actor, Comment, Proposal, ProposalReview, SchemaRegistry, comment_paths

WHOLE = "(the whole proposal)"
TEXT, PATH = "prop_comment_text", "prop_comment_path"  # the comment box's widget keys


def show_comments(proposal: Proposal) -> None:
    if not proposal.comments:
        st.caption("No comment yet.")
        return
    for comment in proposal.comments:
        with st.container(border=True):
            st.markdown(_heading(comment, proposal.revision.number))
            if comment.path:
                st.text(f"on {comment.path}")
            st.text(comment.text)


def _heading(comment: Comment, current: int) -> str:
    revision = f"revision {comment.revision}" + ("" if comment.revision == current else " (an earlier one)")
    return f"**{escape_markdown(comment.user)}** · {when(comment.at)} · {revision}"


def comment_box(reg: SchemaRegistry, proposal: Proposal, review: ProposalReview | None, actor: Actor | None) -> None:
    """The box to comment with (not in a read-only session); its path is a pointer the review names, or typed."""
    if session.read_only() or actor is None:
        st.caption("Read-only: this session cannot comment.")
        return
    with st.form("prop_comment_form", clear_on_submit=True, border=True):
        st.text_area("Add a comment", key=TEXT, max_chars=10_000, height=110)
        labels = comment_paths(proposal, review)
        st.selectbox(
            "On a field (optional)",
            [WHOLE, *labels],
            key=PATH,
            format_func=lambda path: picker_label(path, labels),
            accept_new_options=True,
            help="A place in the candidate, as a JSON pointer (/fields/0/type); pick one the review names, or type "
            "another.",
        )
        st.form_submit_button("Comment", icon=":material/chat:", on_click=_send, args=(reg, proposal.id, actor))
    show_outcome(proposal.id, DISCUSSION)


def picker_label(path: str, labels: dict[str, str]) -> str:
    """A place as the picker shows it: what it is about first (the field's path by name, or the rule's code),
    then its pointer, `giftNote — /fields/2`; a pointer the review names nothing for (typed) as it is."""
    return f"{labels[path]} — {path}" if labels.get(path) else path


def _send(reg: SchemaRegistry, proposal_id: int, actor: Actor) -> None:
    """The Comment button's callback: the text and path as submitted (the form then clears)."""
    text = str(st.session_state.get(TEXT) or "")
    path = st.session_state.get(PATH)
    where = "" if path in (None, WHOLE) else str(path)
    if not text.strip():
        warn(proposal_id, "Write something to comment: an empty comment is not kept.", where=DISCUSSION)
        return
    run_step(
        proposal_id,
        lambda: reg.proposals.comment(proposal_id, text, path=where, actor=actor),
        "Comment added." if not where else f"Comment added on {where}.",
        where=DISCUSSION,
    )
