"""A plain broker's search index in the app (issue 22): Browse's progress view and the sidebar's index line.

A plain broker (a remote admin URL without the explorer API) has no search, so the core builds an index of it
in the background and keeps it in a SQLite file per cluster URL and token (registry/remote/_broker_index.py).
`SchemaRegistry.search_topics` waits for a complete index when none exists yet, which would hold a page's script for
the whole run; so before searching, Browse asks `gate()`:

* no index needed (embedded, `schema-explorer serve`), or a complete one exists (maybe from an earlier visit):
  the search answers at once, from the cache, whose age is shown; a cache from an earlier visit is refreshed
  in the background (started here, as the first search would, so that the sidebar shows it);
* else the run is started (`reg.broker_index.refresh()`, idempotent) and a fragment redrawn every second shows its
  progress with Cancel, or after a cancel or a failure what happened and Resume; once the index is complete
  the whole page reruns and searches.

The sidebar (`sidebar()`) says how old the index is and offers Refresh index; while a run goes on it shows a
small progress bar from a fragment redrawn every second, which reruns the page when the run ends.
"""

from __future__ import annotations

import streamlit as st

from app import session
from app.render import code_span, escape_markdown, show_error
from registry import IndexState, IndexStatus, RegistryError, SchemaRegistry

POLL_S = 1.0  # how often a running index's progress is redrawn
_STOPPING = "index_stopping"  # session key: Cancel was clicked and the run has not ended yet (its URL)
_FAILURES = RegistryError  # the core names a cache it cannot use (a StorageError), as every other failure


def ago(seconds: float) -> str:
    """A humanised age: "just now", "40 s ago", "5 min ago", "3 h ago", "2 days ago"."""
    if seconds < 10:
        return "just now"
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    return f"{days} day{'s' if days != 1 else ''} ago"


def progress(status: IndexStatus, url: str | None = None) -> tuple[float, str]:
    """The bar's fraction and text: the listing phase, then topics read of topics listed."""
    if status.state is IndexState.LISTING or not status.total:
        return 0.0, "Listing namespaces and topics…"
    where = f" {code_span(url)}" if url else ""
    text = f"Indexing{where}: {status.indexed:,} of {status.total:,} topics"
    return min(1.0, status.indexed / status.total), text


def _age(status: IndexStatus) -> str:
    seconds = status.age_s()
    return "never" if seconds is None else ago(seconds)


def _asked(reg: SchemaRegistry) -> IndexStatus | None:
    """Where the registry's index stands; None for a registry that searches without one."""
    index = reg.broker_index
    return None if index is None else index.status()


def _status(reg: SchemaRegistry) -> IndexStatus | None:
    try:
        return _asked(reg)
    except _FAILURES as exc:
        show_error(exc)
        return None


def _current() -> tuple[SchemaRegistry, IndexStatus] | None:
    """The session's registry and its index status; None when the registry does not open (the sidebar says why)
    or needs no index. A fragment's rerun asks again, so it follows a switched connection."""
    try:
        reg = session.registry()
    except RegistryError:
        return None
    status = _status(reg)
    return None if status is None else (reg, status)


def _start(reg: SchemaRegistry) -> bool:
    index = reg.broker_index
    if index is None:
        return False
    try:
        index.refresh()
    except _FAILURES as exc:
        show_error(exc)
        return False
    st.session_state.pop(_STOPPING, None)
    return True


# --- Browse -------------------------------------------------------------------------------------------------


def gate() -> bool:
    """True when the session's registry can search at once (Browse then searches); else the index's
    progress view is shown in its place (the run started if it had not) and False is returned."""
    try:
        reg = session.registry()
    except RegistryError:
        return True  # the page shows why it cannot open
    try:
        status = _asked(reg)
    except _FAILURES as exc:  # the cache cannot be read: searching would fail the same way, or wait
        show_error(exc)
        return False
    if status is None:
        return True
    if status.ready:
        if status.state is IndexState.IDLE and _start(reg):
            # A cache from an earlier visit: the first search would start this refresh itself; started here, the
            # sidebar (drawn before this page) shows it from the next run on.
            st.rerun()
        _answered_from_cache(reg, status)
        return True
    if status.state is IndexState.IDLE:
        if _start(reg):
            st.rerun()  # the sidebar, drawn before this page, then shows the run too
        return False
    _indexing()
    return False


def _answered_from_cache(reg: SchemaRegistry, status: IndexStatus) -> None:
    """A complete index answers; say how old it is, and that a refresh runs meanwhile."""
    line = (
        f"A plain broker has no search: results come from this app's index of {code_span(reg.location)} "
        f"({status.cached:,} topics, updated {_age(status)})"
    )
    if status.running:
        _, text = progress(status)
        line += f"; refreshing in the background ({text[0].lower()}{text[1:]})"
    st.caption(line + ".")


@st.fragment(run_every=POLL_S)
def _indexing() -> None:
    """Redrawn every second until a complete index exists; then the whole page reruns and searches."""
    current = _current()
    if current is None or current[1].ready:
        st.rerun(scope="app")
    reg, status = current
    url = reg.location
    with st.container(border=True):
        st.markdown(f"**Building the search index of {code_span(url)}**")
        st.caption(
            "This broker's admin API has no search, so each topic's schemas are read once "
            f"({status.workers} requests at a time) and kept in a local cache: the next visit searches at once "
            "and refreshes it in the background. The other pages work meanwhile."
        )
        if status.running:
            _running(reg, status, url)
        else:
            _stopped(reg, status)


def _running(reg: SchemaRegistry, status: IndexStatus, url: str) -> None:
    fraction, text = progress(status, url)
    st.progress(fraction, text=text)
    details = [f"{status.requests:,} requests so far"]
    if status.cached:
        details.append(f"{status.cached:,} topics cached")
    if status.unreadable:
        details.append(f"{status.unreadable:,} could not be read")
    st.caption(" · ".join(details))
    if st.session_state.get(_STOPPING) == url:
        st.caption("Stopping: the requests in flight finish, then what was read stays cached.")
    elif st.button("Cancel", key="index_cancel", icon=":material/stop:"):
        try:
            _cancel(reg)
        except _FAILURES as exc:
            show_error(exc)
            return
        st.session_state[_STOPPING] = url
        st.caption("Stopping: the requests in flight finish, then what was read stays cached.")


def _stopped(reg: SchemaRegistry, status: IndexStatus) -> None:
    """After a cancel or a failure (or before a run in this process): what happened, and Resume."""
    st.session_state.pop(_STOPPING, None)
    read = f"{status.indexed:,} of {status.total:,} topics were read" if status.total else "no topic was read"
    if status.state is IndexState.FAILED:
        st.error(
            escape_markdown(f"Indexing failed: {status.error or 'no reason given'}. ")
            + f"{read}; they stay cached. Resume to try again.",
            icon=":material/error:",
        )
    elif status.state is IndexState.CANCELLED:
        reason = f" The first topic that could not be read: {escape_markdown(status.error)}." if status.error else ""
        st.warning(
            f"Indexing was cancelled: {read} and stay cached; Resume reads the rest. Browse searches once the "
            f"index is complete.{reason}",
            icon=":material/stop:",
        )
    else:
        st.info("The index has not been started in this app yet.", icon=":material/info:")
    if st.button("Resume", key="index_resume", icon=":material/play_arrow:", type="primary") and _start(reg):
        st.rerun(scope="app")


# --- the sidebar --------------------------------------------------------------------------------------------


def sidebar(reg: SchemaRegistry) -> None:
    """The index line of a plain broker (nothing for a registry that needs no index); call inside st.sidebar."""
    status = _status(reg)
    if status is None:
        return
    if status.running:
        _sidebar_running()
    else:
        _sidebar_line(reg, status)


def _cancel(reg: SchemaRegistry) -> None:
    index = reg.broker_index
    if index is not None:
        index.cancel()


def _summary(status: IndexStatus) -> str:
    if status.ready:
        return f"Search index: {status.cached:,} topics, updated {_age(status)}"
    return "Search index: none complete yet"


@st.fragment(run_every=POLL_S)
def _sidebar_running() -> None:
    """Redrawn every second while a run goes on; when it ends, the whole app reruns (Browse then searches)."""
    current = _current()
    if current is None or not current[1].running:
        st.rerun(scope="app")
    reg, status = current
    st.caption(_summary(status))
    fraction, text = progress(status)
    if status.ready and status.state is IndexState.INDEXING:
        text = text.replace("Indexing", "Refreshing", 1)
    st.progress(fraction, text=text)
    if st.button("Stop", key="index_sidebar_cancel", icon=":material/stop:", help="What was read stays cached"):
        try:
            _cancel(reg)
        except _FAILURES as exc:
            show_error(exc)


def _sidebar_line(reg: SchemaRegistry, status: IndexStatus) -> None:
    st.caption(_summary(status))
    if status.state is IndexState.FAILED:
        st.caption(f":material/error: The last run failed: {escape_markdown(status.error or 'no reason given')}")
    elif status.state is IndexState.CANCELLED:
        st.caption(f":material/stop: The last run was cancelled after {status.indexed:,} of {status.total:,} topics.")
    if st.button(
        "Refresh index" if status.ready else "Build index",
        key="index_refresh",
        icon=":material/refresh:",
        help="Reads every topic of the broker again in the background (a cancelled run resumes); searches "
        "answer from the current index meanwhile.",
    ) and _start(reg):
        st.rerun()
