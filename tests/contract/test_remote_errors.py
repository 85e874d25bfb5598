"""`registry.open(url)` when the other end is not a healthy, open Pulsar admin endpoint: nothing listening,
a web server that is not Pulsar, flaky answers, slow answers, and tokens (a real `serve --tokens`).

The stand-ins are tiny `http.server`s started here: the only fakes, at a boundary this project does not own.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import registry
from registry import AuthError, SchemaInfo, SchemaType, StorageError
from registry.remote._handle import RemoteRegistry
from serving import free_port, seeded

Handler = Callable[[BaseHTTPRequestHandler], None]


@pytest.fixture
def stand_in() -> Iterator[Callable[[Handler], str]]:
    """`stand_in(handler) -> url`: an HTTP server whose every request is answered by `handler`."""
    servers: list[ThreadingHTTPServer] = []

    def start(handler: Handler) -> str:
        class Answer(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's names)
                handler(self)

            do_POST = do_PUT = do_DELETE = do_GET  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def reply(request: BaseHTTPRequestHandler, status: int, body: str, kind: str = "application/json") -> None:
    data = body.encode()
    request.send_response(status)
    request.send_header("Content-Type", kind)
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)


def test_nothing_listening_is_named_with_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StorageError, match=f"cannot reach the Pulsar admin endpoint {url}"):
        registry.open(url)


@pytest.mark.parametrize(
    "url", ["http://", "http:///admin/v2", "http://exa mple.com"], ids=["no host", "path only", "a space"]
)
def test_a_malformed_url_is_refused(url):
    with pytest.raises(StorageError, match="invalid URL"):
        registry.open(url)


def test_a_web_page_is_not_a_pulsar_endpoint(stand_in):
    url = stand_in(lambda r: reply(r, 200, "<!doctype html><title>Grafana</title>", "text/html"))
    with pytest.raises(StorageError, match=f"{url} is not a Pulsar admin endpoint: .*HTML page"):
        registry.open(url)


def test_a_json_api_without_tenants_is_not_a_pulsar_endpoint(stand_in):
    url = stand_in(lambda r: reply(r, 404, '{"detail": "Not Found"}'))
    with pytest.raises(StorageError, match=r"not a Pulsar admin endpoint: GET /admin/v2/tenants answered HTTP 404"):
        registry.open(url)


def test_reads_are_retried_and_writes_are_not(stand_in):
    seen: list[str] = []

    def flaky(request: BaseHTTPRequestHandler) -> None:
        seen.append(f"{request.command} {request.path}")
        if len([s for s in seen if s.startswith("GET /admin/v2/tenants")]) == 1:
            reply(request, 503, '{"reason": "warming up"}')
        elif request.command == "GET" and request.path == "/admin/v2/tenants":
            reply(request, 200, "[]")
        elif request.command == "POST":
            reply(request, 503, '{"reason": "metadata store unavailable"}')
        else:
            reply(request, 404, '{"reason": "Not Found"}')

    reg = registry.open(stand_in(flaky))  # the first GET gets a 503, the second succeeds
    assert seen[:2] == ["GET /admin/v2/tenants", "GET /admin/v2/tenants"]
    with pytest.raises(StorageError, match="metadata store unavailable"):
        reg.register("persistent://t/n/x", SchemaInfo(type=SchemaType.STRING))
    assert sum(s.startswith("POST") for s in seen) == 1
    reg.close()


def test_a_slow_endpoint_times_out_with_a_clear_error(stand_in):
    def slow(request: BaseHTTPRequestHandler) -> None:
        time.sleep(1.0)
        reply(request, 200, "[]")

    with pytest.raises(StorageError, match=r"no answer from .* within 0.2 s"):
        RemoteRegistry(stand_in(slow), timeout=0.2, attempts=1)


def test_broker_defaults_come_from_the_runtime_configuration(stand_in):
    config = {"schemaCompatibilityStrategy": "BACKWARD", "isSchemaValidationEnforced": "true", "other": "x"}

    def broker(request: BaseHTTPRequestHandler) -> None:
        if request.path == "/admin/v2/brokers/configuration/runtime":
            reply(request, 200, json.dumps(config))
        else:
            reply(request, 200, "[]")

    reg = registry.open(stand_in(broker) + "/admin/v2/")  # a pasted /admin/v2 suffix is fine
    assert str(reg.broker.compatibility) == "BACKWARD" and reg.broker.validation_enforced
    assert reg.broker.allow_auto_update  # not reported: Pulsar's default
    reg.close()


TOKENS = {"viewer-token-1-0123456789abcdef": "viewer", "admin-token-1-0123456789abcdef": "admin"}


@pytest.fixture(scope="module")
def guarded_url(start_server, tmp_path_factory) -> str:
    db = seeded(tmp_path_factory.mktemp("guarded") / "registry.db")
    return start_server(db, {"SCHEMA_EXPLORER_TOKENS": json.dumps(TOKENS)})  # type: ignore[no-any-return]


def test_no_token_is_an_auth_error(guarded_url):
    with pytest.raises(AuthError, match="token"):
        registry.open(guarded_url)


def test_a_viewer_token_reads_but_cannot_write(guarded_url):
    with registry.open(guarded_url, token="viewer-token-1-0123456789abcdef") as reg:
        assert reg.get("persistent://acme/orders/order-created").version == 13
        with pytest.raises(AuthError):
            reg.delete("persistent://acme/orders/order-created")
        with pytest.raises(AuthError):
            reg.set_namespace_policy("acme/orders", compatibility="FULL")


def test_a_viewer_gets_the_what_if_a_producer_gets_computed_from_its_reads(guarded_url):
    """The explorer's what-if route wants a producer's role; a viewer's handle explains the same candidate from
    the admin reads it may make instead of failing."""
    topic = "persistent://acme/orders/order-created"
    with (
        registry.open(guarded_url, token="viewer-token-1-0123456789abcdef") as viewer,
        registry.open(guarded_url, token="admin-token-1-0123456789abcdef") as admin,
    ):
        candidate = admin.get(topic, 3).info
        before = admin.requests_sent
        asked = admin.what_if(topic, candidate)
        assert admin.requests_sent - before == 1  # the admin's handle asked the server
        before = viewer.requests_sent
        assert viewer.what_if(topic, candidate) == asked
        assert viewer.requests_sent - before > 2  # refused there, read and computed here


def test_an_admin_token_writes(guarded_url):
    with registry.open(guarded_url, token="admin-token-1-0123456789abcdef") as reg:
        assert reg.register("persistent://acme/orders/guarded", SchemaInfo(type=SchemaType.STRING)).version == 0


def test_a_token_with_a_newline_is_refused_before_sending():
    with pytest.raises(AuthError, match="control characters"):
        registry.open("http://127.0.0.1:9", token="abc\ndef")
