"""Proposals: the registry's schema change proposals, newest first, filtered by where they stand and whose they
are (open, mine, waiting for my review, stale, all) and by namespace; a click on a row opens the proposal.

`/proposals?show=waiting&namespace=acme/orders` opens with those filters (app/links.py). "Waiting for my review"
asks the core's rules (app/proposal_access.py): still missing approvals, not mine, mine to approve under the
namespace's review rules, not yet approved by me in its current revision, and not stale (it cannot be approved
before a rebase). "Stale" also finds the proposals whose base is no longer the latest although nobody tried to
apply them yet.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import links, session
from app.proposal_access import waiting_for
from app.render import escape_markdown, show_error, when
from registry import (
    Actor,
    Proposal,
    ProposalKind,
    ProposalState,
    RegistryError,
    ReviewRules,
    SchemaNotFoundError,
    SchemaRegistry,
    approvals_text,
    same_person,
)

FILTERS = {
    "open": "Open",
    "mine": "Mine",
    "waiting": "Waiting for my review",
    "stale": "Stale",
    "all": "All",
}
ALL_NAMESPACES = "All namespaces"
LIMIT = 500
TABLE = "props_table"  # the table's key, with a counter: a new key after each open clears the row selection
# Widths in pixels that fit the main column at 1280 px with the sidebar open (about 820 px, the row's selection box
# included). The "#" column shows the proposal's number as a link to its URL (a new tab, or a link to send); the
# frame's "id" column is for the code, not shown. A click elsewhere on a row opens the proposal here.
COLUMNS = {
    "id": None,
    "link": st.column_config.LinkColumn("#", display_text=r"id=(\d+)", width=40),
    "title": st.column_config.TextColumn("title", width=112),
    "kind": st.column_config.TextColumn("kind", width=50),
    "target": st.column_config.TextColumn("topic or namespace", width=104),
    "author": st.column_config.TextColumn("author", width=92),
    "state": st.column_config.TextColumn("state", width=60),
    "approvals": st.column_config.TextColumn("approvals", width=96, help="Counted of needed (who approved)"),
    "change": st.column_config.TextColumn("change", width=120, help="What the current revision changes"),
    "updated": st.column_config.TextColumn("updated", width=150, help="Last change (UTC)"),
}


def stale_now(reg: SchemaRegistry, proposal: Proposal) -> bool:
    """Stale as stored, or (not final) its base is no longer what is stored now: a cheap look at the latest
    version or the stored policy, without judging the candidate (the proposal page shows the whole review)."""
    if proposal.state is ProposalState.STALE:
        return True
    if proposal.state.final:
        return False
    if proposal.kind is ProposalKind.SCHEMA:
        try:
            latest: int | None = reg.get(proposal.target).version
        except SchemaNotFoundError:
            latest = None
        return latest != proposal.base_version
    stored = (
        reg.namespace_policy(proposal.target)
        if proposal.target == proposal.namespace
        else reg.topic_policy(proposal.target)
    )
    return stored != proposal.revision.base_policy


def shown(
    reg: SchemaRegistry, items: list[Proposal], which: str, actor: Actor | None, rules: dict[str, ReviewRules]
) -> list[Proposal]:
    """The proposals the filter `which` keeps."""
    if which == "open":
        return [p for p in items if not p.state.final]
    if which == "mine":
        return [p for p in items if actor is not None and same_person(p.author, actor.name)]
    if which == "waiting":
        return [p for p in items if waiting_for(p, rules[p.namespace], actor) and not stale_now(reg, p)]
    if which == "stale":
        return [p for p in items if stale_now(reg, p)]
    return items


def frame(reg: SchemaRegistry, items: list[Proposal], rules: dict[str, ReviewRules]) -> pd.DataFrame:
    rows = []
    for p in items:
        state = "stale" if p.state is not ProposalState.STALE and stale_now(reg, p) else str(p.state)
        rows.append(
            {
                "id": p.id,
                "title": p.title,
                "kind": str(p.kind),
                "target": links.short_topic(p.target) if "://" in p.target else p.target,
                "author": p.author,
                "state": state,
                "approvals": approvals_text(p, rules[p.namespace]),  # an applied one: under its rules at apply
                "change": p.revision.summary,
                "link": links.page_url("proposal", {"id": str(p.id)}),
                "updated": when(p.updated_at),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _namespaces(reg: SchemaRegistry) -> list[str]:
    return [ns for tenant in reg.tenants() for ns in reg.namespaces(tenant)]


def _open_link(options: list[str]) -> None:
    params = links.opened()
    if "show" in params:
        if params["show"] in FILTERS:
            st.session_state["props_filter"] = params["show"]
        else:
            links.bad_value("show", params["show"], f"choose one of {', '.join(FILTERS)}")
    if "namespace" in params:
        if params["namespace"] in options:
            st.session_state["props_namespace"] = params["namespace"]
        else:
            links.bad_value("namespace", params["namespace"], "no such namespace in this registry")


def render(reg: SchemaRegistry, share: DeltaGenerator) -> None:
    options = [ALL_NAMESPACES, *_namespaces(reg)]
    _open_link(options)
    if st.session_state.get("props_filter") not in FILTERS:
        st.session_state["props_filter"] = "open"
    if st.session_state.get("props_namespace") not in options:
        st.session_state["props_namespace"] = ALL_NAMESPACES
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    with left:
        which = st.segmented_control(
            "Show", list(FILTERS), format_func=FILTERS.__getitem__, key="props_filter", required=True
        )
    with right:
        namespace = st.selectbox("Namespace", options, key="props_namespace")
    which = which or "open"
    ns = None if namespace == ALL_NAMESPACES else namespace
    links.keep({"show": which if which != "open" else None, "namespace": ns})
    with share:
        links.copy_link()
    actor = session.actor()
    if which in ("mine", "waiting") and actor is None:
        st.info("This session has no name (no user header), so nothing is yours or waiting for you.")
        return
    items = reg.proposals.list(namespace=ns, limit=LIMIT)
    rules = {space: reg.proposals.rules(space) for space in {p.namespace for p in items}}
    kept = shown(reg, items, which, actor, rules)
    if actor is not None:
        st.caption(escape_markdown(f"You are {actor.name} ({actor.role})."))
    if not kept:
        st.info(_empty(which, ns))
        return
    table = frame(reg, kept, rules)
    opened = int(st.session_state.get("props_opened", 0))
    event = st.dataframe(
        table,
        hide_index=True,
        column_config=COLUMNS,
        on_select="rerun",
        selection_mode=("single-row", "single-cell"),
        key=f"{TABLE}_{opened}",
        width="stretch",
    )
    picked = event.selection if event is not None else None
    rows = [*picked.rows, *(row for row, _ in picked.cells)] if picked is not None else []
    if rows:
        st.session_state["props_opened"] = opened + 1
        st.switch_page("app_pages/proposal.py", query_params={"id": str(table.iloc[rows[0]]["id"])})
    more = f" (the newest {LIMIT})" if len(items) >= LIMIT else ""
    st.caption(f"{len(kept)} proposal(s){more}, newest first. Click a row to open it.")


def _empty(which: str, namespace: str | None) -> str:
    where = f" in {namespace}" if namespace else ""
    return {
        "open": f"No open proposal{where}. Propose a change from What-if or Policies.",
        "mine": f"You have no proposal{where}.",
        "waiting": f"Nothing is waiting for your review{where}.",
        "stale": f"No stale proposal{where}.",
        "all": f"No proposal{where} yet. Propose a change from What-if or Policies.",
    }[which]


share_place = links.title_row("Proposals")
st.caption("Schema and policy changes waiting for review: proposed, discussed, approved, then applied as approved.")
try:
    render(session.registry(), share_place)
except RegistryError as exc:
    show_error(exc)
