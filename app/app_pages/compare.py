"""Compare: the connected registry against another one (a file, a database location or an admin URL with its
token): the drift table filtered by state and namespace, a topic's two histories side by side, the policy
differences, the replication hazards and the plan to converge, all from `registry.compare_registries`; and
Propose for the plan's safe topics when the connected registry is B and the session may write.

`/compare?to=LOCATION` reopens it (`direction=into` when the connected registry is B); a token is never in a
link.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import links, session
from app.render import escape_markdown, show_error
from app.review import show_diff
from registry import RegistryError, SchemaRegistry
from registry.compare import Comparison, TopicState, compare_registries, drift_diff, open_side, propose_plan

ALL = "(all)"
DIRECTIONS = {
    "from": "This registry is A: compare into the other",
    "into": "This registry is B: compare from the other",
}
_RESULT = "compare_result"  # session key: (what was compared, the Comparison)


def _open_link() -> None:
    params = links.opened()
    if "to" in params:
        st.session_state["compare_to"] = params["to"]
    if "direction" in params:
        if params["direction"] in DIRECTIONS:
            st.session_state["compare_direction"] = params["direction"]
        else:
            links.bad_value("direction", params["direction"], f"choose one of {', '.join(DIRECTIONS)}")


def compared(reg: SchemaRegistry, other: SchemaRegistry, direction: str) -> Comparison:
    """The comparison, kept for the session while neither registry changes (a filter click does not redo it)."""
    key = (reg.location, other.location, direction, reg.change_token(), other.change_token())
    kept = st.session_state.get(_RESULT)
    if kept is not None and kept[0] == key:
        found: Comparison = kept[1]
        return found
    source, target = (reg, other) if direction == "from" else (other, reg)
    with st.spinner("Comparing…"):
        found = compare_registries(source, target)
    st.session_state[_RESULT] = (key, found)
    return found


def drift_frame(found: Comparison, states: list[str], namespace: str) -> pd.DataFrame:
    rows = [
        {
            "topic": t.topic,
            "state": str(t.state),
            "A latest": t.from_latest,
            "B latest": t.to_latest,
            "A versions": t.from_versions,
            "B versions": t.to_versions,
            "first difference": t.first_difference,
        }
        for t in found.topics
        if (not states or str(t.state) in states) and (namespace == ALL or _namespace(t.topic) == namespace)
    ]
    return pd.DataFrame(rows, columns=["topic", "state", "A latest", "B latest", "A versions", "B versions",
                                       "first difference"])  # fmt: skip


def _namespace(topic: str) -> str:
    return "/".join(topic.split("://", 1)[-1].split("/")[:2])


def hazard_frame(found: Comparison) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for h in found.hazards:
        problem = h.problems[0] if h.problems else None
        rows.append(
            {
                "topic": h.topic,
                "reason": str(h.reason),
                "A version": h.version,
                "B policy": f"{h.policy} = {getattr(h.policy_value, 'value', h.policy_value)} ({h.policy_source})",
                "rule": str(problem.code) if problem else "",
                "direction": str(problem.direction) if problem else "",
                "field": problem.path if problem else "",
                "hint": problem.hint if problem else "",
                "message": h.message,
            }
        )
    return pd.DataFrame(rows)


def plan_frame(found: Comparison) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for plan in found.plan:
        if not plan.steps:
            rows.append({"topic": plan.topic, "A version": None, "B's verdict": plan.note})
        for s in plan.steps:
            if s.accepted:
                verdict = f"accepted as version {s.registers_as if s.duplicate_of is None else s.duplicate_of}"
            elif s.blocked_by is not None:
                verdict = f"not reached: replication stops at version {s.blocked_by}"
            else:
                verdict = f"refused: {s.reason}"
            rows.append({"topic": plan.topic, "A version": s.version, "B's verdict": verdict})
    return pd.DataFrame(rows, columns=["topic", "A version", "B's verdict"])


def side_by_side(found: Comparison, reg: SchemaRegistry, other: SchemaRegistry, direction: str) -> None:
    """A drifted topic's two histories, version by version, and the diff of the first version they differ at."""
    drifted = {t.topic: t for t in found.drifted}
    if not drifted:
        return
    topic = st.selectbox("A topic's two histories", list(drifted), key="compare_topic")
    source, target = (reg, other) if direction == "from" else (other, reg)
    first = drifted[topic].first_difference
    diff = drift_diff(source, target, topic, first) if first is not None else None
    if diff is not None and first is not None:
        st.markdown(f"**Version {first}: B's against A's**")
        show_diff(diff, old_label=f"B v{first}", new_label=f"A v{first}", key="compare_diff")
    columns = st.columns(2)
    for column, side, name in ((columns[0], source, "A"), (columns[1], target, "B")):
        with column:
            st.markdown(f"**{name}**: {escape_markdown(side.location)}")
            try:
                history = side.history(topic)
            except RegistryError:
                history = []
            if not history:
                st.caption("no live version")
            for entry in history:
                with st.expander(f"v{entry.version} · {entry.type}"):
                    st.code(entry.schema, language="json")


def render(reg: SchemaRegistry) -> None:
    _open_link()
    if st.session_state.get("compare_direction") not in DIRECTIONS:
        st.session_state["compare_direction"] = "from"
    left, right = st.columns([3, 2])
    with left:
        target = st.text_input(
            "Other registry",
            key="compare_to",
            placeholder="a registry file, an export file or Parquet folder, postgresql://…, or https://…",
        )
    with right:
        token = st.text_input("Token (for a URL)", key="compare_token", type="password")
    direction = st.radio("Direction", list(DIRECTIONS), format_func=DIRECTIONS.__getitem__, key="compare_direction")
    links.keep({"to": target.strip(), "direction": direction if direction != "from" else None})
    if not target.strip():
        st.info("Name another registry to compare the connected one with.")
        return
    try:
        other = open_side(target.strip(), token=token or None)
    except RegistryError as exc:
        show_error(exc)
        return
    try:
        found = compared(reg, other, direction)
        show(found, reg, other, direction)
    except RegistryError as exc:
        show_error(exc)
    finally:
        other.close()


def show(found: Comparison, reg: SchemaRegistry, other: SchemaRegistry, direction: str) -> None:
    summary = found.summary
    st.caption(escape_markdown(f"A: {found.source} · B: {found.target}"))
    cols = st.columns(4)
    cols[0].metric("Topics drifted", len(found.drifted))
    cols[1].metric("Same", summary["same"])
    cols[2].metric("Policy differences", summary["policies"])
    cols[3].metric("Hazards", summary["hazards"])
    filters = st.columns([3, 2])
    with filters[0]:
        states = st.multiselect(
            "States", [str(s) for s in TopicState if s is not TopicState.SAME] + ["same"], key="compare_states"
        )
    with filters[1]:
        spaces = sorted({_namespace(t.topic) for t in found.topics})
        namespace = st.selectbox("Namespace", [ALL, *spaces], key="compare_namespace")
    table = drift_frame(found, states or [str(s) for s in TopicState if s is not TopicState.SAME], namespace)
    st.dataframe(table, hide_index=True, width="stretch")
    side_by_side(found, reg, other, direction)
    st.subheader("Policy differences")
    if found.policies:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "target": d.target,
                        "policy": d.field,
                        "A": f"{getattr(d.from_value, 'value', d.from_value)} ({d.from_source})",
                        "B": f"{getattr(d.to_value, 'value', d.to_value)} ({d.to_source})",
                    }
                    for d in found.policies
                ]
            ),
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("The policies in force are the same.")
    st.subheader("Replication hazards (A into B)")
    if found.hazards:
        st.dataframe(hazard_frame(found), hide_index=True, width="stretch")
    else:
        st.caption("B would take every version A has that it lacks.")
    st.subheader("Plan to converge B on A")
    if found.plan:
        st.dataframe(plan_frame(found), hide_index=True, width="stretch")
        _propose(found, reg, other, direction)
    else:
        st.caption("Nothing to register.")
    links.copy_link()


def _propose(found: Comparison, reg: SchemaRegistry, other: SchemaRegistry, direction: str) -> None:
    """Propose into B where B is the connected registry and the session may write."""
    safe = [p.topic for p in found.plan if p.safe]
    if not safe:
        return
    actor = session.actor()
    if direction != "into" or session.read_only() or actor is None:
        st.caption(
            f"{len(safe)} topic(s) B accepts. To propose them, connect to B and compare from A "
            "(proposals are opened in the connected registry, by its session)."
        )
        return
    if st.button(f"Propose {len(safe)} topic(s) into this registry", key="compare_propose"):
        try:
            made = propose_plan(other, reg, found, actor=actor)
        except RegistryError as exc:
            show_error(exc)
            return
        st.success(f"Opened proposal(s) {', '.join(f'#{p.id}' for p in made)}.")


st.title("Compare")
st.caption("Where another registry drifts from this one, what replication would stall on, and how to converge.")
try:
    render(session.registry())
except RegistryError as exc:
    show_error(exc)
