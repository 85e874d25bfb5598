"""A reverse proxy on loopback that names the person, as oauth2-proxy or nginx does in front of the app.

`ui --user-header NAME` trusts a header that a proxy sets on every request. Streamlit reads a session's headers
from the WebSocket handshake, not from the page's HTTP requests, so a test that hands the header to the browser
(Playwright's `extra_http_headers`) tests the browser, not the app: Chromium 150 sends such headers on ordinary
requests but not on the WebSocket upgrade. This proxy does what a real one must (docs/guide/app.md "Who did it"):
it sets the header, replacing any the client sent, on every request, the upgrade included, and forwards the
WebSocket both ways, subprotocol and all.

Tornado (Streamlit's own server library) serves it on a thread of its own; `IdentityProxy(upstream, header,
value)` starts it and `.url` is where the browser goes, one proxy per person.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from tornado import httpclient, httputil, web, websocket
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

# Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are never forwarded.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
# What the WebSocket handshake itself negotiates: each side of the proxy does its own.
HANDSHAKE = {"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol"}


def forwarded(headers: httputil.HTTPHeaders, identity: tuple[str, str], drop: set[str]) -> httputil.HTTPHeaders:
    """The request's headers less those `drop`s, with the identity header set (a client's own is replaced)."""
    name, value = identity
    out = httputil.HTTPHeaders()
    for key, item in headers.get_all():
        if key.lower() not in drop and key.lower() != name.lower():
            out.add(key, item)
    out[name] = value
    return out


class _Forward(web.RequestHandler):
    """An ordinary request, forwarded as it came (body, cookies, Host), answered with the upstream's answer."""

    SUPPORTED_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")

    def initialize(self, upstream: str, identity: tuple[str, str]) -> None:
        self.upstream = upstream
        self.identity = identity

    async def _forward(self) -> None:
        request = httpclient.HTTPRequest(
            self.upstream + self.request.uri,
            method=self.request.method,
            headers=forwarded(self.request.headers, self.identity, HOP_BY_HOP | {"content-length"}),
            body=self.request.body if self.request.method in ("POST", "PUT", "PATCH") else None,
            allow_nonstandard_methods=True,
            follow_redirects=False,
            decompress_response=False,
            request_timeout=120,
        )
        answer = await httpclient.AsyncHTTPClient().fetch(request, raise_error=False)
        if answer.code == 599:  # no answer at all (tornado's code for a connection error)
            raise web.HTTPError(502, f"upstream: {answer.error}")
        self.set_status(answer.code, answer.reason)
        self.clear_header("Content-Type")
        for key, item in answer.headers.get_all():
            if key.lower() not in HOP_BY_HOP | {"content-length"}:
                self.add_header(key, item)
        if answer.body and self.request.method != "HEAD":
            self.write(answer.body)

    get = head = post = put = delete = patch = options = _forward


class _WebSocket(websocket.WebSocketHandler):
    """The upgrade: the upstream WebSocket is opened first (with the identity header), so the browser's handshake
    can answer with the subprotocol the upstream chose; then every message is relayed both ways."""

    def initialize(self, upstream: str, identity: tuple[str, str]) -> None:
        self.upstream_url = "ws" + upstream.removeprefix("http") + self.request.uri
        self.identity = identity
        self.upstream: websocket.WebSocketClientConnection | None = None

    async def prepare(self) -> None:
        offered = self.request.headers.get("Sec-WebSocket-Protocol", "")
        request = httpclient.HTTPRequest(
            self.upstream_url, headers=forwarded(self.request.headers, self.identity, HOP_BY_HOP | HANDSHAKE)
        )
        protocols = [p.strip() for p in offered.split(",") if p.strip()] or None
        try:
            self.upstream = await websocket.websocket_connect(request, subprotocols=protocols)
        except Exception as error:  # the upstream refused the upgrade: refuse it here too, naming why
            raise web.HTTPError(502, f"upstream WebSocket: {error}") from error

    def check_origin(self, origin: str) -> bool:
        return True  # the upstream checks the Origin it is sent; the proxy forwards it as it came

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        assert self.upstream is not None
        return self.upstream.selected_subprotocol

    def open(self, *args: Any, **kwargs: Any) -> None:
        asyncio.ensure_future(self._relay_upstream())

    async def _relay_upstream(self) -> None:
        assert self.upstream is not None
        while (message := await self.upstream.read_message()) is not None:
            try:
                await self.write_message(message, binary=isinstance(message, bytes))
            except websocket.WebSocketClosedError:
                break
        self.close()

    async def on_message(self, message: str | bytes) -> None:
        assert self.upstream is not None
        try:
            await self.upstream.write_message(message, binary=isinstance(message, bytes))
        except websocket.WebSocketClosedError:
            self.close()

    def on_close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()


def _application(upstream: str, identity: tuple[str, str]) -> web.Application:
    settings = {"upstream": upstream, "identity": identity}

    class Dispatch(web.Application):
        """Sends an upgrade to the WebSocket relay and anything else to the plain forwarder."""

        def find_handler(self, request: httputil.HTTPServerRequest, **kwargs: Any) -> web._HandlerDelegate:
            upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
            handler = _WebSocket if upgrade else _Forward
            return self.get_handler_delegate(request, handler, target_kwargs=settings)

    return Dispatch()


class IdentityProxy:
    """`IdentityProxy("http://127.0.0.1:8501", "X-Forwarded-User", "alice@example.com").url`: the app as that
    person sees it behind a proxy. `stop()` ends it."""

    def __init__(self, upstream: str, header: str, value: str) -> None:
        sockets = bind_sockets(0, "127.0.0.1")
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        self._loop = asyncio.new_event_loop()
        self._server: HTTPServer | None = None
        started = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            self._server = HTTPServer(_application(upstream.rstrip("/"), (header, value)), xheaders=False)
            self._server.add_sockets(sockets)
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name=f"identity-proxy-{value}", daemon=True)
        self._thread.start()
        started.wait(timeout=10)

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.stop()
                await self._server.close_all_connections()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
