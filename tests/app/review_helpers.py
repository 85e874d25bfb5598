"""Helpers for the review pages' AppTests (Diff, What-if, Policies, Audit): a seeded registry per test and
an AppTest of one page file bound to it.

Each test gets its own copy of a registry file seeded once per session from sample_data/, so writes made
by one test (Register, policy saves) never leak into another.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from registry import Registry, seed_sample_data

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "app" / "app_pages"
TIMEOUT = 30


def seeded_template(directory: Path) -> Path:
    path = directory / "seeded.db"
    with Registry.open(path) as reg:
        seed_sample_data(reg)
    return path


def registry_copy(template: Path, directory: Path) -> Path:
    path = directory / "registry.db"
    shutil.copyfile(template, path)
    return path


def page_test(page: str, db: Path, *, topic: str | None = None, read_only: bool = False) -> AppTest:
    """An AppTest of app/app_pages/<page>.py on the registry file `db`, with `topic` selected."""
    from app.state import CONNECTION, TOPIC, Connection

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
