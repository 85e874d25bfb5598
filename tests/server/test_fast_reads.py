"""The hot-read fast path (server/_fast_reads.py) answers exactly what the FastAPI routes answer.

A query string sends a request past the fast path to the routes (which ignore `authoritative`, as they did
before), so each case compares the two answers byte for byte on the seeded sample registry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry import Registry
from server._fast_reads import _answer

TOKEN = "viewer-token-1-0123456789abcdef"


@pytest.fixture
def seeded_client(open_app: Callable[..., TestClient], seeded_file: Path) -> TestClient:
    return open_app(source=seeded_file)


def _paths(seeded_file: Path) -> list[str]:
    with Registry.open(seeded_file, create=True) as reg:
        topics = [t for tenant in reg.tenants() for ns in reg.namespaces(tenant) for t in reg.topics(ns)]
    paths = []
    for topic in topics:
        domain, rest = topic.split("://", 1)
        paths += [f"/admin/v2/schemas/{rest}/schema", f"/admin/v2/schemas/{rest}/schemas"]
        paths.append(f"/admin/v2/namespaces/{rest.rsplit('/', 1)[0]}/schemaCompatibilityStrategy")
        if domain == "persistent":
            paths.append(f"/explorer/v1/topics/{rest}")
    return paths + [
        "/admin/v2/schemas/acme/orders/no-such-topic/schema",  # 404 Schema not found
        "/admin/v2/schemas/acme/orders/no-such-topic/schemas",  # [] (not 404)
        "/admin/v2/namespaces/acme/no-such-ns/schemaCompatibilityStrategy",  # 404
        "/explorer/v1/topics/acme/orders/no-such-topic",  # 404
        "/explorer/v1/topics/acme/orders/bad%20name",  # 412
    ]


def test_every_hot_read_answers_as_the_routes_do(seeded_client: TestClient, seeded_file: Path) -> None:
    paths = _paths(seeded_file)
    assert len(paths) > 150
    for path in paths:
        fast = seeded_client.get(path)
        routed = seeded_client.get(path, params={"authoritative": "false"})
        assert (fast.status_code, fast.content) == (routed.status_code, routed.content), path
        unique = ("x-request-id",)  # every request has its own (issue 36)
        assert [h for h in fast.headers.items() if h[0] not in unique] == [
            h for h in routed.headers.items() if h[0] not in unique
        ], path
        assert ("x-request-id" in fast.headers) == ("x-request-id" in routed.headers), path


def test_hot_reads_are_served_ahead_of_the_routes(seeded_client: TestClient) -> None:
    app = seeded_client.app

    def scope(path: str) -> dict[str, object]:
        return {
            "type": "http",
            "method": "GET",
            "path": path,
            "query_string": b"",
            "headers": [(b"host", b"localhost")],
            "app": app,
        }

    assert _answer(scope("/admin/v2/schemas/acme/orders/order-created/schema")) is not None
    assert _answer(scope("/admin/v2/schemas/acme/orders/no-such-topic/schema")) is None  # the routes' 404
    assert _answer(scope("/admin/v2/schemas/acme/orders/order-created/metadata")) is None
    assert _answer(scope("/admin/v2/schemas/acme//order-created/schema")) is None


def test_the_app_answers_a_hot_read_before_its_routes(
    seeded_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import server._admin as admin

    monkeypatch.setattr(admin, "latest_schema", lambda *_: pytest.fail("the route answered a hot read"))
    assert seeded_client.get("/admin/v2/schemas/acme/orders/order-created/schema").status_code == 200


def test_fast_answers_carry_the_security_headers(seeded_client: TestClient) -> None:
    response = seeded_client.get("/admin/v2/schemas/acme/orders/order-created/schema")
    assert response.status_code == 200
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


def test_tokens_are_checked_before_a_fast_answer(open_app: Callable[..., TestClient], seeded_file: Path) -> None:
    client = open_app(source=seeded_file, tokens=f'{{"{TOKEN}": "viewer"}}')
    path = "/admin/v2/schemas/acme/orders/order-created/schema"
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer not-a-known-token"}).status_code == 401
    answer = client.get(path, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.json()["version"] >= 0


def test_writes_run_one_at_a_time_on_the_writer_thread(
    seeded_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = seeded_client.app.state.registry  # type: ignore[attr-defined]
    seen: list[str] = []
    real = registry.set_namespace_policy

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(registry, "set_namespace_policy", spy)
    assert (
        seeded_client.put("/admin/v2/namespaces/acme/orders/schemaCompatibilityStrategy", json="FULL").status_code
        == 204
    )
    assert seen and all(name.startswith("registry-writer") for name in seen)
