"""Constants and waits for the browser tests (imported by name: `conftest` is ambiguous across test folders)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from registry import Registry, SchemaInfo, SchemaType, seed_sample_data

SCRIPT = "<script>window.__pwned = 1; alert('pwned')</script>"
PROBE_TOPIC = "persistent://acme/orders/xss-probe"
WAIT_MS = 30_000


def seed_e2e(path: Path) -> Path:
    """The sample registry plus a topic whose schema docs and properties carry a `<script>`."""
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
        field = {"name": "a", "type": "string", "doc": SCRIPT}
        doc = json.dumps({"type": "record", "name": "Probe", "doc": SCRIPT, "fields": [field]})
        reg.register(PROBE_TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=doc, properties={"note": SCRIPT}))
    return path


def wait_idle(page: Any) -> None:
    """Streamlit finished the run: no "Running…" status and no stale element left."""
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
    page.wait_for_function("() => !document.querySelector('[data-stale=true]')")
