"""Widgets the shell shares across pages: the sidebar's connection box and the policy defaults in force."""

from __future__ import annotations

import streamlit as st

from app import state
from app.render import code_span, show_error
from registry import Registry, RegistryError

EMBEDDED, REMOTE = "Embedded file", "Remote admin URL"


def connection_sidebar() -> Registry | None:
    """The sidebar: where the registry is, a form to switch it, read-only mode and the broker defaults.

    Returns the open registry, or None when it cannot open (the error is shown in the sidebar)."""
    conn = state.connection()
    with st.sidebar:
        st.caption("Connection")
        st.markdown(f"**{'Remote' if conn.is_remote else 'Embedded'}** · {code_span(conn.target)}")
        try:
            reg: Registry | None = state.registry()
        except RegistryError as exc:
            reg = None
            show_error(exc)
        with st.expander("Change connection", expanded=reg is None):
            _connection_form(conn)
        st.toggle(
            "Read-only",
            value=conn.read_only,
            key=state.READ_ONLY,
            help="Hides every button that writes to the registry.",
        )
        if reg is not None:
            _broker_defaults(reg)
    return reg


def _connection_form(conn: state.Connection) -> None:
    with st.form("conn_form", border=False):
        kind = st.radio("Registry", (EMBEDDED, REMOTE), index=int(conn.is_remote), key="conn_kind", horizontal=True)
        target = st.text_input(
            "Path or URL",
            value=conn.target,
            key="conn_target",
            help="A registry file (created if missing), or http(s)://host:port of a Pulsar admin API "
            "(a real cluster or `schema-explorer serve`).",
        )
        token = st.text_input("Token (remote only)", type="password", key="conn_token")
        if st.form_submit_button("Connect", key="conn_apply"):
            target = target.strip()
            if kind == REMOTE and not target.startswith(("http://", "https://")):
                st.warning("A remote admin URL starts with http:// or https://.")
            elif target:
                state.connect(target, token.strip() or None)
                st.rerun()


def _broker_defaults(reg: Registry) -> None:
    broker = reg.broker
    st.caption("Policy defaults in force (broker)")
    st.markdown(
        f"- compatibility: `{broker.compatibility}`\n"
        f"- system topics: `{broker.system_topic_compatibility}`\n"
        f"- auto-update allowed: `{broker.allow_auto_update}`\n"
        f"- validation enforced: `{broker.validation_enforced}`\n"
        f"- topic-level policies: `{broker.topic_level_policies_enabled}`"
    )
