"""Pulsar admin v2 schema routes: every status code and body of pulsar-semantics.md §7.1."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from schemas import P1, S1, S2, S3, field, record

BASE = "/admin/v2/schemas/t/ns/orders"


def post(client: TestClient, body: dict[str, object], what: str = "schema", base: str = BASE):
    return client.post(f"{base}/{what}", json=body)


def avro(text: str, **props: str) -> dict[str, object]:
    return {"type": "AVRO", "schema": text, "properties": props}


def test_first_registration_is_version_0_in_pulsars_shape(client: TestClient) -> None:
    response = post(client, avro(S1))
    assert (response.status_code, response.json()) == (200, {"version": {"version": 0}})


def test_get_latest_returns_get_schema_response(client: TestClient) -> None:
    post(client, avro(S1, owner="team-a"))
    body = client.get(f"{BASE}/schema").json()
    assert set(body) == {"version", "type", "timestamp", "data", "properties"}
    assert (body["version"], body["type"], body["properties"]) == (0, "AVRO", {"owner": "team-a"})
    assert json.loads(body["data"]) == json.loads(S1)


def test_reposting_an_equal_schema_returns_its_version_and_keeps_old_properties(client: TestClient) -> None:
    """§3.3 dedup: properties never participate."""
    post(client, avro(S1, owner="a"))
    post(client, avro(S2))
    assert post(client, avro(S1, owner="b")).json() == {"version": {"version": 0}}
    assert client.get(f"{BASE}/schema/0").json()["properties"] == {"owner": "a"}


def test_incompatible_registration_is_409_with_reason_and_stores_nothing(client: TestClient) -> None:
    post(client, avro(S1))
    response = post(client, avro(S3))  # field2 without default: FULL refuses (avro-full-2)
    assert response.status_code == 409
    assert "field2" in response.json()["reason"]
    assert len(client.get(f"{BASE}/schemas").json()["getSchemaResponses"]) == 1


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (avro("{not json"), 422, "Invalid schema definition data for AVRO"),
        ({"type": "STRING", "schema": "abc"}, 422, "string schema"),
        ({"type": "INT32", "schema": "x"}, 422, "length of schema data should be zero"),
        ({"type": "AUTO_CONSUME", "schema": ""}, 422, "client-side"),
        ({"type": "NOPE", "schema": ""}, 422, "unknown schema type 'NOPE'"),
        ({"type": "AVRO"}, 400, "schema: Field required"),
        ({"schema": S1}, 400, "type: Field required"),
        ({"type": "AVRO", "schema": S1, "properties": {"k": 1}}, 400, "properties.k"),
    ],
    ids=[
        "unparseable avro is 422",
        "string data other than null is 422",
        "primitive data must be empty",
        "client-side types are refused",
        "unknown type names are named (Pulsar: 500)",
        "a missing schema field is named (Pulsar: 500)",
        "a missing type field is named",
        "non-text properties are named",
    ],
)
def test_bad_payloads_are_4xx_naming_the_problem_and_store_nothing(
    client: TestClient, body: dict[str, object], status: int, words: str
) -> None:
    response = post(client, body)
    assert response.status_code == status
    assert words in response.json()["reason"]
    assert client.get(f"{BASE}/metadata").status_code == 204


def test_not_json_body_is_400(client: TestClient) -> None:
    response = client.post(f"{BASE}/schema", content=b"{oops", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert "JSON" in response.json()["reason"]


def test_unknown_namespace_is_404_and_creates_nothing(client: TestClient) -> None:
    response = post(client, avro(S1), base="/admin/v2/schemas/t/nope/orders")
    assert response.status_code == 404
    assert response.json()["reason"] == "Namespace does not exist: t/nope"
    assert client.get("/admin/v2/namespaces/t").json() == ["t/ns"]


def test_invalid_topic_name_is_412(client: TestClient) -> None:
    response = post(client, avro(S1), base="/admin/v2/schemas/t/ns/bad%20name")
    assert response.status_code == 412
    assert "invalid topic name" in response.json()["reason"]


def test_invalid_default_poisons_history_409_instead_of_pulsars_500(client: TestClient) -> None:
    """§4.8: accepted on an empty history; every later put fails in Pulsar with HTTP 500."""
    poisoned = record("Rec", [field("name", "string", None)])
    assert post(client, avro(poisoned)).status_code == 200
    response = post(client, avro(S1))
    assert response.status_code == 409
    assert "HTTP 500" in response.json()["reason"] and "Delete the schema" in response.json()["reason"]


def test_candidate_with_invalid_default_is_422_on_a_non_empty_history(client: TestClient) -> None:
    post(client, avro(S1))
    response = post(client, avro(record("Rec", [field("field1", "string", None)])))
    assert response.status_code == 422
    assert "HTTP 500" in response.json()["reason"]


def test_get_latest_without_schema_is_404_schema_not_found(client: TestClient) -> None:
    response = client.get(f"{BASE}/schema")
    assert response.status_code == 404
    assert response.json()["reason"].startswith("Schema not found")


@pytest.mark.parametrize(
    ("version", "status"),
    [("0", 200), ("1", 200), ("7", 404), ("abc", 400), ("-1", 404), ("9" * 20, 400)],
    ids=[
        "first",
        "latest",
        "future version is 404",
        "non-numeric is 400 (Pulsar: 500)",
        "negative is 404, as in Pulsar",
        "beyond a long is 400 (Pulsar: 500)",
    ],
)
def test_get_by_version(client: TestClient, version: str, status: int) -> None:
    post(client, avro(S1))
    post(client, avro(S2))
    response = client.get(f"{BASE}/schema/{version}")
    assert response.status_code == status
    if status != 200:
        assert response.json()["reason"]


def test_soft_delete_returns_tombstone_version_then_everything_is_gone(client: TestClient) -> None:
    post(client, avro(S1))
    post(client, avro(S2))
    assert client.delete(f"{BASE}/schema").json() == {"version": 2}
    assert client.get(f"{BASE}/schema").status_code == 404
    assert client.get(f"{BASE}/schema/0").status_code == 404
    assert client.get(f"{BASE}/schemas").json() == {"getSchemaResponses": []}
    metadata = client.get(f"{BASE}/metadata").json()
    assert metadata["info"] == {"ledgerId": -1, "entryId": -1, "version": 2}
    assert [e["version"] for e in metadata["index"]] == [0, 1, 2]
    # §3.5: the next registration is tombstone + 1 and is not checked against pre-delete versions.
    assert post(client, avro(S3)).json() == {"version": {"version": 3}}


def test_force_delete_returns_minus_1_and_numbering_restarts(client: TestClient) -> None:
    post(client, avro(S1))
    assert client.delete(f"{BASE}/schema", params={"force": "true"}).json() == {"version": -1}
    assert client.get(f"{BASE}/metadata").status_code == 204
    assert post(client, avro(S3)).json() == {"version": {"version": 0}}


def test_delete_on_unknown_namespace_is_404(client: TestClient) -> None:
    assert client.delete("/admin/v2/schemas/t/nope/x/schema").status_code == 404


def test_compatibility_is_202_with_the_effective_strategy(client: TestClient) -> None:
    post(client, avro(S1))
    response = post(client, avro(S2), "compatibility")
    assert (response.status_code, response.json()) == (
        202,
        {"compatibility": True, "schemaCompatibilityStrategy": "FULL"},
    )


def test_compatibility_uses_the_namespace_strategy(client: TestClient) -> None:
    client.put("/admin/v2/namespaces/t/ns/schemaCompatibilityStrategy", json="BACKWARD")
    response = post(client, avro(S2), "compatibility")
    assert response.json()["schemaCompatibilityStrategy"] == "BACKWARD"


def test_incompatible_check_is_pulsars_500_with_the_reason(client: TestClient) -> None:
    post(client, avro(S1))
    response = post(client, avro(S3), "compatibility")
    assert response.status_code == 500
    assert response.json()["reason"].startswith("incompatible under FULL")


def test_invalid_candidate_check_is_422(client: TestClient) -> None:
    assert post(client, avro("[]"), "compatibility").status_code == 422


def test_version_lookup_is_byte_equality_or_minus_1(client: TestClient) -> None:
    post(client, avro(P1))
    assert post(client, avro(P1), "version").json() == {"version": 0}
    assert post(client, avro(P1 + " "), "version").json() == {"version": -1}  # §3.4: bytes, not Avro equality


def test_key_value_data_is_rendered_as_key_and_value(client: TestClient) -> None:
    body = {
        "type": "KEY_VALUE",
        "schema": json.dumps({"key": "", "value": json.loads(P1)}),
        "properties": {"key.schema.type": "STRING", "value.schema.type": "AVRO"},
    }
    assert post(client, body).status_code == 200
    data = json.loads(client.get(f"{BASE}/schema").json()["data"])
    assert data == {"key": "", "value": json.loads(P1)}


def test_partition_names_share_the_base_topics_schema(client: TestClient) -> None:
    post(client, avro(S1))
    assert client.get("/admin/v2/schemas/t/ns/orders-partition-3/schema").json()["version"] == 0
