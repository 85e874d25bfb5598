"""The registry's storage, timed call by call for /metrics (`schema_explorer_storage_operation_seconds`).

`serve` opens its registry with `Registry.open(..., wrap=timer.wrap)` and hands the same `StorageTimer` to
`create_app`, which points it at the app's metrics. Every storage call (a history read, a dedup scan, an append,
a policy write, the change token each cached read checks) then goes through `ForwardingStorage.around` here.
The operation's name (a storage protocol member: a small, fixed set) and the backend's kind (`sqlite`,
`postgresql`, `memory`, `plugin`) are the only labels.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from registry import ForwardingStorage, StorageBackend

T = TypeVar("T")
Observe = Callable[[str, str, float], None]  # (operation, backend, seconds)


class StorageTimer:
    """Where the times of one registry's storage calls go (nowhere until `observe` is set)."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.observe: Observe | None = None

    def wrap(self, inner: StorageBackend) -> StorageBackend:
        """The `wrap=` of `Registry.open`."""
        return TimedStorage(inner, self)


class TimedStorage(ForwardingStorage):
    """Times each call to the storage it wraps and hands the time to its timer."""

    def __init__(self, inner: StorageBackend, timer: StorageTimer) -> None:
        super().__init__(inner)
        self._timer = timer

    def around(self, operation: str, call: Callable[[], T]) -> T:
        observe = self._timer.observe
        if observe is None:
            return call()
        started = time.perf_counter()
        try:
            return call()
        finally:
            observe(operation, self._timer.backend, time.perf_counter() - started)
