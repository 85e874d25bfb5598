"""Exploring a large remote registry (issue 22): what a first Browse page, a search and a topic cost over HTTP,
against `schema-explorer serve` (explorer API) and against `serve --admin-only` (a plain broker's API).

    .venv/bin/python bench/bench_remote.py [--topics 10000 100000] [--workdir DIR] [--kinds serve admin-only]

For each size, bench_browse.generate writes a real registry (10 tenants × 10 namespaces, 1-4 versions a
topic, clients on one topic in ten), and two servers serve it on loopback. A fresh `registry.open(url)` per
measurement then asks what the app's Browse page asks on a first visit (open, the tenant list, the first page of
50), then searches, then what the Topic page asks for one topic. Figures: wall time, HTTP requests the handle
sent (`Registry.requests_sent`), and the peak RSS of this process (the client; psutil, sampled every 50 ms).

Against `--admin-only` (a plain broker) a search needs the handle's background index (remote/_broker_index.py):
the cold first page is the whole index (a fresh cache directory), the second visit answers from the cache
while the broker is read again behind, and a refresh re-reads every topic with the cache in place. Run each
kind in its own process (`--kinds`) so its peak RSS is its own.
Targets (issue 22): against our server, the first page in <= 3 s and <= namespaces + 100 requests; against a
plain broker, the index under 1 GB at 100,000 topics, with bounded requests in flight.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_browse import SEARCHES, _free_port, generate  # noqa: E402

import registry  # noqa: E402
from registry import CACHE_ENV_VAR, Registry, TopicQuery  # noqa: E402

PAGE = 50


@contextmanager
def serving(db: Path, *, admin_only: bool) -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "cli.main", "serve", "--db", str(db), "--port", str(port), "--no-access-log"]
    child = subprocess.Popen(
        [*command, *(["--admin-only"] if admin_only else [])],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/admin/v2/tenants", timeout=2.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or child.poll() is not None:
                    raise RuntimeError(f"serve did not start on {url}") from None
                time.sleep(0.1)
        yield url
    finally:
        child.terminate()
        child.wait(timeout=20)


class PeakRss:
    """The peak RSS of this process while the block runs (sampled; the client's side only)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._me = psutil.Process()

    def __enter__(self) -> PeakRss:
        self.peak = self._me.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._me.memory_info().rss)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._me.memory_info().rss)


def measured(reg: Registry | None, ask: Callable[[], Any]) -> tuple[float, int, Any]:
    before = reg.requests_sent if reg is not None else 0
    started = time.perf_counter()
    answer = ask()
    return time.perf_counter() - started, (reg.requests_sent if reg is not None else 0) - before, answer


def first_page(url: str) -> dict[str, float]:
    """A first visit: open the handle, list tenants, ask the first page of Browse."""
    started = time.perf_counter()
    with PeakRss() as rss:
        reg = registry.open(url)
        tenants = reg.tenants()
        page = reg.search_topics(TopicQuery(), limit=PAGE)
    seconds = time.perf_counter() - started
    figures = {"first page s": seconds, "first page requests": reg.requests_sent, "client peak MB": rss.peak / 2**20}
    figures["topics"] = page.total
    figures["tenants"] = len(tenants)
    reg.close()
    return figures


def later_reads(url: str) -> dict[str, float]:
    """Searches on a warm server, then the Topic page's reads of one topic."""
    figures: dict[str, float] = {}
    with registry.open(url) as reg:
        reg.search_topics(TopicQuery(), limit=PAGE)
        for text in SEARCHES:
            seconds, requests, page = measured(reg, lambda t=text: reg.search_topics(TopicQuery(text=t), limit=PAGE))
            figures[f"search {text!r} ms"] = seconds * 1000
            figures[f"search {text!r} requests"] = requests
        topic = reg.search_topics(TopicQuery(text="type:AVRO"), limit=1).items[0].topic

        def topic_page() -> None:
            reg.topic_summary(topic)
            reg.history(topic)
            reg.effective_policy(topic)
            reg.clients(topic)
            reg.upgrade_plan(topic)

        seconds, requests, _ = measured(reg, topic_page)
        figures["topic page ms"] = seconds * 1000
        figures["topic page requests"] = requests
    return figures


def index_visits(url: str, cache: Path) -> dict[str, float]:
    """A plain broker: the first visit builds the index (cold cache), the second answers from the cache, and a
    refresh re-reads every topic into it."""
    shutil.rmtree(cache, ignore_errors=True)
    os.environ[CACHE_ENV_VAR] = str(cache)
    figures = {f"cold {k}": v for k, v in first_page(url).items()}
    started = time.perf_counter()
    with PeakRss() as rss:
        reg = registry.open(url)
        reg.tenants()
        reg.search_topics(TopicQuery(), limit=PAGE)
        figures["second visit first page s"] = time.perf_counter() - started
        figures["second visit first page requests (refresh running)"] = reg.requests_sent
        for text in SEARCHES:
            seconds, _, _ = measured(None, lambda t=text: reg.search_topics(TopicQuery(text=t), limit=PAGE))
            figures[f"search {text!r} ms"] = seconds * 1000
        reg.broker_index.cancel()
        reg.close()
    with registry.open(url) as reg:
        started = time.perf_counter()
        reg.broker_index.refresh()
        while (status := reg.broker_index.status()) is not None and status.running:
            time.sleep(0.05)
        assert status is not None and status.state == "done", status
        figures["refresh s (every topic read again)"] = time.perf_counter() - started
        figures["refresh requests"] = status.requests
        figures["refresh: batches that changed a row (0: none)"] = reg._index.change_token()  # type: ignore[attr-defined]
    figures["second visit + refresh client peak MB"] = rss.peak / 2**20
    return figures


def namespaces_of(db: Path) -> int:
    with Registry.open(db) as reg:
        return sum(len(reg.namespaces(t)) for t in reg.tenants())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topics", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench-remote")
    parser.add_argument("--kinds", nargs="+", choices=("serve", "admin-only"), default=["serve", "admin-only"])
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    for topics in args.topics:
        db = args.workdir / f"remote-{topics}.db"
        if not db.exists():
            started = time.perf_counter()
            generate(db, topics)
            print(f"generated {topics:,} topics in {time.perf_counter() - started:.1f} s", flush=True)
        namespaces = namespaces_of(db)
        print(f"\n== {topics:,} topics in {namespaces} namespaces (budget: {namespaces + 100} requests) ==")
        for kind in args.kinds:
            with serving(db, admin_only=kind == "admin-only") as url:
                if kind == "admin-only":
                    figures = index_visits(url, args.workdir / f"index-cache-{topics}")
                else:
                    cold = first_page(url)  # the server builds its catalog on this first search
                    figures = {
                        **{f"cold {k}": v for k, v in cold.items()},
                        **{f"warm {k}": v for k, v in first_page(url).items()},
                        **later_reads(url),
                    }
            print(f"-- {'serve --admin-only' if kind == 'admin-only' else 'serve'}")
            for label, value in figures.items():
                print(f"   {label:52s} {value:12,.1f}", flush=True)
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
