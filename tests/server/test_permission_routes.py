"""The server's route checks ask the core's table (registry/proposals/_permissions.py `Step.role`): each write
route declares, in OpenAPI's x-required-role and in the check it runs, the role the core gives its step."""

from __future__ import annotations

import pytest

from registry import Registry
from registry.proposals._permissions import Step
from server import create_app

# Each write route and the core's step it stands for.
ROUTES = [
    ("post", "/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema", Step.REGISTER),
    ("delete", "/admin/v2/schemas/{tenant}/{namespace}/{topic}/schema", Step.DELETE),
    ("post", "/admin/v2/namespaces/{tenant}/{namespace}/isAllowAutoUpdateSchema", Step.SET_POLICY),
    ("put", "/admin/v2/namespaces/{tenant}/{namespace}/schemaCompatibilityStrategy", Step.SET_POLICY),
    ("put", "/admin/v2/persistent/{tenant}/{namespace}/{topic}/schemaCompatibilityStrategy", Step.SET_POLICY),
    ("put", "/explorer/v1/namespaces/{tenant}/{namespace}/schema-policy", Step.SET_POLICY),
    ("put", "/explorer/v1/topics/{tenant}/{namespace}/{topic}/schema-policy", Step.SET_POLICY),
    ("post", "/explorer/v1/proposals", Step.PROPOSE),
    ("post", "/explorer/v1/proposals/{proposal_id}/comments", Step.COMMENT),
    ("put", "/explorer/v1/namespaces/{tenant}/{namespace}/review-rules", Step.EDIT_RULES),
    ("post", "/explorer/v1/webhooks", Step.MANAGE_WEBHOOKS),
    ("get", "/explorer/v1/webhooks", Step.MANAGE_WEBHOOKS),
    ("delete", "/explorer/v1/webhooks/{webhook_id}", Step.MANAGE_WEBHOOKS),
    ("put", "/admin/v2/tenants/{tenant}", Step.ADMINISTER),
    ("put", "/admin/v2/namespaces/{tenant}/{namespace}", Step.ADMINISTER),
    ("put", "/admin/v2/persistent/{tenant}/{namespace}/{topic}", Step.ADMINISTER),
]


@pytest.fixture(scope="module")
def paths() -> dict[str, dict[str, dict[str, object]]]:
    with Registry.in_memory() as reg:
        found: dict[str, dict[str, dict[str, object]]] = create_app(reg).openapi()["paths"]
        return found


@pytest.mark.parametrize(("method", "path", "step"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES])
def test_each_write_route_requires_the_role_the_core_gives_its_step(
    paths: dict[str, dict[str, dict[str, object]]], method: str, path: str, step: Step
) -> None:
    operations = paths.get(path, {})
    if method not in operations:
        pytest.fail(f"no {method.upper()} {path} in the OpenAPI document")
    assert operations[method]["x-required-role"] == step.role.value
