"""A live `schema-explorer serve` on loopback over a seeded registry file, and an embedded twin of it; each
module runs against both kinds of remote:

* `serve`: our server with its explorer API. The twin keeps the recorded clients, which the remote registry
  reads from the explorer API, so the two answer every question identically, clients included.
* `admin-only`: `serve --admin-only`, a plain broker's API. Pulsar's admin API has no record of clients, so
  the twin forgets them, and the two must then answer every question identically.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

import registry
from registry import Registry
from registry.remote._broker_index import CACHE_ENV_VAR
from serving import seeded, served

KINDS = ("serve", "admin-only")


@pytest.fixture(scope="module", params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """`start_server(db, env=None, admin_only=False) -> url`: a serve child per call, stopped when the module
    ends."""
    logs = tmp_path_factory.mktemp("serve-logs")
    with ExitStack() as stack:
        yield lambda db, env=None, admin_only=False: stack.enter_context(
            served(db, log_dir=logs, env=env, admin_only=admin_only)
        )


@pytest.fixture(scope="module")
def server_url(start_server, kind: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    db = seeded(tmp_path_factory.mktemp("server") / "registry.db")
    return start_server(db, admin_only=kind == "admin-only")  # type: ignore[operator,no-any-return]


@pytest.fixture(scope="module")
def remote(server_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    with pytest.MonkeyPatch.context() as env:  # this module's own index cache (a plain broker's search)
        env.setenv(CACHE_ENV_VAR, str(tmp_path_factory.mktemp("index-cache")))
        reg = registry.open(server_url)
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def embedded(kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    db = seeded(tmp_path_factory.mktemp("twin") / "registry.db", keep_clients=kind == "serve")
    reg = Registry.open(db, create=True)
    yield reg
    reg.close()


@pytest.fixture(autouse=True)
def own_index_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A handle a test opens builds its plain-broker search index afresh, never from another test's cache."""
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "index-cache"))
