"""A simulated 3-broker TLS cluster over the sample data (tests/cluster_sim.py), one per auth mode a module
asks for, each with its own index cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from cluster_sim import SimulatedCluster, simulated_cluster
from registry import Registry
from registry.remote._broker_index import CACHE_ENV_VAR
from serving import seeded

MakeCluster = Callable[..., SimulatedCluster]


@pytest.fixture(scope="module")
def make_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MakeCluster]:
    """`make_cluster(auth="none", registry=None) -> SimulatedCluster`: a cluster per call over the sample data
    (or `registry`), stopped when the module ends."""
    with ExitStack() as stack:

        def make(auth: str = "none", registry: Registry | None = None) -> SimulatedCluster:
            folder = tmp_path_factory.mktemp(f"cluster-{auth}")
            if registry is None:
                registry = Registry.open(seeded(folder / "registry.db", keep_clients=False))
                stack.callback(registry.close)
            return stack.enter_context(simulated_cluster(registry, folder / "certs", auth=auth))

        yield make


@pytest.fixture(scope="module")
def cluster(make_cluster: MakeCluster) -> SimulatedCluster:
    """A cluster without authentication; tests that change its pacing or loop mode put them back."""
    return make_cluster()


@pytest.fixture(autouse=True)
def own_index_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "index-cache"))
