"""The outermost ASGI middleware: what an operator sees of every request.

It runs before everything else `create_app` installs (the hot-read fast path included), so that

- every request gets its id first (server/_request_id.py), and every error answer carries it in
  `X-Request-Id`, whichever layer refused it (the gate's 401 and 429, the limits' 413 and 503, a route's 404);
- the probes (`/admin/v2/brokers/health`, `/ready`, server/_health.py) and the scrape (`/metrics`,
  server/_metrics.py) are answered here, in front of the throttle, the limits and routing: cheap, and still
  answered while the server refuses an address or a storm of clients;
- each request is measured and counted once it is answered (server/_metrics.py: our families by route
  template and status; server/_pulsar_stats.py: Pulsar's schema registry families, from the route, the status
  and what the routes noted), and logged with its id (server/_logs.py): one access line per answer, with the
  status sent;
- an exception no layer below answered (a bug) is answered here: 500 with the request's id in the body and in
  `X-Request-Id`, and one error line under the same id. Nothing is raised further: Starlette's outer error
  middleware would answer with an id of its own and re-raise, and uvicorn would then log it a second time and
  close the connection; here the connection stays open for the client's next request.

Answers refused below ASGI (server/_serving.py) never reach here; that layer draws and logs their ids itself.
"""

from __future__ import annotations

import json
import logging
import time

from fastapi import FastAPI
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from registry._errors import ERROR_HEADER

from ._auth import GRANT_KEY
from ._errors import UNEXPECTED, failure_text, log_failure
from ._gate import Gate
from ._health import HEALTH_PATH, READY_PATH, ReadyProbe
from ._limits import API_EXTRA, Extra
from ._logs import log_access
from ._metrics import METRICS_PATH, RouteTemplates, ServerMetrics, method_label, scrape
from ._pulsar_stats import Answered, PulsarSchemaStats
from ._request_id import CONTEXT, REQUEST_ID_KEY, RequestContext, new_request_id

_ID_HEADER = b"x-request-id"
_ERROR_HEADER = ERROR_HEADER.lower().encode()
_PROBES = (HEALTH_PATH, READY_PATH)
_TEXT = (b"content-type", b"text/plain; charset=utf-8")
_JSON = (b"content-type", b"application/json")

log = logging.getLogger("server")


class Observer:
    """What is done with each answered request: our metrics, Pulsar's, and the access line."""

    def __init__(self, app: FastAPI, *, pulsar_otel: bool = True) -> None:
        self.metrics = ServerMetrics()
        self.pulsar = PulsarSchemaStats(otel=pulsar_otel)
        self.access_log = False  # `serve` turns it on unless --no-access-log
        self._app = app
        self._routes: RouteTemplates | None = None

    def finished(self, scope: Scope, context: RequestContext, status: int, seconds: float) -> None:
        """Called once per request, after its answer (`status` 0 only when none could be sent: the client left).
        The access line comes before Pulsar's counts, which may read the storage: a failure there is logged,
        and the line is written all the same."""
        if self._routes is None:  # the routes are all in place by the first request
            self._routes = RouteTemplates.of(self._app, (HEALTH_PATH, READY_PATH, METRICS_PATH))
        path: str = scope["path"]
        route = self._routes.template(path)
        method = method_label(scope["method"])
        self.metrics.requests.inc((route, method, str(status)))
        self.metrics.durations.observe((route, method), seconds)
        if self.access_log:
            grant = scope.get("state", {}).get(GRANT_KEY)
            client = scope.get("client")
            log_access(
                request_id=context.request_id,
                method=method,
                route=route,
                status=status,
                seconds=seconds,
                caller="anonymous" if grant is None else grant.caller,
                client="" if not client else str(client[0]),
            )
        answered = Answered(
            "GET" if method == "HEAD" else method,
            route,
            path,
            status,
            context.error,
            context.logged_failure,
            seconds,
            tuple(context.notes),
        )
        try:
            self.pulsar.request(self._app.state.registry, answered)
        except Exception as exc:  # noqa: BLE001 - the answer is sent and logged; a failed count must not undo that
            log.error("request %s: counting it in Pulsar's metrics failed", context.request_id, exc_info=exc)


class Observed:
    """Add with `app.add_middleware` after every other middleware, so it is the outermost."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        context = RequestContext(new_request_id())
        scope.setdefault("state", {})[REQUEST_ID_KEY] = context.request_id
        app: FastAPI = scope["app"]
        observer = app.state.observer
        started = time.perf_counter()
        status = 0

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if status >= 400:
                    message = _with_id(message, context)
            await send(message)

        token = CONTEXT.set(context)
        try:
            if scope["method"] in ("GET", "HEAD") and scope["path"] in _PROBES:
                await _probe(app, scope, observed)
            elif scope["method"] in ("GET", "HEAD") and scope["path"] == METRICS_PATH:
                await scrape(app, scope, observed, API_EXTRA)
            else:
                await self.app(scope, receive, observed)
        except Exception as exc:  # noqa: BLE001 - a bug below: answered and logged here, once, under this id
            context.logged_failure = True
            log_failure(context.request_id, scope["method"], scope["path"], exc)
            if not status:  # else the answer has begun: uvicorn closes a connection whose answer is incomplete
                body = json.dumps({"reason": failure_text(UNEXPECTED, context.request_id)}).encode()
                await _answer(observed, scope, 500, body, _JSON, API_EXTRA)
        finally:
            CONTEXT.reset(token)
            observer.finished(scope, context, status, time.perf_counter() - started)


def _with_id(message: Message, context: RequestContext) -> Message:
    """An error answer's start with the request's id; notes the core's error class it names, if any."""
    headers = list(message.get("headers", ()))
    present = False
    for key, value in headers:
        name = key.lower()
        present = present or name == _ID_HEADER
        if name == _ERROR_HEADER:
            context.error = value.decode("latin-1")
    if not present:
        headers.append((_ID_HEADER, context.request_id.encode()))
    return {**message, "headers": headers}


async def _probe(app: FastAPI, scope: Scope, send: Send) -> None:
    gate: Gate = app.state.gate
    refusal = gate.host_refusal(scope)
    if refusal is not None:
        body = json.dumps({"reason": refusal.reason}).encode()
        await _answer(send, scope, refusal.status, body, _JSON, refusal.headers)
    elif scope["path"] == HEALTH_PATH:
        await _answer(send, scope, 200, b"ok", _TEXT)
    else:
        probe: ReadyProbe = app.state.ready_probe
        started = time.perf_counter()
        readiness = await probe.check()
        app.state.metrics.storage_operation("ready", probe.kind, time.perf_counter() - started)
        retry: Extra = () if readiness.ready else ((b"retry-after", b"1"),)
        await _answer(send, scope, 200 if readiness.ready else 503, readiness.body(), _JSON, retry)


async def _answer(
    send: Send, scope: Scope, status: int, body: bytes, kind: tuple[bytes, bytes], headers: Extra = ()
) -> None:
    start = [kind, (b"content-length", str(len(body)).encode()), *headers, *API_EXTRA]
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
