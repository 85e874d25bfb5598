"""One memory budget for every cache of parsed or read schemas, and a byte-bounded LRU cache to spend it.

Caches bounded by their number of entries let a viewer pin gigabytes: 4,096 parsed 1 MiB schemas posted to
the diff and check endpoints are 4,096 parses kept (1.9-3.5 GB measured, issue 18). So every cache accounts
each entry by bytes, estimated from its input (text bytes x a factor measured by bench/bench_cache_factors.py:
what a kept parse really holds per input byte, rounded up), and drops its least recently used entries to stay
within its share of the budget. An entry larger than its cache's share is not cached at all: a 1 MiB
candidate under a small budget is parsed, answered and freed.

The budget is SCHEMA_EXPLORER_CACHE_BYTES (bytes; default 256 MiB, which leaves room for the requests in flight
in a 1 GB server), read at import and split:
  3/8 parsed Avro schemas (registry/avro/_schema.py)   1/4 schema histories read (registry/storage/_read_cache.py)
  1/8 answers of the hot reads (server/_fast_reads.py) 1/8 parsed PROTOBUF_NATIVE schemas, 1/8 their models
and 1/64 of it (at least 1 MiB) bounds the bytes of large candidate schemas worked on at once (`CANDIDATES`).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final, Generic, Protocol, TypeVar, cast

from ._errors import StorageError
from ._model import SchemaInfo
from ._pulsar_version import PulsarLine, answering_as

CACHE_BYTES_ENV: Final = "SCHEMA_EXPLORER_CACHE_BYTES"
DEFAULT_CACHE_BYTES: Final = 256 * 1024 * 1024
_MIN_CACHE_BYTES: Final = 1024 * 1024


def cache_bytes(environ: Mapping[str, str] = os.environ) -> int:
    """The budget: SCHEMA_EXPLORER_CACHE_BYTES, a whole number of bytes (at least 1 MiB), or the default."""
    text = environ.get(CACHE_BYTES_ENV, "").strip()
    if not text:
        return DEFAULT_CACHE_BYTES
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise ValueError(f"${CACHE_BYTES_ENV} must be a whole number of bytes, not {text[:40]!r}") from None
    if value < _MIN_CACHE_BYTES:
        raise ValueError(f"${CACHE_BYTES_ENV} must be at least {_MIN_CACHE_BYTES:,} bytes, not {value:,}")
    return value


TOTAL_BYTES: Final = cache_bytes()
AVRO_PARSED_BYTES: Final = TOTAL_BYTES * 3 // 8
READ_CACHE_BYTES: Final = TOTAL_BYTES // 4
FAST_READ_BYTES: Final = TOTAL_BYTES // 8
PROTOBUF_PARSED_BYTES: Final = TOTAL_BYTES // 8
PROTOBUF_MODEL_BYTES: Final = TOTAL_BYTES // 8

# Bytes kept per input byte, the maxima measured by bench/bench_cache_factors.py, rounded up. Avro: tracemalloc
# growth of kept parses plus the key text; PROTOBUF_NATIVE: RSS growth (the descriptor pool lives in C). A model
# is keyed on its root descriptor, which keeps the descriptor pool alive: its factor counts the pool too.
# Measured (pure Python build): Avro x13.1 at most (large_record: 1,900 fields 3 deep; 20,000 int fields x11.0,
# doc-heavy x3.5); PROTOBUF_NATIVE parse x22.0, model x15.0 (+ the pool it keeps: x22.0).
AVRO_FACTOR: Final = 16
PROTOBUF_PARSED_FACTOR: Final = 24
PROTOBUF_MODEL_FACTOR: Final = 40

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteLRU(Generic[K, V]):
    """A thread-safe map of at most `max_bytes` accounted bytes, least recently used entries dropped first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: dict[K, tuple[V, int]] = {}  # in use order, oldest first
        self._bytes = 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._entries.pop(key, None)
            if found is None:
                return None
            self._entries[key] = found  # now the most recently used
            return found[0]

    def put(self, key: K, value: V, size: int) -> None:
        """Keep `value` as `size` bytes, dropping the oldest entries to make room; not at all if it is larger
        than the whole budget."""
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            while self._entries and self._bytes + size > self.max_bytes:
                self._bytes -= self._entries.pop(next(iter(self._entries)))[1]
            self._entries[key] = (value, size)
            self._bytes += size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def cached(cache: ByteLRU[K, V], key: K, make: Callable[[], V], size: Callable[[V], int]) -> V:
    """`cache`'s value for `key`, made and kept (as `size(value)` bytes) when missing. Two threads missing the
    same key both make it; the second one's is kept (parses are pure: either is right)."""
    found = cache.get(key)
    if found is None:
        found = make()
        cache.put(key, found, size(found))
    return found


# Candidate schemas in work at once, by text bytes: a parsed candidate and what a diff or check builds from it
# weigh some 30 times its text while the request runs (32 viewers posting 1 MiB candidates held 944 MiB with the
# caches bounded and this gate off), and with one interpreter lock more than a few at once run no faster.
# Candidates under _SMALL_CANDIDATE bytes pass freely; a larger one waits for room, at most CANDIDATE_WAIT_S.
CANDIDATE_WORK_BYTES: Final = max(TOTAL_BYTES // 64, 1024 * 1024)  # 4 MiB at the default budget
_SMALL_CANDIDATE: Final = 64 * 1024
CANDIDATE_WAIT_S: Final = 60.0


class WorkGate:
    """A semaphore counted in bytes. One entry larger than the whole gate still goes in alone; a thread already
    inside (a facade call calling another) passes again without waiting for itself."""

    def __init__(self, max_bytes: int, small: int = _SMALL_CANDIDATE, wait_s: float = CANDIDATE_WAIT_S) -> None:
        self.max_bytes, self.small, self.wait_s = max_bytes, small, wait_s
        self._ready = threading.Condition()
        self._bytes = 0
        self._inside = threading.local()

    @property
    def bytes(self) -> int:
        return self._bytes

    @contextmanager
    def admit(self, size: int) -> Iterator[None]:
        if size < self.small or getattr(self._inside, "yes", False):
            yield
            return
        with self._ready:
            if not self._ready.wait_for(lambda: not self._bytes or self._bytes + size <= self.max_bytes, self.wait_s):
                raise StorageError(
                    f"too many large schemas are being worked on at once (over {self.wait_s:g} s waiting); try again"
                )
            self._bytes += size
        self._inside.yes = True
        try:
            yield
        finally:
            self._inside.yes = False
            with self._ready:
                self._bytes -= size
                self._ready.notify_all()


CANDIDATES: Final = WorkGate(CANDIDATE_WORK_BYTES)


class _Answering(Protocol):
    """A registry handle: it answers as one Pulsar version line."""

    @property
    def pulsar_line(self) -> PulsarLine: ...


F = TypeVar("F", bound=Callable[..., Any])


def bounded(method: F) -> F:
    """The facade calls that work on candidate schemas: large candidates in work at once are bounded by bytes
    (`CANDIDATES` above), so a storm of them cannot hold the memory of all of them at once; and they
    answer with the rules of the registry's Pulsar version line (registry/_pulsar_version.py)."""

    @functools.wraps(method)
    def wrapper(self: _Answering, *args: Any, **kwargs: Any) -> Any:
        size = sum(len(a.schema) for a in (*args, *kwargs.values()) if isinstance(a, SchemaInfo))
        with CANDIDATES.admit(size), answering_as(self.pulsar_line):
            return method(self, *args, **kwargs)

    return cast(F, wrapper)
