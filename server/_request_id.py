"""Request ids, and what a request learns on its way that its log line and the metrics need at its end.

Every answer that is an error carries `X-Request-Id` (issue 36; before, only the 5xx answers that were logged
did), and the access log line of that request carries the same id, so an operator given the id by a user finds
the line. The id is drawn when the request enters the server (server/_observe.py), before the gate, the limits
or any route, so a 401, a 413 or a 429 has one too; answers refused below ASGI (server/_serving.py: a header
timeout, headers too large, too many connections) draw their own.

`RequestContext` travels with the request in a context variable: the routes run in the request's task (async
routes) or in a worker thread that copies the task's context (sync routes), so both reach the same object and
note what only they know (the outcome of a registration, the verdict of a check) for the middleware to record
once the answer's status is known. The writer thread does not share the context: what it learns comes back
as the write's return value (a registration's `Registration`, server/_pulsar_stats.py `register`).
"""

from __future__ import annotations

import contextvars
import os
import random
from dataclasses import dataclass, field
from typing import Any

REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID_KEY = "request_id"  # the request state's key for its id (scope["state"])


# Ids are not secrets, only unique: a generator seeded from the OS per process draws one in a third of the time
# `secrets.token_hex` takes (a system call per request showed in profiles of the hot reads). Reseeded in a
# forked child, so two workers never draw the same sequence.
_ids = random.Random(os.urandom(16))
os.register_at_fork(after_in_child=lambda: _ids.seed(os.urandom(16)))


def new_request_id() -> str:
    """16 hex digits: unique enough to find one line in a log, short enough to read out on a call."""
    return f"{_ids.getrandbits(64):016x}"


@dataclass(slots=True)
class RequestContext:
    """One request's notes (mutable on purpose: it accumulates while the request runs, then is read once)."""

    request_id: str
    notes: list[Any] = field(default_factory=list)  # server/_pulsar_stats.py's outcomes, in order
    logged_failure: bool = False  # the error handlers logged an unexpected failure (a storage error, a bug)
    error: str = ""  # the core's error class an error answer names (X-Registry-Error)


CONTEXT: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar("request_context", default=None)


def current_request_id() -> str | None:
    """The id of the request being answered, or None outside one (a test calling a handler directly)."""
    context = CONTEXT.get()
    return None if context is None else context.request_id


def note(outcome: Any) -> None:
    """Leave `outcome` for the request's end (nothing outside a request)."""
    context = CONTEXT.get()
    if context is not None:
        context.notes.append(outcome)
