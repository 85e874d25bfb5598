"""Browse: tenants → namespaces → topics, searched, filtered, counted and paged in the core.

Every answer comes from `SchemaRegistry.search_topics` (one page at a time, cached catalog in the core), so this
stays fast with 100k topics; a topic whose schema cannot be read shows its error in its row. The search and
page are in the URL (app/links.py); a click on a row opens the topic.

Over a plain broker the search needs the app's index of it (app/search_index.py): until a complete one exists
the page shows its progress instead of searching, so the script never waits for the whole index.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from app import connection, links, search_index, selection, session
from app.render import escape_markdown, show_error
from registry import STRATEGIES, CompatibilityStrategy, RegistryError, SchemaType, TopicQuery
from registry.views.tables import topics_frame

T = TypeVar("T")
TYPES = tuple(t for t in SchemaType if t.java_value >= 0)
STRATEGY_FILTERS = tuple(s for s in STRATEGIES if s is not CompatibilityStrategy.UNDEFINED)

PAGE_SIZE = 50
ALL = "All"
CLIENTS = {"Any": None, "With clients": True, "Without clients": False}
CLIENT_LINKS = {"any": "Any", "yes": "With clients", "no": "Without clients"}
# The name first; at 1280 px (sidebar open) the name, namespace, type, live versions, strategy and its source
# and the last update are in view; client counts, fields and the full name follow.
SHOWN = ["name", "namespace", "schema_type", "versions", "strategy", "strategy_source", "updated_at"]
SHOWN += ["producers", "consumers", "fields", "deleted", "error", "topic"]
COLUMNS = {
    "name": st.column_config.TextColumn("Topic", width=170, help="click a row to open the topic", pinned=True),
    "namespace": st.column_config.TextColumn("Namespace", width=115),
    "schema_type": st.column_config.TextColumn("Type", width=115),
    "versions": st.column_config.NumberColumn("Versions", help="live versions", width=65),
    "strategy": st.column_config.TextColumn("Compatibility", width=140),
    "strategy_source": st.column_config.TextColumn("From", width=80),
    "updated_at": st.column_config.DatetimeColumn("Updated (UTC)", format="YYYY-MM-DD", width=95),
    "producers": st.column_config.NumberColumn("Producers", width=75),
    "consumers": st.column_config.NumberColumn("Consumers", width=80),
    "fields": st.column_config.TextColumn("Fields", width="large"),
    "deleted": st.column_config.CheckboxColumn("Deleted", help="the history ends with a deletion", width=65),
    "error": st.column_config.TextColumn("Problem", help="why the latest schema could not be read"),
    "topic": st.column_config.TextColumn("Full name", width="large"),
}
_CLIENT_COLUMNS = ("producers", "consumers")
TABLE = "browse_table"  # the table's key, with a counter: a new key after each open clears the row selection


def _open_link(tenants: list[str]) -> None:
    """Seed the search widgets from a link (app/links.py): q, tenant, namespace, type, strategy, min_versions,
    clients, page. A value that cannot be used is named on the page and left out."""
    params = links.opened()
    if not params:
        return
    reg = session.registry()
    st.session_state["browse_search"] = params.get("q", "")
    tenant, namespace = params.get("tenant", ALL), params.get("namespace")
    if namespace and "/" in namespace and tenant == ALL:
        tenant = namespace.split("/", 1)[0]
    if tenant != ALL and tenant not in tenants:
        links.bad_value("tenant", tenant, "no such tenant in this registry")
        tenant, namespace = ALL, None
    st.session_state["browse_tenant"] = tenant
    if namespace and (tenant == ALL or namespace not in reg.namespaces(tenant)):
        links.bad_value("namespace", namespace, f"no such namespace under tenant {tenant}")
        namespace = None
    st.session_state["browse_namespace"] = namespace or ALL
    st.session_state["browse_types"] = _choices("type", params.get("type"), TYPES, SchemaType.parse)
    st.session_state["browse_strategies"] = _choices(
        "strategy", params.get("strategy"), STRATEGY_FILTERS, CompatibilityStrategy.parse
    )
    minimum = links.whole_number("min_versions", params["min_versions"]) if "min_versions" in params else None
    st.session_state["browse_min_versions"] = minimum or 0
    clients = params.get("clients", "any")
    if clients not in CLIENT_LINKS:
        links.bad_value("clients", clients, "expected any, yes or no")
        clients = "any"
    st.session_state["browse_clients"] = CLIENT_LINKS[clients]
    page = links.whole_number("page", params["page"], minimum=1) if "page" in params else None
    st.session_state["browse_link_page"] = page or 1


def _choices(name: str, value: str | None, allowed: tuple[T, ...], parse: Callable[[str], T]) -> list[T]:
    chosen: list[T] = []
    for item in (value or "").split(","):
        if not item.strip():
            continue
        try:
            parsed = parse(item.strip())
        except RegistryError as exc:
            links.bad_value(name, item, " ".join(str(exc).split()).rstrip("."))
            continue
        if parsed not in allowed:
            links.bad_value(name, item, "not a choice of this filter")
        elif parsed not in chosen:
            chosen.append(parsed)
    return chosen


def _link_params(query: TopicQuery, page: int) -> dict[str, object]:
    clients = {value: key for key, value in CLIENT_LINKS.items()}[st.session_state.get("browse_clients", "Any")]
    return {
        "q": query.text.strip(),
        "tenant": query.tenant if query.tenant and not query.namespace else None,
        "namespace": query.namespace,
        "type": ",".join(str(t) for t in st.session_state.get("browse_types", [])),
        "strategy": ",".join(str(s) for s in st.session_state.get("browse_strategies", [])),
        "min_versions": query.min_versions,
        "clients": None if clients == "any" else clients,
        "page": page if page > 1 else None,
    }


def _query(reg_tenants: list[str]) -> TopicQuery:
    """The search and filter widgets, as a TopicQuery (all matching happens in the core)."""
    left, middle, right = st.columns([1, 1, 2])
    tenant = left.selectbox("Tenant", [ALL, *reg_tenants], key="browse_tenant")
    namespaces = [ALL] if tenant == ALL else [ALL, *session.registry().namespaces(tenant)]
    namespace = middle.selectbox("Namespace", namespaces, key="browse_namespace")
    text = right.text_input(
        "Search",
        key="browse_search",
        placeholder="name or field, e.g. customer_id · type:AVRO · field:amount · name:orders",
        help="Words must all match. A plain word matches the topic's name or a field name; "
        "`type:`, `field:` and `name:` restrict it.",
    )
    types, strategies, versions, clients = st.columns([2, 2, 1, 1])
    chosen_types = types.multiselect("Schema type", TYPES, key="browse_types")
    chosen_strategies = strategies.multiselect("Compatibility", STRATEGY_FILTERS, key="browse_strategies")
    min_versions = versions.number_input("Min. versions", min_value=0, step=1, key="browse_min_versions")
    records = session.registry().records_clients
    has_clients = clients.selectbox(
        "Clients",
        list(CLIENTS),
        key="browse_clients",
        disabled=not records,
        help=None if records else "A plain broker records no producers or consumers with their schema versions",
    )
    return TopicQuery(
        text=text,
        tenant=None if tenant == ALL else tenant,
        namespace=None if namespace == ALL else namespace,
        schema_types=frozenset(chosen_types),
        strategies=frozenset(chosen_strategies),
        min_versions=int(min_versions) or None,
        has_clients=CLIENTS[has_clients] if records else None,
    )


def _counts(by: dict[str, int]) -> str:
    return " · ".join(f"{name} {count:,}" for name, count in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))


@st.fragment
def _results() -> None:
    """The search widgets, counts, table and pager: a fragment, so a search reruns only this part of the page
    (not the navigation and the sidebar) and the answer shows sooner."""
    share = st.container(horizontal_alignment="right")  # Copy link at the top, filled once the URL is kept
    try:
        reg = session.registry()
        tenants = reg.tenants()
        _open_link(tenants)
        query = _query(tenants)
        # A new search, or the same one on another registry (the sidebar switched it), starts on its first page.
        conn = connection.connection()
        asked = (conn.key, query)
        if st.session_state.get("browse_last_query") != asked:
            st.session_state["browse_last_query"] = asked
            st.session_state["browse_page"] = st.session_state.pop("browse_link_page", 1)
        page_number = int(st.session_state.get("browse_page", 1))
        page = reg.search_topics(query, offset=(page_number - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    except RegistryError as exc:
        show_error(exc)
        return

    pages = max(1, -(-page.total // PAGE_SIZE))
    if page_number > pages:
        links.bad_value("page", str(page_number), f"the search has {pages:,} page(s)")
        st.session_state["browse_page"] = page_number = 1
        page = reg.search_topics(query, offset=0, limit=PAGE_SIZE)
    links.keep(_link_params(query, page_number))
    with share:
        links.copy_link()
    first, last = (page.offset + 1 if page.items else 0), page.offset + len(page.items)
    matches = "topic matches" if page.total == 1 else "topics match"
    st.markdown(
        f"**{page.total:,}** {matches} · showing {first:,}–{last:,}  \n"
        f"Types: {escape_markdown(_counts(dict(page.by_type))) or '—'}  \n"
        f"Compatibility: {escape_markdown(_counts(dict(page.by_strategy))) or '—'}"
    )
    if not page.items:
        st.info("No topic matches. Clear the search or a filter, or pick another tenant or namespace.")
        return

    # A plain broker records no clients: a column of zeros would say "no clients" where it means "not known".
    frame = topics_frame(page)[SHOWN if reg.records_clients else [c for c in SHOWN if c not in _CLIENT_COLUMNS]]
    opened = int(st.session_state.get("browse_opened", 0))
    event = st.dataframe(
        frame,
        hide_index=True,
        column_config=COLUMNS,
        on_select="rerun",
        selection_mode=("single-row", "single-cell"),  # a click on any cell, or on the row's box
        key=f"{TABLE}_{opened}",
        width="stretch",
    )
    picked = event.selection if event is not None else None
    rows = [*picked.rows, *(row for row, _ in picked.cells)] if picked is not None else []
    if rows:  # a click on a row opens its topic
        topic = str(frame.iloc[rows[0]]["topic"])
        selection.select_topic(topic)
        st.session_state["browse_opened"] = opened + 1
        st.switch_page("app_pages/topic.py", query_params={"topic": links.short_topic(topic)})
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    left.caption("Click a row to open its topic.")
    right.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key="browse_page")


st.title("Browse")
if search_index.gate():
    _results()
