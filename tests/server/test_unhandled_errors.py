"""An error no layer answers (a bug) is one logged 500 (issue 40): one request id in the answer's body and
header, its error line and its access line; counted under status 500 (never 0); and the client's connection
stays usable for its next request. Before, Starlette's outer error middleware answered with an id of its own
after the access line had logged status 0, re-raised, and uvicorn closed the connection. A storage that fails
under a running server answers 503 with its access line too."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

import needs
from registry import Registry
from server import create_app
from serving import LOCAL, PROJECT_ROOT, free_port

PLANTED_BUG = Path(__file__).with_name("planted_bug_serve.py")
LIST_TENANTS = "/admin/v2/tenants"


def _request(sock: socket.socket, path: str) -> tuple[int, dict[str, str], bytes]:
    """One GET on an open keep-alive connection: the status, the headers and the body."""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers["content-length"]):
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection mid-answer"
        body += chunk
    return int(lines[0].split()[1]), headers, body


@pytest.fixture
def planted(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A live server whose tenant listing raises, its JSON log and its registry file."""
    needs.require("server")
    db = tmp_path / "r.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("t/ns")
    port = free_port()
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    with log_path.open("wb") as log:
        command = [sys.executable, str(PLANTED_BUG), str(db), str(port)]
        child = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/admin/v2/brokers/health", timeout=1.0)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and child.poll() is None, log_path.read_text()
                time.sleep(0.1)  # polling readiness, not a fixed wait
        yield url, log_path, db
    finally:
        child.terminate()
        child.wait(timeout=10)


def _lines(log_path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]


@pytest.mark.server
def test_a_bug_is_one_logged_500_and_the_connection_stays_usable(planted: tuple[str, Path, Path]) -> None:
    url, log_path, _ = planted
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        status, headers, body = _request(sock, LIST_TENANTS)
        assert status == 500, body
        request_id = headers["x-request-id"]
        assert f"request id {request_id}" in json.loads(body)["reason"] and "planted" not in body.decode()
        again, _, body = _request(sock, "/admin/v2/namespaces/t")  # the same connection
        assert (again, json.loads(body)) == (200, ["t/ns"])
    scraped = httpx.get(f"{url}/metrics").text
    time.sleep(0.2)  # the access line of the scrape is written after its answer
    lines = _lines(log_path)
    access = [line for line in lines if line["logger"] == "server.access" and line["route"] == LIST_TENANTS]
    assert [(line["status"], line["request_id"]) for line in access] == [(500, request_id)]
    errors = [line for line in lines if line["level"] == "error"]
    assert len(errors) == 1 and str(errors[0]["message"]).startswith(f"request {request_id}:")
    assert "RuntimeError: a planted bug" in str(errors[0]["exception"])
    assert f'schema_explorer_requests_total{{route="{LIST_TENANTS}",method="GET",status="500"}} 1.0' in scraped
    assert 'status="0"' not in scraped


@pytest.mark.server
def test_a_storage_that_breaks_under_the_server_answers_503_with_its_access_line(
    planted: tuple[str, Path, Path],
) -> None:
    url, log_path, db = planted
    for suffix in ("", "-wal"):
        os.truncate(f"{db}{suffix}", 0)
    answer = httpx.get(f"{url}/admin/v2/namespaces/t")
    assert answer.status_code == 503, answer.text
    request_id = answer.headers["x-request-id"]
    time.sleep(0.2)  # the access line is written after the answer
    lines = _lines(log_path)
    access = [line for line in lines if line["logger"] == "server.access" and line["request_id"] == request_id]
    assert [line["status"] for line in access] == [503]
    assert [line["level"] for line in lines if request_id in str(line["message"])] == ["error", "warning"]


def test_a_bug_in_process_shares_one_id_and_counts_as_500(caplog: pytest.LogCaptureFixture) -> None:
    with Registry.in_memory() as registry:
        registry.tenants = lambda: 1 / 0  # type: ignore[method-assign, assignment, return-value]
        app = create_app(registry, metrics_public=True)
        app.state.observer.access_log = True
        client = TestClient(app, base_url=LOCAL)
        with caplog.at_level(logging.INFO, logger="server"):
            answer = client.get(LIST_TENANTS)
        assert answer.status_code == 500
        request_id = answer.headers["x-request-id"]
        assert f"request id {request_id}" in answer.json()["reason"]
        error, access = caplog.records  # nothing else is logged
        assert error.levelname == "ERROR" and error.getMessage().startswith(f"request {request_id}: GET ")
        assert access.name == "server.access" and access.__dict__["request_id"] == request_id
        assert access.__dict__["status"] == 500
        scraped = client.get("/metrics").text
    assert f'schema_explorer_requests_total{{route="{LIST_TENANTS}",method="GET",status="500"}} 1.0' in scraped
    assert 'status="0"' not in scraped


def test_a_count_that_fails_after_the_answer_leaves_its_access_line(caplog: pytest.LogCaptureFixture) -> None:
    """Pulsar's counts come after the answer and may read the storage (does a missing schema's namespace
    exist?): when that read fails, the answer stands, its access line is written and the failure logged."""
    with Registry.in_memory() as registry:
        registry.create_namespace("t/ns")
        app = create_app(registry)
        app.state.observer.access_log = True
        client = TestClient(app, base_url=LOCAL)
        registry.namespace_policy = lambda namespace: 1 / 0  # type: ignore[method-assign, assignment, return-value]
        with caplog.at_level(logging.INFO, logger="server"):
            answer = client.get("/admin/v2/schemas/t/ns/missing/schema")
        assert answer.status_code == 404
    request_id = answer.headers["x-request-id"]
    access, error = sorted(caplog.records, key=lambda record: record.name, reverse=True)
    assert access.name == "server.access" and access.__dict__["status"] == 404
    assert error.getMessage() == f"request {request_id}: counting it in Pulsar's metrics failed"
