"""The hot reads answered in front of FastAPI's stack still get what that stack gives every request.

Why: `FastReads` answers four GETs before any other middleware runs, so it must hand every request that a
middleware would treat differently (a body, oversized headers, a cross-origin request) to the full stack, and
see writes made through the routes at once.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from fastapi.testclient import TestClient

from registry import Registry
from server import create_app
from serving import LOCAL

HOT = "/admin/v2/schemas/acme/orders/order-created/schema"


def _client(seeded_file: Path, tmp_path: Path, **options: object) -> tuple[Registry, TestClient]:
    path = tmp_path / "front.db"
    shutil.copyfile(seeded_file, path)
    reg = Registry.open(path, auto_create=False)
    return reg, TestClient(create_app(reg, **options), base_url=LOCAL)  # type: ignore[arg-type]


def test_cross_origin_reads_get_cors_answers(seeded_file: Path, tmp_path: Path) -> None:
    reg, client = _client(seeded_file, tmp_path, cors_origins=["https://ui.example"])
    with reg, client:
        allowed = client.get(HOT, headers={"Origin": "https://ui.example"})
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "https://ui.example"
        other = client.get(HOT, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_oversized_headers_are_refused_on_hot_paths_too(seeded_file: Path, tmp_path: Path) -> None:
    reg, client = _client(seeded_file, tmp_path)
    with reg, client:
        answer = client.get(HOT, headers={"X-Padding": "x" * 20_000})
        assert answer.status_code == 431 and "over the limit" in answer.json()["reason"]


def test_a_read_with_an_empty_body_is_answered_and_one_with_a_body_goes_to_the_routes(
    seeded_file: Path, tmp_path: Path
) -> None:
    reg, client = _client(seeded_file, tmp_path)
    with reg, client:
        plain = client.get(HOT, headers={"Content-Length": "0"})
        routed = client.request("GET", HOT, content=b"{}")
        assert plain.status_code == routed.status_code == 200
        assert plain.content == routed.content


def test_a_version_registered_through_the_routes_is_read_back_at_once(seeded_file: Path, tmp_path: Path) -> None:
    reg, client = _client(seeded_file, tmp_path)
    with reg, client:
        before = client.get(HOT).json()
        schema = json.loads(reg.get("persistent://acme/orders/order-created").data)
        added = {"name": "front_read_note", "type": ["null", "string"], "default": None}
        changed = json.dumps({**schema, "fields": [*schema["fields"], added]})  # compatible both ways
        posted = client.post(HOT, json={"type": "AVRO", "schema": changed, "properties": {}})
        assert posted.status_code == 200, posted.text
        after = client.get(HOT).json()
        assert after["version"] == before["version"] + 1


def test_serialised_bodies_stay_within_their_budget() -> None:
    from server._fast_reads import Bodies

    bodies = Bodies(max_bytes=100)
    held = [object() for _ in range(10)]
    for thing in held:
        assert bodies.get((thing,), lambda: b"x" * 30) == b"x" * 30
    assert len(bodies) * 30 <= 100  # the bodies kept stay within the budget
    made: list[int] = []
    again = bodies.get((held[-1],), lambda: made.append(1) or b"y")
    assert (again, made) == (b"x" * 30, [])  # the newest is still served from memory
