"""Webhooks over the explorer API (/explorer/v1/webhooks): an admin adds, lists and removes them; a producer or
a viewer is refused with nothing stored; the secret is never answered; a proposal made over REST (through the
server's group-commit writer) reaches a receiver on loopback once committed, and /metrics counts it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from registry import Registry, SchemaInfo, SchemaType
from registry.webhooks import DELIVERIES
from server import create_app, parse_tokens
from serving import LOCAL
from webhook_receiver import Receiver

NS = "acme/orders"
TOPIC = f"persistent://{NS}/order-created"
PEOPLE = {"alice": "producer", "victor": "viewer", "ops": "admin"}
TOKENS = {name: {"role": role, "token": f"{name}-token-0123456789abcdef0123456789"} for name, role in PEOPLE.items()}
SECRET = "s3cret-never-answered"
SCHEMA = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}


@pytest.fixture
def client(db_dir: Path) -> Iterator[TestClient]:
    with Registry.open(db_dir / "r.db", create=True) as reg:
        reg.create_tenant("acme")
        reg.create_namespace(NS)
        reg.register(TOPIC, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(SCHEMA)))
        app = create_app(reg, tokens=parse_tokens(json.dumps(TOKENS), "test"), metrics_public=True)
        with TestClient(app, base_url=LOCAL) as client:
            yield client
        assert DELIVERIES.wait_idle(60)


def call(client: TestClient, who: str, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKENS[who]['token']}"}
    return client.request(method, f"/explorer/v1{path}", json=body, headers=headers)


def test_an_admin_adds_lists_and_removes_webhooks_without_the_secret_read_back(client: TestClient) -> None:
    made = call(client, "ops", "POST", "/webhooks", {"url": "https://chat.example.com/x", "secret": SECRET})
    assert made.status_code == 201, made.text
    assert made.json()["has_secret"] is True and made.json()["events"] == ["*"] and SECRET not in made.text
    listed = call(client, "ops", "GET", "/webhooks")
    assert listed.status_code == 200 and [h["id"] for h in listed.json()["webhooks"]] == [1]
    assert SECRET not in listed.text and listed.json()["webhooks"][0]["created_by"] == "ops"
    gone = call(client, "ops", "DELETE", "/webhooks/1")
    assert gone.status_code == 200 and gone.json()["id"] == 1 and SECRET not in gone.text
    assert call(client, "ops", "GET", "/webhooks").json() == {"webhooks": []}
    assert call(client, "ops", "DELETE", "/webhooks/1").status_code == 404


@pytest.mark.parametrize("who", ["alice", "victor"])
def test_a_producer_or_viewer_is_refused_with_nothing_stored(client: TestClient, who: str) -> None:
    refused = call(client, who, "POST", "/webhooks", {"url": "https://chat.example.com/x"})
    assert refused.status_code == 403 and "admin" in refused.json()["reason"]
    assert call(client, who, "GET", "/webhooks").status_code == 403
    call(client, "ops", "POST", "/webhooks", {"url": "https://chat.example.com/x"})
    assert call(client, who, "DELETE", "/webhooks/1").status_code == 403
    assert [h["id"] for h in call(client, "ops", "GET", "/webhooks").json()["webhooks"]] == [1]


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://chat.example.com/x"},
        {"url": "https://chat.example.com/x", "events": ["proposal.nope"]},
        {"url": "https://chat.example.com/x", "events": "proposal.*"},
        {"url": "https://chat.example.com/x", "extra": 1},
    ],
)
def test_a_bad_webhook_is_400_with_nothing_stored(client: TestClient, body: dict[str, Any]) -> None:
    answer = call(client, "ops", "POST", "/webhooks", {**body, "secret": SECRET})
    assert answer.status_code == 400, answer.text
    assert SECRET not in answer.text
    assert call(client, "ops", "GET", "/webhooks").json() == {"webhooks": []}


def test_a_proposal_over_rest_reaches_the_receiver_after_commit_and_is_counted(client: TestClient) -> None:
    def delivered() -> float:
        text = client.get("/metrics").text
        for family in text_string_to_metric_families(text):
            if family.name == "schema_explorer_webhook_deliveries":
                for sample in family.samples:
                    if sample.name.endswith("_total") and sample.labels == {"outcome": "delivered"}:
                        return sample.value
        raise AssertionError("no schema_explorer_webhook_deliveries_total{outcome=delivered} in /metrics")

    before = delivered()
    with Receiver() as receiver:
        body = {"url": receiver.url, "events": ["proposal.*"], "secret": SECRET}
        assert call(client, "ops", "POST", "/webhooks", body).status_code == 201
        made = call(
            client,
            "alice",
            "POST",
            "/proposals",
            {
                "topic": TOPIC,
                "schema": {"type": "AVRO", "schema": json.dumps(SCHEMA | {"doc": "x"})},
                "title": "Doc it",
            },
        )
        assert made.status_code == 201, made.text
        (got,) = receiver.wait_for(1)
        assert DELIVERIES.wait_idle(60)
    assert got.signed_with(SECRET)
    assert (got.doc["event"], got.doc["actor"], got.doc["proposal"]["id"]) == (
        "proposal.created",
        "alice",
        made.json()["id"],
    )
    assert delivered() == before + 1
    last = call(client, "ops", "GET", "/webhooks").json()["webhooks"][0]["last_delivery"]
    assert (last["outcome"], last["event"], last["status"]) == ("delivered", "proposal.created", 200)
