"""Rendering of the core's review values (SchemaDiff, CompatibilityResult, WhatIf, PolicyPreview) for the
Diff, What-if, Policies and proposal pages. Values in, Streamlit elements out: no rule is decided here.

User text (schema docs, names, messages that quote them) only reaches the page through st.code,
st.dataframe, or HTML built with `html.escape`, so a `<script>` in a schema doc stays text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from itertools import islice, zip_longest
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from app.render import escape_markdown
from registry import CompatibilityResult, PolicyPreview, SchemaDiff, WhatIf
from registry._changes import Effect
from registry._model import Admission
from registry.explain.text_diff import COARSE_NOTE, LineDiff, line_diff
from registry.views.tables import (
    advisories_frame,
    changes_frame,
    policy_preview_frame,
    preview_clients_frame,
    problems_frame,
    shielded_frame,
    upgrade_plan_frame,
)

EFFECT_BADGE = {Effect.OK: ("ok", "green"), Effect.RISK: ("risk", "orange"), Effect.BREAKS: ("breaks", "red")}
# Cell shades that read on light and dark backgrounds alike (the text keeps the theme's colour).
GOOD, RISK, BAD = "rgba(46,160,67,0.22)", "rgba(255,170,0,0.28)", "rgba(248,81,73,0.28)"
EFFECT_SHADE = {"ok": GOOD, "risk": RISK, "breaks": BAD}
VERDICT_SHADE = {True: GOOD, False: BAD}  # e.g. a strategy's `accepted`
ALARM_SHADE = {True: BAD}  # e.g. `latest_refused`, `affected`
_CONTEXT_LINES = 3
MAX_ROWS = 20_000  # rows of the side-by-side diff drawn at most: two 1 MiB schemas, whole
WRAPPED_ROWS = 200  # problems or advisories shown as a wrapping table; more go to a scrolling grid

# The strategy table's columns (registry/views/tables.py `strategy_frame`) with labels and widths that fit: a
# grid cuts a header or a cell at its column's width, and rule codes run to READER_FIELD_WITHOUT_DEFAULT. In
# the order a reader needs them, so that at 1280 px (a main column of about 820 px) what may scroll out of view
# on the right is only what the verdict above already says (in force) or rarely needs (upgrade order, versions).
STRATEGY_COLUMNS: dict[str, Any] = {
    "strategy": st.column_config.TextColumn("strategy", width=170),
    "accepted": st.column_config.CheckboxColumn("accepted", width=72),
    "introduces a refusal": st.column_config.TextColumn("introduces a refusal", width=140),
    "problems": st.column_config.NumberColumn("problems", width=72),
    "rule_code": st.column_config.TextColumn("first rule broken", width=250),
    "message": st.column_config.TextColumn("first problem", width="large"),
    "effective": st.column_config.CheckboxColumn("in force", width=65),
    "upgrade_order": st.column_config.TextColumn("upgrade order", width=140),
    "checked_versions": st.column_config.TextColumn("checked versions", width=120),
}


def show_strategy_table(data: pd.DataFrame | Styler, columns: Sequence[str]) -> None:
    """The strategy table (`columns`: its frame's columns), labelled and ordered as STRATEGY_COLUMNS says."""
    st.dataframe(
        data,
        hide_index=True,
        width="stretch",
        column_config=STRATEGY_COLUMNS,
        column_order=[name for name in STRATEGY_COLUMNS if name in columns],
    )


def shaded(frame: pd.DataFrame, shades: Mapping[Any, str], *columns: str) -> Styler:
    """The frame with the values of `columns` shaded by `shades` (value → CSS colour)."""

    def shade(value: object) -> str:
        try:
            colour = shades.get(value)
        except TypeError:  # unhashable cell
            colour = None
        return f"background-color: {colour}" if colour else ""

    return frame.style.map(shade, subset=list(columns))


# --- diff ---------------------------------------------------------------------------------------------


def effect_badges(diff: SchemaDiff) -> None:
    """BACKWARD / FORWARD badges: does the new schema read old data, and the old schema new data."""
    with st.container(horizontal=True):
        for direction, effect in (("BACKWARD", diff.backward), ("FORWARD", diff.forward)):
            label, color = EFFECT_BADGE[effect]
            st.badge(f"{direction}: {label}", color=color)  # type: ignore[arg-type]


def show_diff(diff: SchemaDiff, *, old_label: str, new_label: str, key: str) -> None:
    """Badges, the semantic change table, then the side-by-side text diff."""
    effect_badges(diff)
    st.caption(
        "BACKWARD: can the new schema read data written with the old one (upgrade consumers first)? "
        "FORWARD: can the old schema read data written with the new one (upgrade producers first)?"
    )
    if diff.changes:
        st.dataframe(
            shaded(changes_frame(diff), EFFECT_SHADE, "backward", "forward"),
            hide_index=True,
            width="stretch",
            column_config={"is_breaking": st.column_config.CheckboxColumn("breaking")},
        )
    else:
        st.info("No semantic change: both schemas read and write the same data.")
    whole = st.toggle("Show the whole schemas", key=f"{key}_whole")
    lines = line_diff(diff.old_text, diff.new_text)
    st.html(
        side_by_side(diff.old_text, diff.new_text, old_label=old_label, new_label=new_label, whole=whole, lines=lines)
    )
    with st.expander("Unified diff (to copy)"):
        unified = "\n".join(lines.unified(old_label, new_label))
        st.code(unified or "(no textual difference)", language="diff")


_STYLE = {
    "table": "border-collapse:collapse;width:100%;table-layout:fixed;font-family:monospace;font-size:0.8rem;",
    "th": "text-align:left;padding:4px 8px;border-bottom:1px solid rgba(128,128,128,0.4);",
    "num": "width:3.2em;text-align:right;padding:0 6px;opacity:0.6;user-select:none;vertical-align:top;",
    "cell": "padding:0 8px;white-space:pre-wrap;word-break:break-all;vertical-align:top;",
    "del": "background:rgba(248,81,73,0.22);",
    "add": "background:rgba(46,160,67,0.22);",
    "gap": "text-align:center;opacity:0.6;padding:2px;",
}


_COLUMNS = '<colgroup><col style="width:3.5em"><col><col style="width:3.5em"><col></colgroup>'


def side_by_side(
    old: str,
    new: str,
    *,
    old_label: str,
    new_label: str,
    whole: bool = False,
    lines: LineDiff | None = None,
    max_rows: int = MAX_ROWS,
) -> str:
    """An HTML two-column diff with every piece of text escaped; changed lines shaded (works in both themes).
    `lines` is the line diff of `old` and `new` when the caller has it already. At most `max_rows` rows are
    drawn (a browser slows down past that); a last row says how many were left out, and another when the diff
    itself was cut short (registry/explain/text_diff.py)."""
    lines = line_diff(old, new) if lines is None else lines
    a, b = lines.old, lines.new
    groups = [list(lines.opcodes)] if whole else lines.grouped(_CONTEXT_LINES)
    rows: list[str] = []
    left_out = 0
    for index, group in enumerate(groups):
        if index and not whole and len(rows) < max_rows:
            rows.append(f'<tr><td colspan="4" style="{_STYLE["gap"]}">⋯</td></tr>')
        for tag, i1, i2, j1, j2 in group:
            count = max(i2 - i1, j2 - j1)
            room = max(0, min(count, max_rows - len(rows)))
            left_out += count - room
            pairs = zip_longest(range(i1, i2), range(j1, j2))
            for i, j in islice(pairs, room):
                rows.append(_row(a, b, i, j, changed=tag != "equal"))
    if left_out:
        rows.append(_note(f"{left_out:,} more rows not shown: only the first {max_rows:,} rows are drawn"))
    if lines.coarse:
        rows.append(_note(COARSE_NOTE))
    if not rows:
        rows.append(_note("no textual difference"))
    head = (
        f'<tr><th colspan="2" style="{_STYLE["th"]}">{html.escape(old_label)}</th>'
        f'<th colspan="2" style="{_STYLE["th"]}">{html.escape(new_label)}</th></tr>'
    )
    return (
        '<div class="side-by-side-diff" style="max-height:520px;overflow:auto;">'
        f'<table style="{_STYLE["table"]}">{_COLUMNS}{head}{"".join(rows)}</table></div>'
    )


def _note(text: str) -> str:
    return f'<tr><td colspan="4" style="{_STYLE["gap"]}">{html.escape(text)}</td></tr>'


def _row(a: Sequence[str], b: Sequence[str], i: int | None, j: int | None, *, changed: bool) -> str:
    def side(lines: Sequence[str], n: int | None, shade: str) -> str:
        style = _STYLE["cell"] + (shade if changed and n is not None else "")
        number = "" if n is None else str(n + 1)
        text = "" if n is None else html.escape(lines[n])
        return f'<td style="{_STYLE["num"]}">{number}</td><td style="{style}">{text}</td>'

    return f"<tr>{side(a, i, _STYLE['del'])}{side(b, j, _STYLE['add'])}</tr>"


# --- verdicts -----------------------------------------------------------------------------------------


def show_verdict(what_if: WhatIf, doing: str = "Registering") -> None:
    """Pulsar's verdict under the strategy in force, in one line: `doing` ("Registering", "Applying") would be
    accepted and store version N, be a duplicate of a live version, or be refused and why."""
    registration = what_if.registration
    strategy = f"{what_if.effective.value} (from the {what_if.effective.source})"
    if what_if.duplicate_of is not None:
        st.info(f"Identical to live version {what_if.duplicate_of}: {doing.lower()} returns it and stores nothing.")
    elif registration.accepted:
        st.success(f"{doing} would be accepted under {strategy} and store version {registration.version}.")
    else:
        st.error(escape_markdown(f"{doing} would be refused under {strategy}: {registration.reason}"))


def show_problems(result: CompatibilityResult) -> None:
    if result.compatible:
        st.success(f"Compatible under {result.strategy}{_checked(result)}.")
        return
    st.error(f"Incompatible under {result.strategy}{_checked(result)}: {len(result.problems)} problem(s).")
    show_wrapped(problems_frame(result), ("code", "direction", "version", "path", "message", "hint"))


def show_wrapped(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Rows whose text must be read whole (messages, hints): a static table that wraps long cells, where a
    dataframe grid would cut them at the column's width. Past WRAPPED_ROWS rows, a scrolling grid instead."""
    shown = frame[list(columns)]
    if len(shown) <= WRAPPED_ROWS:
        st.table(shown, hide_index=True)
        return
    st.caption(f"{len(shown):,} rows: long texts are cut in this grid; hover a cell, or widen its column, to read it.")
    st.dataframe(shown, hide_index=True, width="stretch")


def _checked(result: CompatibilityResult) -> str:
    if not result.checked_versions:
        return ""
    return " (checked against version " + ", ".join(str(v) for v in result.checked_versions) + ")"


def admission_text(admission: Admission) -> str:
    if not admission.accepted:
        return f"refused: {admission.reason}"
    if admission.registered:
        return f"accepted; registers version {admission.version}"
    if admission.version is not None:
        return f"accepted with version {admission.version}"
    return "accepted"


def show_consequences(what_if: WhatIf) -> None:
    """What follows from a candidate beyond its verdict (the What-if page and a proposal's review alike): the
    advisories, whether a producer and a consumer would be let in, and the order to upgrade clients in."""
    if what_if.advisories:
        st.subheader("Advisories")
        st.caption("Pulsar accepts these, but they will hurt some reader or some data later.")
        show_wrapped(advisories_frame(what_if), ("severity", "code", "direction", "version", "path", "message", "hint"))
    st.subheader("Producers and consumers")
    show_admission(what_if)
    st.subheader("Upgrade order")
    show_upgrade(what_if)


def show_admission(what_if: WhatIf) -> None:
    columns = st.columns(2)
    for column, label, admission in (
        (columns[0], "A producer with this schema", what_if.producer),
        (columns[1], "A consumer with this schema", what_if.consumer),
    ):
        with column:
            text = f"**{label}**: {escape_markdown(admission_text(admission))}"
            if admission.accepted:
                st.success(text, icon=":material/check_circle:")
            else:
                st.error(text, icon=":material/block:")


def show_upgrade(what_if: WhatIf) -> None:
    st.markdown(f"**{what_if.effective.value}** guarantees: **{what_if.strategy_order}**.")
    if what_if.change_order is not None:
        st.markdown(f"This change needs **{what_if.change_order.order}**: {what_if.change_order.explanation}.")
    plan = what_if.plan
    if plan is None:
        st.caption("The topic has no live version, so no recorded client needs an upgrade.")
        return
    if plan.feasible and not plan.steps:
        st.caption("Every recorded client already uses this schema.")
    elif plan.steps:
        st.dataframe(upgrade_plan_frame(plan), hide_index=True, width="stretch")
    if not plan.feasible:
        st.warning(escape_markdown(f"No safe order moves every recorded client: {plan.reason}"))
    if plan.unaffected:
        st.caption(f"{len(plan.unaffected)} client(s) without a schema are not affected.")


# --- policies -----------------------------------------------------------------------------------------


def show_preview(preview: PolicyPreview) -> None:
    """What the change would do: the values that change, then refusals, then the topics it does not reach."""
    st.markdown("**Preview**: " + escape_markdown("; ".join(preview.changes)))
    reached = [t for t in preview.topics if t.changed]
    columns = st.columns(4)
    columns[0].metric("Topics the change reaches", len(reached))
    columns[1].metric("Latest change would be refused", len(preview.refused_topics))
    columns[2].metric("Clients that could no longer connect", len(preview.refused_clients))
    columns[3].metric("Topics it does not reach", len(preview.shielded))
    if not preview.refused_topics and not preview.refused_clients:
        st.success("Nothing would be refused: every topic's history and every recorded client still pass.")
    if reached:
        st.dataframe(
            shaded(policy_preview_frame(preview), ALARM_SHADE, "latest_refused"),
            hide_index=True,
            width="stretch",
        )
    if preview.refused_clients:
        st.markdown("**Producers and consumers that could no longer connect**")
        st.dataframe(preview_clients_frame(preview), hide_index=True, width="stretch")
    if preview.shielded:
        st.markdown("**Not reached by this change** (their own setting, or the broker's, keeps it out)")
        st.dataframe(shielded_frame(preview), hide_index=True, width="stretch")
