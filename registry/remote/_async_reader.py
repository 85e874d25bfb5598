"""The broker index's reads from one asyncio event loop (issue 42: a fast first visit).

A first visit reads one schema list per topic: 100,000 topics are 100,000 small GETs, and a pool of threads
over the sync client spends its time on the GIL, not the broker. This reader keeps many requests in flight
from one thread instead. It behaves exactly as the sync AdminClient does, because it asks that client's own
decisions rather than repeating them: the same URL, headers, TLS context and credentials (`async_http`); the
same retries of a read (`failure`, `retry_delay`); the same pacing to a refusing broker (`refusal`, which also
tells the index's Concurrency); the same redirects to the cluster's own brokers only (`next_hop` over the
client's ClusterBrokers); and its request counter (`counted`). Only reads: the index never writes. The
credentials are the client's httpx auth flow too: an OAuth2 token fetch (once per token lifetime) blocks the
loop for that one request, which is why the tokens are cached.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import sys
from collections.abc import Mapping

import httpx

from ._admin_client import RETRIED_STATUS, AdminClient, retry_delay
from ._redirects import REDIRECT_STATUS, next_hop


def _sniffio_absent_once() -> None:
    """httpcore asks `import sniffio` on every async request (httpcore._synchronization.current_async_library)
    and falls back to asyncio when it is missing. A failed import is not remembered, so without sniffio each
    request searched sys.path again: 40% of the index's CPU when measured (bench_first_visit.py). Python's own
    way to remember a missing module is None in sys.modules; the import then fails at once, as before."""
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


class AsyncReader:
    """GETs over `client`'s connection from the running event loop, `in_flight` connections at most."""

    def __init__(self, client: AdminClient, in_flight: int) -> None:
        _sniffio_absent_once()
        self._client = client
        self._in_flight = in_flight
        self._http = client.async_http(in_flight)  # the URL's broker
        # One pool per broker: httpcore scans every connection of a pool on each request (quadratically when
        # idle ones are counted), so three brokers' connections in one pool cost three times over and more.
        self._owners: dict[tuple[str, str, int | None], httpx.AsyncClient] = {}
        self._listing = asyncio.Lock()  # one listing of the cluster's brokers, not one per task

    async def get(self, path: str, params: Mapping[str, str] | None = None) -> httpx.Response:
        """An idempotent read: retried on connection failures and 5xx, paced on 429/503, redirects followed."""
        client = self._client
        for attempt in range(client.attempts):
            last = attempt == client.attempts - 1
            try:
                response = await self._paced(path, params)
            except httpx.TransportError as exc:
                error = client.failure(exc, "GET", path, last=last, retry_status=True)
                if error is not None:
                    raise error from None
            else:
                if response.status_code not in RETRIED_STATUS or last:
                    return response
            await asyncio.sleep(retry_delay(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _paced(self, path: str, params: Mapping[str, str] | None) -> httpx.Response:
        waited = 0.0
        for attempt in itertools.count():
            response = await self._request(path, params)
            delay = self._client.refusal(response, "GET", path, attempt=attempt, waited=waited, read=True)
            if delay is None:
                return response
            await asyncio.sleep(delay)
            waited += delay
        raise AssertionError("unreachable")  # pragma: no cover

    async def _request(self, path: str, params: Mapping[str, str] | None) -> httpx.Response:
        self._client.counted()
        response = await self._http.get(path, params=params)
        hops = [response.request.url]
        while response.status_code in REDIRECT_STATUS:
            target = await self._next_hop(response, hops)
            self._client.counted()
            response = await self._pool(target).get(target)
            hops.append(target)
        return response

    def _pool(self, target: httpx.URL) -> httpx.AsyncClient:
        key = (target.scheme, target.host, target.port)
        pool = self._owners.get(key)
        if pool is None:
            pool = self._owners[key] = self._client.async_http(self._in_flight)
        return pool

    async def _next_hop(self, response: httpx.Response, hops: list[httpx.URL]) -> httpx.URL:
        brokers = self._client.brokers
        if brokers.settled:
            return next_hop(response, hops, brokers)
        async with self._listing:  # the first foreign redirect lists the brokers: sync requests, off the loop
            return await asyncio.to_thread(next_hop, response, hops, brokers)

    async def aclose(self) -> None:
        for pool in (self._http, *self._owners.values()):
            await pool.aclose()
