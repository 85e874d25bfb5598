"""Slow-client storm: a well-behaved client's latency and the server's memory while `--storm` (default 2,000)
half-sent requests hold connections to a live `schema-explorer serve`.

The storm keeps `--storm` connections open for `--seconds` (default 40): a third send part of their headers
and stop, a third send headers declaring a 1 MiB body and 64 KiB of it, a third open and send nothing.
Whenever the server closes one (header or body timeout), the storm opens another, so the count holds. Beside
it one client reads the latest schema and posts a compatibility check in turn, one request at a time, and
times each answer. The server's RSS is sampled every 0.2 s from /proc.

    python bench/bench_hostile.py [--storm 2000] [--seconds 40] [--json out.json]

Targets (issue 18): the good client's p99 ≤ 250 ms, the server's RSS grows by less than 300 MB. Exits 1 when
a target is missed or any good request failed. The same run with `--storm 0` gives the quiet baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests", ROOT / "tests" / "reliability"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import httpx  # noqa: E402
import storm  # noqa: E402

from registry import Registry, SchemaInfo, SchemaType  # noqa: E402
from schemas import S1, S2  # noqa: E402

TOPIC = "/admin/v2/schemas/acme/tests/topic"


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _storm(port: int, size: int, stop: asyncio.Event, counts: dict[str, int]) -> None:
    """`size` connections held half-sent; each one closed by the server is replaced."""

    async def one(kind: int) -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                counts["connect_failed"] += 1
                await asyncio.sleep(0.1)
                continue
            counts["opened"] += 1
            if kind == 0:
                writer.write(b"GET /admin/v2/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ")
            elif kind == 1:
                writer.write(
                    f"POST {TOPIC}/compatibility HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                    f"content-length: {1024 * 1024}\r\n\r\n".encode()
                    + b'{"type": "AVRO", "schema": "'
                    + b"x" * 65536
                )
            try:
                await writer.drain()
                answer = await asyncio.wait_for(reader.read(200), timeout=120)  # until the server gives up
                if answer.startswith(b"HTTP/1.1 408"):
                    counts["timed_out"] += 1
                elif answer.startswith(b"HTTP/1.1 503"):
                    counts["refused_503"] += 1
            except (OSError, TimeoutError):
                pass
            finally:
                writer.close()

    tasks = [asyncio.create_task(one(n % 3)) for n in range(size)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _good_client(url: str, until: float, latencies: list[float], failures: list[str]) -> None:
    check = {"type": "AVRO", "schema": S2}
    with httpx.Client(base_url=url, timeout=30) as client:
        n = 0
        while time.monotonic() < until:
            start = time.perf_counter()
            try:
                if n % 2:
                    answer = client.post(f"{TOPIC}/compatibility", json=check)
                else:
                    answer = client.get(f"{TOPIC}/schema")
                if not answer.is_success:
                    failures.append(f"{answer.status_code} {answer.text[:100]}")
            except httpx.HTTPError as exc:
                failures.append(repr(exc))
            latencies.append(time.perf_counter() - start)
            n += 1
            time.sleep(0.02)


def run(size: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "registry.db"
        with Registry.open(db, create=True) as reg:
            reg.create_namespace("acme/tests")
            reg.register("persistent://acme/tests/topic", SchemaInfo(type=SchemaType.AVRO, schema=S1))
        server = storm.Server(db, Path(folder) / "serve.log").start()
        assert server.process is not None
        pid, port = server.process.pid, int(server.url.rsplit(":", 1)[1])
        try:
            httpx.get(f"{server.url}{TOPIC}/schema", timeout=10)  # warm
            rss_before = _rss_mb(pid)
            counts = dict.fromkeys(("opened", "connect_failed", "timed_out", "refused_503"), 0)
            latencies: list[float] = []
            failures: list[str] = []
            peak = rss_before
            loop = asyncio.new_event_loop()
            stop = asyncio.Event()
            storm_thread = threading.Thread(target=loop.run_until_complete, args=(_storm(port, size, stop, counts),))
            storm_thread.start()
            time.sleep(min(3.0, seconds / 4))  # let the storm build up before timing the good client
            until = time.monotonic() + seconds
            good = threading.Thread(target=_good_client, args=(server.url, until, latencies, failures))
            good.start()
            while good.is_alive():
                peak = max(peak, _rss_mb(pid))
                time.sleep(0.2)
            loop.call_soon_threadsafe(stop.set)
            storm_thread.join()
            loop.close()
            ordered = sorted(latencies)
            return {
                "storm": size,
                "seconds": seconds,
                "good_requests": len(latencies),
                "good_failures": len(failures),
                "first_failures": failures[:3],
                "p50_ms": round(statistics.median(ordered) * 1000, 1),
                "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))] * 1000, 1),
                "max_ms": round(ordered[-1] * 1000, 1),
                "rss_before_mb": round(rss_before, 1),
                "rss_peak_mb": round(peak, 1),
                "rss_growth_mb": round(peak - rss_before, 1),
                **counts,
            }
        finally:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storm", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result = run(args.storm, args.seconds)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    ok = result["good_failures"] == 0 and result["p99_ms"] <= 250 and result["rss_growth_mb"] < 300
    print("targets:", "met" if ok else "MISSED (p99 ≤ 250 ms, RSS growth < 300 MB, no failed good request)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
