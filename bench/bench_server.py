"""The REST server under load, against a bare uvicorn hello-world and a FastAPI hello-world in the same run.

    python bench/bench_server.py [--clients 32] [--seconds 10] [--rounds 3] [--writes 0.10] [--db-dir DIR]
                                 [--quick]

Servers, each in its own process, all under uvicorn with the same event loop and HTTP parser (uvloop and
httptools, uvicorn's defaults when installed) and no access log:
- hello-world: the raw ASGI `hello` app of this file (`python -m uvicorn`): the floor any Python app on
  uvicorn stands on, and the issue's baseline;
- fastapi-hello: `make_fastapi_hello()`, one FastAPI route answering the same fixed text: what the framework
  alone costs;
- app: `schema-explorer serve --db <seeded copy> --no-access-log` (the real command, one worker), over the
  sample registry plus a `bench/load` namespace of 16 topics; a fresh copy of that file every round.

Load: this process is the load generator, on loopback: `--clients` keep-alive HTTP/1.1 connections on one
asyncio loop, each sending its next request as soon as the last answer arrived (closed loop), for
`--seconds` after a 2 s warm-up. It is a minimal HTTP/1.1 reader on asyncio streams (no HTTP library), so it
costs little per request; its CPU share is reported (one core = 100%): below ~90% it is not the bottleneck.
(Cross-checked with wrk on the hello-world: the same requests per second within the run-to-run spread.)
Mix for the app: 90% reads (60% GET latest schema, 15% GET all versions, 10% GET namespace strategy, 5%
explorer topic summary) over the sample topics, 10% writes (`--writes`; POST /schema of a new version of a
21-field record whose last optional field changes name each time, FULL-compatible, on 16 load topics: see
`_record`). The hello-worlds answer every request with a fixed body. (Until 2026-11-22 each write added a
field instead, so a faster server wrote ever bigger schemas: by the end of a round some 250 fields, and the
cost of a write depended on how many came before it.)

Rounds: each round runs the three servers one after the other; ratios are taken within a round (the
machine's load changes between rounds), and the table shows each figure's median over the rounds with the
spread (min-max). The 1-minute load average is printed before each round.

Target (issue 4): app >= 50% of hello-world's requests per second, app p99 <= 50 ms at 32 clients (medians
over the rounds). Exits 1 when missed. The registry file lives in a temporary folder on disk unless
`--db-dir` says otherwise (WAL, synchronous=FULL), so writes pay a real fsync; `--db-dir /dev/shm` shows the
same run without the disk.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import shutil
import socket
import statistics
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


def make_fastapi_hello() -> Any:
    """The FastAPI hello-world (`uvicorn --factory`): one route, the same fixed text as `hello`."""
    from fastapi import FastAPI
    from fastapi.responses import PlainTextResponse

    app = FastAPI()

    @app.get("/", response_class=PlainTextResponse)
    async def root() -> str:
        return "Hello, world!"

    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _seed(folder: Path) -> tuple[Path, list[str]]:
    """A seeded registry plus the load namespace; returns the file and the sample topics' schema paths."""
    from registry import Registry, SchemaInfo, SchemaType, seed_sample_data

    path = folder / "bench.db"
    with Registry.open(path, create=True) as reg:
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


def _record(serial: int) -> str:
    """Version `serial` of a load topic: 20 fixed fields plus one optional field named after the version.

    Each write is a new text and a new schema (never a dedup), FULL-compatible with the one before (the old
    optional field goes, a new one comes, both with a default), and every write costs the same however many
    the server managed before it."""
    fields = [{"name": "id", "type": "string"}]
    fields += [{"name": f"f{k}", "type": ["null", "long"], "default": None} for k in range(19)]
    fields.append({"name": f"v{serial}", "type": ["null", "string"], "default": None})
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
    """The app's request mix: 90% reads over the sample topics, 10% new-version writes.

    `versions` (the next version serial per load topic) is shared by every client of a run, so each write
    is a version the topic has never had: a real insert, never a dedup of an earlier version."""

    def __init__(self, topics: list[str], seed: int, versions: list[int], writes: float = 0.10) -> None:
        self.topics = topics
        self.random = random.Random(seed)
        self.writes = writes
        self.versions = versions

    def next(self) -> tuple[str, str, bytes]:
        # Reads keep their shares of the reads whatever `writes` is (60:15:10:5); a roll >= 1 is a write.
        roll = self.random.random() / (1 - self.writes) if self.writes < 1 else 1.0
        topic = self.random.choice(self.topics)
        if roll < 0.60 / 0.90:
            return "GET", f"/admin/v2/schemas/{topic}/schema", b""
        if roll < 0.75 / 0.90:
            return "GET", f"/admin/v2/schemas/{topic}/schemas", b""
        if roll < 0.85 / 0.90:
            return "GET", f"/admin/v2/namespaces/{topic.rsplit('/', 1)[0]}/schemaCompatibilityStrategy", b""
        if roll < 1.0:
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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _load(
    port: int, clients: int, warmup: float, seconds: float, make: Callable[[int], Any], pid: int = 0
) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {"GET": [], "POST": []}
    statuses: dict[int, int] = {}
    begin = time.perf_counter() + warmup
    stop = begin + seconds
    server_cpu: list[float] = []

    async def sample_cpu() -> None:  # the server's CPU time over the measured window
        for moment in (begin, stop):
            await asyncio.sleep(max(0.0, moment - time.perf_counter()))
            server_cpu.append(_cpu_seconds(pid) if pid else float("nan"))

    def record(started: float, ended: float, status: int, method: str) -> None:
        if started >= begin:
            latencies[method].append(ended - started)
            statuses[status] = statuses.get(status, 0) + 1

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(sample_cpu(), *(_client(port, make(i).next, stop, record) for i in range(clients)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    every = sorted(latencies["GET"] + latencies["POST"])
    return {
        "client_cpu": cpu / wall,
        "server_cpu": (server_cpu[1] - server_cpu[0]) / seconds,
        "cpu_us": (server_cpu[1] - server_cpu[0]) / max(1, len(every)) * 1e6,
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


SERVERS = ("hello-world", "fastapi-hello", "app")
COLUMNS = (  # key, header, format
    ("rps", "req/s", "{:.0f}"),
    ("p50_ms", "p50 ms", "{:.1f}"),
    ("p99_ms", "p99 ms", "{:.1f}"),
    ("read_p99_ms", "read p99", "{:.1f}"),
    ("write_p50_ms", "write p50", "{:.1f}"),
    ("write_p99_ms", "write p99", "{:.1f}"),
    ("server_cpu", "server CPU", "{:.0%}"),
    ("cpu_us", "CPU us/req", "{:.0f}"),
    ("client_cpu", "client CPU", "{:.0%}"),
)


def _command(name: str, port: int, db: Path) -> list[str]:
    python, tail = sys.executable, ["--port", str(port), "--no-access-log"]
    if name == "hello-world":
        return [python, "-m", "uvicorn", "bench.bench_server:hello", *tail, "--log-level", "warning"]
    if name == "fastapi-hello":
        factory = "bench.bench_server:make_fastapi_hello"
        return [python, "-m", "uvicorn", factory, "--factory", *tail, "--log-level", "warning"]
    return [python, "-m", "cli.main", "serve", "--db", str(db), *tail]


def _round(args: argparse.Namespace, seconds: float, template: Path, topics: list[str]) -> dict[str, dict[str, Any]]:
    """One run of each server; the app gets a fresh copy of the seeded registry."""
    results = {}
    for name in SERVERS:
        db = template.with_name("round.db")
        shutil.copyfile(template, db)
        port = _free_port()
        server = _start(_command(name, port, db), port)
        versions = [1] * LOAD_TOPICS
        make: Callable[[int], Any] = (
            functools.partial(_mix, topics, versions, args.writes) if name == "app" else lambda i: _Hello()
        )
        try:
            results[name] = asyncio.run(_load(port, args.clients, 2.0, seconds, make, server.pid))
        finally:
            _stop(server)
            for path in db.parent.glob("round.db*"):
                path.unlink()
    return results


def _mix(topics: list[str], versions: list[int], writes: float, seed: int) -> Mix:
    return Mix(topics, seed, versions, writes)


def _spread(values: list[float], fmt: str) -> str:
    """The median, and the range when there are several rounds."""
    shown = [v for v in values if v == v]  # NaN: nothing measured
    if not shown:
        return "-"
    middle = fmt.format(statistics.median(shown))
    return middle if len(shown) == 1 else f"{middle} ({fmt.format(min(shown))}-{fmt.format(max(shown))})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3, help="runs of every server; ratios are per round")
    parser.add_argument("--writes", type=float, default=0.10, help="share of the app's requests that write")
    parser.add_argument("--db-dir", type=Path, help="folder for the registry file (default: a temporary one)")
    parser.add_argument("--quick", action="store_true", help="one round of 3 s per server: a smoke run")
    args = parser.parse_args(argv)
    seconds, rounds = (3.0, 1) if args.quick else (args.seconds, args.rounds)
    folder = Path(tempfile.mkdtemp(prefix="bench-server-", dir=args.db_dir))
    runs: list[dict[str, dict[str, Any]]] = []
    loads: list[float] = []
    try:
        template, topics = _seed(folder)
        for number in range(1, rounds + 1):
            loads.append(os.getloadavg()[0])
            print(f"round {number}/{rounds}: load average {loads[-1]:.1f}", file=sys.stderr, flush=True)
            runs.append(_round(args, seconds, template, topics))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(
        f"{args.clients} clients, {seconds:.0f} s per server, {rounds} round(s), loopback, {os.cpu_count()} CPUs, "
        f"registry in {folder.parent}, app writes {args.writes:.0%}; load average (1 min) at each round's start: "
        + ", ".join(f"{load:.1f}" for load in loads)
    )
    print("median over the rounds (min-max)")
    print(f"{'server':<15}" + "".join(f"{header:>22}" for _, header, _ in COLUMNS))
    for name in SERVERS:
        cells = [_spread([run[name][key] for run in runs], fmt) for key, _, fmt in COLUMNS]
        print(f"{name:<15}" + "".join(f"{cell:>22}" for cell in cells))
    ratios = {name: [run[name]["rps"] / run["hello-world"]["rps"] for run in runs] for name in SERVERS[1:]}
    for name, values in ratios.items():
        print(f"{name} / hello-world throughput, per round: {_spread(values, '{:.1%}')}")
    ratio = statistics.median(ratios["app"])
    p99 = statistics.median(run["app"]["p99_ms"] for run in runs)
    print(f"target: app >= 50% of hello-world ({ratio:.1%}), app p99 <= 50 ms ({p99:.1f} ms)")
    statuses: dict[int, int] = {}
    for run in runs:
        for status, count in run["app"]["statuses"].items():
            statuses[status] = statuses.get(status, 0) + count
    print(f"app statuses: {dict(sorted(statuses.items()))}")
    bad = {s: n for s, n in statuses.items() if s >= 400}
    return 0 if ratio >= 0.5 and p99 <= 50 and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
