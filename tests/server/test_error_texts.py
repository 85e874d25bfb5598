"""Errors never show paths or exception text to clients: the server logs them under a request id, and the
answer carries that id (body and X-Request-Id) so an operator can find the log line."""

from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from registry import Registry, StorageError
from server import create_app
from serving import LOCAL

SECRET = "/srv/registry/secret-path.db: database disk image is malformed"


@pytest.mark.parametrize(
    ("error", "status"),
    [(RuntimeError(SECRET), 500), (StorageError(SECRET), 503)],
    ids=["a bug", "a storage failure"],
)
def test_an_error_answers_a_request_id_and_logs_the_text(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, error: Exception, status: int
) -> None:
    registry = Registry.in_memory()

    def broken() -> list[str]:
        raise error

    monkeypatch.setattr(registry, "tenants", broken)
    client = TestClient(create_app(registry), raise_server_exceptions=False, base_url=LOCAL)
    with caplog.at_level(logging.ERROR, logger="server"):
        answer = client.get("/admin/v2/tenants")
    assert answer.status_code == status
    text = answer.json()["reason"]
    assert "secret-path" not in text and "malformed" not in text and type(error).__name__ not in text
    request_id = answer.headers["x-request-id"]
    assert f"request id {request_id}" in text
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert logged and SECRET in str(logged[0].exc_info[1])
