"""Helpers for the review pages' AppTests (Diff, What-if, Policies, Audit): an AppTest of one page file
bound to a registry file (conftest.py's `db`: a private copy of the seeded sample registry per test)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "app" / "app_pages"
TIMEOUT = 30


def page_test(page: str, db: Path, *, topic: str | None = None, read_only: bool = False) -> AppTest:
    """An AppTest of app/app_pages/<page>.py on the registry file `db`, with `topic` selected."""
    from app.connection import CONNECTION, TOPIC, Connection

    at = AppTest.from_file(str(PAGES / f"{page}.py"), default_timeout=TIMEOUT)
    at.session_state[CONNECTION] = Connection(target=str(db), read_only=read_only)
    if topic is not None:
        at.session_state[TOPIC] = topic
    return at


def texts(at: AppTest) -> str:
    """Every message, markdown, caption and code block of the last run, for substring assertions."""
    parts: list[str] = []
    for kind in ("error", "warning", "info", "success", "markdown", "caption", "code", "subheader", "title"):
        parts.extend(str(element.value) for element in getattr(at, kind))
    return "\n".join(parts)
