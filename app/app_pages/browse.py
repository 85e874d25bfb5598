"""Browse: tenants → namespaces → topics, searched, filtered, counted and paged in the core.

Every answer comes from `Registry.search_topics` (one page at a time, cached catalog in the core), so this
stays fast with 100k topics; a topic whose schema cannot be read shows its error in its row.
"""

from __future__ import annotations

import streamlit as st

from app import state
from app.render import escape_markdown, show_error
from registry import STRATEGIES, CompatibilityStrategy, RegistryError, SchemaType, TopicQuery
from registry.tables import topics_frame

PAGE_SIZE = 50
ALL = "All"
CLIENTS = {"Any": None, "With clients": True, "Without clients": False}
SHOWN = ["name", "namespace", "schema_type", "versions", "updated_at", "strategy", "strategy_source"]
SHOWN += ["producers", "consumers", "deleted", "fields", "error", "topic"]
COLUMNS = {
    "name": st.column_config.TextColumn("Topic", width="medium"),
    "namespace": "Namespace",
    "schema_type": "Type",
    "versions": st.column_config.NumberColumn("Versions", help="live versions"),
    "updated_at": st.column_config.DatetimeColumn("Updated (UTC)", format="YYYY-MM-DD HH:mm"),
    "strategy": "Compatibility",
    "strategy_source": "From",
    "producers": "Producers",
    "consumers": "Consumers",
    "deleted": st.column_config.CheckboxColumn("Deleted", help="the history ends with a deletion"),
    "fields": st.column_config.TextColumn("Fields", width="large"),
    "error": st.column_config.TextColumn("Problem", help="why the latest schema could not be read"),
    "topic": st.column_config.TextColumn("Full name", width="large"),
}


def _query(reg_tenants: list[str]) -> TopicQuery:
    """The search and filter widgets, as a TopicQuery (all matching happens in the core)."""
    left, middle, right = st.columns([1, 1, 2])
    tenant = left.selectbox("Tenant", [ALL, *reg_tenants], key="browse_tenant")
    namespaces = [ALL] if tenant == ALL else [ALL, *state.registry().namespaces(tenant)]
    namespace = middle.selectbox("Namespace", namespaces, key="browse_namespace")
    text = right.text_input(
        "Search",
        key="browse_search",
        placeholder="name or field, e.g. customer_id · type:AVRO · field:amount · name:orders",
        help="Words must all match. A plain word matches the topic's name or a field name; "
        "`type:`, `field:` and `name:` restrict it.",
    )
    types, strategies, versions, clients = st.columns([2, 2, 1, 1])
    chosen_types = types.multiselect("Schema type", [t for t in SchemaType if t.java_value >= 0], key="browse_types")
    chosen_strategies = strategies.multiselect(
        "Compatibility", [s for s in STRATEGIES if s is not CompatibilityStrategy.UNDEFINED], key="browse_strategies"
    )
    min_versions = versions.number_input("Min. versions", min_value=0, step=1, key="browse_min_versions")
    has_clients = clients.selectbox("Clients", list(CLIENTS), key="browse_clients")
    return TopicQuery(
        text=text,
        tenant=None if tenant == ALL else tenant,
        namespace=None if namespace == ALL else namespace,
        schema_types=frozenset(chosen_types),
        strategies=frozenset(chosen_strategies),
        min_versions=int(min_versions) or None,
        has_clients=CLIENTS[has_clients],
    )


def _counts(by: dict[str, int]) -> str:
    return " · ".join(f"{name} {count:,}" for name, count in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))


@st.fragment
def _results() -> None:
    """The search widgets, counts, table and pager: a fragment, so a search reruns only this part of the page
    (not the navigation and the sidebar) and the answer shows sooner."""
    try:
        reg = state.registry()
        query = _query(reg.tenants())
        if st.session_state.get("browse_last_query") != query:  # a new search starts on its first page
            st.session_state["browse_last_query"] = query
            st.session_state["browse_page"] = 1
        page_number = int(st.session_state.get("browse_page", 1))
        page = reg.search_topics(query, offset=(page_number - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    except RegistryError as exc:
        show_error(exc)
        return

    pages = max(1, -(-page.total // PAGE_SIZE))
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

    frame = topics_frame(page)[SHOWN]
    event = st.dataframe(
        frame,
        hide_index=True,
        column_config=COLUMNS,
        on_select="rerun",
        selection_mode="single-row",
        key="browse_table",
        width="stretch",
    )
    rows = event.selection.rows if event is not None else []
    left, right = st.columns([3, 1])
    if rows:
        state.select_topic(str(frame.iloc[rows[0]]["topic"]))
    chosen = state.selected_topic()
    with left:
        if chosen and st.button(f"Open {escape_markdown(chosen)}", key="browse_open", icon=":material/open_in_new:"):
            st.switch_page("app_pages/topic.py")
    with right:
        st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key="browse_page")


st.title("Browse")
_results()
