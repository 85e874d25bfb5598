"""The session's connection: which registry it looks at, with which token, read-only or not, answering as which
Pulsar line.

The start-up connection comes from `--db PATH`, `--url URL`, `--token T`, `--client-conf FILE`, `--context NAME`,
`--read-only`, `--workspace LOCATION` after Streamlit's `--` (`schema-explorer ui` passes `--db`), else from
SCHEMA_EXPLORER_DB / _URL / _TOKEN / _CLIENT_CONF / _CONTEXT / _READ_ONLY / _WORKSPACE, else the per-user default
file. A workspace (a plain broker's proposals, rules and audit trail) applies to a remote target only. A
client.conf or pulsarctl context travels as its path or name only: the app reads the file, so no secret is on a
command line or in a URL. The sidebar or a link's `registry=` (`context=`, `client_conf=`) can switch it for the
session. Read-only at start is final for the whole server: no session can switch it off.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, replace

import streamlit as st

from registry import RegistryError
from registry._location import names_remote, parse_location
from registry._paths import default_db_path

CONNECTION = "connection"  # st.session_state key of the session's Connection
READ_ONLY = "read_only"  # the sidebar toggle's key
PULSAR_CHOICE = "pulsar_version"  # the sidebar's "Answer as Pulsar" widget key
TOPIC = "selected_topic"  # st.session_state key of the topic shared across pages (dropped on a switch)
OPEN_FAILED = "open_failed"  # session key: (connection, when, error) of the last open that failed


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection:
    """Where the registry lives: an embedded file (`target` is a path), a remote admin URL with a token, or a
    cluster named by a client.conf path or a pulsarctl context (`target` is then "": the file says where)."""

    target: str
    token: str | None = None
    client_conf: str | None = None  # Pulsar's client.conf: URL, credentials and TLS read from the file
    context: str | None = None  # a pulsarctl context's name (~/.config/pulsar/config)
    read_only: bool = False
    pulsar_version: str | None = None  # None: the one stored with the registry, or the one the broker reports
    workspace: str | None = None  # a plain broker's: where proposals, rules and the audit trail are kept

    @property
    def is_remote(self) -> bool:
        return self.is_cluster or names_remote(self.target)

    @property
    def is_cluster(self) -> bool:
        """Named by a client.conf or a pulsarctl context (its credentials stay in the file)."""
        return self.client_conf is not None or self.context is not None

    @property
    def key(self) -> tuple[str | None, ...]:
        """What tells two connections apart (what a handle is opened from), for session-state comparisons."""
        return (self.target, self.token, self.client_conf, self.context, self.pulsar_version, self.workspace)

    @property
    def shown(self) -> str:
        """The target as the page shows it: a database password is never displayed."""
        if self.context is not None:
            return f"pulsarctl context {self.context}"
        if self.client_conf is not None:
            return f"client.conf {self.client_conf}"
        if self.is_remote:
            return self.target
        try:
            return parse_location(self.target).shown
        except RegistryError:
            return self.target

    @property
    def label(self) -> str:
        if self.is_cluster:
            return self.shown
        return f"remote admin API {self.target}" if self.is_remote else f"embedded registry {self.shown}"


def connection_from_argv(argv: list[str], environ: dict[str, str] | None = None) -> Connection:
    """The start-up connection: arguments after Streamlit's `--`, then environment variables, then the default."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--db")
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--client-conf")
    parser.add_argument("--context")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--pulsar-version")
    parser.add_argument("--workspace")
    args, _ = parser.parse_known_args(argv)
    target = args.url or args.db or env.get("SCHEMA_EXPLORER_URL") or env.get("SCHEMA_EXPLORER_DB")
    token = args.token or env.get("SCHEMA_EXPLORER_TOKEN") or None
    read_only = bool(args.read_only) or env.get("SCHEMA_EXPLORER_READ_ONLY", "") not in ("", "0", "false")
    version = args.pulsar_version or env.get("SCHEMA_EXPLORER_PULSAR_VERSION") or None
    workspace = args.workspace or env.get("SCHEMA_EXPLORER_WORKSPACE") or None
    if args.url or args.db:
        client_conf = context = None  # an argument names the registry; the environment does not add to it
    else:
        client_conf = args.client_conf or env.get("SCHEMA_EXPLORER_CLIENT_CONF") or None
        context = None if client_conf else args.context or env.get("SCHEMA_EXPLORER_CONTEXT") or None
    if client_conf or context:
        return Connection(
            target="",
            client_conf=client_conf,
            context=context,
            read_only=read_only,
            pulsar_version=version,
            workspace=workspace,
        )
    return Connection(
        target=str(target or default_db_path()),
        token=token,
        read_only=read_only,
        pulsar_version=version,
        workspace=workspace if names_remote(str(target or "")) else None,
    )


def start_connection() -> Connection:
    """The connection the app was started with (arguments and environment), before any session switched it."""
    return connection_from_argv(sys.argv[1:])


def server_read_only() -> bool:
    """True when the server was started read-only (--read-only or SCHEMA_EXPLORER_READ_ONLY): final, for every
    session; read from the process's start-up arguments and environment, never from session state."""
    return start_connection().read_only


def connection() -> Connection:
    """The session's connection (the start-up one until the sidebar or a link's `registry=` changes it)."""
    if CONNECTION not in st.session_state:
        st.session_state[CONNECTION] = start_connection()
    current: Connection = st.session_state[CONNECTION]
    wanted = server_read_only() or bool(st.session_state.get(READ_ONLY, current.read_only))
    if wanted != current.read_only:
        current = replace(current, read_only=wanted)
        st.session_state[CONNECTION] = current
    return current


def connect(target: str, token: str | None = None, workspace: str | None = None) -> None:
    """Switch the session to another registry (the Connection form); the new one opens on the next call.
    `workspace`: a plain broker's (registry.open's `workspace`); None, its per-user default."""
    _switch(
        replace(
            connection(),
            target=target.strip(),
            token=token or None,
            client_conf=None,
            context=None,
            workspace=workspace or None,
        )
    )


def connect_cluster(*, client_conf: str | None = None, context: str | None = None) -> None:
    """Switch the session to the cluster a client.conf or pulsarctl context names (session.switch_to_cluster
    checks first that it opens)."""
    _switch(replace(connection(), target="", token=None, client_conf=client_conf, context=context))


def _switch(wanted: Connection) -> None:
    st.session_state[CONNECTION] = wanted
    st.session_state.pop(OPEN_FAILED, None)  # an explicit Connect always tries again
    st.session_state.pop(TOPIC, None)


def answer_as(version: str | None, *, from_link: bool = False) -> None:
    """Answer as another Pulsar release line in this session (the sidebar's choice or a link's `pulsar=`;
    None: the registry's own). A link's choice drops the widget's state, so the sidebar shows it."""
    st.session_state[CONNECTION] = replace(connection(), pulsar_version=version)
    if from_link:
        st.session_state.pop(PULSAR_CHOICE, None)
