"""Forwarded headers and log values (issue 40). `X-Forwarded-For` is trusted only from the proxies named with
`serve --forwarded-allow-ips` (default: none, not even loopback): before, uvicorn trusted a loopback client, so
each bad token sent with a new forwarded address was never throttled, one forged address locked out another,
and the forged text went into the access line as the client. Values from the request are escaped in log lines,
so none writes a line of its own or passes for another field."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path

import httpx
import pytest

import needs
from cli.main import main
from registry import Registry
from server._errors import log_failure
from server._logs import log_config
from serving import PROJECT_ROOT, free_port, serve_command

TOKEN = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
TENANTS = "/admin/v2/tenants"
GOOD = {"Authorization": f"Bearer {TOKEN}"}
FORGED = (
    '203.0.113.11 "DELETE /admin/v2/schemas/{tenant}/{namespace}/{topic}/schema" 204 1.0 ms request 0 by ops (admin)'
)


@contextmanager
def _serving(folder: Path, *extra: str) -> Iterator[tuple[str, Path]]:
    """`schema-explorer serve` with a token, its access log on (text), and `extra` arguments: its URL and log."""
    needs.require("server")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps({"ops": {"role": "admin", "token": TOKEN}}))
    with Registry.open(folder / "r.db", create=True) as reg:
        reg.create_namespace("t/ns")
    port = free_port()
    command = [c for c in serve_command(folder / "r.db", port) if c != "--no-access-log"]
    log_path = folder / "serve.log"
    with log_path.open("wb") as log:
        child = subprocess.Popen(
            [*command, "--tokens", str(tokens), *extra],
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
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
        yield url, log_path
    finally:
        child.terminate()
        child.wait(timeout=10)


def _access_line(log_path: Path, needle: str) -> str:
    """The one line of the log that holds `needle` (written after the answer, it may take a moment)."""
    deadline = time.monotonic() + 5
    while True:
        found = [line for line in log_path.read_text().splitlines() if needle in line]
        if found or time.monotonic() > deadline:
            assert len(found) == 1, found
            return found[0]
        time.sleep(0.05)


def _bad_token(n: int) -> dict[str, str]:
    return {"Authorization": f"Bearer {n:032x}"}


@pytest.mark.server
def test_without_forwarded_allow_ips_the_connection_is_the_client(tmp_path: Path) -> None:
    with _serving(tmp_path) as (url, log_path), httpx.Client(base_url=url, timeout=10) as client:
        # Each guess claims another address: all of them come from 127.0.0.1, which is throttled.
        guesses = [
            client.get(TENANTS, headers={**_bad_token(n), "X-Forwarded-For": f"198.51.100.{n}"}) for n in range(11)
        ]
        assert [g.status_code for g in guesses] == [401] * 10 + [429]
        claimed = client.get(TENANTS, headers={**GOOD, "X-Forwarded-For": FORGED})
        assert claimed.status_code == 429
        line = _access_line(log_path, claimed.headers["x-request-id"])
    assert re.match(r'WARNING: +127\.0\.0\.1 "GET /admin/v2/tenants" 429 ', line), line
    assert "203.0.113.11" not in log_path.read_text()


@pytest.mark.server
def test_a_proxy_named_with_forwarded_allow_ips_gives_the_client(tmp_path: Path) -> None:
    with (
        _serving(tmp_path, "--forwarded-allow-ips", "127.0.0.1") as (url, log_path),
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        # The proxy appends the address it saw: the client's own claim before it counts for nothing.
        chain = [{"X-Forwarded-For": f"192.0.2.{n}, 203.0.113.9"} for n in range(11)]
        guesses = [client.get(TENANTS, headers={**_bad_token(n), **chain[n]}) for n in range(11)]
        assert [g.status_code for g in guesses] == [401] * 10 + [429]
        # Another client behind the same proxy is not locked out by the first one's failures.
        other = client.get(TENANTS, headers={**GOOD, "X-Forwarded-For": "203.0.113.10"})
        assert other.status_code == 200
        assert re.match(r'INFO: +203\.0\.113\.10 "GET /admin/v2/tenants" 200 ', _access_line(log_path, "203.0.113.10"))
        # A proxy that passes a forged value on: it is shown quoted, as one value, never as a line's fields.
        forged = client.get(TENANTS, headers={**GOOD, "X-Forwarded-For": FORGED})
        assert forged.status_code == 200
        line = _access_line(log_path, "203.0.113.11")
    assert line.split(None, 1)[1].startswith(json.dumps(FORGED) + ' "GET /admin/v2/tenants" 200 '), line


@pytest.mark.parametrize("value", ["localhost", "*", "10.0.0.1/8", "10.0.0.5,", "127.0.0.1 10.0.0.1"])
def test_a_forwarded_allow_ips_that_is_not_addresses_is_refused(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--db", str(tmp_path / "r.db"), "--forwarded-allow-ips", value]) == 2
    assert "--forwarded-allow-ips" in capsys.readouterr().err
    assert not (tmp_path / "r.db").exists()


def _formatter(log_format: str) -> logging.Formatter:
    """The formatter `serve` logs with in `log_format`, made from its logging configuration."""
    options = dict(log_config(log_format)["formatters"]["default"])
    module, _, name = options.pop("()").rpartition(".")
    options["use_colors"] = False if "use_colors" in options else None
    options = {k: v for k, v in options.items() if v is not None}
    made: logging.Formatter = getattr(import_module(module), name)(**options)
    return made


PATH = '/admin/v2/x\nINFO:     127.0.0.1 "DELETE /admin/v2/tenants/{tenant}" 204\u2028\x85\x1b[2K\r'


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_value_from_the_request_cannot_write_a_line_of_its_own(log_format: str) -> None:
    """Any message: what is not printable is escaped, in either format."""
    record = logging.LogRecord(
        "server", logging.ERROR, __file__, 0, "request %s: %s %s failed", ("1", "GET", PATH), None
    )
    written = _formatter(log_format).format(record)
    assert len(written.splitlines()) == 1, written
    assert not any(c in written for c in "\x1b\r\x85\u2028")
    if log_format == "json":
        assert json.loads(written)["message"] == f"request 1: GET {PATH} failed"


def test_the_path_of_a_failed_request_is_shown_as_one_value(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="server"):
        log_failure("1", "GET", PATH, RuntimeError("a bug"))
        log_failure("2", "GET", "/admin/v2/tenants", RuntimeError("a bug"))
    quoted, plain = (record.getMessage() for record in caplog.records)
    assert quoted == f"request 1: GET {json.dumps(PATH)} failed" and quoted.isprintable()
    assert plain == "request 2: GET /admin/v2/tenants failed"
