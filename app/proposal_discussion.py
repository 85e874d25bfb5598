"""A proposal's discussion: every comment with who wrote it, when, on which revision and field path, and a box
to add one, optionally on a field path of the diff (offered from the diff's changes and the problems).

Comment text is what people type, so it is only ever shown with `st.text` (no markdown, no HTML): a comment
that holds `<script>` or `**bold**` shows exactly those characters.
"""

from __future__ import annotations

import streamlit as st

from app import session
from app.proposal_steps import run_step, warn
from app.render import code_span, escape_markdown, when
from registry import Actor, Comment, Proposal, ProposalReview, SchemaRegistry

WHOLE = "(the whole proposal)"
TEXT, PATH = "prop_comment_text", "prop_comment_path"  # the comment box's widget keys


def field_paths(review: ProposalReview | None) -> list[str]:
    """The paths a comment may be about: the diff's changes, then the problems' and advisories' pointers."""
    if review is None:
        return []
    paths: list[str] = []
    if review.diff is not None:
        paths += [change.path for change in review.diff.changes]
    paths += [item.problem.path for item in review.problems]
    if review.what_if is not None:
        paths += [advisory.path for advisory in review.what_if.advisories]
    return [path for path in dict.fromkeys(paths) if path]


def show_comments(proposal: Proposal) -> None:
    if not proposal.comments:
        st.caption("No comment yet.")
        return
    for comment in proposal.comments:
        with st.container(border=True):
            st.markdown(_heading(comment, proposal.revision.number))
            st.text(comment.text)


def _heading(comment: Comment, current: int) -> str:
    where = f" · on {code_span(comment.path)}" if comment.path else ""
    revision = f"revision {comment.revision}" + ("" if comment.revision == current else " (an earlier one)")
    return f"**{escape_markdown(comment.user)}** · {when(comment.at)}{where} · {revision}"


def comment_box(reg: SchemaRegistry, proposal: Proposal, review: ProposalReview | None, actor: Actor | None) -> None:
    """The box to comment with (not in a read-only session); its path is one of the diff's, or typed."""
    if session.read_only() or actor is None:
        st.caption("Read-only: this session cannot comment.")
        return
    with st.form("prop_comment_form", clear_on_submit=True, border=True):
        st.text_area("Add a comment", key=TEXT, max_chars=10_000, height=110)
        st.selectbox(
            "On a field (optional)",
            [WHOLE, *field_paths(review)],
            key=PATH,
            accept_new_options=True,
            help="A field path of the diff, or type another.",
        )
        st.form_submit_button("Comment", icon=":material/chat:", on_click=_send, args=(reg, proposal.id, actor))


def _send(reg: SchemaRegistry, proposal_id: int, actor: Actor) -> None:
    """The Comment button's callback: the text and path as submitted (the form then clears)."""
    text = str(st.session_state.get(TEXT) or "")
    path = st.session_state.get(PATH)
    where = "" if path in (None, WHOLE) else str(path)
    if not text.strip():
        warn(proposal_id, "Write something to comment: an empty comment is not kept.")
        return
    run_step(
        proposal_id,
        lambda: reg.comment_on_proposal(proposal_id, text, path=where, actor=actor),
        "Comment added." if not where else f"Comment added on {where}.",
    )
