"""`schema-explorer serve` end to end: a real server process on a loopback port, and its refusals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import needs
from cli.main import main
from schemas import S1, S3

ADMIN = "admin-token-e2e-0123456789abcdef"

pytestmark = pytest.mark.server  # `serve` as a child process


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server(db_dir: Path) -> Iterator[str]:
    needs.require("server")
    port = free_port()
    env = dict(
        os.environ, SCHEMA_EXPLORER_TOKENS=json.dumps({ADMIN: "admin", "viewer-token-e2e-0123456789abcdef": "viewer"})
    )
    command = [sys.executable, "-m", "cli.main", "serve", "--db", str(db_dir / "e2e.db"), "--port", str(port)]
    with subprocess.Popen(
        command, env=env, cwd=Path(__file__).resolve().parents[2], stderr=subprocess.PIPE, text=True
    ) as process:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/openapi.json", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"serve did not start: {process.stderr.read() if process.stderr else ''}")
                time.sleep(0.1)
        try:
            yield url
        finally:
            process.terminate()
            _, errors = process.communicate(timeout=15)
            assert ADMIN not in errors  # tokens are never logged


def test_serve_speaks_pulsar_admin_v2_with_tokens(server: str) -> None:
    admin = httpx.Client(base_url=server, headers={"Authorization": f"Bearer {ADMIN}"})
    assert httpx.get(f"{server}/admin/v2/tenants").status_code == 401
    # A fresh file is strict: unknown tenants and namespaces are Pulsar's 404s, never auto-created.
    assert admin.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S1}).status_code == 404
    assert admin.put("/admin/v2/tenants/t").status_code == 204
    assert admin.put("/admin/v2/namespaces/t/ns").status_code == 204
    posted = admin.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S1})
    assert posted.json() == {"version": {"version": 0}}
    assert admin.post("/admin/v2/schemas/t/ns/x/schema", json={"type": "AVRO", "schema": S3}).status_code == 409
    viewer = httpx.get(
        f"{server}/admin/v2/schemas/t/ns/x/schema",
        headers={"Authorization": "Bearer viewer-token-e2e-0123456789abcdef"},
    )
    assert viewer.json()["version"] == 0
    assert admin.get("/explorer/v1/topics").json()["total"] == 1
    assert "x-required-role" in json.dumps(httpx.get(f"{server}/openapi.json").json())


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "::"])
def test_serve_refuses_non_loopback_without_tokens(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SCHEMA_EXPLORER_TOKENS", raising=False)
    assert main(["serve", "--host", host, "--db", str(tmp_path / "r.db")]) == 2
    assert "--insecure" in capsys.readouterr().err
    assert not (tmp_path / "r.db").exists()


def test_serve_refuses_a_bad_tokens_file_without_echoing_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text('{"super-secret-value": "root"}')
    assert main(["serve", "--tokens", str(tokens), "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert "expected viewer, producer or admin" in err and "super-secret-value" not in err


def test_serve_refuses_two_token_names_of_one_person_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`alice` and Cyrillic `аlice` loaded as two people, and each approved alice's proposal (issue 40)."""
    tokens = tmp_path / "tokens.json"
    people = {"alice": "alice-token-0123456789abcdef0123456789", "\u0430lice": "other-token-0123456789abcdef0123456789"}
    tokens.write_text(json.dumps({name: {"role": "producer", "token": token} for name, token in people.items()}))
    assert main(["serve", "--tokens", str(tokens), "--db", str(tmp_path / "r.db")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "'alice' and '\u0430lice' are one person" in err
    assert not any(token in err for token in people.values()) and not (tmp_path / "r.db").exists()
