"""Group commit: the server's writes run on one thread, and what queued up meanwhile commits together.

A write's cost is mostly its commit's fsync, and SQLite takes one writer at a time anyway (threads racing
for its lock sleep in its busy handler). So one thread takes the writes in arrival order and, each time it
wakes, runs everything queued (up to `MAX_BATCH`) in one `registry.batch()`: one commit, one fsync for all.
A caller hears its outcome only once that commit is done, so nothing is acknowledged before it is durable.

- A refused write (RegistryError) is answered with its error; its audit line commits with the batch.
- A write that raises anything else (a bug) runs in a savepoint of its own, so it undoes only what it wrote
  and gets its own error; the others still commit. (Undoing the whole batch and retrying each write alone
  would run writes twice on a storage without transactions, where `batch()` undoes nothing.)
- If the batch itself fails (its commit: a full disk, a busy file), none of it is durable and every caller
  gets that error. The writes' audit lines were in the batch too, so none of them is kept.

A remote registry (the review gateway, `serve --upstream`) has no group commit: each write is an admin call to
the broker plus its own workspace commit. The thread still runs them one at a time in arrival order, so the
gateway never races itself between an apply's read and its write; each is answered with its own outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from registry import Registry, RegistryError, SchemaRegistry

MAX_BATCH = 64  # bounds how long the first write of a batch waits for the others
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Write:
    registry: SchemaRegistry
    call: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


class GroupWriter:
    """One daemon thread (started on the first write) that commits queued writes in batches."""

    def __init__(self, *, max_batch: int = MAX_BATCH, name: str = "registry-writer") -> None:
        self._queue: queue.SimpleQueue[_Write] = queue.SimpleQueue()
        self._max_batch = max_batch
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._start = threading.Lock()
        self.batches = 0  # batches run so far (each one transaction on a SQLite registry)
        # Told each batch's time in seconds, on this thread (serve's /metrics: server/_metrics.py).
        self.on_batch: Callable[[float], None] | None = None

    async def write(self, registry: SchemaRegistry, call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """`call(*args, **kwargs)` on the writer thread, once its batch has committed; its exception, if any,
        is raised here."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if not self._thread.is_alive():
            with self._start:
                if not self._thread.is_alive():
                    self._thread.start()
        self._queue.put(_Write(registry, functools.partial(call, *args, **kwargs), loop, future))
        return await future

    def queued(self) -> int:
        """Writes waiting for the thread (not counting the batch it is running)."""
        return self._queue.qsize()

    def _run(self) -> None:
        while True:
            writes = [self._queue.get()]
            while len(writes) < self._max_batch:
                try:
                    writes.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for registry, same in itertools.groupby(writes, key=lambda w: w.registry):
                batch = list(same)
                started = time.perf_counter()
                outcomes = _commit(registry, [w.call for w in batch])
                self.batches += 1
                if self.on_batch is not None:
                    self.on_batch(time.perf_counter() - started)
                for write, outcome in zip(batch, outcomes, strict=True):
                    with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody to tell
                        write.loop.call_soon_threadsafe(_settle, write.future, outcome)


Outcome = tuple[Any, BaseException | None]  # (result, error)


def _commit(registry: SchemaRegistry, calls: list[Callable[[], Any]]) -> list[Outcome]:
    if not isinstance(registry, Registry):  # no batch() over HTTP: each write stands alone
        return [_alone(call) for call in calls]
    try:
        with registry.batch():
            return [_attempt(registry, call) for call in calls]
    except Exception as exc:  # the batch failed as a whole (begin or commit): none of it is durable
        return [(None, exc)] * len(calls)


def _alone(call: Callable[[], Any]) -> Outcome:
    try:
        return call(), None
    except Exception as exc:  # its own error only; the writes after it still run
        return None, exc


def _attempt(registry: Registry, call: Callable[[], Any]) -> Outcome:
    try:
        with registry.batch():  # nested: a savepoint
            try:
                return call(), None
            except RegistryError as exc:  # a refusal: what it recorded (the audit line) stays
                return None, exc
    except Exception as exc:  # a bug: its savepoint undid its writes
        return None, exc


def _settle(future: asyncio.Future[Any], outcome: Outcome) -> None:
    if future.cancelled():  # the request timed out: the write happened, the audit trail tells
        return
    result, error = outcome
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
