"""Proposals over the explorer API as a team sees them: the answers carry the current `revision` and its
`base_version` at the top and an apply its `version`; changing the review rules moves the state the list, its
filter, the counts and the Prometheus gauge show; rules nobody can meet are 400; approving a stale proposal is
409. Four people, one token each, in-process."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from registry import Registry, SchemaInfo, SchemaType
from server import create_app, parse_tokens
from serving import LOCAL

NS = "acme/orders"
TOPIC = f"persistent://{NS}/order-created"
PEOPLE = {"alice": "producer", "bob": "producer", "carol": "producer", "ops": "admin", "victor": "viewer"}
TOKENS = {name: {"role": role, "token": f"{name}-token-0123456789abcdef0123456789"} for name, role in PEOPLE.items()}


def schema(*fields: str) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "Order",
            "fields": [{"name": "id", "type": "string"}]
            + [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
        }
    )


@pytest.fixture
def reg(db_dir: Path) -> Iterator[Registry]:
    with Registry.open(db_dir / "r.db", create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=schema()))
        yield reg


@pytest.fixture
def client(reg: Registry) -> Iterator[TestClient]:
    app = create_app(reg, tokens=parse_tokens(json.dumps(TOKENS), "test"), metrics_public=True)
    with TestClient(app, base_url=LOCAL) as client:
        yield client


def call(client: TestClient, who: str, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKENS[who]['token']}"}
    return client.request(method, f"/explorer/v1{path}", json=body, headers=headers)


def propose(client: TestClient, *fields: str) -> dict[str, Any]:
    body = {"topic": TOPIC, "title": "t", "schema": {"type": "AVRO", "schema": schema(*fields), "properties": {}}}
    made = call(client, "alice", "POST", "/proposals", body)
    assert made.status_code == 201, made.text
    return dict(made.json())


def gauge(client: TestClient, wanted: dict[str, float]) -> dict[str, float]:
    """The `schema_explorer_proposals` samples once they show `wanted` (read beside the scrape: a scrape right
    after a change may show the counts before it); the last ones seen when they never do."""
    seen: dict[str, float] = {}
    for _ in range(200):
        text = client.get("/metrics").text
        seen = {
            sample.labels["state"]: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "schema_explorer_proposals"
        }
        if all(seen.get(k) == v for k, v in wanted.items()):
            break
        time.sleep(0.05)
    return seen


def test_answers_carry_revision_base_version_and_the_applied_version(client: TestClient) -> None:
    made = propose(client, "note")
    assert (made["revision"], made["base_version"], made["state"]) == (1, 0, "open")
    assert made["revisions"][0]["base_version"] == 0  # what was there stays
    pid = made["id"]
    body = {"schema": {"type": "AVRO", "schema": schema("note", "memo"), "properties": {}}}
    revised = call(client, "alice", "POST", f"/proposals/{pid}/revisions", body).json()
    assert (revised["revision"], revised["base_version"]) == (2, 0)
    shown = call(client, "bob", "GET", f"/proposals/{pid}").json()
    assert (shown["revision"], shown["base_version"]) == (2, 0) and "review" in shown
    listed = call(client, "bob", "GET", "/proposals").json()["proposals"]
    assert [(p["id"], p["revision"]) for p in listed] == [(pid, 2)]
    assert call(client, "bob", "POST", f"/proposals/{pid}/approve", {"revision": 2}).status_code == 200
    applied = call(client, "alice", "POST", f"/proposals/{pid}/apply", {"revision": 2})
    assert applied.status_code == 200, applied.text
    doc = applied.json()
    assert doc["version"] == doc["applied_version"] == 1 and applied.headers["X-Registry-Version"] == "1"
    assert doc["applied_rules"] == {"required_approvals": 1, "reviewers": [], "require_proposals": False}
    paths = client.get("/openapi.json").json()["paths"]
    answered = paths["/explorer/v1/proposals/{proposal_id}/apply"]["post"]["responses"]["200"]
    assert answered["content"]["application/json"]["schema"]["$ref"].endswith("/AppliedProposal")


def test_changing_the_rules_moves_the_list_the_filter_the_counts_and_the_gauge(client: TestClient) -> None:
    pid = propose(client, "note")["id"]
    assert call(client, "bob", "POST", f"/proposals/{pid}/approve").json()["state"] == "approved"
    assert gauge(client, {"approved": 1.0, "open": 0.0})["approved"] == 1.0
    two = call(client, "ops", "PUT", "/namespaces/acme/orders/review-rules", {"required_approvals": 2})
    assert two.status_code == 200, two.text
    assert call(client, "bob", "GET", f"/proposals/{pid}").json()["state"] == "open"
    assert call(client, "bob", "GET", "/proposals?state=approved").json()["proposals"] == []
    assert [p["id"] for p in call(client, "bob", "GET", "/proposals?state=open").json()["proposals"]] == [pid]
    counts = call(client, "bob", "GET", "/proposal-counts").json()["counts"]
    assert (counts["open"], counts["approved"]) == (1, 0)
    moved = gauge(client, {"approved": 0.0, "open": 1.0})
    assert (moved["approved"], moved["open"]) == (0.0, 1.0)
    refused = call(client, "alice", "POST", f"/proposals/{pid}/apply", {})
    assert refused.status_code == 403 and "1 of the 2 approvals" in refused.json()["reason"]
    zero = call(client, "ops", "PUT", "/namespaces/acme/orders/review-rules", {"required_approvals": 0})
    assert zero.status_code == 200
    assert [p["id"] for p in call(client, "bob", "GET", "/proposals?state=approved").json()["proposals"]] == [pid]
    assert gauge(client, {"approved": 1.0, "open": 0.0})["approved"] == 1.0


def test_rules_nobody_can_meet_are_400_naming_why(client: TestClient) -> None:
    body = {"required_approvals": 3, "reviewers": ["carol"]}
    refused = call(client, "ops", "PUT", "/namespaces/acme/orders/review-rules", body)
    assert refused.status_code == 400
    assert "3 approvals from 1 named reviewer (carol)" in refused.json()["reason"]
    kept = call(client, "bob", "GET", "/namespaces/acme/orders/review-rules").json()
    assert kept == {"required_approvals": 1, "reviewers": [], "require_proposals": False}
    # The server knows its tokens' roles: a viewer, or a name no token carries, can approve nothing here.
    for only in (["victor"], ["Victor"], ["nobody-here"]):
        refused = call(
            client, "ops", "PUT", "/namespaces/acme/orders/review-rules", {"required_approvals": 1, "reviewers": only}
        )
        assert refused.status_code == 400, only
        assert f"{only[0]} cannot approve" in refused.json()["reason"]
    able = call(
        client,
        "ops",
        "PUT",
        "/namespaces/acme/orders/review-rules",
        {"required_approvals": 1, "reviewers": ["Carol", "victor"]},
    )
    assert able.status_code == 200, able.text


def test_approving_a_stale_proposal_is_409(client: TestClient, reg: Registry) -> None:
    pid = propose(client, "note")["id"]
    direct = {"type": "AVRO", "schema": schema("memo"), "properties": {}}
    assert (
        client.post(
            "/admin/v2/schemas/acme/orders/order-created/schema",
            json=direct,
            headers={"Authorization": f"Bearer {TOKENS['carol']['token']}"},
        ).status_code
        == 200
    )
    refused = call(client, "bob", "POST", f"/proposals/{pid}/approve")
    assert refused.status_code == 409 and refused.headers["X-Registry-Error"] == "StaleProposalError"
    assert "nothing was approved" in refused.json()["reason"]
    shown = call(client, "bob", "GET", f"/proposals/{pid}").json()
    assert (shown["state"], shown["approvals"]) == ("stale", [])
