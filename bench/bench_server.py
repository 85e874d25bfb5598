"""The REST server under load, against a bare uvicorn hello-world measured in the same run.

    python bench/bench_server.py [--clients 32] [--seconds 10] [--quick]

Servers: `schema-explorer serve --db <seeded copy> --no-access-log` (the real command, one uvicorn worker,
the sample registry plus a `bench/load` namespace of 16 topics), and the raw ASGI `hello` app of this file
under `python -m uvicorn --no-access-log` with the same event loop and HTTP parser. Each runs in its own
process; this process is the load generator, on loopback.

Load: `--clients` keep-alive connections, each sending its next request as soon as the last answer arrived
(closed loop), for `--seconds` after a 2 s warm-up. Mix for the app: 90% reads (60% GET latest schema,
15% GET all versions, 10% GET namespace strategy, 5% explorer topic summary) over the sample topics, 10%
writes (POST /schema of a new version, one more optional field, FULL-compatible, on the load topics). The
hello-world answers every request with a fixed body. The client is a minimal HTTP/1.1 reader on asyncio
streams, so the generator costs little next to the servers.

Target (issue 4): app >= 50% of hello-world's requests per second, app p99 <= 50 ms at 32 clients.
Exits 1 when missed. The registry file lives in a temporary folder on disk (WAL, synchronous=FULL), so
writes pay a real fsync.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT)]

LOAD_TOPICS = 16


async def hello(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
    """The bare ASGI hello-world: the floor any Python app on uvicorn stands on."""
    if scope["type"] != "http":
        return
    body = b"Hello, world!"
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _seed(folder: Path) -> tuple[Path, list[str]]:
    """A seeded registry plus the load namespace; returns the file and the sample topics' schema paths."""
    from registry import Registry, SchemaInfo, SchemaType, seed_sample_data

    path = folder / "bench.db"
    with Registry.open(path) as reg:
        seed_sample_data(reg)
        reg.create_namespace("bench/load")
        for i in range(LOAD_TOPICS):
            reg.register(f"bench/load/t{i}", SchemaInfo(type=SchemaType.AVRO, schema=_record(0)))
        topics = [
            t.split("://", 1)[1]
            for tenant in reg.tenants()
            if tenant != "bench"
            for ns in reg.namespaces(tenant)
            for t in reg.topics(ns)
            if t.startswith("persistent://") and reg.history(t)
        ]
    return path, topics


def _record(extra: int) -> str:
    fields = [{"name": "id", "type": "string"}]
    fields += [{"name": f"f{k}", "type": ["null", "long"], "default": None} for k in range(extra)]
    return json.dumps({"type": "record", "name": "Load", "namespace": "bench", "fields": fields})


def _start(command: list[str], port: int) -> subprocess.Popen[bytes]:
    # No tokens: the benchmark measures the open loopback server.
    env = {k: v for k, v in os.environ.items() if k != "SCHEMA_EXPLORER_TOKENS"}
    process = subprocess.Popen(command, cwd=_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            if process.poll() is not None:
                raise SystemExit(f"server exited: {process.stderr.read().decode() if process.stderr else ''}") from None
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"server on port {port} did not start")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Mix:
    """The app's request mix: 90% reads over the sample topics, 10% new-version writes."""

    def __init__(self, topics: list[str], seed: int) -> None:
        self.topics = topics
        self.random = random.Random(seed)
        self.versions = [1] * LOAD_TOPICS  # next extra-field count per load topic

    def next(self) -> tuple[str, str, bytes]:
        roll = self.random.random()
        topic = self.random.choice(self.topics)
        if roll < 0.60:
            return "GET", f"/admin/v2/schemas/{topic}/schema", b""
        if roll < 0.75:
            return "GET", f"/admin/v2/schemas/{topic}/schemas", b""
        if roll < 0.85:
            return "GET", f"/admin/v2/namespaces/{topic.rsplit('/', 1)[0]}/schemaCompatibilityStrategy", b""
        if roll < 0.90:
            return "GET", f"/explorer/v1/topics/{topic}", b""
        i = self.random.randrange(LOAD_TOPICS)
        self.versions[i] += 1
        body = json.dumps({"type": "AVRO", "schema": _record(self.versions[i])}).encode()
        return "POST", f"/admin/v2/schemas/bench/load/t{i}/schema", body


async def _client(
    port: int, next_request: Callable[[], tuple[str, str, bytes]], stop: float, record: Callable[..., None]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop:
            method, path, body = next_request()
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n"
            if body:
                head += "Content-Type: application/json\r\n"
            started = time.perf_counter()
            writer.write(head.encode() + b"\r\n" + body)
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
                elif name.strip().lower() == b"transfer-encoding":
                    raise RuntimeError("chunked responses are not expected")
            await reader.readexactly(length)
            record(started, time.perf_counter(), int(status_line.split()[1]), method)
    finally:
        writer.close()


async def _load(port: int, clients: int, warmup: float, seconds: float, make: Callable[[int], Any]) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {"GET": [], "POST": []}
    statuses: dict[int, int] = {}
    begin = time.perf_counter() + warmup
    stop = begin + seconds

    def record(started: float, ended: float, status: int, method: str) -> None:
        if started >= begin:
            latencies[method].append(ended - started)
            statuses[status] = statuses.get(status, 0) + 1

    await asyncio.gather(*(_client(port, make(i).next, stop, record) for i in range(clients)))
    every = sorted(latencies["GET"] + latencies["POST"])
    return {
        "requests": len(every),
        "rps": len(every) / seconds,
        "p50_ms": _percentile(every, 0.50),
        "p99_ms": _percentile(every, 0.99),
        "read_p99_ms": _percentile(sorted(latencies["GET"]), 0.99),
        "write_p50_ms": _percentile(sorted(latencies["POST"]), 0.50),
        "write_p99_ms": _percentile(sorted(latencies["POST"]), 0.99),
        "statuses": statuses,
    }


def _percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile in ms; NaN when there is nothing to rank."""
    if not ordered:
        return float("nan")
    return ordered[max(0, int(len(ordered) * q + 0.5) - 1)] * 1000


class _Hello:
    def next(self) -> tuple[str, str, bytes]:
        return "GET", "/", b""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="3 s per server: a smoke run")
    args = parser.parse_args(argv)
    seconds = 3.0 if args.quick else args.seconds
    folder = Path(tempfile.mkdtemp(prefix="bench-server-"))
    try:
        db, topics = _seed(folder)
        python = sys.executable
        results = {}
        port = _free_port()
        hello_cmd = [python, "-m", "uvicorn", "bench.bench_server:hello", "--port", str(port), "--no-access-log"]
        hello_cmd += ["--log-level", "warning"]
        server = _start(hello_cmd, port)
        try:
            results["hello-world"] = asyncio.run(_load(port, args.clients, 2.0, seconds, lambda i: _Hello()))
        finally:
            _stop(server)
        port = _free_port()
        app_cmd = [python, "-m", "cli.main", "serve", "--db", str(db), "--port", str(port), "--no-access-log"]
        server = _start(app_cmd, port)
        try:
            results["app"] = asyncio.run(_load(port, args.clients, 2.0, seconds, lambda i: Mix(topics, i)))
        finally:
            _stop(server)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    app, base = results["app"], results["hello-world"]
    ratio = app["rps"] / base["rps"]
    print(f"{args.clients} clients, {seconds:.0f} s per server, loopback, {os.cpu_count()} CPUs")
    print(f"{'server':<14}{'requests':>10}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'read p99':>10}", end="")
    print(f"{'write p50':>11}{'write p99':>11}  statuses")
    for name, row in results.items():
        print(
            f"{name:<14}{row['requests']:>10}{row['rps']:>10.0f}{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}"
            f"{row['read_p99_ms']:>10.1f}{row['write_p50_ms']:>11.1f}{row['write_p99_ms']:>11.1f}  "
            f"{dict(sorted(row['statuses'].items()))}"
        )
    print(f"app / hello-world throughput: {ratio:.0%} (target >= 50%); app p99 {app['p99_ms']:.1f} ms (<= 50 ms)")
    bad = {s: n for s, n in app["statuses"].items() if s >= 400}
    if bad:
        print(f"unexpected error statuses from the app: {bad}")
    return 0 if ratio >= 0.5 and app["p99_ms"] <= 50 and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
