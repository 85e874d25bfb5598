"""`schema-explorer audit ... --url`: the audits read a live `schema-explorer serve` (Pulsar's admin v2 API)
and answer as they do over the registry file it serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from cli.main import main
from registry import Registry, seed_sample_data

ROOT = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 30.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(url, registry file): `schema-explorer serve` on a free loopback port over a seeded file."""
    folder = tmp_path_factory.mktemp("served")
    db = folder / "registry.db"
    reg = Registry.open(db)
    try:
        seed_sample_data(reg)
    finally:
        reg.close()
    port = _free_port()
    script = Path(sys.executable).with_name("schema-explorer")
    head = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    with (folder / "serve.log").open("wb") as log:
        child = subprocess.Popen(
            [*head, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), "--no-access-log"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if child.poll() is not None:
                pytest.fail(f"serve exited with {child.returncode}: {(folder / 'serve.log').read_text()[-2000:]}")
            try:
                httpx.get(f"{url}/openapi.json", timeout=1.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    pytest.fail(f"serve did not answer on {url} within {READY_TIMEOUT:g} s")
                time.sleep(0.1)
        yield url, db
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


class _SharedSession:
    """The test run's SparkSession as the CLI sees it: `audit` stops its session when done, this one stays."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def stop(self) -> None:
        pass


def _table(folder: Path, name: str) -> list[str]:
    return sorted(map(str, pq.read_table(folder / name).to_pylist()))


def test_audits_over_url_answer_as_over_the_served_file(
    spark: Any, served: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pipeline._spark.spark_session", lambda *args, **kwargs: _SharedSession(spark))
    url, db = served
    messages = str(ROOT / "sample_data" / "messages")
    for source, value in (("--url", url), ("--db", str(db))):
        out = tmp_path / source.strip("-")
        assert main(["audit", "compat-matrix", source, value, "--out", str(out / "matrix")]) == 0
        assert main(["audit", "data", source, value, "--messages", messages, "--out", str(out / "data")]) == 0
    remote, embedded = tmp_path / "url", tmp_path / "db"
    assert len(_table(remote / "matrix", "compat_topics")) == 47
    tables = {"matrix": ("compat_matrix", "compat_topics"),
              "data": ("data_versions", "data_failures", "data_field_stats", "data_enum_counts")}  # fmt: skip
    for folder, name in ((folder, name) for folder, names in tables.items() for name in names):
        assert _table(remote / folder, name) == _table(embedded / folder, name), name
