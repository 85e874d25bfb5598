"""A proposal's revisions on its page: what changed between any two (the core's `proposal_diff`; by default the
previous and the current one, what a reviewer who saw the previous one needs after an edit or a rebase), and a
new revision pushed from the page with the What-if candidate editor (app/candidate.py), offered only to whom the
core lets revise (app/proposal_access.py) and judged by the core again when pushed.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app.candidate import candidate_input
from app.proposal_steps import REVISIONS, run_step, show_outcome
from app.render import show_error
from app.review import show_diff
from registry import Actor, Proposal, ProposalKind, RegistryError, SchemaRegistry

FROM, TO = "prop_rev_from", "prop_rev_to"


def revision_diff(reg: SchemaRegistry, proposal: Proposal) -> None:
    """Two pickers (from, to) and the diff between those revisions."""
    numbers = [r.number for r in proposal.revisions]
    if len(numbers) < 2:
        st.caption("One revision so far: the Review tab shows its diff against the base.")
        return
    st.subheader("What changed between revisions")
    label = {r.number: _label(proposal, r.number) for r in proposal.revisions}
    with st.container(horizontal=True):
        older = st.selectbox("From", numbers, index=len(numbers) - 2, key=FROM, format_func=label.__getitem__)
        newer = st.selectbox("To", numbers, index=len(numbers) - 1, key=TO, format_func=label.__getitem__)
    try:
        found = reg.proposals.diff(proposal.id, from_revision=older, to_revision=newer)
    except RegistryError as exc:
        show_error(exc)
        return
    if found.from_base != found.to_base:
        st.caption(f"The base moved too: {_base(found.from_base)} → {_base(found.to_base)} (a rebase).")
    if found.diff is not None:
        show_diff(found.diff, old_label=label[older], new_label=label[newer], key=f"prop_{proposal.id}_revdiff")
        return
    rows = [
        {
            "policy": name.replace("_", " "),
            label[older]: _value(proposal, older, name),
            label[newer]: _value(proposal, newer, name),
        }
        for name in found.policy_fields
    ]
    if rows:
        st.table(pd.DataFrame(rows), hide_index=True)
    else:
        st.info("Both revisions set the same policy values.")


def push_revision(reg: SchemaRegistry, proposal: Proposal, actor: Actor) -> None:
    """The candidate editor, seeded with the current revision, and a button that pushes what it holds."""
    if proposal.kind is not ProposalKind.SCHEMA or proposal.revision.schema is None:
        return
    number = proposal.revision.number + 1
    show_outcome(proposal.id, REVISIONS)  # above the editor: a push folds it (a new revision, a new expander)
    with st.expander(f"Push revision {number}", icon=":material/edit:"):
        st.caption(
            "Edit the candidate; pushing makes a new revision against the latest version and clears the approvals."
        )
        info = candidate_input("prop_rev_cand", start=proposal.revision.schema, origin=(proposal.id, number - 1))
        if info is None:
            return
        if st.button(f"Push revision {number}", key="prop_push_revision", type="primary", icon=":material/upload:"):
            pid = proposal.id
            run_step(
                pid,
                lambda: reg.proposals.revise(pid, schema=info, actor=actor),
                lambda done: f"#{pid} now has revision {done.revision.number}: its approvals start over.",
                where=REVISIONS,
            )
            st.rerun()


def _label(proposal: Proposal, number: int) -> str:
    revision = next(r for r in proposal.revisions if r.number == number)
    base = "" if proposal.kind is ProposalKind.POLICY else f", base {_base(revision.base_version)}"
    return f"revision {number} ({revision.author}{base})"


def _base(version: int | None) -> str:
    return "none" if version is None else f"v{version}"


def _value(proposal: Proposal, number: int, name: str) -> str:
    revision = next(r for r in proposal.revisions if r.number == number)
    value = (revision.policy or {}).get(name)
    return "not set" if value is None else str(value)
