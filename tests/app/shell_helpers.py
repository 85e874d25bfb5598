"""Helpers for the shell's AppTests (imported by name: `conftest` is ambiguous across test folders)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

TOPIC_PAGE = "app_pages/topic.py"


def errors(at: AppTest) -> list[str]:
    """Error boxes and exceptions (an exception element would mean a traceback reached the page)."""
    assert not at.exception, [e.value for e in at.exception]
    return [e.value for e in at.error]
