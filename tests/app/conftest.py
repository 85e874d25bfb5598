"""AppTest fixtures: a seeded registry file (seeded once, copied per test) and the app pointed at it."""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from registry import Registry, seed_sample_data

APP = Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py"


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once() -> Iterator[None]:
    """Streamlit scans every installed distribution's metadata for v2 components at each new AppTest's first
    run (about a quarter of a second, most of a short test); the installed packages cannot change within a
    test run, so the scan is made once and its answer reused."""
    from streamlit.components.v2 import manifest_scanner

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            manifest_scanner, "scan_component_manifests", functools.cache(manifest_scanner.scan_component_manifests)
        )
        yield


@pytest.fixture(scope="session", autouse=True)
def scripts_compiled_once() -> Iterator[None]:
    """Each AppTest run makes a new ScriptCache, so the app's script and every page it runs were read, rewritten
    for Streamlit's magic and compiled again at each run (a fifth of a short run). The compiled code is kept
    for the test run instead, keyed by the file and its modification time as well as the path."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    compiled: dict[tuple[str, int, int], Any] = {}
    uncached = ScriptCache.get_bytecode

    def get_bytecode(self: ScriptCache, script_path: str) -> Any:
        facts = os.stat(script_path)
        key = (os.path.abspath(script_path), facts.st_mtime_ns, facts.st_size)
        if key not in compiled:
            compiled[key] = uncached(self, script_path)
        return compiled[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScriptCache, "get_bytecode", get_bytecode)
        yield


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "seeded.db"
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
    return path


@pytest.fixture
def db(seeded_file: Path, tmp_path: Path) -> Path:
    """A private copy of the seeded registry (tests may write to it)."""
    path = tmp_path / "registry.db"
    shutil.copy(seeded_file, path)
    return path


@pytest.fixture
def make_app(monkeypatch: pytest.MonkeyPatch) -> Callable[..., AppTest]:
    """`make_app(db, read_only=False, topic=None, page=None)`: the app on `db`, not yet run."""

    def factory(
        path: Path | str, *, read_only: bool = False, topic: str | None = None, page: str | None = None
    ) -> AppTest:
        monkeypatch.setenv("SCHEMA_EXPLORER_DB", str(path))
        monkeypatch.setenv("SCHEMA_EXPLORER_READ_ONLY", "1" if read_only else "")
        at = AppTest.from_file(str(APP), default_timeout=30)
        if topic is not None:
            at.session_state["selected_topic"] = topic
        if page is not None:
            at.switch_page(page)
        return at

    return factory
