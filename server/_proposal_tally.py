"""The proposal counts behind `schema_explorer_proposals{state}` on /metrics.

A scrape never touches the storage (server/_metrics.py), so the counts are read beside it: a scrape shows the
counts last read and, when they are older than `MAX_AGE` seconds (Prometheus' default scrape interval), starts one
read in the background for the next scrape; a proposal written through this server starts one at once. Servers
sharing one PostgreSQL database each count every proposal, whichever server wrote it, at most `MAX_AGE` late.

A read that fails drops the family (no count passes for current when it could not be read) and is logged once per
distinct error, not once per scrape.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from registry import ProposalState, SchemaRegistry

MAX_AGE = 15.0
log = logging.getLogger("server")


class ProposalTally:
    """The last counts read, and at most one read running."""

    def __init__(
        self, registry: SchemaRegistry, *, max_age: float = MAX_AGE, clock: Callable[[], float] = time.monotonic
    ):
        self._registry = registry
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._counts: dict[ProposalState, int] | None = None
        self._read_at = -math.inf
        self._reading = False
        self._again = False  # a change arrived while a read ran: read once more after it
        self._last_error = ""
        self.reads = 0

    def counts(self) -> dict[ProposalState, int] | None:
        """What the scrape shows (None before the first read, or after one failed); starts a read when old."""
        with self._lock:
            counts, old = self._counts, self._clock() - self._read_at >= self._max_age
        if old:
            self.changed()
        return counts

    def changed(self) -> None:
        """Read the counts again soon (a proposal was written, or the last read is old)."""
        with self._lock:
            if self._reading:
                self._again = True
                return
            self._reading = True
        threading.Thread(target=self._read, name="proposal-tally", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                counts: dict[ProposalState, int] | None = self._registry.proposals.counts()
                error = ""
            except Exception as exc:  # noqa: BLE001 - any failure drops the family; the log says why
                counts, error = None, f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._counts, self._read_at = counts, self._clock()
                self.reads += 1
                logged, self._last_error = self._last_error, error
                again, self._again = self._again, False
                self._reading = again
            if error and error != logged:
                log.warning("counting proposals for /metrics failed: %s", error)
            if not again:
                return
