"""The altair charts the app and the notebooks draw, from one place.

Every chart takes core values (or a DataFrame from `registry.views.tables`) and returns a configured top-level
altair chart: pass it to `st.altair_chart(chart)` or let Jupyter display it. Colours are mid-tones and text
is mid-grey on a transparent background, so each chart reads on light and dark themes alike; every colour
has a second cue (a glyph or a shape) for colour-blind readers.
Not imported by `registry/__init__.py`: the core must import without altair.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar, cast

import altair as alt
import pandas as pd
import vl_convert

from registry import (
    SchemaVersion,
    WhatIf,
)

from .tables import history_frame, strategy_frame

__all__ = [
    "OFFLINE_RENDERER",
    "ACCEPTED_COLOR",
    "REFUSED_COLOR",
    "compatibility_heatmap",
    "strategy_matrix_chart",
    "version_timeline",
]

# Mid-tone green/red/grey: enough contrast with white text inside marks and with both light and dark pages.
ACCEPTED_COLOR = "#2f9e5f"
REFUSED_COLOR = "#d9473f"
TOMBSTONE_COLOR = "#8c8c8c"
TEXT_COLOR = "#8a8a8a"  # ~3.5:1 on white, ~5.5:1 on Streamlit's and JupyterLab's dark backgrounds
GRID_COLOR = "#8a8a8a40"
LIVE_COLOR = "#3b82c4"
SAME_COLOR = "#8c8c8c80"

C = TypeVar("C", alt.Chart, alt.LayerChart, alt.FacetChart)


def _themed(chart: C) -> C:
    """Theme-neutral text and grid colours on a transparent background."""
    configured = (
        chart.configure(background="transparent", font="sans-serif")
        .configure_view(stroke=None)
        .configure_axis(
            labelColor=TEXT_COLOR,
            titleColor=TEXT_COLOR,
            domainColor=TEXT_COLOR,
            tickColor=TEXT_COLOR,
            gridColor=GRID_COLOR,
            labelFontSize=12,
            titleFontSize=12,
        )
        .configure_legend(labelColor=TEXT_COLOR, titleColor=TEXT_COLOR, labelFontSize=12, titleFontSize=12)
        .configure_header(labelColor=TEXT_COLOR, titleColor=TEXT_COLOR, labelFontSize=12)
        .configure_title(color=TEXT_COLOR, anchor="start", fontSize=14)
    )
    return cast(C, configured)


def _title(text: str) -> alt.TitleParams:
    return alt.TitleParams(text=text, anchor="start")


def version_timeline(
    history: Sequence[SchemaVersion], *, title: str | None = None, width: int = 560, height: int = 260
) -> alt.LayerChart:
    """A topic's versions over time: one point per version at its registration time, tombstones as grey
    crosses, a step line between them; tooltips give version, type, time, user and size.

    Pass `Registry.history(topic, include_deleted=True)` to see deletions. In Streamlit,
    `st.altair_chart(chart, use_container_width=True)` stretches it to the column.
    """
    frame = history_frame(history)
    frame["status"] = frame["deleted"].map({True: "tombstone (deleted)", False: "live"})
    frame["label"] = "v" + frame["version"].astype(str)
    topic = str(frame["topic"].iloc[0]) if len(frame) else ""
    base = alt.Chart(frame).encode(
        x=alt.X("registered_at:T", title="registered at (UTC)", axis=alt.Axis(format="%b %Y", labelOverlap=True)),
        y=alt.Y(
            "version:Q",
            title="version",
            axis=alt.Axis(tickMinStep=1, format="d"),
            scale=alt.Scale(domainMin=0, nice=False, padding=12),
        ),
    )
    line = base.mark_line(interpolate="step-after", color=TEXT_COLOR, strokeWidth=1, opacity=0.6)
    status = alt.Color(
        "status:N",
        title=None,
        scale=alt.Scale(domain=["live", "tombstone (deleted)"], range=[LIVE_COLOR, TOMBSTONE_COLOR]),
        legend=alt.Legend(orient="bottom"),
    )
    points = base.mark_point(filled=True, size=110, opacity=1).encode(
        color=status,
        shape=alt.Shape(
            "status:N",
            title=None,
            scale=alt.Scale(domain=["live", "tombstone (deleted)"], range=["circle", "cross"]),
        ),
        tooltip=[
            alt.Tooltip("version:Q", title="version", format="d"),
            alt.Tooltip("type:N", title="type"),
            alt.Tooltip("status:N", title="status"),
            alt.Tooltip("registered_at:T", title="registered at (UTC)", format="%Y-%m-%d %H:%M:%S"),
            alt.Tooltip("user:N", title="user"),
            alt.Tooltip("size:Q", title="bytes", format=","),
        ],
    )
    labels = base.mark_text(dy=-12, fontSize=11, color=TEXT_COLOR).encode(text="label:N")
    chart = alt.LayerChart(layer=[line, points, labels]).properties(
        title=_title(title if title is not None else f"Versions of {topic}"), width=width, height=height
    )
    return _themed(chart)


def compatibility_heatmap(
    frame: pd.DataFrame,
    *,
    topic: str | None = None,
    value: Literal["compatible", "readable"] = "compatible",
    title: str | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Reader version × writer version: can the reader read data written with the writer? ✓ green / ✗ red,
    a grey "=" where a version meets itself; the rule code, pointers and message in the tooltip.

    `frame` has at least the columns topic, reader_version, writer_version, compatible, rule_code: the
    `compat_matrix` table of the Spark compat-matrix job, or `registry.views.tables.compatibility_matrix`.
    `value="readable"` colours by the job's `readable` column (wire breaks Pulsar lets through) instead of
    Pulsar's verdict. `topic` keeps one topic; several topics are drawn as small multiples.
    """
    data = frame if topic is None else frame[frame["topic"] == topic]
    data = data.copy()
    if value not in data.columns:
        raise ValueError(f"the frame has no {value!r} column; it has {', '.join(map(str, data.columns))}")
    data["verdict"] = data[value].map({True: "readable", False: "not readable"})
    data["glyph"] = data[value].map({True: "✓", False: "✗"})
    data = pd.concat([data, _diagonal(data)], ignore_index=True)
    for column in ("rule_code", "message", "reader_path", "writer_path"):
        if column in data.columns:
            data[column] = data[column].astype("object").where(data[column].notna(), "—")
    tooltip = [
        alt.Tooltip("topic:N", title="topic"),
        alt.Tooltip("reader_version:O", title="reader version"),
        alt.Tooltip("writer_version:O", title="writer version"),
        alt.Tooltip("verdict:N", title="verdict"),
        alt.Tooltip("rule_code:N", title="rule"),
    ]
    tooltip += [
        alt.Tooltip(f"{column}:N", title=label)
        for column, label in (
            ("readable", "wire-readable"),
            ("reader_path", "reader path"),
            ("writer_path", "writer path"),
            ("message", "why"),
        )
        if column in data.columns and column != value
    ]
    faceted = data["topic"].nunique() > 1
    versions = max(data["reader_version"].nunique(), data["writer_version"].nunique(), 1)
    cell = 34 if versions <= 12 else max(12, 420 // versions)
    base = alt.Chart().encode(
        x=alt.X(
            "writer_version:O",
            title="writer version" if faceted else "writer version (data written with)",
            axis=alt.Axis(labelAngle=0),
        ),
        y=alt.Y("reader_version:O", title="reader version" if faceted else "reader version (reads with)"),
        tooltip=tooltip,
    )
    rects = base.mark_rect(stroke="#ffffff30", strokeWidth=1).encode(
        color=alt.Color(
            "verdict:N",
            title=None,
            scale=alt.Scale(
                domain=["readable", "not readable", "same version"], range=[ACCEPTED_COLOR, REFUSED_COLOR, SAME_COLOR]
            ),
            legend=alt.Legend(orient="bottom"),
        )
    )
    glyphs = base.mark_text(color="white", fontSize=min(14, cell // 2), fontWeight="bold").encode(text="glyph:N")
    layer = alt.LayerChart(data=data, layer=[rects, glyphs]).properties(width=alt.Step(cell), height=alt.Step(cell))
    if faceted:
        facets = layer.facet(facet=alt.Facet("topic:N", title=None), columns=3).resolve_scale(
            x="independent", y="independent"
        )
        return _themed(cast(alt.FacetChart, facets).properties(title=_title(title or "Who reads whom")))
    name = str(data["topic"].iloc[0]) if len(data) else ""
    return _themed(layer.properties(title=_title(title if title is not None else f"Who reads whom: {name}")))


def _diagonal(data: pd.DataFrame) -> pd.DataFrame:
    """A "same version" cell for each version of each topic that has none (the job leaves R == W out)."""
    versions = pd.concat(
        [
            data[["topic", "reader_version"]].rename(columns={"reader_version": "version"}),
            data[["topic", "writer_version"]].rename(columns={"writer_version": "version"}),
        ]
    ).drop_duplicates()
    present = set(
        zip(data["topic"], data["reader_version"].where(data["reader_version"] == data["writer_version"]), strict=True)
    )
    rows = [
        {"topic": t, "reader_version": v, "writer_version": v, "verdict": "same version", "glyph": "="}
        for t, v in zip(versions["topic"], versions["version"], strict=True)
        if (t, v) not in present
    ]
    return pd.DataFrame(rows, columns=["topic", "reader_version", "writer_version", "verdict", "glyph"])


def strategy_matrix_chart(what_if: WhatIf, *, title: str | None = None) -> alt.LayerChart:
    """The 8 strategies × accepted/refused for one candidate; the topic's effective strategy is outlined and
    the tooltip gives each refusal's first rule code and message."""
    frame = strategy_frame(what_if)
    frame["verdict"] = frame["accepted"].map({True: "accepted", False: "refused"})
    frame["glyph"] = frame["accepted"].map({True: "✓ accepted", False: "✗ refused"})
    frame["rule_code"] = frame["rule_code"].fillna("—")
    frame["marker"] = frame["effective"].map({True: "effective strategy", False: ""})
    frame["note"] = [
        " · ".join(part for part in (code if code != "—" else "", marker) if part)
        for code, marker in zip(frame["rule_code"], frame["marker"], strict=True)
    ]
    order = list(frame["strategy"])
    tooltip: list[Any] = [
        alt.Tooltip("strategy:N", title="strategy"),
        alt.Tooltip("verdict:N", title="verdict"),
        alt.Tooltip("marker:N", title="this topic"),
        alt.Tooltip("upgrade_order:N", title="upgrade order"),
        alt.Tooltip("problems:Q", title="problems"),
        alt.Tooltip("rule_code:N", title="first rule"),
        alt.Tooltip("message:N", title="why"),
    ]
    base = alt.Chart(frame).encode(
        y=alt.Y("strategy:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)), tooltip=tooltip
    )
    rects = base.mark_rect(cornerRadius=3).encode(
        x=alt.value(0),
        x2=alt.value(120),
        color=alt.Color(
            "verdict:N",
            title=None,
            scale=alt.Scale(domain=["accepted", "refused"], range=[ACCEPTED_COLOR, REFUSED_COLOR]),
            legend=None,
        ),
        stroke=alt.condition("datum.effective", alt.value(TEXT_COLOR), alt.value(None)),
        strokeWidth=alt.condition("datum.effective", alt.value(3), alt.value(0)),
    )
    glyphs = base.mark_text(color="white", fontWeight="bold", fontSize=12, align="left").encode(
        x=alt.value(10), text="glyph:N"
    )
    notes = base.mark_text(color=TEXT_COLOR, fontSize=11, align="left").encode(x=alt.value(130), text="note:N")
    chart = alt.LayerChart(layer=[rects, glyphs, notes]).properties(
        title=_title(title if title is not None else f"Candidate for {what_if.topic} under each strategy"),
        width=420,
        height=alt.Step(26),
    )
    return _themed(chart)


# --- display -------------------------------------------------------------------------------------------

OFFLINE_RENDERER = "schema-explorer"
_VEGALITE_MIME = "application/vnd.vegalite.v{}+json".format(alt.SCHEMA_VERSION.lstrip("v").split(".")[0])


def offline_renderer(spec: dict[str, Any], **metadata: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A chart's display bundle: its Vega-Lite spec for frontends that draw it with their own bundled Vega
    (JupyterLab, VS Code), and the same chart as SVG for every other viewer, drawn here by vl-convert
    (an embedded Vega, no browser and no network), so an executed notebook shows its charts offline."""
    bundle: dict[str, Any] = {
        _VEGALITE_MIME: spec,
        "image/svg+xml": vl_convert.vegalite_to_svg(spec),
        "text/plain": "<chart: Vega-Lite, with a static SVG>",
    }
    return bundle, ({_VEGALITE_MIME: metadata} if metadata else {})


alt.renderers.register(OFFLINE_RENDERER, offline_renderer)
