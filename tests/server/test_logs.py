"""`serve --log-format json` (issue 36): one JSON object per line, each request's line with its id, route
template, status, duration and caller, never a token or a schema body."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest

import needs
from serving import PROJECT_ROOT, free_port, serve_command

pytestmark = pytest.mark.server

TOKEN = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
SCHEMA = '{"type":"record","name":"Secretive","fields":[{"name":"a","type":"int"}]}'


def test_json_lines_carry_the_request_id_of_the_answer(tmp_path: Path) -> None:
    needs.require("server")
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"ci-gate": {"role": "admin", "token": TOKEN}}))
    port = free_port()
    command = [c for c in serve_command(tmp_path / "r.db", port) if c != "--no-access-log"]
    command += ["--tokens", str(tokens), "--log-format", "json"]
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    with log_path.open("wb") as log:
        child = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/admin/v2/brokers/health", timeout=1.0)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and child.poll() is None, log_path.read_text()
                time.sleep(0.1)
        httpx.put(f"{url}/admin/v2/tenants/t", headers=auth)
        httpx.put(f"{url}/admin/v2/namespaces/t/ns", headers=auth)
        body = {"type": "AVRO", "schema": SCHEMA, "properties": {}}
        assert httpx.post(f"{url}/admin/v2/schemas/t/ns/x/schema", json=body, headers=auth).status_code == 200
        refused = httpx.get(f"{url}/admin/v2/schemas/t/ns/x/schema", headers={"Authorization": "Bearer nope"})
        missing = httpx.get(f"{url}/admin/v2/schemas/t/ns/none/schema", headers=auth)
    finally:
        child.terminate()
        child.wait(timeout=10)
    text = log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]  # every line is one JSON object
    assert TOKEN not in text and "Secretive" not in text and "nope" not in text
    by_id = {line.get("request_id"): line for line in lines if line.get("logger") == "server.access"}
    for answer, status, caller in ((refused, 401, "anonymous"), (missing, 404, "ci-gate (admin)")):
        line = by_id[answer.headers["x-request-id"]]
        assert line["status"] == status and line["level"] == "warning" and line["caller"] == caller
        assert line["route"] == "/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema"
        assert isinstance(line["duration_ms"], float) and line["time"].endswith("Z")
    registered = [line for line in by_id.values() if line["method"] == "POST"]
    assert registered and registered[0]["status"] == 200 and registered[0]["caller"] == "ci-gate (admin)"
