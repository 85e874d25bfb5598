"""The explorer API over the sample registry: search and paging, summaries, diffs, what-if, plans, impact."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry import Registry
from schemas import S1, S2, S3
from server import create_app
from serving import LOCAL

BASE = "/explorer/v1/topics/t/ns/orders"


def register(client: TestClient, *texts: str) -> None:
    for text in texts:
        assert client.post("/admin/v2/schemas/t/ns/orders/schema", json={"type": "AVRO", "schema": text}).is_success


def test_search_pages_through_every_topic_once(seeded: TestClient) -> None:
    first = seeded.get("/explorer/v1/topics", params={"limit": 20}).json()
    total = first["total"]
    seen = [row["topic"] for row in first["items"]]
    offset = 20
    while offset < total:
        page = seeded.get("/explorer/v1/topics", params={"limit": 20, "offset": offset}).json()
        seen += [row["topic"] for row in page["items"]]
        offset += 20
    assert total == 47 and len(seen) == len(set(seen)) == total
    assert first["has_more"] is True and sum(first["by_type"].values()) == total


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"q": "ORDER"}, lambda row: "order" in row["topic"] or any("order" in f.lower() for f in row["fields"])),
        ({"type": ["JSON", "PROTOBUF_NATIVE"]}, lambda row: row["schema_type"] in ("JSON", "PROTOBUF_NATIVE")),
        ({"strategy": "BACKWARD"}, lambda row: row["strategy"] == "BACKWARD"),
        ({"namespace": "acme/orders"}, lambda row: row["namespace"] == "acme/orders"),
        ({"tenant": "globex", "min_versions": 2}, lambda row: row["tenant"] == "globex" and row["versions"] >= 2),
        ({"has_clients": "true"}, lambda row: row["producers"] + row["consumers"] > 0),
    ],
    ids=["substring of name or field", "schema types", "strategy", "namespace", "tenant and versions", "clients"],
)
def test_search_filters(seeded: TestClient, params: dict[str, object], check) -> None:
    page = seeded.get("/explorer/v1/topics", params={**params, "limit": 500}).json()
    assert page["items"] and all(check(row) for row in page["items"])


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"type": "NOPE"}, {"strategy": "SIDEWAYS"}],
    ids=["limit 0", "limit too big", "negative offset", "unknown type", "unknown strategy"],
)
def test_search_refuses_bad_parameters_naming_them(seeded: TestClient, params: dict[str, object]) -> None:
    response = seeded.get("/explorer/v1/topics", params=params)
    assert response.status_code == 400
    assert next(iter(params)) in response.json()["reason"]


def test_summary_and_effective_policy(client: TestClient) -> None:
    register(client, S1, S2)
    summary = client.get(BASE).json()
    assert (summary["versions"], summary["latest_version"], summary["schema_type"]) == (2, 1, "AVRO")
    assert summary["fields"] == ["field1", "field2"]
    policy = client.get(f"{BASE}/policy").json()
    assert policy["admin_compatibility"] == {"value": "FULL", "source": "broker default"}
    assert client.get("/explorer/v1/topics/t/ns/nope").status_code == 404


def test_diff_of_two_versions_and_of_a_candidate(client: TestClient) -> None:
    register(client, S1, S2)
    diff = client.get(f"{BASE}/diff", params={"old_version": 0, "new_version": 1}).json()
    assert [c["kind"] for c in diff["changes"]] == ["FIELD_ADDED"]
    assert (diff["backward"], diff["forward"]) == ("ok", "ok")
    assert (diff["topic"], diff["old_version"], diff["new_version"]) == ("persistent://t/ns/orders", 0, 1)
    to_latest = client.get(f"{BASE}/diff", params={"old_version": 0}).json()
    assert (to_latest["old_version"], to_latest["new_version"]) == (0, 1), "the latest is named"
    from_latest = client.post(f"{BASE}/diff", json={"candidate": {"type": "AVRO", "schema": S3}}).json()
    assert [c["kind"] for c in from_latest["changes"]] == ["DEFAULT_REMOVED"]
    assert (from_latest["old_version"], from_latest["new_version"]) == (1, "candidate")
    body = {"old_version": 0, "candidate": {"type": "AVRO", "schema": S3}}
    from_first = client.post(f"{BASE}/diff", json=body).json()
    assert from_first["backward"] == "breaks" and from_first["old_version"] == 0
    assert client.get(f"{BASE}/diff", params={"old_version": 7}).status_code == 404
    missing = client.get(f"{BASE}/diff")
    assert missing.status_code == 400 and "old_version" in missing.json()["reason"]


def test_diff_still_reads_the_older_names_from_and_to(client: TestClient) -> None:
    """Links and callers made before issue 34 used `from` and `to`; they keep working, never beside the new."""
    register(client, S1, S2)
    old = client.get(f"{BASE}/diff", params={"from": 0, "to": 1}).json()
    assert (old["old_version"], old["new_version"]) == (0, 1)
    body = {"from": 0, "candidate": {"type": "AVRO", "schema": S3}}
    assert client.post(f"{BASE}/diff", json=body).json()["old_version"] == 0
    both = client.get(f"{BASE}/diff", params={"from": 0, "old_version": 1})
    assert both.status_code == 400 and "not both" in both.json()["reason"]
    body = {"from": 0, "old_version": 1, "candidate": {"type": "AVRO", "schema": S3}}
    assert client.post(f"{BASE}/diff", json=body).status_code == 400


def test_what_if_explains_every_strategy_and_writes_nothing(client: TestClient) -> None:
    register(client, S1)
    response = client.post(f"{BASE}/what-if", json={"type": "AVRO", "schema": S3})
    body = response.json()
    assert response.status_code == 200
    assert body["result"]["compatible"] is False
    problem = body["result"]["problems"][0]
    assert problem["code"] == "READER_FIELD_WITHOUT_DEFAULT" and problem["direction"] == "BACKWARD"
    assert body["by_strategy"]["FORWARD"]["compatible"] is True
    assert len(body["by_strategy"]) == 8
    assert body["registration"]["accepted"] is False and body["change_order"]["order"] == "producers first"
    assert client.get("/admin/v2/schemas/t/ns/orders/schemas").json()["getSchemaResponses"][-1]["version"] == 0


def test_what_if_bad_candidate_is_422(client: TestClient) -> None:
    assert client.post(f"{BASE}/what-if", json={"type": "AVRO", "schema": "{"}).status_code == 422


def test_upgrade_plan_over_recorded_clients(seeded: TestClient) -> None:
    plan = seeded.get("/explorer/v1/topics/acme/inventory/product-catalog/upgrade-plan").json()
    assert plan["feasible"] is True and plan["steps"][0]["role"] == "consumer"
    latest = seeded.get("/admin/v2/schemas/acme/inventory/product-catalog/schema").json()
    candidate = {"type": latest["type"], "schema": latest["data"]}
    to_candidate = seeded.post("/explorer/v1/topics/acme/inventory/product-catalog/upgrade-plan", json=candidate)
    assert to_candidate.json()["target_version"] == latest["version"]


def test_policy_impact(seeded: TestClient) -> None:
    impact = seeded.get(
        "/explorer/v1/namespaces/acme/inventory/policy-impact", params={"strategy": "FULL_TRANSITIVE"}
    ).json()
    assert impact["proposed"] == "FULL_TRANSITIVE"
    assert any(t["affected"] for t in impact["topics"])
    assert seeded.get("/explorer/v1/namespaces/acme/nope/policy-impact", params={"strategy": "FULL"}).status_code == 404
    undefined = seeded.get("/explorer/v1/namespaces/acme/inventory/policy-impact", params={"strategy": "UNDEFINED"})
    assert undefined.status_code == 400


def test_recorded_clients_of_everything_a_namespace_or_a_topic(seeded: TestClient) -> None:
    every = seeded.get("/explorer/v1/clients")
    assert every.status_code == 200 and len(every.json()) > 10
    inventory = seeded.get("/explorer/v1/clients", params={"namespace": "acme/inventory"}).json()
    assert inventory and {c["topic"].split("/")[3] for c in inventory} == {"inventory"}
    assert [c for c in every.json() if "/acme/inventory/" in c["topic"]] == inventory
    one = seeded.get("/explorer/v1/clients", params={"topic": "persistent://acme/inventory/product-catalog"}).json()
    assert one and all(c["topic"] == "persistent://acme/inventory/product-catalog" for c in one)
    assert {"role", "name", "subscription", "schema_type", "version", "connected_at", "replicator"} <= one[0].keys()


@pytest.mark.parametrize(
    ("params", "status", "header", "words"),
    [
        ({"namespace": "acme/nope"}, 404, "NamespaceNotFoundError", "nope"),
        ({"namespace": "no-slash"}, 412, "InvalidNameError", "no-slash"),
        ({"topic": "persistent://a/b/c", "namespace": "a/b"}, 400, "InvalidArgumentError", "not both"),
    ],
)
def test_clients_refuses_bad_parameters_naming_the_error_class(
    seeded: TestClient, params: dict[str, str], status: int, header: str, words: str
) -> None:
    answer = seeded.get("/explorer/v1/clients", params=params)
    assert answer.status_code == status and words in answer.json()["reason"]
    assert answer.headers["X-Registry-Error"] == header


def test_serve_admin_only_has_no_explorer_api(seeded_file: Path) -> None:
    with Registry.open(seeded_file) as reg, TestClient(create_app(reg, admin_only=True), base_url=LOCAL) as plain:
        assert plain.get("/admin/v2/tenants").json() == ["acme", "globex", "initech"]
        for path in ("/explorer/v1/topics", "/explorer/v1/topics/acme/orders/order-created", "/explorer/v1/audit"):
            assert plain.get(path).status_code == 404, path
        assert "/explorer/v1/topics" not in plain.get("/openapi.json").json()["paths"]
