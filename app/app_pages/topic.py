"""Topic: one topic's version timeline, any version's schema and properties, the policies in force and where
each comes from, and the producers and consumers recorded per version. A version stored by applying a schema
change proposal links to that proposal."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app import links, session
from app.proposal_access import allowed_in
from app.proposing import show_rule, write_button
from app.render import escape_markdown, show_error, show_schema, when
from app.topic_page import topic_page
from registry import (
    AllowedSteps,
    ClientRole,
    ConnectedClient,
    Effective,
    NotFoundError,
    NotSupportedError,
    Proposal,
    ProposalsRequiredError,
    ProposalState,
    RegistryError,
    SchemaRegistry,
    SchemaVersion,
    Step,
    TopicName,
)
from registry.views.charts import version_timeline
from registry.views.tables import clients_frame, connected_frame, history_frame


@st.cache_data(show_spinner=False, max_entries=64)
def _history(key: tuple[str, str, int], topic: str, _reg: SchemaRegistry) -> list[SchemaVersion]:
    return _reg.history(topic, include_deleted=True)


def applied_proposals(reg: SchemaRegistry, topic: str) -> dict[int, Proposal]:
    """The topic's versions stored by applying a proposal, with it. None from a registry that keeps no proposals
    (a plain broker; a `serve` of a release before them answers 404); another failure is said in one line, and
    the page goes on without the links."""
    try:
        applied = reg.proposals.list(topic=topic, state=ProposalState.APPLIED)
    except (NotSupportedError, NotFoundError):
        return {}
    except RegistryError as exc:
        st.caption(escape_markdown(f"The proposals of this topic could not be read: {exc}"))
        return {}
    return {p.applied_version: p for p in reversed(applied) if p.applied_version is not None}


def _label(entry: SchemaVersion, live: set[int]) -> str:
    if entry.deleted:
        status = " · deletion"
    elif entry.version not in live:
        status = " · deleted"
    else:
        status = ""
    return f"v{entry.version} · {entry.type} · {when(entry.timestamp)}{status}"


def _policies(reg: SchemaRegistry, topic: str) -> pd.DataFrame:
    policy = reg.effective_policy(topic)
    rows: list[tuple[str, Effective[Any]]] = [
        ("compatibility (producers and consumers)", policy.compatibility),
        ("compatibility (admin: register, check)", policy.admin_compatibility),
        ("schema auto-update allowed", policy.allow_auto_update),
        ("schema validation enforced", policy.validation_enforced),
    ]
    return pd.DataFrame([{"policy": k, "value": str(v.value), "from": str(v.source)} for k, v in rows])


def render(reg: SchemaRegistry, topic: str) -> dict[str, object]:
    """The page; returns its link parameters (the version shown)."""
    summary = reg.topic_summary(topic)
    st.title(escape_markdown(summary.short_name))
    st.caption(escape_markdown(topic))
    cols = st.columns(5)
    cols[0].metric("Schema type", str(summary.schema_type or "none"))
    cols[1].metric("Live versions", summary.versions)
    cols[2].metric("Compatibility", str(summary.strategy), help=f"from the {summary.strategy_source}")
    # A plain broker records no clients: its topic stats (read once for the counts and the tab) say who is on.
    connected = None if reg.records_clients else reg.connected_clients(topic)
    if connected is None:
        cols[3].metric("Producers", summary.producers)
        cols[4].metric("Consumers", summary.consumers)
    else:
        roles = [c.role for c in connected]
        note = "connected now, from the broker's topic stats (it records no client schemas)"
        cols[3].metric("Producers", roles.count(ClientRole.PRODUCER), help=note)
        cols[4].metric("Consumers", roles.count(ClientRole.CONSUMER), help=note)
    if summary.error:
        st.warning(escape_markdown(f"The latest schema cannot be read: {summary.error}"))
    entries = _history(session.cache_key(), topic, reg)
    live = {e.version for e in reg.history(topic)}
    if summary.deleted:
        st.info("The schema of this topic was deleted: its history ends with a deletion marker.")
    tabs = st.tabs(["Versions", "Policies", "Producers and consumers"])
    shown: int | None = None
    with tabs[0]:
        if not entries:
            st.info("No schema registered on this topic yet. Producers with a schema will register one.")
        else:
            shown = _versions(entries, live, applied_proposals(reg, topic))
    with tabs[1]:
        st.dataframe(_policies(reg, topic), hide_index=True, width="stretch")
        st.caption("Change them on the Policies page.")
    with tabs[2]:
        _clients(reg, topic, connected)
    if entries and not summary.deleted:
        namespace = str(TopicName.parse(topic).namespace_name)
        allowed = allowed_in(reg, namespace, session.actor(), read_only=session.read_only())
        refusal = allowed.refusal(Step.DELETE)
        if refusal is None or refusal.error is ProposalsRequiredError:  # the rule is shown; a role's limit is not
            _delete(reg, topic, allowed)
    return {"version": shown}


def _versions(entries: list[SchemaVersion], live: set[int], applied: dict[int, Proposal]) -> int:
    """The timeline and the chosen version (a link's `version=` first); returns that version."""
    st.altair_chart(version_timeline(entries), width="stretch")
    by_version = {e.version: e for e in entries}
    versions = list(reversed(by_version))
    linked = links.current().get("version")
    if linked is not None:
        number = links.whole_number("version", linked)
        if number is not None and number not in by_version:
            links.bad_value("version", linked, f"this topic has versions {versions[-1]} to {versions[0]}")
        elif number is not None:
            st.session_state["topic_version"] = number
    if st.session_state.get("topic_version") not in versions:
        shown = [v for v in versions if not by_version[v].deleted]  # newest first: the last real schema
        st.session_state["topic_version"] = max(live) if live else (shown or versions)[0]
    version = st.selectbox("Version", versions, key="topic_version", format_func=lambda v: _label(by_version[v], live))
    entry = by_version[version]
    if not entry.deleted and version not in live:
        st.caption("Deleted: this version precedes a deletion marker; Pulsar no longer serves it.")
    if entry.user:
        st.caption(escape_markdown(f"registered by {entry.user} at {when(entry.timestamp)}"))
    proposal = applied.get(version)
    if proposal is not None:
        title = proposal.title if len(proposal.title) <= 80 else proposal.title[:79] + "…"
        st.page_link(
            "app_pages/proposal.py",
            label=f"Applied through proposal #{proposal.id}: {escape_markdown(title)}",
            icon=":material/rate_review:",
            query_params={"id": str(proposal.id)},
            help=escape_markdown(
                f"Proposed by {proposal.author}, approved by {', '.join(proposal.approvers) or 'nobody'}."
            ),
        )
    show_schema(entry)
    if entry.properties:
        st.dataframe(
            pd.DataFrame(sorted(entry.properties.items()), columns=["property", "value"]),
            hide_index=True,
            width="stretch",
        )
    with st.expander("Every version"):
        table = history_frame(entries).drop(columns=["topic"])
        if applied:
            table["proposal"] = [f"#{applied[v].id}" if v in applied else "" for v in table["version"]]
        st.dataframe(table, hide_index=True, width="stretch")
    return int(version)


def _clients(reg: SchemaRegistry, topic: str, connected: list[ConnectedClient] | None) -> None:
    """The recorded clients with their versions, or (`connected` given: a plain broker) who is connected."""
    if connected is not None:
        st.info(
            "This broker's admin API does not say which producers and consumers use which schema version "
            "(Pulsar keeps no such record), so upgrade plans and policy previews cannot name clients. Below: "
            "who is connected now, from the broker's topic stats. `schema-explorer serve` records versions."
        )
        if not connected:
            st.caption("No producer or consumer is connected now.")
            return
        st.dataframe(connected_frame(connected), hide_index=True, width="stretch")
        return
    frame = clients_frame(reg.clients(topic))
    if frame.empty:
        st.info("No producer or consumer recorded on this topic.")
        return
    counts = frame.groupby(["version", "role"], dropna=False).size().unstack(fill_value=0).reset_index()
    st.dataframe(counts, hide_index=True)
    st.dataframe(frame.drop(columns=["topic"]), hide_index=True, width="stretch")


def _delete(reg: SchemaRegistry, topic: str, allowed: AllowedSteps) -> None:
    with st.expander("Delete the schema"):
        st.write("Appends a deletion marker (soft delete); the next registration starts a new history.")
        show_rule(allowed, Step.DELETE)
        sure = st.checkbox("I understand", key="topic_delete_sure", disabled=not allowed.allows(Step.DELETE))
        help_text = "Deletes the schema now (an admin)."
        if write_button(
            "Delete schema", key="topic_delete", allowed=allowed, step=Step.DELETE, help=help_text, disabled=not sure
        ):
            try:
                version = reg.delete(topic, user=session.user() or "")
            except RegistryError as exc:
                show_error(exc)
                return
            session.clear_caches()
            st.session_state.pop("topic_version", None)
            st.toast(f"Deleted: marker v{version}")
            st.rerun()


topic_page(render)
