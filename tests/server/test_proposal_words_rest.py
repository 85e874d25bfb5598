"""REST answers a proposal with the facts the app and the CLI put in words (registry/proposals/_words.py): each
revision's summary, derived from the revision (after a rebase too), and the refusals a change introduces with
ALWAYS_INCOMPATIBLE left out."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

ORDERS = "persistent://acme/orders/order-created"


def test_a_rebased_policy_proposal_and_a_compatible_schema_proposal(seeded: TestClient) -> None:
    made = seeded.post(
        "/explorer/v1/proposals",
        json={"namespace": "acme/orders", "policy": {"compatibility": "FULL_TRANSITIVE"}, "title": "BACKWARD → FT"},
    )
    assert made.status_code == 201, made.text
    pid = made.json()["id"]
    assert made.json()["revisions"][0]["summary"] == "compatibility: BACKWARD → FULL_TRANSITIVE"
    saved = seeded.put("/admin/v2/namespaces/acme/orders/schemaCompatibilityStrategy", json="FULL")
    assert saved.status_code < 300, saved.text
    rebased = seeded.post(f"/explorer/v1/proposals/{pid}/rebase")
    assert rebased.status_code == 200, rebased.text
    body = rebased.json()
    assert (
        body["title"] == "BACKWARD → FT" and body["revisions"][-1]["summary"] == "compatibility: FULL → FULL_TRANSITIVE"
    )

    latest = seeded.get("/admin/v2/schemas/acme/orders/order-created/schema").json()
    schema = json.loads(latest["data"])
    schema["fields"].append({"name": "note", "type": ["null", "string"], "default": None})
    made = seeded.post(
        "/explorer/v1/proposals",
        json={"topic": ORDERS, "schema": {"type": "AVRO", "schema": json.dumps(schema)}, "title": "note"},
    )
    assert made.status_code == 201, made.text
    shown = seeded.get(f"/explorer/v1/proposals/{made.json()['id']}").json()
    review = shown["review"]
    assert review["blocking"]["ALWAYS_INCOMPATIBLE"] is True
    assert review["introduced_refusals"] == [] and review["judged_strategies"] == 7
    assert shown["revisions"][0]["summary"] == f"AVRO schema against version {latest['version']}"
