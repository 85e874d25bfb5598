"""Widgets the shell shares across pages: the sidebar's connection box and the policy defaults in force."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from app import connection, search_index, session
from app.render import code_span, escape_markdown, show_error
from app.roles import RolesFileError
from registry import Registry, RegistryError, ReviewRules, SchemaRegistry
from registry._location import names_remote
from registry._pulsar_version import PULSAR_LINES
from registry.proposals._permissions import Step, allowed_steps
from registry.remote._connection import describe_connection, pulsarctl_contexts

EMBEDDED, REMOTE = "Embedded file", "Remote admin URL"


def connection_sidebar() -> SchemaRegistry | None:
    """The sidebar: where the registry is (and a plain broker's search index), a form to switch it, read-only
    mode and the broker defaults.

    Returns the open registry, or None when it cannot open (the error is shown in the sidebar)."""
    conn = connection.connection()
    with st.sidebar:
        _hide_previous_registry(conn)
        st.caption("Connection")
        kind = "Cluster" if conn.is_cluster else "Remote" if conn.is_remote else "Embedded"
        st.markdown(f"**{kind}** · {code_span(conn.shown)}")
        if conn.is_cluster:
            _cluster_summary(conn)
        try:
            # Opening a remote registry asks the server a few questions (shown after half a second).
            with st.spinner(f"Connecting to {conn.shown}…"):
                reg: SchemaRegistry | None = session.registry()
        except RegistryError as exc:
            reg = None
            show_error(exc)
        if reg is not None:
            search_index.sidebar(reg)  # a plain broker's search index: its age, or its progress
        # Once a creation was asked for, the form stays open until a connection is made: the expander
        # neither folds under the person's cursor on Cancel nor races a test that reopens it.
        if reg is None or PENDING in st.session_state:
            st.session_state[FORM_OPEN] = True
        with st.expander("Change connection", expanded=bool(st.session_state.get(FORM_OPEN))):
            _connection_form(conn)
            _confirm_create()
            _cluster_forms()
        final = connection.server_read_only()
        st.toggle(
            "Read-only",
            value=conn.read_only,
            key=connection.READ_ONLY,
            disabled=final,
            help="The app was started read-only (--read-only): no session can write."
            if final
            else "Hides every write, and this session's registry handle refuses them.",
        )
        _attribution()
        if reg is not None:
            _pulsar_version(reg)
            _broker_defaults(reg)
    return reg


_SHOWN = "sidebar_connection_shown"  # session key: the connection the page on screen was drawn from
# Streamlit keeps the previous run's elements on screen, faded, until the new run replaces them; in the run that
# switches registry they would show the previous registry's data beside "Connecting…", so that run hides them.
_HIDE_STALE = '<style>[data-testid="stMain"] [data-stale="true"] { display: none; }</style>'


def _hide_previous_registry(conn: connection.Connection) -> None:
    """In the run that switches to another registry, hide the page the previous one drew (module note above)."""
    shown = conn.key
    if st.session_state.get(_SHOWN, shown) != shown:
        st.html(_HIDE_STALE)
    st.session_state[_SHOWN] = shown


OWN = "the registry's own"  # the line choice that follows the registry (stored, or the broker's version)


def _pulsar_version(reg: SchemaRegistry) -> None:
    """Which Pulsar release line the verdicts follow, where that comes from, and a choice to answer as another
    line in this session (never stored: `schema-explorer` with `--pulsar-version` on a new file stores one)."""
    line = reg.pulsar_line
    asked = connection.connection().pulsar_version
    source = reg.pulsar_version_source
    if asked is not None:
        started = asked == connection.start_connection().pulsar_version
        source = "the app was started with --pulsar-version" if started else "chosen for this session"
    st.caption(f"Answers as **{line.title}** (Avro {line.avro}): {source}")
    choices = [OWN, *PULSAR_LINES]
    chosen = st.selectbox(
        "Answer as Pulsar",
        choices,
        index=choices.index(asked) if asked in choices else 0,
        key=connection.PULSAR_CHOICE,
        help="Verdicts differ by release line: Avro 1.11 (3.0, 4.0) refuses '$' in names and a repeated "
        "enum or fixed, and still takes Jackson JSON-Schema documents as JSON schemas; master validates "
        "namespaces, takes EXTERNAL schemas and is strict about JSON. This choice holds for this session, and "
        "links copied from it carry it (pulsar=).",
    )
    wanted = None if chosen == OWN else chosen
    if wanted != asked:
        connection.answer_as(wanted)
        st.rerun()


def _connection_form(conn: connection.Connection) -> None:
    with st.form("conn_form", border=False):
        kind = st.radio("Registry", (EMBEDDED, REMOTE), index=int(conn.is_remote), key="conn_kind", horizontal=True)
        target = st.text_input(
            "Path or URL",
            value=conn.shown,
            key="conn_target",
            help="A registry file (a new one is only created once you confirm), or http(s)://host:port of a "
            "Pulsar admin API (a real cluster or `schema-explorer serve`).",
        )
        token = st.text_input("Token (remote only)", type="password", key="conn_token")
        workspace = st.text_input(
            "Workspace (a plain broker only)",
            value=conn.workspace or "",
            key="conn_workspace",
            help="Where a plain broker's proposals, review rules and audit trail are kept: a file or "
            "postgresql://...; empty: a file of your own for that cluster. schema-explorer serve keeps its own.",
        )
        if st.form_submit_button("Connect", key="conn_apply"):
            target = target.strip()
            if target == conn.shown:
                target = conn.target  # the form shows a database location without its password
            st.session_state.pop(PENDING, None)
            if kind == REMOTE and not names_remote(target):
                st.warning("A remote admin URL starts with http:// or https://.")
            elif kind == EMBEDDED and target and not _registry_exists(target):
                # Never make an empty registry silently: checking against it would answer from no history.
                st.session_state[PENDING] = target
            elif target:
                connection.connect(target, token.strip() or None, workspace.strip() or None)
                st.session_state.pop(FORM_OPEN, None)
                st.rerun()


def _cluster_summary(conn: connection.Connection) -> None:
    """The cluster a client.conf or context names: its URL and auth method by name (never a credential), and a
    warning when its certificates are not checked."""
    try:
        found = describe_connection(client_conf=conn.client_conf, context=conn.context)
    except RegistryError as exc:
        show_error(exc)
        return
    st.caption(f"{code_span(found.url)} · auth: {escape_markdown(found.auth)}")
    if found.insecure_warning:
        st.warning(escape_markdown(found.insecure_warning), icon=":material/gpp_bad:")


def _cluster_forms() -> None:
    """Connect as pulsar-admin or pulsarctl do: a context picked from ~/.config/pulsar/config, or a client.conf
    path. Either is checked by opening it first: what cannot open is said in one line and the session stays on
    the registry it had."""
    st.caption("Or a cluster as pulsar-admin and pulsarctl reach it (the credentials stay in the file):")
    try:
        names = pulsarctl_contexts()
    except RegistryError as exc:
        names = ()
        st.caption(escape_markdown(f"No pulsarctl context to pick: {' '.join(str(exc).split())}"))
    failed: RegistryError | None = None
    if names:
        with st.form("context_form", border=False):
            name = st.selectbox("pulsarctl context", names, key="conn_context")
            if st.form_submit_button("Connect to context", key="conn_context_apply"):
                failed = _switched(session.switch_to_cluster(context=name))
    with st.form("client_conf_form", border=False):
        path = st.text_input(
            "client.conf file",
            key="conn_client_conf",
            help="Pulsar's client.conf on the app's machine (webServiceUrl, authPlugin, authParams, "
            "tlsTrustCertsFilePath, ...), read as pulsar-admin reads it.",
        )
        if st.form_submit_button("Connect with client.conf", key="conn_client_conf_apply"):
            if path.strip():
                failed = _switched(session.switch_to_cluster(client_conf=path.strip()))
            else:
                st.warning("Name the client.conf file.")
    if failed is not None:  # one line: why, and that nothing changed
        why = " ".join(str(failed).split()).rstrip(".")
        shown = connection.connection().shown
        st.error(escape_markdown(f"Not connected: {why}. Still on {shown}."), icon=":material/error:")


def _switched(failed: RegistryError | None) -> RegistryError | None:
    """After a switch attempt: on success fold the form and run the page again on the new cluster."""
    if failed is None:
        st.session_state.pop(FORM_OPEN, None)
        st.rerun()
    return failed


def _registry_exists(target: str) -> bool:
    """Is there a registry at this embedded location (a file, or a database that holds one)? Errors other
    than "none there" count as yes: connecting shows them."""
    from registry import RegistryNotFoundError
    from registry._location import LocationKind, parse_location

    try:
        location = parse_location(target)
        if location.kind is LocationKind.SQLITE:
            return Path(location.target).expanduser().exists()
        Registry.open(target).close()
    except RegistryNotFoundError:
        return False
    except RegistryError:
        return True
    return True


PENDING = "conn_create_pending"  # session key: the registry path waiting for the person to confirm its creation
FORM_OPEN = "conn_form_open"  # session key: keep the connection form unfolded until a connection is made


def _confirm_create() -> None:
    """Ask before creating a registry file that does not exist; read-only sessions cannot create one."""
    target = st.session_state.get(PENDING)
    if not target:
        return
    st.warning(f"No registry at {code_span(target)}. Create a new, empty registry there?")
    refused = allowed_steps(session.actor(), ReviewRules(), read_only=session.read_only()).reason(Step.ADMINISTER)
    if refused is not None:
        st.caption(escape_markdown(f"It cannot be created from this session: {refused}."))
    cols = st.columns(2)
    create = cols[0].button("Create it", key="conn_create", type="primary", disabled=refused is not None)
    if cols[1].button("Cancel", key="conn_create_cancel"):
        st.session_state.pop(PENDING, None)
        st.rerun()
    if create and refused is None:
        try:
            Registry.open(target, create=True).close()
        except RegistryError as exc:
            show_error(exc)
            return
        st.session_state.pop(PENDING, None)
        st.session_state.pop(FORM_OPEN, None)
        connection.connect(target)
        st.rerun()


def _attribution() -> None:
    """Whom this session's writes are attributed to and with which role, or why it cannot write."""
    person = session.user()
    if person is None:
        header = os.environ.get(session.USER_HEADER_ENV, "")
        st.warning(f"Read-only: this request carries no {header} header, so a write could not say who made it.")
        return
    roles = session.current_roles()
    if isinstance(roles, RolesFileError):
        st.error(f"Everyone is a viewer until the roles file is fixed: {escape_markdown(str(roles))}")
    actor = session.actor()
    role = f" · {actor.role}" if actor is not None else ""
    if not session.read_only():
        st.caption(f"Writes are recorded as {code_span(person)}{role}")
    else:
        st.caption(f"You are {code_span(person)}{role} (read-only)")
    if connection.connection().is_remote:
        st.caption("A remote registry names you by the token, and its own roles decide what you may do.")


def _broker_defaults(reg: SchemaRegistry) -> None:
    broker = reg.broker
    st.caption("Policy defaults in force (broker)")
    st.markdown(
        f"- compatibility: `{broker.compatibility}`\n"
        f"- system topics: `{broker.system_topic_compatibility}`\n"
        f"- auto-update allowed: `{broker.allow_auto_update}`\n"
        f"- validation enforced: `{broker.validation_enforced}`\n"
        f"- topic-level policies: `{broker.topic_level_policies_enabled}`"
    )
