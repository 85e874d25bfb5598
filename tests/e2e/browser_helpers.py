"""Constants and waits for the browser tests (imported by name: `conftest` is ambiguous across test folders)."""

from __future__ import annotations

from typing import Any

SCRIPT = "<script>window.__pwned = 1; alert('pwned')</script>"
PROBE_TOPIC = "persistent://acme/orders/xss-probe"


def wait_idle(page: Any) -> None:
    """Streamlit finished the run: no "Running…" status and no stale element left."""
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
    page.wait_for_function("() => !document.querySelector('[data-stale=true]')")
