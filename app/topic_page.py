"""A page that works on one topic: its link opened, the topic picked (shared with every page), then the page.

topic_page(render)   # render(reg, topic) -> the page's own link parameters besides `topic`
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import streamlit as st

from app import links, selection, session
from app.render import show_error
from registry import RegistryError, SchemaRegistry


def topic_page(render: Callable[[SchemaRegistry, str], Mapping[str, object] | None], *, empty: str = "") -> None:
    """Run a page that works on one topic: open its link, pick the topic (shared with every page), then
    `render(reg, topic)`, which returns the page's own link parameters (app/links.py) besides `topic`.

    Errors from the registry become short messages (app.render.show_error), never tracebacks.
    """
    params = links.opened()
    try:
        reg = session.registry()
    except RegistryError as exc:
        show_error(exc)
        return
    if "topic" in params:
        linked = links.resolve_topic(reg, params["topic"])
        if linked is not None:
            selection.select_topic(linked)
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


def topic_picker(reg: SchemaRegistry, *, key: str = "topic_name") -> str | None:
    """A text box with the shared selected topic; returns it once it names an existing topic, else None.

    Every page that works on a topic has this box under the same key, and Streamlit drops a widget's state
    when another page runs (with st.navigation, the same key on two pages is two widgets), so the box could
    come up empty after a move between pages. Its text therefore lives in a plain session key (`<key>_text`,
    written by the box's on_change) and is put back into the box before every run.
    """
    shown = f"{key}_shown"
    text = f"{key}_text"
    selected = selection.selected_topic()
    if st.session_state.get(shown) != selected:  # another page (Browse, a link) picked a topic
        st.session_state[text] = selected or ""
        st.session_state[shown] = selected
    st.session_state[key] = st.session_state.get(text, selected or "")

    def remember() -> None:
        st.session_state[text] = st.session_state[key]

    typed = st.text_input(
        "Topic",
        key=key,
        on_change=remember,
        placeholder="persistent://tenant/namespace/topic",
        help="Pick one on Browse, or type it.",
    ).strip()
    if not typed:
        return None
    try:
        topic = reg.topic_summary(typed).topic
    except RegistryError as exc:
        show_error(exc)
        return None
    if topic != selected:
        selection.select_topic(topic)
        st.session_state[shown] = topic
    return topic
