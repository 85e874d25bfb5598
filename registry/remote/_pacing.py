"""Pacing to a broker that refuses for load.

With `httpRequestsLimitEnabled` a broker answers `429 Too Many Requests` above `httpRequestsMaxPerSecond`
(RateLimitingFilter, default 100/s) before the request reaches any resource, so even a write is safe to send
again; a proxy in front of the brokers may answer `503` instead, which is retried for reads only. The wait is
the answer's `Retry-After` when given (seconds or an HTTP date), else exponential backoff with jitter; one
request waits at most `MAX_WAIT_S` in all, and a `Retry-After` beyond that is not waited for at all.

`Concurrency` is what a bulk reader (the broker index) keeps in flight: halved on each refusal, raised by one
after as many accepted answers as the limit (additive increase, multiplicative decrease), so a run slows while
the broker refuses and speeds up again after.
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Final

import httpx

PACED_STATUS: Final = frozenset({429, 503})
MAX_WAIT_S: Final = 30.0  # one request's total wait on a refusing broker
BACKOFF_BASE_S: Final = 0.1
BACKOFF_CAP_S: Final = 5.0


def retry_after(response: httpx.Response) -> float | None:
    """The answer's Retry-After in seconds (RFC 9110 §10.2.3: delay-seconds or an HTTP date); None when absent
    or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def backoff(attempt: int, rng: random.Random) -> float:
    """Exponential backoff with jitter: half to all of base·2^attempt, capped."""
    ceiling: float = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**attempt)
    return ceiling * rng.uniform(0.5, 1.0)


class Concurrency:
    """How many requests a bulk reader keeps in flight (module docstring). Thread-safe."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = max(1, ceiling)
        self._limit = self.ceiling
        self._accepted = 0
        self.lowest = self.ceiling  # the lowest limit reached (status and tests)
        self._lock = threading.Lock()

    @property
    def limit(self) -> int:
        return self._limit

    def refused(self) -> None:
        with self._lock:
            self._limit = max(1, self._limit // 2)
            self._accepted = 0
            self.lowest = min(self.lowest, self._limit)

    def accepted(self) -> None:
        with self._lock:
            if self._limit >= self.ceiling:
                return
            self._accepted += 1
            if self._accepted >= self._limit:
                self._limit += 1
                self._accepted = 0
