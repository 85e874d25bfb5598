"""Diff: any two live versions of a topic, or a version and a pasted candidate.

Shows the BACKWARD/FORWARD badges, the semantic change table and a side-by-side text diff, all from
`SchemaRegistry.diff` (users.md: "diff any two versions", "semantic diff").
"""

from __future__ import annotations

import streamlit as st

from app import links
from app.candidate import candidate_input
from app.render import show_error, when
from app.review import show_diff
from app.topic_page import topic_page
from registry import RegistryError, SchemaInfo, SchemaRegistry, SchemaVersion

CANDIDATE = "candidate"


def version_label(entry: SchemaVersion) -> str:
    by = f" by {entry.user}" if entry.user else ""
    return f"v{entry.version} · {entry.type} · {when(entry.timestamp)}{by}"


def _keep_valid(key: str, options: list[int | str], default: int | str) -> None:
    """A new topic has other versions: reset a selection that no longer exists."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = default


def _open_link(versions: list[int | str]) -> None:
    """A link's `old_version=` and `new_version=` (live versions; `new_version=candidate` opens the candidate
    editor), the names the REST diff takes and answers with. `from=` and `to=`, their older names, still open
    the links shared before."""
    params = links.current()
    for name, older, key in (("old_version", "from", "diff_old"), ("new_version", "to", "diff_new")):
        if name in params and older in params:
            links.bad_value(older, params[older], f"give {name} or its older name {older}, not both")
        given = name if name in params else older
        value = params.get(given)
        if value is None:
            continue
        if key == "diff_new" and value == CANDIDATE:
            st.session_state[key] = CANDIDATE
            continue
        number = links.whole_number(given, value)
        if number is not None and number not in versions:
            live = ", ".join(str(v) for v in versions)
            links.bad_value(given, value, f"not a live version of this topic (live: {live})")
        elif number is not None:
            st.session_state[key] = number


def render(reg: SchemaRegistry, topic: str) -> dict[str, object]:
    """The page; returns its link parameters (the two sides)."""
    history = reg.history(topic)
    if not history:
        st.info("This topic has no live schema version to diff. Pick another topic, or register one on What-if.")
        return {}
    labels = {e.version: version_label(e) for e in history}
    versions: list[int | str] = list(labels)
    _open_link(versions)
    _keep_valid("diff_old", versions, versions[-2] if len(versions) > 1 else versions[-1])
    _keep_valid("diff_new", [*versions, CANDIDATE], versions[-1])
    left, right = st.columns(2)
    with left:
        old = st.selectbox("Old", versions, key="diff_old", format_func=lambda v: labels[v])
    with right:
        new = st.selectbox(
            "New", [*versions, CANDIDATE], key="diff_new", format_func=lambda v: labels.get(v, "a candidate schema")
        )
    sides: dict[str, object] = {"old_version": old, "new_version": new}
    target: int | SchemaInfo | None
    if isinstance(new, int):
        target = new
    else:  # CANDIDATE
        with st.expander("Candidate schema", expanded=True):
            target = candidate_input("diff_cand", start=history[-1])
        if target is None:
            return sides
    if not isinstance(old, int):
        return sides  # "Old" lists only versions
    try:
        diff = reg.diff(topic, old, target)
    except RegistryError as exc:
        show_error(exc)
        return sides
    new_label = "candidate" if new == CANDIDATE else f"v{new}"
    st.subheader(f"v{old} → {new_label}")
    show_diff(diff, old_label=f"v{old}", new_label=new_label, key="diff")
    return sides


st.title("Diff")
st.caption("Any two versions of a topic, or a version and a candidate: what changed, and whom it breaks.")
topic_page(render)
