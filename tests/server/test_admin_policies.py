"""Namespace (§7.2) and topic (§7.3) policy routes, listing and creation, broker configuration."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from schemas import S1

NS = "/admin/v2/namespaces/t/ns"
TOPIC = "/admin/v2/persistent/t/ns/orders"
# Every topic policy route: (method, path under the topic, JSON body).
TOPIC_POLICY_CALLS = [
    ("GET", "schemaCompatibilityStrategy", None),
    ("PUT", "schemaCompatibilityStrategy", "FULL"),
    ("DELETE", "schemaCompatibilityStrategy", None),
    ("GET", "schemaValidationEnforced", None),
    ("POST", "schemaValidationEnforced", True),
]


@pytest.fixture
def with_topic(client: TestClient) -> TestClient:
    assert client.put(TOPIC).status_code == 204
    return client


# --- §7.2 -------------------------------------------------------------------------------------------------


def test_namespace_strategy_is_raw_undefined_until_set(client: TestClient) -> None:
    assert client.get(f"{NS}/schemaCompatibilityStrategy").json() == "UNDEFINED"
    assert client.put(f"{NS}/schemaCompatibilityStrategy", json="BACKWARD").status_code == 204
    assert client.get(f"{NS}/schemaCompatibilityStrategy").json() == "BACKWARD"
    client.put(f"{NS}/schemaCompatibilityStrategy", json="UNDEFINED")
    assert client.get(f"{NS}/schemaCompatibilityStrategy").json() == "UNDEFINED"


def test_unknown_strategy_is_400_listing_the_valid_ones_and_changes_nothing(client: TestClient) -> None:
    """Pulsar's mapper would read an unknown name as null (§7.2, inferred); we refuse it."""
    response = client.put(f"{NS}/schemaCompatibilityStrategy", json="BACKWARDS")
    assert response.status_code == 400
    assert "FULL_TRANSITIVE" in response.json()["reason"]
    assert client.get(f"{NS}/schemaCompatibilityStrategy").json() == "UNDEFINED"


def test_auto_update_strategy_is_204_until_set(client: TestClient) -> None:
    assert client.get(f"{NS}/schemaAutoUpdateCompatibilityStrategy").status_code == 204
    assert client.put(f"{NS}/schemaAutoUpdateCompatibilityStrategy", json="AutoUpdateDisabled").status_code == 204
    assert client.get(f"{NS}/schemaAutoUpdateCompatibilityStrategy").json() == "AutoUpdateDisabled"
    # §2.1: AutoUpdateDisabled maps to ALWAYS_INCOMPATIBLE for the topics of the namespace.
    client.put(TOPIC)
    applied = client.get(f"{TOPIC}/schemaCompatibilityStrategy", params={"applied": "true"})
    assert applied.json() == "ALWAYS_INCOMPATIBLE"


def test_allow_auto_update_falls_back_to_the_broker_and_can_be_set(client: TestClient) -> None:
    assert client.get(f"{NS}/isAllowAutoUpdateSchema").json() is True
    assert client.post(f"{NS}/isAllowAutoUpdateSchema", json=False).status_code == 204
    assert client.get(f"{NS}/isAllowAutoUpdateSchema").json() is False
    assert client.get(NS).json()["is_allow_auto_update_schema"] is False


def test_allowing_auto_update_while_refusing_the_replicator_is_400(client: TestClient) -> None:
    response = client.post(
        f"{NS}/isAllowAutoUpdateSchema", params={"allowAutoUpdateSchemaWithReplicator": "false"}, json=True
    )
    assert response.status_code == 400
    assert "allow_auto_update_with_replicator" in response.json()["reason"]


def test_validation_enforced_namespace_flag(client: TestClient) -> None:
    assert client.get(f"{NS}/schemaValidationEnforced").json() is False
    assert client.get(f"{NS}/schemaValidationEnforced", params={"applied": "true"}).json() is False
    assert client.post(f"{NS}/schemaValidationEnforced", json=True).status_code == 204
    assert client.get(f"{NS}/schemaValidationEnforced").json() is True


@pytest.mark.parametrize("body", ["true", '"yes"', "1", ""], ids=["a string", "a word", "a number", "nothing"])
def test_flags_take_a_json_boolean_only(client: TestClient, body: str) -> None:
    response = client.post(
        f"{NS}/schemaValidationEnforced", content=body if body != "true" else '"true"', headers=_json()
    )
    assert response.status_code == 400


# A JSON null body, as Pulsar's Jackson mapping reads it: null for an object (enum) parameter, which the
# resource stores (clearing the value); false for a primitive boolean (Namespaces.setIsAllowAutoUpdateSchema,
# setSchemaValidationEnforced, PersistentTopics.setSchemaValidationEnforced take `boolean`).


def test_null_auto_update_strategy_clears_it(client: TestClient) -> None:
    assert client.put(f"{NS}/schemaAutoUpdateCompatibilityStrategy", json="Backward").status_code == 204
    assert client.put(f"{NS}/schemaAutoUpdateCompatibilityStrategy", content="null", headers=_json()).status_code == 204
    assert client.get(f"{NS}/schemaAutoUpdateCompatibilityStrategy").status_code == 204
    assert "schema_auto_update_compatibility_strategy" not in client.get(NS).json()


def test_null_namespace_strategy_clears_it(client: TestClient) -> None:
    client.put(f"{NS}/schemaCompatibilityStrategy", json="BACKWARD")
    assert client.put(f"{NS}/schemaCompatibilityStrategy", content="null", headers=_json()).status_code == 204
    assert client.get(f"{NS}/schemaCompatibilityStrategy").json() == "UNDEFINED"


@pytest.mark.parametrize("before", [True, False, None], ids=["after true", "after false", "when unset"])
def test_null_allow_auto_update_is_false_not_unset(client: TestClient, before: bool | None) -> None:
    if before is not None:
        client.post(f"{NS}/isAllowAutoUpdateSchema", json=before)
    assert client.post(f"{NS}/isAllowAutoUpdateSchema", content="null", headers=_json()).status_code == 204
    assert client.get(f"{NS}/isAllowAutoUpdateSchema").json() is False  # the broker default is true
    assert client.get(NS).json()["is_allow_auto_update_schema"] is False


def test_null_namespace_validation_is_false(client: TestClient) -> None:
    client.post(f"{NS}/schemaValidationEnforced", json=True)
    assert client.post(f"{NS}/schemaValidationEnforced", content="null", headers=_json()).status_code == 204
    assert client.get(f"{NS}/schemaValidationEnforced").json() is False


def test_empty_body_is_still_400(client: TestClient) -> None:
    for path in ("schemaAutoUpdateCompatibilityStrategy", "schemaCompatibilityStrategy"):
        assert client.put(f"{NS}/{path}", content="", headers=_json()).status_code == 400
    for path in ("isAllowAutoUpdateSchema", "schemaValidationEnforced"):
        assert client.post(f"{NS}/{path}", content="", headers=_json()).status_code == 400


@pytest.mark.parametrize(
    "path",
    [
        "schemaCompatibilityStrategy",
        "schemaAutoUpdateCompatibilityStrategy",
        "isAllowAutoUpdateSchema",
        "schemaValidationEnforced",
    ],
)
def test_namespace_policy_reads_on_unknown_namespace_are_404(client: TestClient, path: str) -> None:
    response = client.get(f"/admin/v2/namespaces/t/nope/{path}")
    assert (response.status_code, response.json()) == (404, {"reason": "Namespace does not exist: t/nope"})


def test_namespace_policy_write_on_unknown_namespace_is_404_and_creates_nothing(client: TestClient) -> None:
    response = client.put("/admin/v2/namespaces/t/nope/schemaCompatibilityStrategy", json="FULL")
    assert response.status_code == 404
    assert client.get("/admin/v2/namespaces/t").json() == ["t/ns"]


def test_namespace_policies_use_pulsars_field_names_and_omit_nulls(client: TestClient) -> None:
    assert client.get(NS).json() == {
        "schema_compatibility_strategy": "UNDEFINED",
        "is_allow_auto_update_schema_with_replicator": True,
        "schema_validation_enforced": False,
    }


# --- §7.3 -------------------------------------------------------------------------------------------------


def test_topic_strategy_is_204_until_set_then_overrides_namespace(with_topic: TestClient) -> None:
    client = with_topic
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy", params={"applied": "true"}).json() == "FULL"
    client.put(f"{NS}/schemaCompatibilityStrategy", json="ALWAYS_COMPATIBLE")
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy", params={"applied": "true"}).json() == "ALWAYS_COMPATIBLE"
    assert client.put(f"{TOPIC}/schemaCompatibilityStrategy", json="ALWAYS_INCOMPATIBLE").status_code == 204
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy").json() == "ALWAYS_INCOMPATIBLE"
    assert client.delete(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204
    assert client.get(f"{TOPIC}/schemaCompatibilityStrategy", params={"applied": "true"}).json() == "ALWAYS_COMPATIBLE"


def test_topic_strategy_undefined_removes_it(with_topic: TestClient) -> None:
    with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", json="BACKWARD")
    with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", json="UNDEFINED")
    assert with_topic.get(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204


def test_topic_strategy_governs_registration(with_topic: TestClient) -> None:
    with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", json="ALWAYS_INCOMPATIBLE")
    base = "/admin/v2/schemas/t/ns/orders"
    assert with_topic.post(f"{base}/schema", json={"type": "AVRO", "schema": S1}).status_code == 200
    assert with_topic.post(f"{base}/schema", json={"type": "STRING", "schema": ""}).status_code == 409


def test_topic_validation_enforced(with_topic: TestClient) -> None:
    client = with_topic
    assert client.get(f"{TOPIC}/schemaValidationEnforced").json() is False
    client.post(f"{NS}/schemaValidationEnforced", json=True)
    assert client.get(f"{TOPIC}/schemaValidationEnforced").json() is False
    assert client.get(f"{TOPIC}/schemaValidationEnforced", params={"applied": "true"}).json() is True
    assert client.post(f"{TOPIC}/schemaValidationEnforced", json=False).status_code == 204
    assert client.get(f"{TOPIC}/schemaValidationEnforced", params={"applied": "true"}).json() is False


def test_null_topic_strategy_removes_it(with_topic: TestClient) -> None:
    with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", json="BACKWARD")
    response = with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", content="null", headers=_json())
    assert response.status_code == 204
    assert with_topic.get(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204


def test_null_topic_validation_sets_false_and_keeps_a_topic_value(with_topic: TestClient) -> None:
    client = with_topic
    client.post(f"{NS}/schemaValidationEnforced", json=True)
    assert client.post(f"{TOPIC}/schemaValidationEnforced", content="null", headers=_json()).status_code == 204
    # A topic-level false, not "no topic value": applied does not fall back to the namespace's true.
    assert client.get(f"{TOPIC}/schemaValidationEnforced", params={"applied": "true"}).json() is False


@pytest.mark.parametrize(("method", "path", "body"), TOPIC_POLICY_CALLS)
def test_topic_policies_need_an_existing_topic_and_create_none(
    client: TestClient, method: str, path: str, body: object
) -> None:
    response = client.request(method, f"{TOPIC}/{path}", json=body)
    assert response.status_code == 404
    assert "orders" in response.json()["reason"]
    assert client.get("/admin/v2/persistent/t/ns").json() == []


def test_non_persistent_topics_have_their_own_routes(client: TestClient) -> None:
    assert client.put("/admin/v2/non-persistent/t/ns/live").status_code == 204
    assert client.get("/admin/v2/non-persistent/t/ns").json() == ["non-persistent://t/ns/live"]
    assert client.get("/admin/v2/persistent/t/ns").json() == []
    assert client.put("/admin/v2/non-persistent/t/ns/live/schemaCompatibilityStrategy", json="FULL").status_code == 204


# --- listing and creation ---------------------------------------------------------------------------------


def test_tenants_namespaces_topics_listing_and_creation(client: TestClient) -> None:
    assert client.get("/admin/v2/tenants").json() == ["t"]
    assert client.put("/admin/v2/tenants/u", json={"adminRoles": [], "allowedClusters": ["c"]}).status_code == 204
    assert client.put("/admin/v2/tenants/u").json() == {"reason": "Tenant already exists"}
    assert client.get("/admin/v2/tenants/u").json() == {"adminRoles": [], "allowedClusters": []}
    assert client.put("/admin/v2/namespaces/u/a").status_code == 204
    assert client.put("/admin/v2/namespaces/u/a").status_code == 409
    assert client.get("/admin/v2/namespaces/u").json() == ["u/a"]
    assert client.put("/admin/v2/persistent/u/a/x").status_code == 204
    assert client.put("/admin/v2/persistent/u/a/x").json() == {"reason": "This topic already exists"}
    assert client.get("/admin/v2/persistent/u/a").json() == ["persistent://u/a/x"]


@pytest.mark.parametrize(
    ("method", "path", "status", "reason"),
    [
        ("GET", "/admin/v2/tenants/nope", 404, "Tenant does not exist: nope"),
        ("GET", "/admin/v2/namespaces/nope", 404, "Tenant does not exist: nope"),
        ("PUT", "/admin/v2/namespaces/nope/a", 404, "Tenant does not exist: nope"),
        ("GET", "/admin/v2/namespaces/t/nope", 404, "Namespace does not exist: t/nope"),
        ("GET", "/admin/v2/persistent/t/nope", 404, "Namespace does not exist: t/nope"),
        ("PUT", "/admin/v2/persistent/t/nope/x", 404, "Namespace does not exist: t/nope"),
        ("PUT", "/admin/v2/tenants/bad%20name", 412, "invalid tenant name"),
        ("GET", "/admin/v2/nothing-here", 404, "Not Found"),
    ],
)
def test_unknown_or_invalid_names(client: TestClient, method: str, path: str, status: int, reason: str) -> None:
    response = client.request(method, path)
    assert response.status_code == status
    assert reason in response.json()["reason"]
    assert client.get("/admin/v2/tenants").json() == ["t"]


def test_broker_runtime_configuration_reports_schema_defaults(client: TestClient) -> None:
    config = client.get("/admin/v2/brokers/configuration/runtime").json()
    assert config["schemaCompatibilityStrategy"] == "FULL"
    assert config["systemTopicSchemaCompatibilityStrategy"] == "ALWAYS_COMPATIBLE"
    assert config["isAllowAutoUpdateSchemaEnabled"] == "true"
    assert config["isSchemaValidationEnforced"] == "false"
    assert all(isinstance(v, str) for v in config.values())


def _json() -> dict[str, str]:
    return {"content-type": "application/json"}


# --- status codes as Pulsar's (issue 21 item 8) -----------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), TOPIC_POLICY_CALLS)
def test_a_topic_policy_of_one_partition_is_412_and_changes_nothing(
    with_topic: TestClient, method: str, path: str, body: object
) -> None:
    """PersistentTopicsBase.preValidation: PRECONDITION_FAILED for a partition."""
    response = with_topic.request(method, f"{TOPIC}-partition-2/{path}", json=body)
    assert response.status_code == 412, response.text
    assert "partition" in response.json()["reason"]
    assert with_topic.get(f"{TOPIC}/schemaCompatibilityStrategy").status_code == 204


def test_topic_policies_disabled_on_the_broker_are_405(tmp_path) -> None:  # noqa: ANN001
    """AdminResource.checkTopicLevelPolicyEnable: METHOD_NOT_ALLOWED with Pulsar's reason."""
    from registry import BrokerConfig, Registry
    from server import create_app
    from serving import LOCAL

    reg = Registry.open(tmp_path / "r.db", create=True, broker=BrokerConfig(topic_level_policies_enabled=False))
    reg.create_tenant("t")
    reg.create_namespace("t/ns")
    reg.create_topic("t/ns/orders")
    with TestClient(create_app(reg), base_url=LOCAL) as client:
        for method, body in (("GET", None), ("PUT", "FULL"), ("DELETE", None)):
            response = client.request(method, f"{TOPIC}/schemaCompatibilityStrategy", json=body)
            assert response.status_code == 405, response.text
            assert response.json()["reason"].startswith("Topic level policies is disabled")
    reg.close()


def test_an_unknown_strategy_says_it_is_a_deliberate_difference(with_topic: TestClient) -> None:
    """Pulsar would clear the policy and answer 204 to a lower-case name; we refuse, keep the value, and say so."""
    assert with_topic.put(f"{TOPIC}/schemaCompatibilityStrategy", json="FULL").status_code == 204
    for path in (f"{TOPIC}/schemaCompatibilityStrategy", f"{NS}/schemaCompatibilityStrategy"):
        response = with_topic.put(path, json="backward")
        assert response.status_code == 400
        assert "deliberate difference" in response.json()["reason"]
    assert with_topic.get(f"{TOPIC}/schemaCompatibilityStrategy").json() == "FULL"
