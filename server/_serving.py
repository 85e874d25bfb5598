"""Serving the app under uvicorn, with the limits that must act below ASGI.

uvicorn hands a request to the app only once its headers are complete, and it never times out a connection
that has not sent them: a client sending nothing, or one byte of header every few seconds, holds its
connection (and its file descriptor) forever; 20,000 such clients exhausted the server's descriptors. Its
`limit_concurrency` answers 503 only after a request's headers, and counts the very connections that stall.
So the HTTP protocol here is uvicorn's httptools protocol with three additions, from `ServerLimits`:

- a request's headers must be complete within `header_timeout_s` of the connection's opening or of the
  request's first byte: else 408 and the connection closes;
- header bytes past `max_header_bytes` (plus a read's worth) while the headers are incomplete: 431, closed;
- past `max_connections` open connections a new one is answered 503 with Retry-After and closed at once, so
  the descriptors it would hold are free again.

Forwarded headers (`X-Forwarded-For`, `X-Forwarded-Proto`) are uvicorn's to read, and only from the proxies
given with `serve --forwarded-allow-ips` (uvicorn's `proxy_headers` and `forwarded_allow_ips`): by default no
address is trusted, not even loopback (uvicorn's own default), so a client's address is its connection's. Were
loopback trusted, a client on the same host could give each failed token a new forwarded address and never be
throttled, lock out another address by forging it, and put any text where the log shows the address.

What reaches the app is then limited by the ASGI middleware (server/_limits.py): the gate before the body,
body size, body timeout, the bytes of bodies received at once, the time to answer.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import resource
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._limits import ServerLimits
from ._logs import log_config
from ._metrics import ServerMetrics
from ._request_id import new_request_id

log = logging.getLogger("server")

READ_SLACK = 256 * 1024  # one read of the transport, which may end the headers and carry body bytes after them
SPARE_DESCRIPTORS = 256  # for the registry file, logs and the rest of the process


def _raw_answer(status: bytes, reason: str) -> bytes:
    body = json.dumps({"reason": reason}).encode()
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\nretry-after: 1\r\nconnection: close\r\n\r\n"
        + body
    )


def guarded_protocol(limits: ServerLimits, metrics: ServerMetrics | None = None) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with the header timeout, header byte cap and connection cap of `limits`;
    `metrics` counts open connections and those these limits close. Each refusal carries a request id of its
    own in `X-Request-Id`, logged with the reason (server/_request_id.py)."""
    counted = metrics or ServerMetrics()
    too_many = _raw_answer(
        b"503 Service Unavailable",
        f"the server has {limits.max_connections:,} connections open, its limit: try again shortly",
    )
    too_slow = _raw_answer(
        b"408 Request Timeout", f"the request headers did not arrive within {limits.header_timeout_s:g} s"
    )
    too_large = _raw_answer(
        b"431 Request Header Fields Too Large",
        f"request headers are over the limit of {limits.max_header_bytes:,} bytes",
    )
    head_cap = limits.max_header_bytes + READ_SLACK

    class GuardedProtocol(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _head_bytes = 0
        _refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= limits.max_connections:
                self._refused = True
                self.transport = transport  # connection_lost closes it again
                transport.write(_identified(too_many, "too_many_connections", counted))
                transport.close()
                return
            counted.open_connections += 1
            super().connection_made(transport)
            self._await_head()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
                self._await_head()  # a keep-alive connection's next request begins
            super().data_received(data)
            if self._head_timer is not None:
                self._head_bytes += len(data)
                if self._head_bytes > head_cap:
                    self._refuse(too_large, "header_too_large")

        def on_headers_complete(self) -> None:
            self._stop_waiting()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            if not self._refused:
                counted.open_connections -= 1
            super().connection_lost(exc)

        def _await_head(self) -> None:
            self._stop_waiting()
            self._head_timer = self.loop.call_later(limits.header_timeout_s, self._refuse, too_slow, "header_timeout")

        def _stop_waiting(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            self._head_bytes = 0

        def _refuse(self, answer: bytes, reason: str) -> None:
            self._stop_waiting()
            if not self.transport.is_closing():
                self.transport.write(_identified(answer, reason, counted))
                self.transport.close()

    return GuardedProtocol


def _identified(answer: bytes, reason: str, metrics: ServerMetrics) -> bytes:
    """A raw refusal with a request id of its own, counted and logged (these never reach the middleware)."""
    request_id = new_request_id()
    metrics.closed.inc((reason,))
    log.warning("request %s: connection closed: %s", request_id, reason.replace("_", " "))
    return answer.replace(
        b"\r\nconnection: close", b"\r\nx-request-id: " + request_id.encode() + b"\r\nconnection: close", 1
    )


def descriptor_room(limits: ServerLimits) -> ServerLimits:
    """Raise the soft limit on open files to what `max_connections` needs, as far as the hard limit allows;
    where it does not, lower `max_connections` to fit and say so (else accept() would fail instead of the
    clear 503)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = limits.max_connections + SPARE_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft != resource.RLIM_INFINITY and soft < needed:
        fitting = max(1, soft - SPARE_DESCRIPTORS)
        print(
            f"serve: the open-file limit is {soft}: at most {fitting} connections instead of {limits.max_connections}",
            file=sys.stderr,
            flush=True,
        )
        return ServerLimits(**{**_as_dict(limits), "max_connections": fitting})
    return limits


def _as_dict(limits: ServerLimits) -> dict[str, Any]:
    return {name: getattr(limits, name) for name in limits.__dataclass_fields__}


def trusted_proxies(values: Iterable[str]) -> tuple[str, ...]:
    """The proxies whose forwarded headers are trusted, from `serve --forwarded-allow-ips` values (each a
    comma-separated list of IP addresses and networks): checked here, since uvicorn takes anything it cannot
    parse as a name that never matches a client, silently, and `*` as trusting whatever the client sends."""
    found: list[str] = []
    for value in values:
        for item in value.split(","):
            text = item.strip()
            try:
                found.append(str(ipaddress.ip_network(text) if "/" in text else ipaddress.ip_address(text)))
            except ValueError:
                raise ValueError(
                    f"--forwarded-allow-ips: {text!r} is not an IP address or network (e.g. 10.0.0.5, 10.0.0.0/8, "
                    "fd00::/8): name the addresses of the proxies in front of the server"
                ) from None
    return tuple(dict.fromkeys(found))


def serve(
    app: FastAPI,
    *,
    host: str,
    port: int,
    access_log: bool = True,
    log_format: str = "text",
    forwarded_allow_ips: Sequence[str] = (),
) -> None:
    """Run `app` (built by `create_app`, which holds its limits) on host:port until interrupted. The access log
    is the app's own (server/_logs.py: one line per request with its id), in `log_format` (text or json).
    Forwarded headers are read only from the `forwarded_allow_ips` (see `trusted_proxies`); none by default."""
    limits = descriptor_room(app.state.limits)
    app.state.observer.access_log = access_log
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        proxy_headers=bool(forwarded_allow_ips),
        forwarded_allow_ips=list(forwarded_allow_ips),
        access_log=False,
        log_level="info",
        log_config=log_config(log_format),
        http=guarded_protocol(limits, app.state.metrics),
    )
    uvicorn.Server(config).run()
