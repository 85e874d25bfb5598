"""`schema-explorer serve` on loopback over a seeded registry file: one helper for every test that needs a live
server (contract suite, remote app, Spark over --url)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

import needs
from registry import Registry, SchemaRegistry, seed_sample_data

PROJECT_ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT = 30.0
LOCAL = "http://localhost"  # base URL for TestClient: a loopback Host, which a server without tokens requires


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def seeded(path: Path, *, keep_clients: bool = True) -> Path:
    reg = Registry.open(path, create=True)
    try:
        seed_sample_data(reg)
        if not keep_clients:
            for client in reg.clients():
                reg.disconnect(client.topic, name=client.name, role=client.role)
    finally:
        reg.close()
    return path


def serve_command(db: Path, port: int, *, admin_only: bool = False) -> list[str]:
    script = Path(sys.executable).with_name("schema-explorer")
    head = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
    tail = ["--admin-only"] if admin_only else []
    return [*head, "serve", "--db", str(db), "--host", "127.0.0.1", "--port", str(port), "--no-access-log", *tail]


@contextmanager
def served(db: Path, *, log_dir: Path, env: Mapping[str, str] | None = None, admin_only: bool = False) -> Iterator[str]:
    """The URL of a `schema-explorer serve` child over `db`, ready to answer; stopped on exit. Its output goes
    to `log_dir/serve-PORT.log`, quoted when it fails to start. `admin_only`: `serve --admin-only`, a plain
    broker's API."""
    needs.require("server")
    port = free_port()
    log_path = log_dir / f"serve-{port}.log"
    environment = {**os.environ, **(env or {})}
    environment["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), environment.get("PYTHONPATH", "")) if p)
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        child = subprocess.Popen(
            serve_command(db, port, admin_only=admin_only),
            cwd=PROJECT_ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if child.poll() is not None:
                raise RuntimeError(f"serve exited with {child.returncode}: {log_path.read_text()[-2000:]}")
            try:
                httpx.get(f"{url}/openapi.json", timeout=1.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not answer on {url} within {READY_TIMEOUT:g} s") from None
                time.sleep(0.1)  # polling readiness, not a fixed wait
        yield url
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


class Gateway:
    """`schema-explorer serve --upstream` (the review gateway) as a child on loopback, one at a time over the
    same workspace: `start()`, `stop()`, `restart(upstream)`. `upstream` is the broker's URL (then
    `upstream_token` goes in $SCHEMA_EXPLORER_UPSTREAM_TOKEN) or a client.conf; `people` maps a name to the
    token of the gateway's tokens file (`tokens`) that `open(name)` reaches the gateway with."""

    def __init__(
        self,
        upstream: str,
        workspace: str,
        *,
        tokens: Path,
        people: Mapping[str, str],
        log_dir: Path,
        upstream_token: str = "",
    ) -> None:
        self.upstream, self.workspace, self.tokens, self.people = upstream, workspace, tokens, people
        self.log_dir, self.upstream_token = log_dir, upstream_token
        self.url = ""
        self._child: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        needs.require("server")
        port = free_port()
        log = self.log_dir / f"gateway-{port}.log"
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
        env.pop("SCHEMA_EXPLORER_TOKENS", None)
        if self.upstream.startswith("http") and self.upstream_token:
            env["SCHEMA_EXPLORER_UPSTREAM_TOKEN"] = self.upstream_token
        command = [sys.executable, "-m", "cli.main", "serve", "--upstream", self.upstream, "--workspace"]
        command += [self.workspace, "--tokens", str(self.tokens), "--port", str(port), "--no-access-log"]
        with log.open("wb") as out:
            self._child = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if self._child.poll() is not None:
                raise RuntimeError(f"the gateway exited with {self._child.returncode}: {log.read_text()[-2000:]}")
            try:
                httpx.get(f"{self.url}/openapi.json", timeout=1.0)
                return
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the gateway did not answer on {self.url}") from None
                time.sleep(0.1)  # polling readiness, not a fixed wait

    def stop(self) -> None:
        if self._child is not None:
            self._child.terminate()
            try:
                self._child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()
            self._child = None

    def restart(self, upstream: str) -> None:
        self.stop()
        self.upstream = upstream
        self.start()

    def open(self, person: str) -> SchemaRegistry:
        """The gateway as `person` reaches it: a remote registry with their token (through the explorer API)."""
        import registry

        return registry.open(self.url, token=self.people[person])
