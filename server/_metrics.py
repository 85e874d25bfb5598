"""`GET /metrics`: Pulsar's schema registry families (server/_pulsar_stats.py) and our own, in the Prometheus text
format (version 0.0.4, what Pulsar's broker serves), written by prometheus-client.

**Our families** (prefix `schema_explorer_`; every label bounded: route templates, never paths; fixed words;
status codes; no token, schema, topic or address ever):

- `requests_total` {route, method, status}: every answered request; `route` is the template
  (`/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema`), `unmatched` for any other path;
- `request_duration_seconds` {route, method}: from the request's arrival to its answer;
- `auth_failures_total`: missing or unknown tokens (the gate's 401s, /metrics' own included);
- `throttled_addresses_total`, `throttle_addresses`: addresses that crossed into the failed-token throttle,
  and those it remembers;
- `open_connections`, `connections_closed_total` {reason}: connections open, and those the slow-client limits
  closed (`header_timeout`, `header_too_large`, `too_many_connections`);
- `cache_bytes`, `cache_budget_bytes` {part}: what each cache accounts for, and its share of
  `SCHEMA_EXPLORER_CACHE_BYTES`;
- `storage_operation_seconds` {kind, backend}: every call to the registry's storage, by the protocol member it
  is (`history`, `dedup_scan`, `append_indexed`, `transaction`...: server/_storage_timing.py), plus `batch`,
  one transaction of the writer thread (its writes and one commit; for the gateway, a run of writes sent one
  by one), and `ready`, a readiness probe's read;
- `writer_queue_depth`, `writer_batches`: writes waiting for the writer thread; batches it committed;
- `index_topics` {state}, `index_running`: a remote handle's background search index (the review gateway's,
  `serve --upstream`; empty in `serve`, which holds an embedded registry);
- `info` {pulsar_version, storage}: 1, naming the Pulsar line answered as and the kind of storage (`remote`
  for the review gateway, whose registry is its upstream broker);

plus prometheus-client's `process_*` families (CPU seconds, resident memory, open descriptors).

- `proposals` {state}: schema change proposals in each state (`open`, `approved`, `applied`, `rejected`,
  `withdrawn`, `stale`), read beside the scrape, at most 15 s old (server/_proposal_tally.py);
- `webhook_deliveries_total` {outcome}: webhook notices `delivered`, `failed` (after the retries), `dropped`
  (the delivery queue was full), and attempts `retried` (registry/webhooks/_delivery.py);

**Access.** A scrape from a loopback address, or any scrape with `serve --metrics-public`, needs no token;
any other needs a token of any role (a viewer's is enough), checked and throttled as the API's are. Without
tokens, a server answers other addresses only with `--metrics-public`. The Host check against DNS rebinding
applies as everywhere.

**Cost.** A scrape reads counters kept in memory and the caches' byte counts: it never touches the storage,
and its work grows with the number of namespaces seen in the last 5 minutes and of route templates, never with
the number of topics (bench/bench_metrics.py measures it at 100,000 topics). Query parameters are ignored, as
Prometheus' own exporters ignore them.
"""

from __future__ import annotations

import ipaddress
import re
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.types import Scope, Send

from registry import Registry, SchemaRegistry
from registry.webhooks import DELIVERIES, Deliveries

from ._auth import BEARER_CHALLENGE, bearer_grant
from ._deps import writer_of
from ._gate import Gate, Refusal, Throttle, client_address
from ._metric_types import CounterVec, HistogramVec
from ._proposal_tally import ProposalTally
from ._pulsar_stats import PulsarSchemaStats

if TYPE_CHECKING:
    from fastapi import FastAPI

METRICS_PATH = "/metrics"
# What Pulsar serves; every name here is a classic one, so the text is the same in prometheus-client's 1.0.0 format.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "schema_explorer_"
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
STORAGE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
CLOSE_REASONS = ("header_timeout", "header_too_large", "too_many_connections")
UNMATCHED = "unmatched"


class ServerMetrics:
    """Our families, updated on the event loop (the writer thread only observes batches; see `batch`)."""

    def __init__(self) -> None:
        self.requests = CounterVec(PREFIX + "requests_total", "Answered requests", ("route", "method", "status"))
        self.durations = HistogramVec(
            PREFIX + "request_duration_seconds",
            "Time from a request's arrival to its answer",
            ("route", "method"),
            REQUEST_BUCKETS,
        )
        self.auth_failures = CounterVec(PREFIX + "auth_failures_total", "Missing or unknown tokens", ())
        self.throttled = CounterVec(
            PREFIX + "throttled_addresses_total", "Addresses that crossed into the failed-token throttle", ()
        )
        self.closed = CounterVec(
            PREFIX + "connections_closed_total", "Connections closed by the slow-client limits", ("reason",)
        )
        self.storage = HistogramVec(
            PREFIX + "storage_operation_seconds",
            "Storage calls by protocol member, a writer batch (its writes and one commit), a readiness read",
            ("kind", "backend"),
            STORAGE_BUCKETS,
        )
        self.open_connections = 0
        self._batch_lock = threading.Lock()

    def storage_operation(self, kind: str, backend: str, seconds: float) -> None:
        """A storage operation's time: `batch` from the writer thread, `ready` from the event loop (the lock keeps
        the two from racing)."""
        with self._batch_lock:
            self.storage.observe((kind, backend), seconds)

    def render(self, out: list[str]) -> None:
        for vector in (self.requests, self.durations, self.auth_failures, self.throttled, self.closed):
            vector.render(out)
        with self._batch_lock:
            self.storage.render(out)


class CountingThrottle(Throttle):
    """The gate's throttle, counting failures and the addresses that cross into it."""

    def __init__(self, metrics: ServerMetrics) -> None:
        super().__init__()
        self._metrics = metrics
        self.remembered = 0

    def failed(self, address: str) -> None:
        already = self.retry_after(address) > 0
        super().failed(address)
        self._metrics.auth_failures.inc(())
        if not already and self.retry_after(address) > 0:
            self._metrics.throttled.inc(())


class RouteTemplates:
    """Path → route template, with one compiled pattern for every route (first match wins, as in routing)."""

    def __init__(self, templates: Iterable[str]) -> None:
        self._templates = list(dict.fromkeys(templates))
        alternatives = [f"(?P<r{i}>{_pattern(t)})" for i, t in enumerate(self._templates)]
        self._pattern = re.compile("|".join(alternatives)) if alternatives else None
        self._found: dict[str, str] = {}

    @classmethod
    def of(cls, app: FastAPI, extra: Iterable[str] = ()) -> RouteTemplates:
        paths = [str(path) for route in app.router.routes if (path := getattr(route, "path", None)) is not None]
        return cls([*extra, *paths])

    def template(self, path: str) -> str:
        found = self._found.get(path)
        if found is not None:
            return found
        matched = self._pattern.fullmatch(path) if self._pattern is not None else None
        found = (
            UNMATCHED if matched is None or matched.lastgroup is None else self._templates[int(matched.lastgroup[1:])]
        )
        if len(self._found) >= 4096:  # topics are many: keep the recent paths, not every one
            self._found.clear()
        self._found[path] = found
        return found


def _pattern(template: str) -> str:
    parts = re.split(r"(\{[^}]+\})", template)
    return "".join(
        ("[^/]+" if not p.endswith(":path}") else ".*") if p.startswith("{") else re.escape(p) for p in parts
    )


def method_label(method: str) -> str:
    return method if method in METHODS else "other"


class Gauges(Collector):
    """The gauges /metrics shows, read from memory when scraped (few: prometheus-client writes them)."""

    def __init__(self, app: FastAPI) -> None:
        self._app = app

    def collect(self) -> Iterable[Metric]:
        state = self._app.state
        yield from _gauges(state, state.registry)
        yield from _proposals(state.proposal_tally)
        yield from _webhooks(DELIVERIES)


def _gauges(state: object, registry: SchemaRegistry) -> Iterator[Metric]:
    from ._fast_reads import _BODIES

    open_connections = GaugeMetricFamily(PREFIX + "open_connections", "Connections open now")
    open_connections.add_metric([], float(state.metrics.open_connections))  # type: ignore[attr-defined]
    yield open_connections
    throttle: Throttle = state.gate.throttle  # type: ignore[attr-defined]
    addresses = GaugeMetricFamily(PREFIX + "throttle_addresses", "Addresses the failed-token throttle remembers")
    addresses.add_metric([], float(len(throttle)))
    yield addresses
    used = GaugeMetricFamily(PREFIX + "cache_bytes", "Bytes each cache accounts for", labels=("part",))
    budget = GaugeMetricFamily(PREFIX + "cache_budget_bytes", "Each cache's share of the budget", labels=("part",))
    # An embedded registry accounts for its caches; a remote one (the review gateway) has only the bodies' here.
    caches = registry.cache_usage() if isinstance(registry, Registry) else ()
    for part in (*caches, _BODIES.usage()):
        used.add_metric([part.part], float(part.used_bytes))
        budget.add_metric([part.part], float(part.budget_bytes))
    yield used
    yield budget
    queue = GaugeMetricFamily(PREFIX + "writer_queue_depth", "Writes waiting for the writer thread")
    writer = writer_of(state)
    queue.add_metric([], float(writer.queued()))
    yield queue
    batches = GaugeMetricFamily(PREFIX + "writer_batches", "Batches the writer thread committed")
    batches.add_metric([], float(writer.batches))
    yield batches
    yield from _index(registry)
    info = GaugeMetricFamily(PREFIX + "info", "This server", labels=("pulsar_version", "storage"))
    info.add_metric([str(registry.pulsar_version), state.ready_probe.kind], 1.0)  # type: ignore[attr-defined]
    yield info


def _index(registry: SchemaRegistry) -> Iterator[Metric]:
    """A remote handle's background index (`reg.broker_index`): the review gateway's (`serve --upstream`) over
    its plain broker; `serve` holds an embedded registry, which has none, so the families stay empty there."""
    index = registry.broker_index
    status = None if index is None else index.status()
    topics = GaugeMetricFamily(PREFIX + "index_topics", "A remote handle's search index, in topics", labels=("state",))
    running = GaugeMetricFamily(PREFIX + "index_running", "1 while a remote handle's index is being built")
    if status is not None:
        for state, value in (
            ("indexed", status.indexed),
            ("total", status.total),
            ("cached", status.cached),
            ("unreadable", status.unreadable),
        ):
            topics.add_metric([state], float(value))
        running.add_metric([], 1.0 if status.running else 0.0)
    yield topics
    yield running


def _proposals(tally: ProposalTally) -> Iterator[Metric]:
    family = GaugeMetricFamily(PREFIX + "proposals", "Schema change proposals in each state", labels=("state",))
    for state, count in (tally.counts() or {}).items():
        family.add_metric([str(state)], float(count))
    yield family


def _webhooks(deliveries: Deliveries) -> Iterator[Metric]:
    family = CounterMetricFamily(
        PREFIX + "webhook_deliveries", "Webhook deliveries and retries by outcome, in this process", labels=("outcome",)
    )
    for outcome, count in dict(deliveries.counts).items():
        family.add_metric([outcome], float(count))
    yield family


def exposition(app: FastAPI) -> bytes:
    """The scrape's text. The counters, histograms and summaries, which are most of the series (a histogram
    per namespace is 18 lines), are written by `_metric_types.render` with each series' labels formatted once;
    the gauges and prometheus-client's process collector by prometheus-client, per app (tests run several)."""
    registry = getattr(app.state, "scrape_registry", None)
    if registry is None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(Gauges(app))
        ProcessCollector(registry=registry)
        app.state.scrape_registry = registry
    pulsar: PulsarSchemaStats = app.state.pulsar_stats
    metrics: ServerMetrics = app.state.metrics
    out: list[str] = []
    for vector in pulsar.vectors():
        vector.render(out)
    metrics.render(out)
    return "".join(out).encode() + generate_latest(registry)


# --- who may scrape ---------------------------------------------------------------------------------------


def is_loopback(scope: Scope) -> bool:
    client = scope.get("client")
    try:
        address = ipaddress.ip_address(client[0] if client else "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def scrape_refusal(app: FastAPI, scope: Scope) -> Refusal | None:
    """None when this scrape may be answered (see the module docstring), else the refusal."""
    gate: Gate = app.state.gate
    refusal = gate.host_refusal(scope)
    if refusal is not None or app.state.metrics_public or is_loopback(scope):
        return refusal
    if gate.tokens is None:
        return Refusal(
            403,
            "this server has no tokens: /metrics answers loopback addresses only, or everyone with "
            "`serve --metrics-public`",
        )
    address = client_address(scope)
    wait = gate.throttle.retry_after(address)
    if wait > 0:
        seconds = max(1, int(wait + 0.999))
        return Refusal(
            429,
            f"too many failed authentications from this address: try again in {seconds} s",
            ((b"retry-after", str(seconds).encode()),),
        )
    header = ""
    for key, value in scope["headers"]:
        if key == b"authorization":
            header = value.decode("latin-1")
    if bearer_grant(gate.tokens, header) is None:
        gate.throttle.failed(address)
        return Refusal(401, "Authentication required", ((b"www-authenticate", BEARER_CHALLENGE.encode()),))
    return None


async def scrape(app: FastAPI, scope: Scope, send: Send, extra: tuple[tuple[bytes, bytes], ...]) -> None:
    refusal = scrape_refusal(app, scope)
    if refusal is not None:
        import json

        body = json.dumps({"reason": refusal.reason}).encode()
        headers = [(b"content-type", b"application/json"), *refusal.headers]
        status = refusal.status
    else:
        body = exposition(app)
        headers = [(b"content-type", CONTENT_TYPE.encode())]
        status = 200
    headers += [(b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
