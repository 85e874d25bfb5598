"""A live `schema-explorer serve` on loopback over a seeded registry file, and an embedded twin of it.

The twin is seeded from the same sample data (same manifest timestamps), then forgets its recorded clients:
Pulsar's admin API has no such resource, so the remote registry knows none, and the two must then answer
every question identically.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest
from serving import PROJECT_ROOT, free_port, seeded, serve_command

from registry import Registry

READY_TIMEOUT = 30.0


@pytest.fixture(scope="module")
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """`start_server(db, env=None) -> url`: a serve child per call, stopped when the module ends."""
    children: list[subprocess.Popen[bytes]] = []
    logs = tmp_path_factory.mktemp("serve-logs")

    def start(db: Path, env: Mapping[str, str] | None = None) -> str:
        port = free_port()
        log = (logs / f"serve-{port}.log").open("wb")
        environment = {**os.environ, **(env or {})}
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(PROJECT_ROOT), environment.get("PYTHONPATH", "")) if p
        )
        child = subprocess.Popen(
            serve_command(db, port), cwd=PROJECT_ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
        children.append(child)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if child.poll() is not None:
                raise RuntimeError(f"serve exited with {child.returncode}: {Path(log.name).read_text()[-2000:]}")
            try:
                httpx.get(f"{url}/openapi.json", timeout=1.0)
                return url
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"serve did not answer on {url} within {READY_TIMEOUT:g} s")

    yield start
    for child in children:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


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
    reg = Registry.open(seeded(tmp_path_factory.mktemp("twin") / "registry.db", keep_clients=False))
    yield reg
    reg.close()
