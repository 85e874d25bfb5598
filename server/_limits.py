"""Request limits and security headers: one ASGI middleware in front of every route.

- Request headers larger than `max_header_bytes` → 431.
- The gate (server/_gate.py: Host check, authentication, throttle) decides from the headers, before the body.
- A body larger than `max_body_bytes` → 413, read no further (Content-Length is checked first, then the bytes
  as they stream in); one not received within `body_timeout_s` → 408; one that would take the bodies
  being received together past `max_buffered_bytes` → 503 with Retry-After (stalled uploads cannot pile up).
- HEAD is answered wherever GET is: the GET's status and headers, no body.
- A request still unanswered after `request_timeout_s` → 503 with `{"reason": ...}`. The work itself cannot
  be interrupted (routes run in threads), so a timed-out write may still complete: the audit trail tells.
- A schema over the core's size limit (registry/_limits.py) → 413 instead of the core's 422.
- Every answer carries security headers (nosniff, no framing, no referrer, a CSP that allows nothing on the
  JSON API); API answers are `Cache-Control: no-store`, since they may be behind a token.

Slow headers and the number of connections are limited below ASGI, in the HTTP protocol (server/_serving.py):
headers not complete within `header_timeout_s` → 408 and the connection closed; past `max_connections`
open connections a new one gets 503 and is closed.

Pulsar's web server has an 8 kB header limit and no body limit (`httpMaxRequestSize` = -1); errors here keep
Pulsar's `{"reason": ...}` body. Settings come from `ServerLimits`, by default from the environment
(SCHEMA_EXPLORER_ + the setting's name in capitals, e.g. SCHEMA_EXPLORER_MAX_BODY_BYTES).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from registry._limits import SchemaTooLargeError

ENV_PREFIX = "SCHEMA_EXPLORER_"

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
# The API answers JSON and needs nothing; /docs and /redoc load their script and styles from a CDN.
API_CSP = b"default-src 'none'; frame-ancestors 'none'"
DOCS_CSP = b"frame-ancestors 'none'"
DOCS_PATHS = ("/docs", "/redoc")
API_PREFIXES = ("/admin/", "/explorer/")
_EMPTY_BODY: Message = {"type": "http.response.body", "body": b""}


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    max_body_bytes: int = 4 * 1024 * 1024  # a 1 MiB schema, JSON-escaped in a payload, fits with room
    max_header_bytes: int = 16 * 1024
    request_timeout_s: float = 30.0
    header_timeout_s: float = 10.0  # from a connection's opening (or its last answer) to a request's headers
    body_timeout_s: float = 30.0  # from the headers to the body's last byte: 4 MiB at 140 KB/s
    max_buffered_bytes: int = 256 * 1024 * 1024  # request bodies being received, all together
    max_connections: int = 4096

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"ServerLimits.{field.name} must be a number > 0, got {value!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> ServerLimits:
        changes: dict[str, Any] = {}
        for field in fields(cls):
            variable = ENV_PREFIX + field.name.upper()
            text = environ.get(variable, "").strip()
            if text:
                kind = float if field.name.endswith("_s") else int
                try:
                    changes[field.name] = kind(text.replace("_", ""))
                except ValueError:
                    raise ValueError(f"${variable} must be a number > 0, got {text!r}") from None
        try:
            return cls(**changes)
        except ValueError as exc:
            raise ValueError(f"{exc} (from the environment)") from None


def install_limits(app: FastAPI, limits: ServerLimits | None = None) -> None:
    """Put the limits middleware in front of `app`'s routes (call before adding CORS, so CORS wraps it)."""
    app.state.limits = limits or ServerLimits.from_env()
    app.state.buffered = BufferedBytes(app.state.limits.max_buffered_bytes)
    app.add_middleware(LimitsMiddleware)
    app.add_exception_handler(SchemaTooLargeError, _schema_too_large)


async def _schema_too_large(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"reason": str(exc)}, status_code=413)


# Every answer's extra headers, by the kind of path (what the answer's own headers lack is added).
Extra = tuple[tuple[bytes, bytes], ...]
_OTHER_EXTRA: Extra = (*SECURITY_HEADERS, (b"content-security-policy", API_CSP))
API_EXTRA: Extra = (*_OTHER_EXTRA, (b"cache-control", b"no-store"))
_DOCS_EXTRA: Extra = (*SECURITY_HEADERS, (b"content-security-policy", DOCS_CSP))


@dataclass(frozen=True, slots=True)
class RequestHead:
    """What the limits (and the hot-read fast path) need of a request's headers, read in one pass."""

    header_bytes: int
    declared: bytes | None  # Content-Length
    chunked: bool  # Transfer-Encoding
    cross_origin: bool  # an Origin header: CORS must see it

    @classmethod
    def of(cls, scope: Scope) -> RequestHead:
        header_bytes, declared, chunked, origin = 0, None, False, False
        for key, value in scope["headers"]:  # ASGI header names are lowercase
            header_bytes += len(key) + len(value)
            if key == b"content-length":
                declared = value.strip()
            elif key == b"transfer-encoding":
                chunked = True
            elif key == b"origin":
                origin = True
        return cls(header_bytes, declared, chunked, origin)

    @property
    def has_body(self) -> bool:
        """HTTP/1.1: a body only with chunked transfer or a Content-Length above 0."""
        return self.chunked or (self.declared is not None and self.declared.lstrip(b"0") != b"")


class BufferedBytes:
    """The bytes of request bodies being received right now, against one budget (asyncio: one thread)."""

    def __init__(self, budget: int) -> None:
        self.budget, self.held = budget, 0

    def take(self, size: int) -> bool:
        if self.held + size > self.budget:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        self.held -= size


class LimitsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        limits: ServerLimits = state.limits
        path: str = scope.get("path", "")
        extra = (
            _DOCS_EXTRA if path.startswith(DOCS_PATHS) else API_EXTRA if path.startswith(API_PREFIXES) else _OTHER_EXTRA
        )
        head = RequestHead.of(scope)
        if head.header_bytes > limits.max_header_bytes:
            reason = (
                f"request headers are {head.header_bytes:,} bytes, over the limit of {limits.max_header_bytes:,} bytes"
            )
            await _answer(send, extra, 431, reason)
            return
        refusal = state.gate.check(scope)
        if refusal is not None:
            await _answer(send, extra, refusal.status, refusal.reason, refusal.headers)
            return
        if scope["method"] == "HEAD":
            scope, send = {**scope, "method": "GET"}, _without_body(send)
        if head.has_body:
            body = await _read_body(head.declared, receive, limits, state.buffered)
            if isinstance(body, Refused):
                await _answer(send, extra, body.status, body.reason, body.headers)
                return
            receive = _replay(body, receive)
        await _with_timeout(self.app, scope, receive, send, extra, limits.request_timeout_s)


def _without_body(send: Send) -> Send:
    """HEAD: the answer's start as it is (its Content-Length is the GET's), its body left out."""

    async def headless(message: Message) -> None:
        if message["type"] == "http.response.body":
            if not message.get("more_body", False):
                await send(_EMPTY_BODY)
            return
        await send(message)

    return headless


@dataclass(frozen=True, slots=True)
class Refused:
    status: int
    reason: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


def _secured(message: Message, extra: Extra) -> Message:
    """A response start with the `extra` headers its own headers lack."""
    headers = list(message.get("headers", ()))
    present = {k.lower() for k, _ in headers}
    headers += [h for h in extra if h[0] not in present]
    return {**message, "headers": headers}


async def _read_body(
    declared: bytes | None, receive: Receive, limits: ServerLimits, buffered: BufferedBytes
) -> list[Message] | Refused:
    """The request's body messages, or why it is refused: too large, too slow, or no room to hold it now."""
    limit = limits.max_body_bytes
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return Refused(413, f"request body is {int(declared):,} bytes, over the limit of {limit:,} bytes")
    messages: list[Message] = []
    size = 0
    try:
        async with asyncio.timeout(limits.body_timeout_s):
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    return messages  # a disconnect: let the app see it
                chunk = len(message.get("body", b""))
                if size + chunk > limit:
                    return Refused(413, f"request body is over the limit of {limit:,} bytes")
                if not buffered.take(chunk):
                    return Refused(
                        503,
                        "the server is receiving too many request bodies at once: try again shortly",
                        ((b"retry-after", b"1"),),
                    )
                size += chunk
                if not message.get("more_body", False):
                    return messages
    except TimeoutError:
        return Refused(
            408, f"the request body did not arrive within {limits.body_timeout_s:g} s", ((b"connection", b"close"),)
        )
    finally:
        buffered.give_back(size)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(reversed(messages))

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replayed


async def _with_timeout(app: ASGIApp, scope: Scope, receive: Receive, send: Send, extra: Extra, timeout: float) -> None:
    """Run the app; if it has not started answering within `timeout`, answer 503 and drop what it sends later.

    The app runs in this task (a task of its own and a wait for it cost more than the rest of this
    middleware); at the deadline a timer cancels the task, which stops the app's await at once, even of a
    thread (the thread runs on: the work cannot be interrupted), and however the app then ends, the 503 answers."""
    started = abandoned = False
    task = asyncio.current_task()
    assert task is not None

    async def guarded(message: Message) -> None:
        nonlocal started
        if abandoned:
            return
        if message["type"] == "http.response.start":
            started = True
            message = _secured(message, extra)
        await send(message)

    def expire() -> None:
        nonlocal abandoned
        if not started:
            abandoned = True
            task.cancel()

    timer = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        await app(scope, receive, guarded)
    except BaseException:
        if not abandoned:
            raise
    finally:
        timer.cancel()
    if not abandoned:
        return
    if task.uncancel():  # cancelled by someone else too (a server shutdown): let that go on
        raise asyncio.CancelledError
    await _answer(
        send,
        extra,
        503,
        f"the server did not answer within {timeout:g} s (request timeout); a write may still complete: "
        "read it back, or check the audit trail",
        ((b"retry-after", b"1"),),
    )


async def _answer(send: Send, extra: Extra, status: int, reason: str, headers: Extra = ()) -> None:
    body = json.dumps({"reason": reason}).encode("utf-8")
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
    }
    await send(_secured(start, extra))
    await send({"type": "http.response.body", "body": body})
