"""Schema policy writes with compare-and-set, for a remote registry over `serve` (/explorer/v1/.../schema-policy).

Pulsar's admin API sets one policy field per call and has no compare-and-set, so a remote registry over a plain
broker can only compare the policy its caller previewed (`expected=`) with a read made just before its calls
(registry/remote/_handle.py), and a change of several fields is several writes. Over `serve` it sends the whole
change here instead: the fields and the expected policy travel together, and the core's
`set_namespace_policy` / `set_topic_policy` run on the writer thread, where the compare and the write are one
transaction. So two people saving over one server get what two people saving on one file get: the second is
refused with PolicyChangedError (409) and nothing of theirs is stored, and several fields change all or none.

The values are read by the core, not by the request model, so a bad value is the core's PolicyError with the
core's words, as it is embedded.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict

from registry import InvalidArgumentError, NamespaceName, NamespacePolicy, TopicName, TopicPolicy, from_json, to_json
from registry.proposals._permissions import Step

from . import _auth as auth
from ._deps import Reg, caller, written

router = APIRouter(prefix="/explorer/v1", tags=["policies"])
WRITE = auth.explorer(Step.SET_POLICY.role, "setting schema policies")
NAMESPACE_FIELDS = frozenset(
    {"compatibility", "auto_update_strategy", "allow_auto_update", "allow_auto_update_with_replicator"}
    | {"validation_enforced"}
)
TOPIC_FIELDS = frozenset({"compatibility", "validation_enforced"})


class PolicyWrite(BaseModel):
    """The fields to change (those left out keep their value; null clears one that can be cleared) and,
    optionally, the policy the caller saw before: when the stored one differs, 409 and nothing is written."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"changes": {"compatibility": "FULL"}, "expected": {"compatibility": "BACKWARD"}}]
        },
    )

    changes: dict[str, Any]
    expected: dict[str, Any] | None = None


def _changes(write: PolicyWrite, allowed: frozenset[str], level: str) -> dict[str, Any]:
    unknown = sorted(set(write.changes) - allowed)
    if unknown:
        raise InvalidArgumentError(
            f"unknown {level} schema policy field(s) {', '.join(map(repr, unknown))}; expected some of "
            f"{', '.join(sorted(allowed))}"
        )
    return dict(write.changes)


@router.put("/namespaces/{tenant}/{namespace}/schema-policy", **WRITE.route_options(400, 404, 409, 412))
async def set_namespace_policy(
    request: Request, tenant: str, namespace: str, write: PolicyWrite, registry: Reg
) -> dict[str, Any]:
    """Change the namespace's schema policies in one write; answers the policy stored."""
    name = str(NamespaceName.parse(f"{tenant}/{namespace}"))
    changes = _changes(write, NAMESPACE_FIELDS, "namespace")
    expected = None if write.expected is None else from_json(NamespacePolicy, write.expected)
    stored = await written(request, registry.set_namespace_policy, name, **changes, expected=expected, user=caller())
    answer: dict[str, Any] = to_json(stored)
    return answer


@router.put("/topics/{tenant}/{namespace}/{topic}/schema-policy", **WRITE.route_options(400, 404, 405, 409, 412))
async def set_topic_policy(
    request: Request,
    tenant: str,
    namespace: str,
    topic: str,
    write: PolicyWrite,
    registry: Reg,
    domain: Annotated[Literal["persistent", "non-persistent"], Query()] = "persistent",
) -> dict[str, Any]:
    """Change the topic's schema policies in one write; answers the topic-level policy stored."""
    name = str(TopicName.parse(f"{domain}://{tenant}/{namespace}/{topic}"))
    changes = _changes(write, TOPIC_FIELDS, "topic")
    expected = None if write.expected is None else from_json(TopicPolicy, write.expected)
    stored = await written(request, registry.set_topic_policy, name, **changes, expected=expected, user=caller())
    answer: dict[str, Any] = to_json(stored)
    return answer
