"""Links you can share: every page keeps what is on screen in its URL's query parameters and opens from them.

    /browse?q=amount&type=AVRO,JSON&strategy=BACKWARD&tenant=acme&namespace=acme/orders&page=2
    /topic?topic=acme/orders/order-created&version=3
    /diff?topic=acme/orders/order-created&old_version=2&new_version=3   (older links: &from=2&to=3)
    /whatif?topic=acme/orders/order-created
    /policies?namespace=acme/orders   or   /policies?topic=acme/orders/order-created
    /audit
    /proposals?show=waiting&namespace=acme/orders   (show: open, mine, waiting, stale, all)
    /proposal?id=12
    any of them &registry=PATH-or-URL when the session was switched to another registry than the app's own
    (or &context=NAME, &client_conf=PATH for a pulsarctl context or a client.conf: a name, as a file path is
    one, never a credential: the file stays on the app's machine, and the sidebar offers the same choice),
    and &pulsar=3.0|4.0|master when the session answers as another Pulsar line than the app's own

A page calls `opened()` first, every run: it returns the link's parameters in the run that first sees them (a
cold open, a reload, a pasted link, Browse opening a topic) so the page can seed its widgets from them, and {}
in later runs, so the widgets then keep what the person does. At the end of the run the page calls
`keep(params)`: the URL then says what is on screen (a reload keeps it), and `copy_link()` offers that URL
with a copy button. A value a link gets wrong is reported with `bad_value()` as a short message naming the
parameter, never an exception, and the page goes on with its own default.

Topic names in links may be short (`tenant/ns/name`) or full (`persistent://tenant/ns/name`); pages write
the short form for persistent topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import connection, session
from app.render import code_span, error_message, escape_markdown
from registry import RegistryError, SchemaRegistry, TopicName
from registry._location import names_remote
from registry._pulsar_version import PULSAR_LINES

_SEEN = "link_seen"  # session key: the query parameters this session has already opened or written
_CURRENT = "link_current"  # session key: the parameters `opened()` returned in this run
_REGISTRY_SEEN = "link_registry_seen"  # session key: the `registry=` value already followed
_PULSAR_SEEN = "link_pulsar_seen"  # session key: the `pulsar=` value already followed
REGISTRY = "registry"
CONTEXT = "context"
CLIENT_CONF = "client_conf"
PULSAR = "pulsar"
# connection parameters, followed by follow_connection() before any page runs
_FOLLOWED = (REGISTRY, CONTEXT, CLIENT_CONF, PULSAR)


def _params() -> dict[str, str]:
    return {key: value for key, value in st.query_params.to_dict().items() if value != ""}


def opened() -> dict[str, str]:
    """The link's parameters when this run is the first to see them, else {} (see the module docstring)."""
    params = {key: value for key, value in _params().items() if key not in _FOLLOWED}
    fresh = bool(params) and params != st.session_state.get(_SEEN)
    if fresh:
        st.session_state[_SEEN] = params
    st.session_state[_CURRENT] = params if fresh else {}
    return dict(st.session_state[_CURRENT])


def current() -> dict[str, str]:
    """What `opened()` returned in this run (for the parts of a page that run after it)."""
    return dict(st.session_state.get(_CURRENT, {}))


def keep(params: Mapping[str, object]) -> None:
    """Make the URL say what is on screen: `params` (empty values left out), plus `registry=` when the session
    is connected to another registry than the one the app started with."""
    wanted = {key: str(value) for key, value in params.items() if value not in (None, "", (), [])}
    st.session_state[_SEEN] = dict(wanted)
    wanted |= _connection_params()
    if _params() != wanted:
        st.query_params.from_dict(wanted)


def _connection_params() -> dict[str, str]:
    """`registry=` (or `context=`, `client_conf=`) and `pulsar=` when the session differs from the app's start-up
    connection in them. Never a token: a link names where, not with which credentials."""
    extra: dict[str, str] = {}
    conn, start = connection.connection(), connection.start_connection()
    if (conn.target, conn.client_conf, conn.context) != (start.target, start.client_conf, start.context):
        if conn.context is not None:
            extra[CONTEXT] = conn.context
        elif conn.client_conf is not None:
            extra[CLIENT_CONF] = conn.client_conf
        else:
            extra[REGISTRY] = conn.target
    if connection.connection().pulsar_version != connection.start_connection().pulsar_version:
        extra[PULSAR] = connection.connection().pulsar_version or "own"
    return extra


def page_url(page: str, params: Mapping[str, str]) -> str:
    """The URL of another page of the app (its url path, e.g. "proposal") with `params`, and the session's
    `registry=` / `pulsar=` as `keep` adds them: a link a table can hold, that opens in a new tab as it is."""
    here = (st.context.url or "").split("?", 1)[0]
    root = here.rsplit("/", 1)[0] if "/" in here else ""
    query = urlencode({**params, **_connection_params()}, safe="/:,")
    return f"{root}/{page}?{query}"


def link(params: Mapping[str, str] | None = None) -> str:
    """The URL of this page with `params` (default: what the URL says now)."""
    query = urlencode(_params() if params is None else dict(params), safe="/:,")
    base = st.context.url or ""
    return f"{base}?{query}" if query else base


def copy_link() -> None:
    """A "Copy link" popover: the URL of what is on screen, in a code block with its copy button."""
    with st.popover("Copy link", icon=":material/link:"):
        st.caption("A teammate who opens this link sees the same view (the token is never in a link).")
        st.code(link(), language=None, wrap_lines=True)


def title_row(title: str) -> DeltaGenerator:
    """The page's title with, beside it at the top, the place for Copy link: the caller fills it (`with
    place: copy_link()`) at the end of the run, once `keep` made the URL say what is on screen. A long page
    (a proposal) thus offers its link where the person starts reading, as the topic pages do."""
    with st.container(horizontal=True, vertical_alignment="center"):
        st.title(title)
        return st.container(width="content")


def bad_value(name: str, value: str, why: str) -> None:
    """A link parameter that cannot be used: say which and why; the page goes on with its default."""
    st.warning(
        f"The link's {code_span(name)} is {code_span(value)}: {escape_markdown(why)}. Showing the page without it.",
        icon=":material/link_off:",
    )


def short_topic(topic: str) -> str:
    """`tenant/ns/name` for a persistent topic (what a person types), else the full name."""
    name = TopicName.parse(topic)
    return topic.split("://", 1)[1] if name.domain == "persistent" and "://" in topic else topic


def resolve_topic(reg: SchemaRegistry, value: str, name: str = "topic") -> str | None:
    """The full name of the topic a link names (short or full), or None after saying why it cannot be used."""
    try:
        return reg.topic_summary(value).topic
    except RegistryError as exc:
        bad_value(name, value, " ".join(str(exc).split()).rstrip("."))
        return None


def whole_number(name: str, value: str, *, minimum: int = 0) -> int | None:
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        bad_value(name, value, f"expected a whole number, {minimum} or more")
        return None
    return number


def follow_connection() -> None:
    """Before the sidebar and the page: a link's `registry=` switches the session to that registry, and its
    `pulsar=` to that Pulsar line, each once. An embedded path that does not exist is reported, never created
    (creating needs the sidebar's confirmation); an unknown line is reported and the registry's own is kept."""
    _follow_pulsar()
    _follow_cluster()
    target = st.query_params.get(REGISTRY, "").strip()
    if not target or st.session_state.get(_REGISTRY_SEEN) == target:
        return
    st.session_state[_REGISTRY_SEEN] = target
    if target == connection.connection().target:
        return
    remote = names_remote(target)
    if not remote and not Path(target).expanduser().exists():
        bad_value(REGISTRY, target, "no registry file there (create one from the sidebar's Connection)")
        return
    connection.connect(target)


def _follow_cluster() -> None:
    """A link's `context=` or `client_conf=`, once: the session switches when it opens, else the link's value is
    reported in one line and the session stays where it was."""
    for name in (CONTEXT, CLIENT_CONF):
        value = st.query_params.get(name, "").strip()
        seen = f"link_{name}_seen"
        if not value or st.session_state.get(seen) == value:
            continue
        st.session_state[seen] = value
        conn = connection.connection()
        if value == (conn.context if name == CONTEXT else conn.client_conf):
            continue
        if name == CONTEXT:
            failed = session.switch_to_cluster(context=value)
        else:
            failed = session.switch_to_cluster(client_conf=value)
        if failed is not None:
            bad_value(name, value, " ".join(error_message(failed).split()).rstrip("."))


def _follow_pulsar() -> None:
    value = st.query_params.get(PULSAR, "").strip()
    if not value or st.session_state.get(_PULSAR_SEEN) == value:
        return
    st.session_state[_PULSAR_SEEN] = value
    if value == "own":  # the sender answered as the registry's own line while the app was started with another
        wanted = None
    elif value.lower() in PULSAR_LINES:
        wanted = value.lower()
    else:
        bad_value(PULSAR, value, f"not a Pulsar line this app knows ({', '.join(PULSAR_LINES)})")
        return
    connection.answer_as(wanted, from_link=True)
