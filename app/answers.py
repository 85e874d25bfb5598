"""The answer to a write (stored, refused, nothing done) is shown where the person clicked, and stays there.

A write is made from a button, then the page runs again to show the registry after it. Shown at the top of the
page, its answer would be off-screen while the view stays at the button. So each write keeps its answer here
under the place that made it (`where`, e.g. "whatif" or "proposal_steps") and the thing it was about (`subject`:
a topic, a namespace, a proposal's id); the page shows it with `show(where, subject, render)` right beside that
button, on every run, until the next write there replaces it, another subject is on screen, or the person moves
to another page (`on_page`, from the shell: coming back is a new visit). The first run that
shows a new answer also scrolls it into view when the page above it moved (`scrollIntoView`, "nearest": nothing
moves when it is already visible).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

_STORE = "write_answers"  # session key: {where: (subject, serial, value)}
_SERIAL = "write_answers_serial"  # session key: the last serial given (a new answer scrolls once)
_SCROLLED = "write_answers_scrolled"  # session key: {where: the serial already scrolled into view}
_PAGE = "write_answers_page"  # session key: the page the answers were given on
# Our own constant script (no user text in it): the answer's container into view, once, where it is not.
_SCROLL = (
    "<script>document.querySelector('.st-key-{key}')"
    "?.scrollIntoView({{block: 'nearest', behavior: 'instant'}});</script>"
)


def give(where: str, subject: object, value: Any) -> None:
    """Keep `value`, the answer of a write made at `where` about `subject`, for the runs that follow."""
    serial = int(st.session_state.get(_SERIAL, 0)) + 1
    st.session_state[_SERIAL] = serial
    store = dict(st.session_state.get(_STORE, {}))
    store[where] = (str(subject), serial, value)
    st.session_state[_STORE] = store


def on_page(page: str) -> None:
    """The shell says which page this run draws: the answers given on another page are dropped."""
    if st.session_state.get(_PAGE) != page:
        st.session_state[_PAGE] = page
        st.session_state.pop(_STORE, None)


def forget(where: str) -> None:
    """Drop the answer kept at `where` (a new visit of the page starts without one)."""
    store = dict(st.session_state.get(_STORE, {}))
    if store.pop(where, None) is not None:
        st.session_state[_STORE] = store


def show(where: str, subject: object, render: Callable[[Any], None]) -> bool:
    """Render the answer kept at `where` when it is about `subject` (with `render`, in a container of its own,
    scrolled into view in the first run that shows it); False when there is none."""
    found = st.session_state.get(_STORE, {}).get(where)
    if found is None or found[0] != str(subject):
        return False
    _, serial, value = found
    key = f"answer_{where}"
    with st.container(key=key):
        render(value)
    scrolled = dict(st.session_state.get(_SCROLLED, {}))
    if scrolled.get(where) != serial:
        scrolled[where] = serial
        st.session_state[_SCROLLED] = scrolled
        st.html(_SCROLL.format(key=key), unsafe_allow_javascript=True, width="content")
    return True
