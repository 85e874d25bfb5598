"""The hot reads, answered as JSON bytes, in front of FastAPI's whole stack.

Four reads make up nearly all of a client's traffic (bench/bench_server.py): the latest schema, all live
versions, a namespace's strategy and a topic's catalog row. Each is one cheap facade call (10-80 µs on
SQLite); FastAPI's middleware (body limit, telemetry, error pages), our limits middleware, routing,
dependency solving and response validation around it cost several times that. `FastReads` is the outermost
ASGI middleware `create_app` installs: it first recognises exactly these four GETs, calls the same answer
functions as the FastAPI routes (so the bytes are the same) and answers on the event loop with the headers
the middleware it passes would have added. Anything else, or anything these functions cannot answer with a 200
(an error, a refused token, a query string, a body, oversized headers, a cross-origin request that CORS must
see), goes on to the full stack, which answers it as before: errors, limits, CORS and auth refusals keep one
code path.

SQLite reads on the event loop do not wait for writers (WAL: readers see the last commit), so they are
safe to run there; writes run on one writer thread (`_deps.written`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from pydantic import TypeAdapter
from starlette.types import ASGIApp, Receive, Scope, Send

from registry import CompatibilityStrategy, SchemaRegistry
from registry._cache_budget import FAST_READ_BYTES
from registry._cache_usage import CacheUsage

from ._admin_wire import GetAllVersionsSchemaResponse, GetSchemaResponse
from ._explorer_wire import TopicSummary
from ._limits import API_EXTRA, RequestHead, ServerLimits

JSON_HEADERS = ((b"content-type", b"application/json"),)
_STRATEGY = TypeAdapter(CompatibilityStrategy)


def schema_topic(tenant: str, namespace: str, topic: str) -> str:
    # Schema ids have no domain (§1): the schemas resource names topics without one.
    return f"persistent://{tenant}/{namespace}/{topic}"


# --- the answers (shared with the FastAPI routes) ------------------------------------------------------
# Serialised as FastAPI serialises a route's return value (pydantic's JSON serializer, by alias), once per
# value: the embedded registry hands back the very same objects while nothing changed (registry/storage/_read_cache.py),
# so the bytes are kept by the identity of what they were made from.


class Bodies:
    """Bodies by the identity of the objects they were made from (held here, so their ids stay theirs).
    Bounded: once the bodies pass `max_bytes` (a share of the cache budget, registry/_cache_budget.py)
    everything goes (replaced objects would otherwise be held forever); the objects they hold weigh about as
    much again."""

    def __init__(self, max_bytes: int = FAST_READ_BYTES) -> None:
        self._found: dict[tuple[int, ...], tuple[object, bytes]] = {}
        self._bytes = 0
        self._max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._found)

    def usage(self) -> CacheUsage:
        """The bytes held and the share of the budget (/metrics, server/_metrics.py)."""
        return CacheUsage("fast_reads", self._bytes, self._max_bytes)

    def get(self, source: Sequence[object], make: Callable[[], bytes]) -> bytes:
        """`make()`, or the bytes it made for these same objects."""
        key = tuple(map(id, source))
        found = self._found.get(key)
        if found is not None:
            return found[1]
        body = make()
        if self._bytes + len(body) > self._max_bytes:
            self._found.clear()
            self._bytes = 0
        self._found[key] = (tuple(source), body)
        self._bytes += len(body)
        return body


_BODIES = Bodies()


def latest_schema(registry: SchemaRegistry, tenant: str, namespace: str, topic: str) -> bytes:
    entry = registry.get(schema_topic(tenant, namespace, topic))
    return _BODIES.get(
        (entry,),
        lambda: GetSchemaResponse.__pydantic_serializer__.to_json(GetSchemaResponse.of(entry), by_alias=True),
    )


def all_schemas(registry: SchemaRegistry, tenant: str, namespace: str, topic: str) -> bytes:
    history = registry.history(schema_topic(tenant, namespace, topic))

    def make() -> bytes:
        response = GetAllVersionsSchemaResponse(getSchemaResponses=[GetSchemaResponse.of(e) for e in history])
        return GetAllVersionsSchemaResponse.__pydantic_serializer__.to_json(response, by_alias=True)

    return _BODIES.get((GetAllVersionsSchemaResponse, *history), make)


def namespace_strategy(registry: SchemaRegistry, tenant: str, namespace: str) -> bytes:
    policy = registry.namespace_policy(f"{tenant}/{namespace}")
    return _BODIES.get((_STRATEGY, policy), lambda: _STRATEGY.dump_json(policy.compatibility))


def topic_summary(registry: SchemaRegistry, domain: str, tenant: str, namespace: str, topic: str) -> bytes:
    summary = TopicSummary.of(registry.topic_summary(f"{domain}://{tenant}/{namespace}/{topic}"))
    return TopicSummary.__pydantic_serializer__.to_json(summary, by_alias=True)


# --- the fast path ---------------------------------------------------------------------------------------

# With what the limits middleware adds to every API answer (server/_limits.py).
_FAST_HEADERS = (*JSON_HEADERS, *API_EXTRA)


class FastReads:
    """ASGI middleware answering the hot reads before the rest of the stack runs; add it last (outermost)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and not scope["query_string"]:
            app: FastAPI = scope["app"]  # set by Starlette before its middleware stack runs
            body = _answer(scope) if _plain(app, scope) else None
            if body is not None:
                headers = [(b"content-length", str(len(body)).encode()), *_FAST_HEADERS]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _plain(app: FastAPI, scope: Scope) -> bool:
    """No body, no Origin (CORS answers those), headers within the limit (else the limits answer 431)."""
    head = RequestHead.of(scope)
    limits: ServerLimits = app.state.limits
    return not (head.has_body or head.cross_origin) and head.header_bytes <= limits.max_header_bytes


def _answer(scope: Scope) -> bytes | None:
    """The 200 body for a hot read, or None to let the routes answer (another path, a refused token, an
    error). Path segments are matched as the routes' `{param}` patterns match them: one non-empty segment."""
    if scope.get("root_path"):
        return None
    parts = scope["path"].split("/")
    size = len(parts)
    if size not in (7, 8) or parts[0] or not all(parts[4:]):
        return None
    call: Any
    if size == 8 and parts[1] == "admin" and parts[2] == "v2" and parts[3] == "schemas":
        if parts[7] == "schema":
            call = latest_schema
        elif parts[7] == "schemas":
            call = all_schemas
        else:
            return None
        args: tuple[str, ...] = (parts[4], parts[5], parts[6])
    elif size == 7 and parts[1] == "admin" and parts[2] == "v2" and parts[3] == "namespaces":
        if parts[6] != "schemaCompatibilityStrategy":
            return None
        call, args = namespace_strategy, (parts[4], parts[5])
    elif size == 7 and parts[1] == "explorer" and parts[2] == "v1" and parts[3] == "topics":
        if scope["app"].state.admin_only:
            return None  # `serve --admin-only` has no explorer API: the router answers 404
        call, args = topic_summary, ("persistent", parts[4], parts[5], parts[6])
    else:
        return None
    state = scope["app"].state
    if not state.gate.admits_quietly(scope):
        return None  # every role may read these; the full stack answers (and counts) a refusal
    try:
        body: bytes = call(state.registry, *args)
    except Exception:  # noqa: BLE001 - the routes answer errors (the same call raises the same error there)
        return None
    return body
