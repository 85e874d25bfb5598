"""A first visit to a plain broker (issue 42): the search index built from a cold cache, against a plain httpx
asyncio client on the same simulated cluster in the same run.

    .venv/bin/python bench/bench_first_visit.py [--topics 5000] [--rounds 2] [--workdir DIR]

The cluster is tests/cluster_sim.py's: three TLS brokers on loopback owning topics by hash (307 to the owner),
over a registry bench_browse.generate writes (10 tenants × 10 namespaces, 1-4 versions a topic; one topic a
namespace in ten has a policy of its own, so those namespaces list `__change_events`). It runs in a child
process of its own, so the client's CPU is measured alone.

Each measurement is a fresh child process (so its CPU time and peak RSS are its own), alternated over
`--rounds`:

* reference: httpx.AsyncClient (TLS, follow_redirects), the tenant, namespace and persistent topic listings,
  then GET /schemas/t/ns/topic/schemas for every topic, 32 in flight;
* ours: `RemoteRegistry(url)`, `broker_index.refresh()`, wait: open (version, broker config), the listings (policies,
  three topic listings a namespace), one schema list a topic (plus /metadata for a topic without a live
  schema), the topic's own strategy where its namespace lists `__change_events`, rows written to the cache.

Figures: wall time, process CPU time (user + system) per topic, peak RSS, requests. Targets: wall <= 1.2x the
reference's, CPU per topic <= the reference's, RSS < 1 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench", ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

IN_FLIGHT = 32


def serve(db: Path, folder: Path) -> None:
    """The child serving the cluster: prints its URLs and CA, serves until stdin closes."""
    from cluster_sim import simulated_cluster
    from registry import Registry

    with Registry.open(db) as reg, simulated_cluster(reg, folder) as cluster:
        print(json.dumps({"urls": cluster.urls, "ca": str(cluster.certs.ca)}), flush=True)
        sys.stdin.read()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _reference(url: str, ca: str) -> tuple[int, int]:
    import httpx

    sent = 0
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(
        base_url=url, verify=ssl.create_default_context(cafile=ca), follow_redirects=True, limits=limits, timeout=30
    ) as http:

        async def get(path: str) -> Any:
            nonlocal sent
            response = await http.get(path)
            sent += 1 + len(response.history)
            response.raise_for_status()
            return response.json()

        tenants = await get("/admin/v2/tenants")
        namespaces = [ns for t in tenants for ns in await get(f"/admin/v2/namespaces/{t}")]
        topics = [t for ns in namespaces for t in await get(f"/admin/v2/persistent/{ns}")]
        gate = asyncio.Semaphore(IN_FLIGHT)

        async def schemas(topic: str) -> None:
            schema_id = topic.split("://", 1)[1]
            async with gate:
                await get("/admin/v2/schemas/" + "/".join(quote(p, safe="") for p in schema_id.split("/")) + "/schemas")

        await asyncio.gather(*(schemas(t) for t in topics))
    return len(topics), sent


def measure(kind: str, url: str, ca: str, cache: Path) -> dict[str, Any]:
    """One measurement in this (fresh) process."""
    cpu, started = _cpu(), time.perf_counter()
    if kind == "reference":
        topics, sent = asyncio.run(_reference(url, ca))
        state = "done"
    else:
        os.environ["SCHEMA_EXPLORER_CACHE_DIR"] = str(cache)
        from registry.remote._handle import RemoteRegistry

        with RemoteRegistry(url, verify=ca) as reg:
            reg.broker_index.refresh()
            assert reg._index is not None
            status = reg._index.wait()
            topics, sent, state = status.total, reg.requests_sent, str(status.state)
            if status.unreadable:
                state += f" ({status.unreadable} unreadable: {status.error})"
    wall = time.perf_counter() - started
    cpu = _cpu() - cpu
    return {"kind": kind, "topics": topics, "requests": sent, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "cpu_ms_per_topic": round(1000 * cpu / max(1, topics), 3), "peak_rss_mb": round(_peak_mb()),
            "state": state}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench-first-visit")
    parser.add_argument("--serve", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--one", nargs=4, help=argparse.SUPPRESS)  # kind url ca cache
    args = parser.parse_args(argv)
    if args.serve:
        serve(*args.serve)
        return 0
    if args.one:
        kind, url, ca, cache = args.one
        print(json.dumps(measure(kind, url, ca, Path(cache))))
        return 0

    from bench_browse import generate

    from registry import Registry

    shutil.rmtree(args.workdir, ignore_errors=True)
    args.workdir.mkdir(parents=True)
    db = args.workdir / "registry.db"
    generate(db, args.topics)
    with Registry.open(db) as reg:  # a policy of its own on one topic in ten namespaces
        for n in range(0, 100, 10):
            ns = f"tenant-{n // 10}/ns-{n % 10}"
            reg.set_topic_policy(reg.topics(ns)[0], compatibility="FULL")
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(db), str(args.workdir / "certs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        cluster = json.loads(child.stdout.readline())
        url, ca = cluster["urls"][0], cluster["ca"]
        results = []
        for n in range(args.rounds):
            for kind in ("reference", "ours"):
                cache = args.workdir / f"cache-{n}"
                shutil.rmtree(cache, ignore_errors=True)
                out = subprocess.run(
                    [sys.executable, __file__, "--one", kind, url, ca, str(cache)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                results.append(json.loads(out.strip().splitlines()[-1]))
                print(json.dumps(results[-1]), flush=True)
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=30)
    best = {
        kind: min((r for r in results if r["kind"] == kind), key=lambda r: r["wall_s"])
        for kind in ("reference", "ours")
    }
    ref, ours = best["reference"], best["ours"]
    print(
        f"best of {args.rounds}: wall {ours['wall_s']} s vs {ref['wall_s']} s ({ours['wall_s'] / ref['wall_s']:.2f}x, "
        f"target <= 1.2x); CPU {ours['cpu_ms_per_topic']} vs {ref['cpu_ms_per_topic']} ms a topic; "
        f"peak RSS {ours['peak_rss_mb']} vs {ref['peak_rss_mb']} MB; requests {ours['requests']} vs {ref['requests']}"
    )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    met = (
        ours["wall_s"] <= 1.2 * ref["wall_s"]
        and ours["cpu_ms_per_topic"] <= ref["cpu_ms_per_topic"]
        and ours["peak_rss_mb"] < 1024
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
