"""Shared fixtures: a registry over each storage (in-memory and SQLite), and helpers to seed histories."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The checkout on sys.path (like `make test`'s editable install), and tests/ so `import schemas` works.
_TESTS = Path(__file__).resolve().parent
for _p in (str(_TESTS.parent), str(_TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import needs  # noqa: E402
from registry import BrokerConfig, Registry  # noqa: E402
from registry.remote._broker_index import CACHE_ENV_VAR  # noqa: E402
from registry.remote._workspace import WORKSPACE_ENV_VAR  # noqa: E402
from schemas import TOPIC  # noqa: E402

# A plain broker's search index is cached under the user's data directory: never the tester's own, and never
# one left by an earlier run (the servers' ports, which key the cache with the URL, come round again).
os.environ[CACHE_ENV_VAR] = tempfile.mkdtemp(prefix="schema-explorer-index-cache-")
os.environ[WORKSPACE_ENV_VAR] = tempfile.mkdtemp(prefix="schema-explorer-workspaces-")  # and own_workspaces

# Folders whose every test needs the same thing; other tests carry their markers themselves.
_FOLDER_MARKERS = {
    "cluster": ("cluster",),
    "spark": ("java",),
    "e2e": ("browser", "server"),
    "contract": ("server",),
    "notebook": ("slow",),
}


def pytest_configure(config: pytest.Config) -> None:
    for name, meaning in needs.MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = Path(str(item.path)).relative_to(_TESTS).parts[0]
        for marker in _FOLDER_MARKERS.get(folder, ()):
            item.add_marker(marker)


def pytest_collection_finish() -> None:
    """What the run has imported and collected by now (millions of objects: Streamlit, pandas, pyarrow,
    protobuf, the tests' parameters) is moved out of the cyclic collector's sight (gc.freeze): every full
    collection during the run (Streamlit makes one after each script run) walked them all again, about 40 s of
    a quick loop's two workers under load, each collection now about half. What the tests make is collected
    as before."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    needs.current = frozenset(mark.name for mark in item.iter_markers())


STORAGES = ("memory", "sqlite")


def _close(reg: Registry) -> None:
    close = getattr(reg, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


@pytest.fixture(params=STORAGES)
def make_reg(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Registry]]:
    """A factory `make_reg(**broker_settings)` over the fixture's storage; every registry is fresh."""
    made: list[Registry] = []

    def factory(**broker: object) -> Registry:
        config = BrokerConfig(**broker)  # type: ignore[arg-type]
        if request.param == "memory":
            reg = Registry.in_memory(broker=config)
        else:
            reg = Registry.open(tmp_path / f"r{len(made)}.db", broker=config, create=True)
        made.append(reg)
        return reg

    yield factory
    for reg in made:
        _close(reg)


@pytest.fixture
def reg(make_reg: Callable[..., Registry]) -> Registry:
    """A fresh registry with Pulsar's default broker settings, parametrized over both storages."""
    return make_reg()


@pytest.fixture
def topic() -> str:
    return TOPIC


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL server for the test run (tests/postgres.py); skipped, with the reason, where
    its binaries or psycopg are missing."""
    import postgres

    reason = postgres.missing_reason()
    if reason is not None:
        pytest.skip(reason)
    with postgres.server() as admin:
        yield admin


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the test run's PostgreSQL server: its postgresql:// location."""
    import postgres

    return postgres.fresh_database(postgres_server)


@pytest.fixture(autouse=True)
def own_workspaces(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A plain broker's default workspace (proposals, rules, its audit trail) is a file under the user's data
    directory, keyed by the broker's URL: each test gets its own folder, never the tester's and never one an
    earlier test left on a port that came round again."""
    monkeypatch.setenv(WORKSPACE_ENV_VAR, str(tmp_path_factory.mktemp("workspaces")))
