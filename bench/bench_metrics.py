"""The cost of a /metrics scrape on a registry of 100,000 topics (issue 36: under 10 ms of server CPU, and it never
touches storage).

    python bench/bench_metrics.py [--topics 100000] [--scrapes 200] [--workdir DIR]

Method: bench_browse.generate writes a real registry (10 tenants × 10 namespaces, 1-4 versions a topic; kept in
--workdir for later runs); `schema-explorer serve` runs over it; traffic first fills every family the way a busy
server's are filled: a GET of the latest schema of 2,000 topics spread over all 100 namespaces, a registration
(duplicate) in each namespace and a compatibility check in each, so Pulsar's families hold a series for every
namespace and ours one for each route and status. Then --scrapes scrapes, one at a time from loopback; the
server's CPU time (user + system, from psutil) is read before and after, and divided by the number of
scrapes. The storage is never asked: the scrape reads counters and the caches' byte counts (server/_metrics.py);
what shows it from outside is that the scrape's CPU does not grow with the topics (run with --topics 10000 and
100000: the same figure within noise).
Exits 1 when the median CPU per scrape is 10 ms or more.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "bench"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from bench_browse import generate  # noqa: E402
from bench_remote import serving  # noqa: E402

from registry import Registry, RegistryError  # noqa: E402

TARGET_MS = 10.0


def fill(url: str, db: Path, reads: int) -> None:
    """Traffic that gives every family its series: reads over all namespaces, a duplicate registration and a
    compatibility check in each namespace."""
    with Registry.open(db, auto_create=False) as reg:
        topics = [t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns)]
        by_namespace: dict[str, str] = {}
        latest = {}
        for topic in topics:
            ns = topic.split("://", 1)[1].rsplit("/", 1)[0]
            if ns not in by_namespace:
                try:
                    latest[ns] = reg.get(topic)  # a deleted or unreadable one is passed over
                except RegistryError:
                    continue
                by_namespace[ns] = topic
    step = max(1, len(topics) // reads)
    with httpx.Client(base_url=url, timeout=30) as client:
        for topic in topics[::step][:reads]:
            client.get(f"/admin/v2/schemas/{topic.split('://', 1)[1]}/schema")
        for ns, topic in by_namespace.items():
            entry = latest[ns]
            body = {"type": entry.type.value, "schema": entry.schema, "properties": dict(entry.properties)}
            path = topic.split("://", 1)[1]
            client.post(f"/admin/v2/schemas/{path}/schema", json=body)
            client.post(f"/admin/v2/schemas/{path}/compatibility", json=body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=100_000)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--reads", type=int, default=2_000)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench-remote")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    db = args.workdir / f"remote-{args.topics}.db"
    if not db.exists():
        started = time.perf_counter()
        generate(db, args.topics)
        print(f"generated {args.topics:,} topics in {time.perf_counter() - started:.1f} s", flush=True)
    with serving(db, admin_only=False) as url:
        port = int(url.rsplit(":", 1)[1])
        server = next(p for p in psutil.process_iter() if any(c.laddr.port == port for c in _listening(p)))
        fill(url, db, args.reads)
        with httpx.Client(base_url=url, timeout=30) as client:
            body = client.get("/metrics").text  # the first scrape builds the collector registry
            series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
            per_scrape_ms: list[float] = []
            wall_ms: list[float] = []
            for _ in range(args.scrapes):
                before = server.cpu_times()
                started = time.perf_counter()
                assert client.get("/metrics").status_code == 200
                wall_ms.append((time.perf_counter() - started) * 1000)
                after = server.cpu_times()
                per_scrape_ms.append(((after.user + after.system) - (before.user + before.system)) * 1000)
    # psutil's CPU times tick in 10 ms steps: the mean over many scrapes is the figure, the median only a bound.
    mean = statistics.fmean(per_scrape_ms)
    print(f"{args.topics:,} topics, {series} series, {len(body):,} bytes a scrape")
    print(f"server CPU per scrape: mean {mean:.2f} ms over {args.scrapes} scrapes (target < {TARGET_MS:g} ms)")
    print(f"wall time per scrape: median {statistics.median(wall_ms):.2f} ms, worst {max(wall_ms):.2f} ms")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")
    return 0 if mean < TARGET_MS else 1


def _listening(process: psutil.Process) -> list[psutil._common.pconn]:
    try:
        return [c for c in process.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        return []


if __name__ == "__main__":
    raise SystemExit(main())
