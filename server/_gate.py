"""The gate: who may talk to the server at all, decided from a request's headers before its body is read.

- **Host check.** A server without tokens answers whoever reaches it, so a web page could reach it through DNS
  rebinding (its own name resolving to 127.0.0.1): the browser then sends that name in `Host`. Without tokens,
  only loopback names (localhost, 127.0.0.1, [::1], any port) and the names given with `serve --allow-host`
  are served; anything else gets 421 Misdirected Request, a request without Host 400. With tokens a page
  cannot authenticate, so any Host is served.
- **Authentication** of every API request (/admin/, /explorer/), whatever its method or path: no or an
  unknown token → 401 with `WWW-Authenticate: Bearer`, before routing (so never a 404, 405 or 400 first)
  and before the body is read (an unauthenticated client cannot make the server hold its upload). What the
  token grants goes into the request's state for the routes' role checks (server/_auth.py).
- **Throttle.** Failed authentications are counted per client address (an IPv6 address by its /64, which one
  host usually holds whole): a burst of `burst` failures, then one more every `refill_s`. An address over
  its allowance gets 429 with Retry-After on every API request, even with a good token, so guessing stops
  paying: an 8-digit token found over loopback in 12 s would now take years. The address is the connection's,
  or the one a proxy named with `serve --forwarded-allow-ips` put in `X-Forwarded-For` (uvicorn reads it,
  server/_serving.py): no proxy is trusted by default, so a client cannot claim a new address per guess.
"""

from __future__ import annotations

import ipaddress
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from starlette.types import Scope

from ._auth import BEARER_CHALLENGE, GRANT_KEY, Grant, Tokens, bearer_grant
from ._limits import API_PREFIXES

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


class Throttle:
    """Failed authentications per client address, as a bucket of allowed failures that refills over time.
    At most `max_addresses` are remembered (the least recently failing go first)."""

    def __init__(
        self,
        *,
        burst: int = 10,
        refill_s: float = 6.0,
        max_addresses: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._burst, self._refill_s, self._max, self._clock = burst, refill_s, max_addresses, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address → (allowance, when)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Addresses remembered now (/metrics)."""
        return len(self._buckets)

    def retry_after(self, address: str) -> float:
        """Seconds until `address` may try again; 0 when it may now."""
        with self._lock:
            allowance = self._allowance(address)
        return 0.0 if allowance >= 1 else (1 - allowance) * self._refill_s

    def failed(self, address: str) -> None:
        with self._lock:
            self._buckets[address] = (self._allowance(address) - 1, self._clock())
            self._buckets.move_to_end(address)
            while len(self._buckets) > self._max:
                self._buckets.popitem(last=False)

    def _allowance(self, address: str) -> float:
        found = self._buckets.get(address)
        if found is None:
            return float(self._burst)
        allowance, when = found
        return min(float(self._burst), allowance + (self._clock() - when) / self._refill_s)


def client_address(scope: Scope) -> str:
    """The throttle's key for the client: its IPv4 address, or its IPv6 /64."""
    client = scope.get("client")
    host = client[0] if client else ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64)))
    return str(address)


def host_name(value: str) -> str:
    """The name in a Host header, lowercase, without its port."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    name, colon, port = value.rpartition(":")
    return name if colon and port.isdigit() else value


class Gate:
    def __init__(self, tokens: Tokens | None, allowed_hosts: Iterable[str] = (), throttle: Throttle | None = None):
        self.tokens = tokens
        self.hosts = LOOPBACK_NAMES | {host_name(h) for h in allowed_hosts}
        self.throttle = throttle or Throttle()

    def check(self, scope: Scope) -> Refusal | None:
        """None when the request may go on (what its token grants is then in its state), else the refusal.
        Counts a failed authentication."""
        refusal = self._host_refusal(scope)
        if refusal is not None or self.tokens is None or not scope["path"].startswith(API_PREFIXES):
            return refusal
        address = client_address(scope)
        wait = self.throttle.retry_after(address)
        if wait > 0:
            return _too_many(wait)
        grant = bearer_grant(self.tokens, _header(scope, b"authorization"))
        if grant is None:
            self.throttle.failed(address)
            return Refusal(401, "Authentication required", ((b"www-authenticate", BEARER_CHALLENGE.encode()),))
        scope.setdefault("state", {})[GRANT_KEY] = grant
        return None

    def admits_quietly(self, scope: Scope) -> bool:
        """Whether `check` would let the request go on, without counting anything (the hot-read path asks;
        anything it does not admit goes to the full stack, whose `check` answers and counts)."""
        if self._host_refusal(scope) is not None:
            return False
        if self.tokens is None:
            return True
        if self.throttle.retry_after(client_address(scope)) > 0:
            return False
        grant: Grant | None = bearer_grant(self.tokens, _header(scope, b"authorization"))
        return grant is not None

    def host_refusal(self, scope: Scope) -> Refusal | None:
        """The Host check alone: probes and /metrics (server/_observe.py) pass no other part of the gate."""
        return self._host_refusal(scope)

    def _host_refusal(self, scope: Scope) -> Refusal | None:
        if self.tokens is not None:
            return None
        value = _header(scope, b"host")
        if not value:
            return Refusal(400, "the request has no Host header")
        if host_name(value) in self.hosts:
            return None
        shown = value if len(value) <= 100 else value[:100] + "…"
        return Refusal(
            421,
            f"this server has no tokens and answers only requests addressed to {', '.join(sorted(self.hosts))} "
            f"(the Host header was {shown!r}): serve that name with `serve --allow-host NAME`, or give the server "
            "tokens",
        )


def _too_many(wait: float) -> Refusal:
    seconds = max(1, math.ceil(wait))
    return Refusal(
        429,
        f"too many failed authentications from this address: try again in {seconds} s",
        ((b"retry-after", str(seconds).encode()),),
    )


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:  # ASGI header names are lowercase
            return str(value.decode("latin-1"))
    return ""
