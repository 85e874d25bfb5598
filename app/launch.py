"""`schema-explorer ui` runs `serve()` here: the app as an `st.App`, with the process warmed (imports, registry
handle, catalog) in a thread while the server starts, so a first visit does not wait for them."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import threading
from pathlib import Path

import streamlit as st

from app.connection import Connection, connection_from_argv
from app.roles import ROLES_ENV
from app.session import USER_HEADER_ENV, open_connection

APP_SCRIPT = Path(__file__).resolve().parent / "streamlit_app.py"
_LOG = logging.getLogger(__name__)
CONNECTION_ENV = (
    "SCHEMA_EXPLORER_DB",
    "SCHEMA_EXPLORER_URL",
    "SCHEMA_EXPLORER_CLIENT_CONF",
    "SCHEMA_EXPLORER_CONTEXT",
    "SCHEMA_EXPLORER_WORKSPACE",
)


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
        reg = open_connection(conn)
        if not conn.is_remote:
            topics_frame(reg.search_topics(TopicQuery(), limit=50))
    except Exception:  # noqa: BLE001  # the first visit shows whatever went wrong, with its message
        _LOG.debug("warm-up failed; the first visit will open the registry itself", exc_info=True)
    gc.collect()
    gc.freeze()


def serve(argv: list[str]) -> None:
    """Run the app's server in this process: `--port N --host H`, `--user-header NAME`, `--roles FILE` and the
    connection arguments (`--db`, `--url`, `--client-conf`, `--context`, `--read-only`; the token in
    SCHEMA_EXPLORER_TOKEN). The connection and
    the roles file reach the script through the environment (st.App gives the script no arguments)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--user-header")
    parser.add_argument("--roles")
    args, rest = parser.parse_known_args(argv)
    conn = connection_from_argv(rest)
    for name in (*CONNECTION_ENV, "SCHEMA_EXPLORER_READ_ONLY", USER_HEADER_ENV, ROLES_ENV):
        os.environ.pop(name, None)
    if conn.client_conf is not None:  # its path only: the app reads the file
        os.environ["SCHEMA_EXPLORER_CLIENT_CONF"] = conn.client_conf
    elif conn.context is not None:
        os.environ["SCHEMA_EXPLORER_CONTEXT"] = conn.context
    else:
        os.environ["SCHEMA_EXPLORER_URL" if conn.is_remote else "SCHEMA_EXPLORER_DB"] = conn.target
    if conn.workspace is not None:  # in the environment: a database location may hold a password
        os.environ["SCHEMA_EXPLORER_WORKSPACE"] = conn.workspace
    if conn.read_only:
        os.environ["SCHEMA_EXPLORER_READ_ONLY"] = "1"
    if args.user_header:
        os.environ[USER_HEADER_ENV] = args.user_header
    if args.roles:
        os.environ[ROLES_ENV] = args.roles

    # Started before the server, not from an st.App lifespan: the lifespan runs only once uvicorn is up, and
    # a visitor who comes at once would wait for the difference. The server starts meanwhile.
    threading.Thread(target=warm_up, args=(conn,), name="warm-up", daemon=True).start()
    st.App(APP_SCRIPT).run(config={"server.port": args.port, "server.address": args.host})
