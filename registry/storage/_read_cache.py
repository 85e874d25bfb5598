"""What this process last read of each schema history and namespace policy, kept until a write changes it.

The registry file is shared (app, server, CLI, other processes), so a cached read is only as good as the
knowledge that nothing changed since. The storage's change token (meta `changes`, bumped by every committed
write) gives that knowledge cheaply: one indexed read instead of a history's rows and their objects.

- A write of this process names what it changed; when it commits with token N and the token this process
  knew was N - 1, exactly those entries go. Any other gap means another process wrote too: everything goes.
  It announces N and what it changed just before COMMIT (`committing`), so a read of another thread that sees
  N before the writer reports the commit (`committed`) drops those entries, not everything.
- A read that sees a newer token than the known one, not announced, drops everything (another process
  wrote). One that sees an older token began before a commit this process has seen (the token only grows):
  it misses, and drops nothing.
- A read stores its answer only if no commit or drop happened while it read (the generation did not move),
  so an answer read before a write commits can never outlive that write.
- While a transaction of this thread is open, its own uncommitted writes are invisible to other threads and
  the cache only knows committed state: the transaction may use entries it has not touched, and stores none.

Entries are immutable tuples of frozen values, bounded by the bytes of schema text they hold (a share of the
one cache budget, registry/_cache_budget.py).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable
from typing import Any

from .._cache_budget import READ_CACHE_BYTES

MISSING: Any = object()


class ReadCache:
    def __init__(self, max_bytes: int = READ_CACHE_BYTES) -> None:
        self._lock = threading.Lock()
        self._known: int | None = None  # the change token the entries are valid for
        self._announced: tuple[int, frozenset[Hashable]] | None = None  # a commit of this process under way
        self._generation = 0  # moves on every commit and every drop
        self._entries: dict[Hashable, tuple[Any, int]] = {}  # key -> (value, size)
        self._bytes = 0
        self._max_bytes = max_bytes

    @property
    def bytes(self) -> int:
        """The bytes the cached histories account for now (never more than the budget)."""
        return self._bytes

    def lookup(self, token: int, key: Hashable) -> tuple[Any, int]:
        """(the cached value or MISSING, the generation to hand back to `store`)."""
        with self._lock:
            if token != self._known:
                if self._known is not None and token < self._known:
                    return MISSING, self._generation  # read before this process's last commit
                announced = self._announced
                if announced is not None and announced[0] == token and self._known == token - 1:
                    self._advance(token, announced[1])  # this process's own commit, not reported yet
                else:
                    self._drop_all(token)
                    return MISSING, self._generation
            found = self._entries.get(key)
            return (MISSING if found is None else found[0]), self._generation

    def store(self, generation: int, key: Hashable, value: Any, size: int) -> None:
        with self._lock:
            if generation != self._generation or size > self._max_bytes:
                return
            self._discard(key)
            while self._entries and self._bytes + size > self._max_bytes:  # the oldest go first
                self._discard(next(iter(self._entries)))
            self._entries[key] = (value, size)
            self._bytes += size

    def committing(self, token: int, changed: set[Hashable]) -> None:
        """A transaction of this process is about to commit as change `token`, having written `changed`."""
        with self._lock:
            self._announced = (token, frozenset(changed))

    def committed(self, token: int | None, changed: set[Hashable]) -> None:
        """The transaction announced last committed as change `token`, having written `changed`; None when
        its commit failed (nothing changed)."""
        with self._lock:
            self._announced = None
            if token is None or (self._known is not None and self._known >= token):
                return  # failed, or a read already brought the entries to this change or a later one
            if self._known is None or token - 1 != self._known:
                self._drop_all(token)
                return
            self._advance(token, changed)

    def _advance(self, token: int, changed: Iterable[Hashable]) -> None:
        for key in changed:
            self._discard(key)
        self._known = token
        self._generation += 1

    def _discard(self, key: Hashable) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]

    def _drop_all(self, token: int) -> None:
        self._entries.clear()
        self._bytes = 0
        self._known = token
        self._generation += 1
