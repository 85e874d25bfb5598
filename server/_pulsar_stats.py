"""Pulsar's schema registry metrics, under Pulsar's names and labels, counted where a broker counts them.

**What Pulsar exposes** (`SchemaRegistryStats`, pulsar-broker `org.apache.pulsar.broker.service.schema`):

- counters `pulsar_schema_get_ops_failed_total`, `pulsar_schema_put_ops_failed_total`,
  `pulsar_schema_del_ops_failed_total`, `pulsar_schema_compatible_total`, `pulsar_schema_incompatible_total`,
  label `namespace` ("tenant/namespace", from `TopicName.get(schemaId).getNamespace()`);
- summaries `pulsar_schema_{get,put,del}_ops_latency`, label `namespace`, observed in **milliseconds** (the
  differences of `clock.millis()`), quantiles 0.5, 0.75, 0.95, 0.99, 0.999, 0.9999 and 1 (simpleclient's
  window: the last 10 minutes), with `_count` and `_sum`. A `list` (every version of a topic) is observed in the
  get summary, and a failed list counts as a failed get;
- since Pulsar 3.3 (PIP-264, apache/pulsar#22624; so in the 4.0 and master lines, not in 3.0), two
  OpenTelemetry instruments beside them, which the OpenTelemetry Prometheus exporter exposes as (dots become
  underscores, the unit `s` adds `_seconds`, an annotation unit such as `{operation}` adds nothing, a counter
  adds `_total`):
  - `pulsar.broker.request.schema_registry.duration` (histogram, s) →
    `pulsar_broker_request_schema_registry_duration_seconds_{bucket,sum,count}` with `pulsar_namespace`,
    `pulsar_schema_registry_request` (`get`, `list`, `put`, `delete`) and `pulsar_schema_registry_response`
    (`success`, `failure`). Pulsar gives it no bucket advice, so the SDK's default boundaries apply (0, 5, 10,
    25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000, read as seconds): kept as they are;
  - `pulsar.broker.operation.schema_registry.compatibility_check.count` (counter, `{operation}`) →
    `pulsar_broker_operation_schema_registry_compatibility_check_count_total` with `pulsar_namespace` and
    `pulsar_schema_registry_compatibility_check.response` → `pulsar_schema_registry_compatibility_check_response`
    (`compatible`, `incompatible`).
  The exporter also labels every series with `otel_scope_name`/`otel_scope_version` and adds `target_info`:
  left out here (no query or alert above depends on them).

A registry answering as Pulsar 3.0 exposes only the `pulsar_schema_*` family, as a 3.0 broker does.

**Where Pulsar counts** (`SchemaRegistryServiceImpl` on master, read with the admin resource that calls it,
`SchemasResourceBase`; the same counting reads in a 4.x-based fork of it):

- `getSchema(id)` (GET .../schema) records one get, a **success even when there is no schema** (a null
  result; the 404 comes later, in the resource). `getSchema(id, version)` (GET .../schema/{v}) first lists the
  versions (`trimDeletedSchemaAndGetList` → `getAllSchemas`: one list) and then records a get. GET
  .../schemas and POST .../version (`findSchemaVersion`) list once. A storage failure records the failure
  (get or list: both move `pulsar_schema_get_ops_failed_total`).
- `deleteSchema` (DELETE .../schema, force or not) records one delete, or a failed delete.
- `putSchemaIfAbsent` (POST .../schema) records a put only once its schema is about to be stored: the
  duplicate check first (a duplicate: **nothing counted**), then, if the trimmed history is not empty, the
  compatibility check (a transitive strategy: `checkCompatibilityWithAll`, which counts compatible or
  incompatible; another: `checkCompatibilityWithLatest`, which reads the latest schema, **one more get**, and
  counts unless the strategy is ALWAYS_COMPATIBLE). So **the first schema of a topic is not counted as
  compatible**, and **an incompatible registration moves `pulsar_schema_incompatible_total` but not
  `pulsar_schema_put_ops_failed_total`** (the failure's `start` is still 0, so `recordPutFailed` is skipped).
  A failure of the storage write itself is a failed put.
- `isCompatible` (POST .../compatibility) runs the same two checks without the duplicate check: a transitive
  strategy lists (one list) and always counts, even over an empty history; another reads the latest (one get)
  and counts only when a live latest exists, and ALWAYS_COMPATIBLE reads and counts nothing.
- Requests refused before the registry service (authentication, an unknown namespace, a bad name, invalid
  schema data: `SchemaRegistryServiceWithSchemaDataValidator` refuses before delegating) count nothing.
- Every namespace's children are removed after 5 minutes without a request (`SchemaRegistryStats.run`, every
  minute): the legacy families lose them; the OpenTelemetry ones keep theirs, as the SDK does.

**Where this server differs**, and why: Pulsar times a put from the end of the check to the storage's answer;
here the put's latency is the whole registration on the writer thread (the check included: the core does both
in one call). A storage failure during a registration counts as a failed put whatever step failed. A GET of a
missing schema in a namespace that does not exist answers 404 "Schema not found" here too, but counts nothing,
as Pulsar's namespace check refuses it first (and so no label is made for a namespace that does not exist).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client.metrics_core import Metric

from registry import (
    CompatibilityResult,
    CompatibilityStrategy,
    IncompatibleSchemaError,
    Registration,
    RegistryError,
    SchemaRegistry,
    StorageError,
)

from ._metric_types import CounterVec, HistogramVec, SummaryVec
from ._request_id import note

QUANTILES = (0.5, 0.75, 0.95, 0.99, 0.999, 0.9999, 1.0)
# The OpenTelemetry SDK's default explicit bucket boundaries (made for milliseconds; Pulsar records seconds).
OTEL_DEFAULT_BUCKETS: tuple[float, ...] = (0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000)
NAMESPACE_IDLE_S = 300.0  # SchemaRegistryStats.run: children idle for 5 minutes are removed
SWEEP_EVERY_S = 60.0  # ... checked every minute
TRANSITIVE = frozenset(
    {
        CompatibilityStrategy.BACKWARD_TRANSITIVE,
        CompatibilityStrategy.FORWARD_TRANSITIVE,
        CompatibilityStrategy.FULL_TRANSITIVE,
    }
)
SCHEMAS = "/admin/v2/schemas/{tenant}/{namespace}/{topic}"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one POST .../schema did, as Pulsar's counters see it."""

    namespace: str
    stored: bool  # a new version (False: a duplicate, or refused)
    checked: bool  # a compatibility check ran (the trimmed history was not empty, and not a duplicate)
    strategy: CompatibilityStrategy | None
    compatible: bool = True
    storage_failed: bool = False


@dataclass(frozen=True, slots=True)
class Check:
    """What one POST .../compatibility did: its strategy, whether a live version existed, the verdict."""

    namespace: str
    strategy: CompatibilityStrategy
    had_live: bool
    compatible: bool


class PulsarSchemaStats:
    """`SchemaRegistryStats`: the families above, updated on the event loop, read by the scrape."""

    def __init__(self, *, otel: bool = True, clock: Callable[[], float] = time.monotonic) -> None:
        self.otel, self._clock = otel, clock
        ns = ("namespace",)
        self.get_failed = CounterVec("pulsar_schema_get_ops_failed_total", "-", ns)
        self.put_failed = CounterVec("pulsar_schema_put_ops_failed_total", "-", ns)
        self.del_failed = CounterVec("pulsar_schema_del_ops_failed_total", "-", ns)
        self.compatible = CounterVec("pulsar_schema_compatible_total", "-", ns)
        self.incompatible = CounterVec("pulsar_schema_incompatible_total", "-", ns)
        self.get_latency = SummaryVec("pulsar_schema_get_ops_latency", "-", ns, QUANTILES)
        self.put_latency = SummaryVec("pulsar_schema_put_ops_latency", "-", ns, QUANTILES)
        self.del_latency = SummaryVec("pulsar_schema_del_ops_latency", "-", ns, QUANTILES)
        self.duration = HistogramVec(
            "pulsar_broker_request_schema_registry_duration_seconds",
            "The duration of Schema Registry requests.",
            ("pulsar_namespace", "pulsar_schema_registry_request", "pulsar_schema_registry_response"),
            OTEL_DEFAULT_BUCKETS,
        )
        self.checks = CounterVec(
            "pulsar_broker_operation_schema_registry_compatibility_check_count_total",
            "The number of Schema Registry compatibility check operations performed by the broker.",
            ("pulsar_namespace", "pulsar_schema_registry_compatibility_check_response"),
        )
        self._access: dict[str, float] = {}
        self._swept = clock()

    # --- SchemaRegistryStats' record methods --------------------------------------------------------------

    def get(self, namespace: str, seconds: float, ok: bool = True) -> None:
        self._operation(namespace, "get", seconds, ok, self.get_latency, self.get_failed)

    def list(self, namespace: str, seconds: float, ok: bool = True) -> None:
        self._operation(namespace, "list", seconds, ok, self.get_latency, self.get_failed)

    def put(self, namespace: str, seconds: float, ok: bool = True) -> None:
        self._operation(namespace, "put", seconds, ok, self.put_latency, self.put_failed)

    def delete(self, namespace: str, seconds: float, ok: bool = True) -> None:
        self._operation(namespace, "delete", seconds, ok, self.del_latency, self.del_failed)

    def compatibility(self, namespace: str, compatible: bool) -> None:
        self._touch(namespace)
        (self.compatible if compatible else self.incompatible).inc((namespace,))
        if self.otel:
            self.checks.inc((namespace, "compatible" if compatible else "incompatible"))

    def _operation(
        self, namespace: str, request: str, seconds: float, ok: bool, latency: SummaryVec, failed: CounterVec
    ) -> None:
        self._touch(namespace)
        if ok:
            latency.observe((namespace,), seconds * 1000.0)  # milliseconds, as Pulsar observes them
        else:
            failed.inc((namespace,))
        if self.otel:
            self.duration.observe((namespace, request, "success" if ok else "failure"), seconds)

    def _touch(self, namespace: str) -> None:
        self._access[namespace] = self._clock()

    def vectors(self) -> Iterator[CounterVec | HistogramVec | SummaryVec]:
        """Every family, after removing the namespaces idle for 5 minutes."""
        self._sweep()
        yield from (self.get_failed, self.put_failed, self.del_failed, self.compatible, self.incompatible)
        yield from (self.del_latency, self.get_latency, self.put_latency)
        if self.otel:
            yield self.duration
            yield self.checks

    def families(self) -> Iterator[Metric]:
        for vector in self.vectors():
            yield vector.family()

    def _sweep(self) -> None:
        now = self._clock()
        if now - self._swept < SWEEP_EVERY_S:
            return
        self._swept = now
        idle = {ns for ns, when in self._access.items() if now - when > NAMESPACE_IDLE_S}
        if not idle:
            return
        for ns in idle:
            del self._access[ns]
        keep = set(self._access)
        for vector in (self.get_failed, self.put_failed, self.del_failed, self.compatible, self.incompatible):
            vector.forget(keep, 0)
        for summary in (self.get_latency, self.put_latency, self.del_latency):
            summary.forget(keep, 0)

    # --- from an answered request -------------------------------------------------------------------------

    def request(self, registry: SchemaRegistry, answered: Answered) -> None:
        """Count one answered admin request as the broker would have (see the module docstring)."""
        kind = _KINDS.get((answered.method, answered.route))
        if kind is None:
            return
        namespace = answered.namespace
        seconds = answered.seconds
        if kind == "register" or kind == "check":
            for outcome in answered.notes:
                if isinstance(outcome, Outcome):
                    self._registration(outcome, seconds)
                elif isinstance(outcome, Check):
                    self._check(outcome, seconds)
            return
        if answered.failed:  # the storage failed (or a bug): the operation's failure
            ok = False
        elif 200 <= answered.status < 300:
            ok = True
        elif answered.status == 404 and answered.error == "SchemaNotFoundError" and kind in ("get", "version"):
            if not _namespace_exists(registry, namespace):
                return  # Pulsar's namespace check refuses it before the registry service
            ok = True  # a missing schema is a successful get: the 404 is the resource's
        else:
            return  # refused before the registry service: counted nowhere
        if kind == "get":
            self.get(namespace, seconds, ok)
        elif kind == "version":
            self.list(namespace, seconds, ok)
            self.get(namespace, seconds, ok)
        elif kind == "list":
            self.list(namespace, seconds, ok)
        elif kind == "delete":
            self.delete(namespace, seconds, ok)

    def _registration(self, outcome: Outcome, seconds: float) -> None:
        if outcome.checked and outcome.strategy is not None:
            if outcome.strategy not in TRANSITIVE and outcome.strategy is not CompatibilityStrategy.ALWAYS_COMPATIBLE:
                self.get(outcome.namespace, seconds)  # checkCompatibilityWithLatest reads the latest
            if outcome.strategy is not CompatibilityStrategy.ALWAYS_COMPATIBLE:
                self.compatibility(outcome.namespace, outcome.compatible)
        if outcome.storage_failed:
            self.put(outcome.namespace, seconds, ok=False)
        elif outcome.stored:
            self.put(outcome.namespace, seconds)

    def _check(self, outcome: Check, seconds: float) -> None:
        if outcome.strategy in TRANSITIVE:
            self.list(outcome.namespace, seconds)  # checkCompatibilityWithAll lists, then always counts
            self.compatibility(outcome.namespace, outcome.compatible)
        elif outcome.strategy is not CompatibilityStrategy.ALWAYS_COMPATIBLE:
            self.get(outcome.namespace, seconds)  # checkCompatibilityWithLatest reads the latest
            if outcome.had_live:
                self.compatibility(outcome.namespace, outcome.compatible)


@dataclass(frozen=True, slots=True)
class Answered:
    """One answered request, as the observer hands it over."""

    method: str
    route: str
    path: str
    status: int
    error: str  # the core's error class (X-Registry-Error), or ""
    failed: bool  # logged as an unexpected failure (a storage error, a bug)
    seconds: float
    notes: tuple[Any, ...]

    @property
    def namespace(self) -> str:
        parts = self.path.split("/")
        return f"{parts[4]}/{parts[5]}" if len(parts) > 5 else "unknown"


_KINDS: dict[tuple[str, str], str] = {
    ("GET", SCHEMAS + "/schema"): "get",
    ("GET", SCHEMAS + "/schema/{version}"): "version",
    ("GET", SCHEMAS + "/schemas"): "list",
    ("POST", SCHEMAS + "/version"): "list",
    ("DELETE", SCHEMAS + "/schema"): "delete",
    ("POST", SCHEMAS + "/schema"): "register",
    ("POST", SCHEMAS + "/compatibility"): "check",
}
_NAMESPACE_OF = re.compile(r"^(?:persistent|non-persistent)://([^/]+/[^/]+)/")


def _namespace_exists(registry: SchemaRegistry, namespace: str) -> bool:
    try:
        registry.namespace_policy(namespace)
    except RegistryError:
        return False
    return True


def namespace_of(topic: str) -> str:
    """ "tenant/namespace" of a full topic name, as `TopicName.getNamespace`; "unknown" when it has none."""
    found = _NAMESPACE_OF.match(topic)
    return found.group(1) if found else "unknown"


# --- the two routes only the core's answer can tell about: noted by the routes, after the call ------------


def note_registration(topic: str, done: Registration) -> None:
    """Note what a POST .../schema did, from the core's answer, for the metrics.

    Pulsar counts a check when a live version existed (the first schema of a history is not judged) and a
    duplicate is neither checked nor stored: the answer says both, so nothing is read again here."""
    note(Outcome(namespace_of(topic), done.stored, checked=done.judged_under is not None, strategy=done.judged_under))


def note_refused_registration(topic: str, error: IncompatibleSchemaError | StorageError) -> None:
    """Note a POST .../schema the core refused as incompatible, or whose storage failed, for the metrics."""
    namespace = namespace_of(topic)
    if isinstance(error, IncompatibleSchemaError):
        result: CompatibilityResult | None = getattr(error, "result", None)
        strategy = None if result is None else result.strategy
        note(Outcome(namespace, stored=False, checked=True, strategy=strategy, compatible=False))
    else:
        note(Outcome(namespace, stored=False, checked=False, strategy=None, storage_failed=True))


def note_check(topic: str, result: CompatibilityResult) -> None:
    """Note a POST .../compatibility verdict for the metrics."""
    note(Check(namespace_of(topic), result.strategy, bool(result.checked_versions), result.compatible))
