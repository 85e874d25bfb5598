"""A webhook receiver on loopback for the notification tests: a real HTTP server in a thread that keeps every
request it gets, answers the statuses a test queues (then 200), and may hold its answers until the test
releases them."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def doc(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.body)
        return found

    def signed_with(self, secret: str) -> bool:
        expected = "sha256=" + hmac.new(secret.encode(), self.body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("x-schema-explorer-signature", ""), expected)


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.statuses: list[int] = []  # answered in order, then 200
        self.release = threading.Event()
        self.release.set()  # answers at once unless a test clears it
        self.arrived = threading.Event()  # set by each request as it arrives, before any answer
        self._changed = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                owner.arrived.set()
                owner.release.wait(60)
                with owner._changed:
                    status = owner.statuses.pop(0) if owner.statuses else 200
                    if status == 200:
                        headers = {k.lower(): v for k, v in self.headers.items()}
                        owner.received.append(Received(self.path, headers, body))
                    owner._changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # serve_forever looks for shutdown() every poll_interval (0.5 s by default, which each test's teardown
        # then waited out); a short one lets the receiver stop at once.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    def wait_for(self, count: int, timeout: float = 60) -> list[Received]:
        """The requests answered 200 once there are `count` of them (a generous bound, not a timing check)."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)

    def events(self) -> list[str]:
        return [r.doc["event"] for r in self.received]

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
