"""The bad-input catalogue over HTTP, against a live `schema-explorer serve`: each case gets a clear 4xx naming
the problem, the registry is unchanged, and the server stays up (no 500, no RecursionError)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import storm
from catalogue import REST_CASES

from registry import Registry, SchemaInfo, SchemaType, export_snapshot
from schemas import S1

pytestmark = [pytest.mark.timeout(120), pytest.mark.server]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[storm.Server, Path]]:
    folder = tmp_path_factory.mktemp("bad-input")
    db = folder / "registry.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("acme/tests")
        reg.register("persistent://acme/tests/topic", SchemaInfo(type=SchemaType.AVRO, schema=S1))
    server = storm.Server(db, folder / "serve.log").start()
    yield server, db
    server.stop()
    log = (folder / "serve.log").read_text(errors="replace")
    assert "Traceback" not in log and "RecursionError" not in log, log[-3000:]


def state(db: Path) -> str:
    """Everything in the registry but the audit trail (which records refusals on purpose)."""
    out = io.StringIO()
    with Registry.open(db, create=True) as reg:
        export_snapshot(reg, out, audit=False)
    return out.getvalue()


def send(url: str, method: str, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=60.0) as client:
        if isinstance(body, bytes):
            headers = {"content-type": "application/json", **headers}
            return client.request(method, path, content=body, headers=headers)
        if body is None:
            return client.request(method, path, headers=headers)
        return client.request(method, path, json=body, headers=headers)


def _params() -> list[Any]:
    params = []
    for case in REST_CASES:
        values, marks = (case.values, case.marks) if hasattr(case, "values") else (case, ())
        params.append(pytest.param(*values[1:], id=values[0], marks=marks))
    return params


@pytest.mark.parametrize(("method", "path", "body", "headers", "statuses", "words"), _params())
def test_bad_request_gets_a_clear_4xx_and_changes_nothing(
    live: tuple[storm.Server, Path],
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str],
    statuses: tuple[int, ...],
    words: tuple[str, ...],
) -> None:
    server, db = live
    before = state(db)
    response = send(server.url, method, path, body, headers)
    assert response.status_code in statuses, (response.status_code, response.text[:500])
    reason = response.json().get("reason", "") if "json" in response.headers.get("content-type", "") else ""
    if response.status_code != 400 or words:
        assert reason, response.text[:300]
    for word in words:
        assert word in reason, (word, reason[:500])
    assert len(reason) < 2_000, "a reason names the problem; it does not echo the input"
    assert state(db) == before
    assert server.alive
    assert httpx.get(f"{server.url}/admin/v2/tenants", timeout=10).status_code == 200


def test_the_catalogue_is_large_enough() -> None:
    assert len(REST_CASES) >= 60
    assert len({param.id for param in _params()}) == len(REST_CASES)
