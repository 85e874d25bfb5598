"""Counters, histograms and summaries by label values, kept as plain numbers and exposed through prometheus-client.

prometheus-client's own metric objects cost a lock and a label lookup per update and expose `_created` series
that Pulsar's exposition does not have; these are updated on the event loop (one thread: no lock) and turned
into prometheus-client's metric families only when scraped, so a request pays a dict lookup and an addition,
and the text format is prometheus-client's (`generate_latest`).

Label values are bounded by whoever fills them (server/_metrics.py, server/_pulsar_stats.py): route templates,
status codes, namespaces that exist, fixed words. `max_series` is the last guard: past it, new label values go
to one overflow series, as OpenTelemetry's SDK does past its cardinality limit (`otel_metric_overflow`).
"""

from __future__ import annotations

import bisect
import math
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence

from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

# prometheus-client's own number format (Go's: +Inf, NaN, 1e+06), typed for the checker.
_number: Callable[[float], str] = floatToGoString

Labels = tuple[str, ...]
DEFAULT_MAX_SERIES = 2000  # OpenTelemetry's default cardinality limit per instrument


class CounterVec:
    def __init__(
        self, name: str, help_text: str, labels: Sequence[str], *, max_series: int = DEFAULT_MAX_SERIES
    ) -> None:
        self.name, self.help, self.labels, self.max_series = name, help_text, tuple(labels), max_series
        self.values: dict[Labels, float] = {}

    def inc(self, values: Labels, amount: float = 1.0) -> None:
        key = _bounded(self.values, values, self.max_series)
        self.values[key] = self.values.get(key, 0.0) + amount

    def get(self, values: Labels) -> float:
        return self.values.get(values, 0.0)

    def forget(self, keep: set[str], position: int) -> None:
        """Drop the series whose label at `position` is not in `keep`."""
        for key in [k for k in self.values if k[position] not in keep]:
            del self.values[key]

    def render(self, out: list[str]) -> None:
        """The family in the text format (0.0.4), written here: see `render`."""
        out.append(f"# HELP {self.name} {self.help}\n# TYPE {self.name} counter\n")
        prefix = _prefixes(self)
        for key, value in list(self.values.items()):
            out.append(f"{prefix(key, self.name, self.labels)} {_number(value)}\n")

    def family(self) -> Metric:
        """Named without `_total`: prometheus-client adds it to the sample, as the text format wants."""
        base = self.name.removesuffix("_total")
        family = CounterMetricFamily(base, self.help, labels=self.labels)
        for key, value in self.values.items():
            family.add_metric(key, value)
        return family


class HistogramVec:
    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str],
        buckets: Sequence[float],
        *,
        max_series: int = DEFAULT_MAX_SERIES,
    ) -> None:
        self.name, self.help, self.labels, self.max_series = name, help_text, tuple(labels), max_series
        self.bounds = tuple(sorted(buckets))
        self.series: dict[Labels, tuple[list[int], list[float]]] = {}  # counts per bucket (+Inf last), [sum]

    def observe(self, values: Labels, amount: float) -> None:
        key = _bounded(self.series, values, self.max_series)
        found = self.series.get(key)
        if found is None:
            found = self.series[key] = ([0] * (len(self.bounds) + 1), [0.0])
        found[0][bisect.bisect_left(self.bounds, amount)] += 1
        found[1][0] += amount

    def count(self, values: Labels) -> int:
        found = self.series.get(values)
        return 0 if found is None else sum(found[0])

    def forget(self, keep: set[str], position: int) -> None:
        for key in [k for k in self.series if k[position] not in keep]:
            del self.series[key]

    def render(self, out: list[str]) -> None:
        out.append(f"# HELP {self.name} {self.help}\n# TYPE {self.name} histogram\n")
        prefix = _prefixes(self)
        bucket_name, bounds = self.name + "_bucket", (*map(_le, self.bounds), "+Inf")
        names = ("le", *self.labels)  # where prometheus-client puts it
        for key, (counts, total) in list(self.series.items()):
            running = 0
            for bound, count in zip(bounds, counts, strict=True):
                running += count
                out.append(f"{prefix((bound, *key), bucket_name, names)} {_number(running)}\n")
            out.append(f"{prefix(key, self.name + '_count', self.labels)} {_number(running)}\n")
            out.append(f"{prefix(key, self.name + '_sum', self.labels)} {_number(total[0])}\n")

    def family(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.help, labels=self.labels)
        for key, (counts, total) in self.series.items():
            running, buckets = 0, []
            for bound, count in zip((*self.bounds, math.inf), counts, strict=True):
                running += count
                buckets.append((_le(bound), float(running)))
            family.add_metric(list(key), buckets, total[0])
        return family


class SummaryVec:
    """Java simpleclient's `Summary` with quantiles, as Pulsar builds its `pulsar_schema_*_ops_latency`:
    `_count` and `_sum` since start, and the quantiles of the observations of the last `max_age_s` (simpleclient's
    default: 10 minutes), NaN when there were none. simpleclient estimates them within `error` (0.01, CKMS);
    these keep up to `window` recent observations per series and compute them exactly when scraped (only for a
    series that changed since the last scrape)."""

    def __init__(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str],
        quantiles: Sequence[float],
        *,
        max_age_s: float = 600.0,
        window: int = 1024,
        max_series: int = DEFAULT_MAX_SERIES,
    ) -> None:
        self.name, self.help, self.labels, self.quantiles = name, help_text, tuple(labels), tuple(quantiles)
        self.max_age_s, self.window, self.max_series = max_age_s, window, max_series
        self.series: dict[Labels, _SummarySeries] = {}

    def observe(self, values: Labels, amount: float) -> None:
        key = _bounded(self.series, values, self.max_series)
        found = self.series.get(key)
        if found is None:
            found = self.series[key] = _SummarySeries(deque(maxlen=self.window))
        found.count += 1
        found.sum += amount
        found.recent.append((time.monotonic(), amount))
        found.estimated = None

    def count(self, values: Labels) -> int:
        found = self.series.get(values)
        return 0 if found is None else found.count

    def forget(self, keep: set[str], position: int) -> None:
        for key in [k for k in self.series if k[position] not in keep]:
            del self.series[key]

    def render(self, out: list[str]) -> None:
        out.append(f"# HELP {self.name} {self.help}\n# TYPE {self.name} summary\n")
        prefix = _prefixes(self)
        now = time.monotonic()
        names = (*self.labels, "quantile")
        quantiles = tuple(map(_le, self.quantiles))
        for key, series in list(self.series.items()):
            for quantile, value in zip(quantiles, series.quantiles(now, self), strict=True):
                out.append(f"{prefix((*key, quantile), self.name, names)} {_number(value)}\n")
            out.append(f"{prefix(key, self.name + '_count', self.labels)} {_number(series.count)}\n")
            out.append(f"{prefix(key, self.name + '_sum', self.labels)} {_number(series.sum)}\n")

    def family(self) -> Metric:
        family = Metric(self.name, self.help, "summary")
        now = time.monotonic()
        for key, series in self.series.items():
            labels = dict(zip(self.labels, key, strict=True))
            for quantile, value in zip(self.quantiles, series.quantiles(now, self), strict=True):
                family.add_sample(self.name, {**labels, "quantile": _le(quantile)}, value)
            family.add_sample(self.name + "_count", labels, float(series.count))
            family.add_sample(self.name + "_sum", labels, series.sum)
        return family


class _SummarySeries:
    __slots__ = ("count", "estimated", "recent", "sum")

    def __init__(self, recent: deque[tuple[float, float]]) -> None:
        self.count, self.sum, self.recent = 0, 0.0, recent
        self.estimated: tuple[float, tuple[float, ...]] | None = None  # (when, quantiles)

    def quantiles(self, now: float, summary: SummaryVec) -> tuple[float, ...]:
        while self.recent and now - self.recent[0][0] > summary.max_age_s:
            self.recent.popleft()
            self.estimated = None
        if self.estimated is not None:
            return self.estimated[1]
        ordered = sorted(value for _, value in self.recent)
        if not ordered:
            values = tuple(math.nan for _ in summary.quantiles)
        else:
            last = len(ordered) - 1
            values = tuple(ordered[min(last, max(0, math.ceil(q * len(ordered)) - 1))] for q in summary.quantiles)
        self.estimated = (now, values)
        return values


def _bounded(series: Mapping[Labels, object], values: Labels, max_series: int) -> Labels:
    """`values`, or the overflow key when the vector already holds `max_series` other series."""
    if values in series or len(series) < max_series:
        return values
    return tuple("overflow" for _ in values)


def _le(bound: float) -> str:
    """A bound as Prometheus' clients print it: `+Inf`, `0.5`, `1.0`."""
    if math.isinf(bound):
        return "+Inf"
    return repr(float(bound))


Prefix = Callable[[Labels, str, Labels], str]
_PREFIXES: dict[int, Prefix] = {}


def _prefixes(vector: object) -> Prefix:
    """A memo of `name{label="value",...}` per series: a scrape formats only the numbers (prometheus-client's
    writer formats every label of every sample on every scrape, ~10 µs a sample: 44 ms for 3,400 series)."""
    found = _PREFIXES.get(id(vector))
    if found is None:
        memo: dict[tuple[str, Labels], str] = {}

        def prefix(values: Labels, name: str, names: Labels) -> str:
            text = memo.get((name, values))
            if text is None:
                if len(memo) > 100_000:
                    memo.clear()
                inner = ",".join(f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True))
                text = memo[(name, values)] = f"{name}{{{inner}}}" if inner else name
            return text

        found = _PREFIXES[id(vector)] = prefix
    return found


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def render(vectors: Iterator[CounterVec | HistogramVec | SummaryVec]) -> str:
    """The text format of `vectors`, the same lines prometheus-client's `generate_latest` writes for them."""
    out: list[str] = []
    for vector in vectors:
        vector.render(out)
    return "".join(out)


def families(*vectors: CounterVec | HistogramVec | SummaryVec) -> Iterator[Metric]:
    for vector in vectors:
        yield vector.family()
