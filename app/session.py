"""The session's registry handle and the person behind it: what every page writes through, and as whom.

    reg = session.registry()            # cached per (target, token, line); raises RegistryError; a read-only
                                        # handle whenever read_only() is True, so no page or widget can write
    if not session.read_only(): ...     # hide every write in read-only mode (the handle refuses them anyway)
    reg.register(..., user=session.user() or "")  # who did it, for the audit trail
    session.clear_caches()              # after any write: drops st.cache_data tables derived from the registry

Writes are attributed (`user()`) to the person signed in through Streamlit's authentication, else to the value of
the trusted header named by `--user-header NAME` (SCHEMA_EXPLORER_USER_HEADER; set by a reverse proxy), else to
the operating-system user who started the app, marked "(os user)".

    reg.proposals.approve(n, actor=session.actor())  # proposals ask for an Actor: that name with its role,
                                                    # from the roles file (`ui --roles FILE`) or the defaults
                                                    # (app/roles.py); None when user() is None
"""

from __future__ import annotations

import functools
import getpass
import hashlib
import os
import time
from dataclasses import replace
from pathlib import Path

import streamlit as st

from app.connection import OPEN_FAILED, Connection, connect_cluster, connection
from app.roles import ROLES_ENV, Roles, RolesFileError, default_role, load_roles
from registry import Actor, RegistryError, Role, SchemaRegistry
from registry import open as open_registry

USER_HEADER_ENV = "SCHEMA_EXPLORER_USER_HEADER"  # the trusted header naming the person (`ui --user-header NAME`)
RETRY_AFTER_S = 15.0  # a failed open is not retried within this time: each page would wait for it again


@st.cache_resource(show_spinner=False, max_entries=8)
def open_handle(
    target: str,
    token: str | None,
    pulsar_version: str | None = None,
    client_conf: str | None = None,
    context: str | None = None,
    workspace: str | None = None,
) -> SchemaRegistry:
    """One handle per registry, token (or client.conf, or context), Pulsar line and workspace for every session:
    its catalog cache then serves them all. A client.conf or context is passed by its path or name: the core
    reads the file, so its secrets are never a cache key here."""
    if client_conf is not None or context is not None:
        return open_registry(
            client_conf=client_conf, context=context, pulsar_version=pulsar_version, workspace=workspace
        )
    return open_registry(target, token=token, pulsar_version=pulsar_version, workspace=workspace)


def open_connection(conn: Connection) -> SchemaRegistry:
    """The shared handle of `conn` (open_handle's cache). st.cache_resource keys on the arguments as passed, so a
    file or URL passes three, as every other caller does, and shares their handle."""
    if conn.workspace is not None:
        return open_handle(conn.target, conn.token, conn.pulsar_version, conn.client_conf, conn.context, conn.workspace)
    if conn.is_cluster:
        return open_handle(conn.target, conn.token, conn.pulsar_version, conn.client_conf, conn.context)
    return open_handle(conn.target, conn.token, conn.pulsar_version)


def switch_to_cluster(*, client_conf: str | None = None, context: str | None = None) -> RegistryError | None:
    """Switch the session to the cluster a client.conf or pulsarctl context names, once it opens; otherwise
    return why (a missing file, an unknown context, an unsupported auth plugin, a connection error) and keep
    the session where it was (fail closed: never a switch to a registry that cannot answer)."""
    wanted = replace(connection(), target="", token=None, client_conf=client_conf, context=context)
    try:
        open_connection(wanted)
    except RegistryError as exc:
        return exc
    connect_cluster(client_conf=client_conf, context=context)
    return None


def registry() -> SchemaRegistry:
    """The cached registry handle of the session's connection, or in read-only mode a read-only handle on it
    that refuses every write (ReadOnlyError), so no page or widget can write. Raises RegistryError when it
    cannot open; an endpoint that failed to open a moment ago fails at once (a hanging URL takes 30 s to give
    up, and the sidebar and the page would each wait that long)."""
    conn = connection()
    wanted = conn.key
    failed = st.session_state.get(OPEN_FAILED)
    if failed is not None and failed[0] == wanted and time.monotonic() - failed[1] < RETRY_AFTER_S:
        raise failed[2]
    try:
        reg = open_connection(conn)
    except RegistryError as exc:
        st.session_state[OPEN_FAILED] = (wanted, time.monotonic(), exc)
        raise
    st.session_state.pop(OPEN_FAILED, None)
    return reg.read_only() if read_only() else reg


def read_only() -> bool:
    """True when writes are hidden and refused: started read-only, the sidebar toggle, or a --user-header
    that the request does not carry (no write without a person to attribute it to)."""
    return connection().read_only or user() is None


def user() -> str | None:
    """Who the session's writes are attributed to in the audit trail (see the module docstring).

    None when `--user-header NAME` was given and this session's request has no such header: the app is then
    read-only for the session rather than attributing writes to someone else."""
    return _identity()[0]


def _identity() -> tuple[str | None, bool]:
    """(the person's name or None, whether it is the operating-system user's fallback name)."""
    if st.user.get("is_logged_in"):
        name = st.user.get("email") or st.user.get("name")
        if name:
            return str(name), False
    header = os.environ.get(USER_HEADER_ENV, "").strip()
    if header:
        value = (st.context.headers.get(header) or "").strip()
        return (value or None), False
    return f"{os_user()} (os user)", True


def actor() -> Actor | None:
    """The session's person as the proposal calls take them: `user()` with the role the roles file gives that
    name (a name it does not give: viewer), or without a roles file the default (app/roles.py): the local app's
    OS user is an admin, anyone else a producer. A roles file that became unreadable while the app runs makes
    everyone a viewer (fail closed) and the sidebar says why. None when `user()` is None."""
    name, is_os_user = _identity()
    if name is None:
        return None
    roles = current_roles()
    if roles is None:
        return Actor(name, default_role(os_user=is_os_user))
    if isinstance(roles, RolesFileError):
        return Actor(name, Role.VIEWER)
    return Actor(name, roles.role_of(name))


def current_roles() -> Roles | RolesFileError | None:
    """The roles file in force (SCHEMA_EXPLORER_ROLES), read again when it changes; the error when it cannot
    be used now; None without one."""
    path = os.environ.get(ROLES_ENV, "").strip()
    if not path:
        return None
    try:
        stat = Path(path).expanduser().stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = (0, -1)
    return _roles_file(path, *stamp)


@functools.lru_cache(maxsize=4)
def _roles_file(path: str, mtime_ns: int, size: int) -> Roles | RolesFileError:
    try:
        return load_roles(path)
    except RolesFileError as exc:
        return exc


def os_user() -> str:
    """The operating-system user who started the app."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return f"uid {os.getuid()}"


def clear_caches() -> None:
    """Call after a write: derived tables (st.cache_data) are dropped; the registry handle stays open and
    its own catalog cache notices the write by itself."""
    st.cache_data.clear()


def cache_key() -> tuple[str, str, int]:
    """A value for st.cache_data functions to take as an argument, so their tables follow the registry:
    the connection's target, a digest of its token (two tokens on one URL may see different things, and a
    switch to another token must not answer from what the previous one read; the token itself is never a
    cache key; a client.conf or context is named by its path or name) and the registry's change token (bumped by
    any write, from any process)."""
    conn = connection()
    token = hashlib.sha256(conn.token.encode()).hexdigest()[:16] if conn.token else ""
    return conn.target or conn.shown, token, registry().change_token()
