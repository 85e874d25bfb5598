"""A live `schema-explorer serve` on loopback over a seeded registry file, and an embedded twin of it.

The twin is seeded from the same sample data (same manifest timestamps), then forgets its recorded clients:
Pulsar's admin API has no such resource, so the remote registry knows none, and the two must then answer
every question identically.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from registry import Registry
from serving import seeded, served


@pytest.fixture(scope="module")
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """`start_server(db, env=None) -> url`: a serve child per call, stopped when the module ends."""
    logs = tmp_path_factory.mktemp("serve-logs")
    with ExitStack() as stack:
        yield lambda db, env=None: stack.enter_context(served(db, log_dir=logs, env=env))


@pytest.fixture(scope="module")
def server_url(start_server, tmp_path_factory: pytest.TempPathFactory) -> str:
    db = seeded(tmp_path_factory.mktemp("server") / "registry.db")
    return start_server(db)  # type: ignore[operator,no-any-return]


@pytest.fixture(scope="module")
def remote(server_url: str) -> Iterator[Registry]:
    reg = Registry.open(server_url)
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    reg = Registry.open(seeded(tmp_path_factory.mktemp("twin") / "registry.db", keep_clients=False), create=True)
    yield reg
    reg.close()
