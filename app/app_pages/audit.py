"""Audit: run the Spark audits on the connected registry and read their Parquet tables.

Each tab has a Run button that starts the same job as `schema-explorer audit …` in the background
(app/audit_runs.py), with a progress bar fed by Spark's status tracker and a Cancel button. Tables are read
from a folder chosen here (default: $SCHEMA_EXPLORER_AUDIT_DIR, else `audit/` next to the default registry
file), as documented in pipeline/compat_matrix.py, policy_impact.py and data_audit.py. Each job records its
source and time (pipeline/progress.py); the page says when tables come from another registry or predate its
last write, and which command writes a table that is missing.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Literal

import pandas as pd
import streamlit as st

from app import audit_runs, connection, links, selection, session
from app.render import code_span, escape_markdown, when
from app.review import ALARM_SHADE, shaded
from pipeline.progress import read_run_record
from registry import STRATEGIES, CompatibilityStrategy, RegistryError
from registry._location import LocationKind, parse_location
from registry._paths import default_db_path
from registry.views.charts import compatibility_heatmap

ENV_VAR = "SCHEMA_EXPLORER_AUDIT_DIR"
SAMPLE_MESSAGES = Path(__file__).resolve().parents[2] / "sample_data" / "messages"
JOBS = {
    "compat-matrix": ("compat_matrix", "compat_topics"),
    "policy-impact": ("policy_impact", "policy_impact_clients"),
    "data": ("data_versions", "data_failures", "data_field_stats", "data_enum_counts"),
}


def default_audit_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    return Path(override).expanduser() if override else default_db_path().parent / "audit"


def _stamp(path: Path) -> float:
    """Newest modification time under a Parquet folder, so a re-run of the job refreshes the cache."""
    return max((p.stat().st_mtime for p in path.rglob("*")), default=path.stat().st_mtime)


@st.cache_data(max_entries=32, show_spinner=False)
def _read(path: str, stamp: float) -> pd.DataFrame:
    return pd.read_parquet(path)


def read_table(folder: Path, name: str) -> pd.DataFrame | None:
    """A table of the pipeline, or None when the job has not written it there."""
    path = folder / name
    if not path.exists():
        return None
    return _read(str(path), _stamp(path))


def how_to_produce(job: str, folder: Path) -> None:
    source = " ".join(shlex.quote(part) for part in _source_args()[0])
    extra = {"policy-impact": " --strategy FULL_TRANSITIVE", "data": " --messages sample_data/messages"}.get(job, "")
    command = f"schema-explorer audit {job} {source}{extra} --out {shlex.quote(str(folder))}"
    st.info(
        f"No {code_span(JOBS[job][0])} table in this folder yet. Press Run above, or run the Spark job from the "
        "project's folder (a minute on a laptop):",
        icon=":material/info:",
    )
    st.code(command, language="bash", wrap_lines=True)


def _source_args() -> tuple[list[str], str | None, str]:
    """The CLI's source arguments for the connected registry (and the Pulsar line the session answers as), its
    token, and its location as runs record it."""
    conn = connection.connection()
    line = ["--pulsar-version", conn.pulsar_version] if conn.pulsar_version else []  # the session's line
    if conn.client_conf is not None:  # its path: the job reads the file, no secret on its command line
        return ["--client-conf", conn.client_conf, *line], None, conn.shown
    if conn.context is not None:
        return ["--context", conn.context, *line], None, conn.shown
    if conn.is_remote:
        return ["--url", conn.target, *line], conn.token, conn.target
    location = parse_location(conn.target)
    if location.kind is not LocationKind.SQLITE:  # PostgreSQL, memory: or a storage of the user's own
        return ["--db", conn.target, *line], None, conn.shown
    path = str(Path(location.target).expanduser().resolve())
    return ["--db", path, *line], None, path


def run_controls(job: str, folder: Path, extra: list[str]) -> None:
    """The Run button, then the run's progress (Cancel while it runs), then where the tables come from."""
    source, token, location = _source_args()
    run = audit_runs.latest(job, folder)
    running = run is not None and run.running
    if st.button(
        f"Run {job}",
        key=f"audit_run_{job}",
        icon=":material/play_arrow:",
        disabled=running,
        help=f"Runs `schema-explorer audit {job}` on the connected registry in the background (Spark, local[2]).",
    ):
        audit_runs.start(job, folder, source, extra, token)
        st.rerun()
    if run is not None and run.running:
        _run_progress(job, folder)
    elif run is not None:
        _run_outcome(run)
    provenance(job, folder, location)


@st.fragment(run_every=1.0)
def _run_progress(job: str, folder: Path) -> None:
    """Redrawn every second while the run lasts; when it ends, the whole page reruns to show its tables."""
    run = audit_runs.latest(job, folder)
    if run is None or not run.running:
        st.rerun(scope="app")
    done, total = run.progress
    text = f"{job}: Spark tasks {done:,} of {total:,}" if total else f"{job}: starting Spark…"
    st.progress(run.fraction, text=text)
    if st.button("Cancel", key=f"audit_cancel_{job}", icon=":material/stop:"):
        run.cancel()


def _run_outcome(run: audit_runs.AuditRun) -> None:
    outcome = run.outcome
    if outcome == "done":
        st.success(f"{run.job} finished at {when(int(run.ended * 1000))}.", icon=":material/check_circle:")
    elif outcome == "cancelled":
        st.warning(
            f"{run.job} was cancelled: the tables below are from an earlier run, if any.", icon=":material/stop:"
        )
    else:
        st.error(f"{run.job} failed (exit {run.process.returncode}):", icon=":material/error:")
        st.code("\n".join(run.log) or "(no output)", language=None)


def provenance(job: str, folder: Path, location: str) -> None:
    """Where and when the tables of `job` in `folder` were computed, and whether that is the registry shown."""
    record = read_run_record(folder, job)
    if record is None:
        if any((folder / table).exists() for table in JOBS[job]):
            st.warning(
                "These tables carry no record of their source or time (an older version or another tool wrote "
                "them): run the job again to know what they describe.",
                icon=":material/help:",
            )
        return
    computed = when(int(record.get("computed_at") or 0))
    st.caption(f"Computed from {code_span(str(record.get('location')))} at {computed}.")
    if record.get("location") != location:
        st.warning(
            f"These tables come from another registry ({code_span(str(record.get('location')))}), not the "
            f"connected one ({code_span(location)}).",
            icon=":material/swap_horiz:",
        )
        return
    token = record.get("change_token")
    if token is None:
        st.caption("A remote registry cannot say whether it changed since: run the job again for current answers.")
        return
    try:
        current = session.registry().change_token()
    except RegistryError:
        return
    if isinstance(token, int) and current != token:
        st.warning(
            "The registry has changed since these tables were computed: run the job again for current answers.",
            icon=":material/update:",
        )


def compat_tab(folder: Path) -> None:
    run_controls("compat-matrix", folder, [])
    pairs, topics = read_table(folder, "compat_matrix"), read_table(folder, "compat_topics")
    if pairs is None or topics is None:
        how_to_produce("compat-matrix", folder)
        return
    st.caption(
        "Per topic, can each live version read data written with each other one? `compatible` is Pulsar's "
        "check; `readable` adds wire breaks Pulsar lets through (PROTOBUF_NATIVE field changes)."
    )
    columns = st.columns(3)
    columns[0].metric("Topics checked", len(topics))
    columns[1].metric("Topics with an incompatible pair", int((topics["incompatible_pairs"] > 0).sum()))
    columns[2].metric("Unreadable pairs", int(topics["unreadable_pairs"].sum()))
    worst = topics.sort_values(["incompatible_pairs", "unreadable_pairs"], ascending=False)
    order = ("topic", "incompatible_pairs", "unreadable_pairs", "pairs", "live_versions", "readable_since")
    st.dataframe(worst, hide_index=True, width="stretch", column_order=(*order, "schema_type", "error"))
    names = list(worst.loc[worst["pairs"] > 0, "topic"])
    if not names:
        st.info("No topic has two live versions to compare.")
        return
    selected = selection.selected_topic()
    if st.session_state.get("audit_topic") not in names:
        st.session_state["audit_topic"] = selected if selected in names else names[0]
    left, right = st.columns([3, 1])
    topic = left.selectbox("Heatmap of topic", names, key="audit_topic")
    colour_by: tuple[Literal["compatible", "readable"], ...] = ("compatible", "readable")
    value = right.radio("Colour by", colour_by, key="audit_value", horizontal=True)
    st.altair_chart(compatibility_heatmap(pairs, topic=topic, value=value), width="content")


def policy_tab(folder: Path) -> None:
    choices = list(STRATEGIES)
    strategy = st.selectbox(
        "Proposed strategy", choices, index=choices.index(CompatibilityStrategy.FULL_TRANSITIVE), key="audit_strategy"
    )
    run_controls("policy-impact", folder, ["--strategy", str(strategy)])
    impact, clients = read_table(folder, "policy_impact"), read_table(folder, "policy_impact_clients")
    if impact is None:
        how_to_produce("policy-impact", folder)
        return
    proposed = ", ".join(sorted(impact["proposed"].dropna().unique())) or "?"
    st.caption(f"What the proposed strategy ({proposed}) would have refused, topic by topic.")
    columns = st.columns(3)
    columns[0].metric("Topics under the proposed strategy", len(impact))
    columns[1].metric("Latest change would be refused", int(impact["latest_refused"].sum()))
    columns[2].metric("Consumers that would be refused", 0 if clients is None else len(clients))
    by_namespace = impact.assign(refused=impact["refused_versions"].map(len) > 0).groupby("namespace")["refused"]
    st.bar_chart(by_namespace.sum().rename("topics with refused versions"), horizontal=True)
    ordered = impact.sort_values(["latest_refused", "refused_clients"], ascending=False)
    order = ("topic", "latest_refused", "refused_versions", "refused_clients", "current_strategy", "current_source")
    st.dataframe(
        shaded(ordered, ALARM_SHADE, "latest_refused"),
        hide_index=True,
        width="stretch",
        column_order=(*order, "overridden", "rule_code", "message", "error"),
    )
    if clients is not None and len(clients):
        st.markdown("**Consumers that could no longer subscribe**")
        st.dataframe(clients, hide_index=True, width="stretch")


def data_tab(folder: Path) -> None:
    default = str(SAMPLE_MESSAGES) if SAMPLE_MESSAGES.is_dir() else ""
    messages = st.text_input("Message archive folder (.jsonl / .parquet)", value=default, key="audit_messages")
    run_controls("data", folder, ["--messages", messages.strip()])
    versions, failures = read_table(folder, "data_versions"), read_table(folder, "data_failures")
    if versions is None:
        how_to_produce("data", folder)
        return
    st.caption(
        "Can each topic's reader schema read every archived message? Failures by reason, KEY_VALUE part and field."
    )
    columns = st.columns(3)
    columns[0].metric("Messages", int(versions["messages"].sum()))
    columns[1].metric("Readable", int(versions["readable"].sum()))
    columns[2].metric("Failed", int(versions["failed"].sum()))
    if failures is not None and len(failures):
        st.bar_chart(failures.groupby("reason")["count"].sum().sort_values(), horizontal=True)
        st.dataframe(failures, hide_index=True, width="stretch")
    else:
        st.success("Every archived message is readable with its topic's reader schema.")
    st.markdown("**Per topic and writer version**")
    st.dataframe(versions, hide_index=True, width="stretch")
    stats = read_table(folder, "data_field_stats")
    if stats is not None and len(stats):
        with st.expander("Field statistics (as the reader sees the data)"):
            st.dataframe(stats, hide_index=True, width="stretch")


def render() -> None:
    folder_text = st.text_input("Folder of the pipeline's Parquet tables (--out)", key="audit_dir")
    folder = Path(folder_text.strip() or default_audit_dir()).expanduser()
    if not folder.is_dir():
        st.warning(escape_markdown(f"{folder} does not exist yet: run one of the jobs below with --out {folder}."))
    tabs = st.tabs(["Compatibility matrix", "Policy impact", "Data audit"])
    for tab, show in zip(tabs, (compat_tab, policy_tab, data_tab), strict=True):
        with tab:
            try:
                show(folder)
            except (OSError, ValueError, KeyError) as exc:  # a damaged or foreign Parquet folder
                st.error(
                    escape_markdown(f"Cannot read the tables under {folder}: {exc}. Re-run the job with --out there."),
                    icon=":material/error:",
                )


share_place = links.title_row("Audit")
st.caption("Fleet-wide results of the Spark pipeline: who reads whom, what a strategy would refuse, bad data.")
st.session_state.setdefault("audit_dir", str(default_audit_dir()))
links.opened()
render()
links.keep({})
with share_place:
    links.copy_link()
