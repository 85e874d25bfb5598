"""The topic shared across pages: picked on Browse, by a link, or typed in any page's topic box."""

from __future__ import annotations

import streamlit as st

from app.connection import TOPIC


def selected_topic() -> str | None:
    topic = st.session_state.get(TOPIC)
    return str(topic) if topic else None


def select_topic(topic: str | None) -> None:
    if topic:
        st.session_state[TOPIC] = topic
    else:
        st.session_state.pop(TOPIC, None)
