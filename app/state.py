"""What every page shares: the connection, the cached registry handle, read-only mode and the selected topic.

Pages call these functions and never open a registry themselves:

    reg = state.registry()            # cached per (target, token) with st.cache_resource; raises RegistryError;
                                      # a read-only view (Registry.read_only()) whenever read_only() is True
    if not state.read_only(): ...     # hide every write in read-only mode (the handle refuses them anyway)
    reg.register(..., user=state.user())  # who did it, for the audit trail
    topic = state.selected_topic()    # the topic chosen on Browse (or any page), shared across pages
    state.select_topic(topic)
    state.clear_caches()              # after any write: drops st.cache_data tables derived from the registry

`schema-explorer ui` runs `serve()` here: the app as an `st.App`, with the process warmed (imports, registry
handle, catalog) in a thread while the server starts, so a first visit does not wait for them.

The connection comes from `--db PATH`, `--url URL`, `--token T`, `--read-only` after Streamlit's `--`
(`schema-explorer ui` passes `--db`), else from SCHEMA_EXPLORER_DB / _URL / _TOKEN / _READ_ONLY, else the
per-user default file; the sidebar can switch it for the session. Read-only at start is final for the whole
server: no session can switch it off, and every session's handle refuses writes itself.

Writes are attributed (`user()`) to the person signed in through Streamlit's authentication, else to the value of
the trusted header named by `--user-header NAME` (SCHEMA_EXPLORER_USER_HEADER; set by a reverse proxy), else to
the operating-system user who started the app, marked "(os user)".
"""

from __future__ import annotations

import argparse
import gc
import getpass
import hashlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import streamlit as st

from registry import Registry, RegistryError, default_db_path, parse_location

CONNECTION = "connection"  # st.session_state key of the session's Connection
TOPIC = "selected_topic"  # st.session_state key of the topic shared across pages
READ_ONLY = "read_only"  # the sidebar toggle's key
USER_HEADER_ENV = "SCHEMA_EXPLORER_USER_HEADER"  # the trusted header naming the person (`ui --user-header NAME`)
APP_SCRIPT = Path(__file__).resolve().parent / "streamlit_app.py"
_LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Connection:
    """Where the registry lives: an embedded file (`target` is a path) or a remote admin URL with a token."""

    target: str
    token: str | None = None
    read_only: bool = False
    pulsar_version: str | None = None  # None: the one stored with the registry, or the one the broker reports

    @property
    def is_remote(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @property
    def shown(self) -> str:
        """The target as the page shows it: a database password is never displayed."""
        if self.is_remote:
            return self.target
        try:
            return parse_location(self.target).shown
        except RegistryError:
            return self.target

    @property
    def label(self) -> str:
        return f"remote admin API {self.target}" if self.is_remote else f"embedded registry {self.shown}"


def connection_from_argv(argv: list[str], environ: dict[str, str] | None = None) -> Connection:
    """The start-up connection: arguments after Streamlit's `--`, then environment variables, then the default."""
    env = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--db")
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--pulsar-version")
    args, _ = parser.parse_known_args(argv)
    target = args.url or args.db or env.get("SCHEMA_EXPLORER_URL") or env.get("SCHEMA_EXPLORER_DB")
    token = args.token or env.get("SCHEMA_EXPLORER_TOKEN") or None
    read_only = bool(args.read_only) or env.get("SCHEMA_EXPLORER_READ_ONLY", "") not in ("", "0", "false")
    version = args.pulsar_version or env.get("SCHEMA_EXPLORER_PULSAR_VERSION") or None
    return Connection(target=str(target or default_db_path()), token=token, read_only=read_only, pulsar_version=version)


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


def connect(target: str, token: str | None = None) -> None:
    """Switch the session to another registry (the Connection form); the new one opens on the next call."""
    st.session_state[CONNECTION] = replace(connection(), target=target.strip(), token=token or None)
    st.session_state.pop(_FAILED, None)  # an explicit Connect always tries again
    st.session_state.pop(TOPIC, None)


PULSAR_CHOICE = "pulsar_version"  # the sidebar's "Answer as Pulsar" widget key


def answer_as(version: str | None, *, from_link: bool = False) -> None:
    """Answer as another Pulsar release line in this session (the sidebar's choice or a link's `pulsar=`;
    None: the registry's own). A link's choice drops the widget's state, so the sidebar shows it."""
    st.session_state[CONNECTION] = replace(connection(), pulsar_version=version)
    if from_link:
        st.session_state.pop(PULSAR_CHOICE, None)


@st.cache_resource(show_spinner=False, max_entries=8)
def _open(target: str, token: str | None, pulsar_version: str | None = None) -> Registry:
    # One handle per registry and profile for every session: its catalog cache then serves all of them.
    return Registry.open(target, token=token, pulsar_version=pulsar_version)


_FAILED = "open_failed"  # session key: (connection, when, error) of the last open that failed
RETRY_AFTER_S = 15.0  # a failed open is not retried within this time: each page would wait for it again


def registry() -> Registry:
    """The cached registry handle of the session's connection, or in read-only mode a view of it that refuses
    every write (ReadOnlyError), so no page or widget can write. Raises RegistryError when it cannot open; an
    endpoint that failed to open a moment ago fails at once (a hanging URL takes 30 s to give up, and the
    sidebar and the page would each wait that long)."""
    conn = connection()
    wanted = (conn.target, conn.token, conn.pulsar_version)
    failed = st.session_state.get(_FAILED)
    if failed is not None and failed[0] == wanted and time.monotonic() - failed[1] < RETRY_AFTER_S:
        raise failed[2]
    try:
        reg = _open(conn.target, conn.token, conn.pulsar_version)
    except RegistryError as exc:
        st.session_state[_FAILED] = (wanted, time.monotonic(), exc)
        raise
    st.session_state.pop(_FAILED, None)
    if read_only():
        # The view answers every read Registry answers; pages only need those.
        return cast(Registry, reg.read_only())
    return reg


def read_only() -> bool:
    """True when writes are hidden and refused: started read-only, the sidebar toggle, or a --user-header
    that the request does not carry (no write without a person to attribute it to)."""
    return connection().read_only or user() is None


def user() -> str | None:
    """Who the session's writes are attributed to in the audit trail (see the module docstring).

    None when `--user-header NAME` was given and this session's request has no such header: the app is then
    read-only for the session rather than attributing writes to someone else."""
    if st.user.get("is_logged_in"):
        name = st.user.get("email") or st.user.get("name")
        if name:
            return str(name)
    header = os.environ.get(USER_HEADER_ENV, "").strip()
    if header:
        value = (st.context.headers.get(header) or "").strip()
        return value or None
    return f"{os_user()} (os user)"


def os_user() -> str:
    """The operating-system user who started the app."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return f"uid {os.getuid()}"


def selected_topic() -> str | None:
    topic = st.session_state.get(TOPIC)
    return str(topic) if topic else None


def select_topic(topic: str | None) -> None:
    if topic:
        st.session_state[TOPIC] = topic
    else:
        st.session_state.pop(TOPIC, None)


def clear_caches() -> None:
    """Call after a write: derived tables (st.cache_data) are dropped; the registry handle stays open and
    its own catalog cache notices the write by itself."""
    st.cache_data.clear()


def cache_key() -> tuple[str, str, int]:
    """A value for st.cache_data functions to take as an argument, so their tables follow the registry:
    the connection's target, a digest of its token (two tokens on one URL may see different things, and a
    switch to another token must not answer from what the previous one read; the token itself is never a
    cache key) and the registry's change token (bumped by any write, from any process)."""
    conn = connection()
    token = hashlib.sha256(conn.token.encode()).hexdigest()[:16] if conn.token else ""
    return conn.target, token, registry().change_token()


def topic_page(render: Callable[[Registry, str], Mapping[str, object] | None], *, empty: str = "") -> None:
    """Run a page that works on one topic: open its link, pick the topic (shared with every page), then
    `render(reg, topic)`, which returns the page's own link parameters (app/links.py) besides `topic`.

    Errors from the registry become short messages (app.render.show_error), never tracebacks.
    """
    from app import links  # late: links and render import this module
    from app.render import show_error, topic_picker

    params = links.opened()
    try:
        reg = registry()
    except RegistryError as exc:
        show_error(exc)
        return
    if "topic" in params:
        linked = links.resolve_topic(reg, params["topic"])
        if linked is not None:
            select_topic(linked)
    picker, share = st.columns([6, 1], vertical_alignment="bottom")
    with picker:
        topic = topic_picker(reg)
    if topic is None:
        links.keep({})
        st.info(empty or "Pick a topic on Browse, or type its full name above.")
        return
    extra: Mapping[str, object] = {}
    try:
        extra = render(reg, topic) or {}
    except RegistryError as exc:
        show_error(exc)
    links.keep({"topic": links.short_topic(topic), **extra})
    with share:
        links.copy_link()


def warm_up(conn: Connection) -> None:
    """Do before the first visit what the first visit would otherwise wait for: import what the pages import,
    open the registry handle (the st.cache_resource every session shares) and, for an embedded registry,
    build its catalog and the first page of Browse. Then freeze what start-up made (gc.freeze): it lives as
    long as the process, and Streamlit's collection after every script run (runner.postScriptGC) would
    otherwise walk all of it again on each search (~70 ms with 100k topics on a 2-core machine).

    A remote registry only gets its handle: its catalog is cached for seconds, not until a change."""
    try:
        import pyarrow  # noqa: F401  # what st.dataframe serialises with

        import app.render  # noqa: F401
        import app.widgets  # noqa: F401
        from registry import TopicQuery
        from registry.views.tables import topics_frame

        gc.freeze()  # the modules: the catalog's build then does not walk them in each collection either
        reg = _open(conn.target, conn.token, conn.pulsar_version)
        if not conn.is_remote:
            topics_frame(reg.search_topics(TopicQuery(), limit=50))
    except Exception:  # noqa: BLE001  # the first visit shows whatever went wrong, with its message
        _LOG.debug("warm-up failed; the first visit will open the registry itself", exc_info=True)
    gc.collect()
    gc.freeze()


def serve(argv: list[str]) -> None:
    """Run the app's server in this process: `--port N --host H`, `--user-header NAME` and the connection
    arguments (`--db`, `--url`, `--read-only`; the token in SCHEMA_EXPLORER_TOKEN). The connection reaches the
    script through the environment (st.App gives the script no arguments)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--user-header")
    args, rest = parser.parse_known_args(argv)
    conn = connection_from_argv(rest)
    for name in ("SCHEMA_EXPLORER_DB", "SCHEMA_EXPLORER_URL", "SCHEMA_EXPLORER_READ_ONLY", USER_HEADER_ENV):
        os.environ.pop(name, None)
    os.environ["SCHEMA_EXPLORER_URL" if conn.is_remote else "SCHEMA_EXPLORER_DB"] = conn.target
    if conn.read_only:
        os.environ["SCHEMA_EXPLORER_READ_ONLY"] = "1"
    if args.user_header:
        os.environ[USER_HEADER_ENV] = args.user_header

    # Started before the server, not from an st.App lifespan: the lifespan runs only once uvicorn is up, and
    # a visitor who comes at once would wait for the difference. The server starts meanwhile.
    threading.Thread(target=warm_up, args=(conn,), name="warm-up", daemon=True).start()
    st.App(APP_SCRIPT).run(config={"server.port": args.port, "server.address": args.host})
