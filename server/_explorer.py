"""The explorer API (/explorer/v1): what Pulsar's admin API lacks, one facade call per route."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from registry import (
    CompatibilityStrategy,
    InvalidArgumentError,
    NamespaceName,
    Role,
    SchemaType,
    TopicName,
    TopicQuery,
)

from . import _auth as auth
from ._admin_wire import PostSchemaPayload
from ._deps import Reg, json_answer
from ._explorer_wire import (
    Client,
    DiffRequest,
    EffectivePolicy,
    PolicyImpact,
    SchemaDiff,
    TopicPage,
    TopicSummary,
    UpgradePlan,
    WhatIf,
)
from ._fast_reads import topic_summary as topic_summary_json

router = APIRouter(prefix="/explorer/v1", tags=["explorer"])
TOPIC = "/topics/{tenant}/{namespace}/{topic}"
Domain = Annotated[
    Literal["persistent", "non-persistent"], Query(description="the topic's domain (schemas are shared by both)")
]
READ = auth.explorer(Role.VIEWER, "reading")


def _topic(domain: str, tenant: str, namespace: str, topic: str) -> str:
    return f"{domain}://{tenant}/{namespace}/{topic}"


@router.get("/topics", **READ.route_options(400, 412))
def search_topics(
    registry: Reg,
    q: Annotated[str, Query(description="substring of the topic name or of a field name", max_length=200)] = "",
    tenant: str | None = None,
    namespace: Annotated[str | None, Query(description='"tenant/namespace"', examples=["acme/orders"])] = None,
    type: Annotated[list[SchemaType] | None, Query(description="schema types (any of)")] = None,  # noqa: A002
    strategy: Annotated[list[CompatibilityStrategy] | None, Query(description="strategies in force (any of)")] = None,
    min_versions: Annotated[int | None, Query(ge=0)] = None,
    max_versions: Annotated[int | None, Query(ge=0)] = None,
    has_clients: bool | None = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> TopicPage:
    """One page of the topics matching every given criterion, in name order, with facet counts."""
    query = TopicQuery(
        text=q,
        tenant=tenant,
        namespace=namespace,
        schema_types=frozenset(type or ()),
        strategies=frozenset(strategy or ()),
        min_versions=min_versions,
        max_versions=max_versions,
        has_clients=has_clients,
    )
    return TopicPage.of(registry.search_topics(query, offset=offset, limit=limit))


# The two quick reads run on the event loop; search (a catalog rebuild after a change can take seconds on a
# large registry), diffs, what-if, plans and impact run in the threadpool.


@router.get(TOPIC, **READ.route_options(404, 412, ok=TopicSummary))
async def topic_summary(
    tenant: str, namespace: str, topic: str, registry: Reg, domain: Domain = "persistent"
) -> Response:
    """One topic's catalog row; 404 when the topic does not exist."""
    return json_answer(topic_summary_json(registry, domain, tenant, namespace, topic))


@router.get(TOPIC + "/policy", **READ.route_options(412))
async def effective_policy(
    tenant: str, namespace: str, topic: str, registry: Reg, domain: Domain = "persistent"
) -> EffectivePolicy:
    """Each schema policy in force for the topic and the level it comes from."""
    return EffectivePolicy.of(registry.effective_policy(_topic(domain, tenant, namespace, topic)))


def _one_of(new_name: str, new: int | None, old_name: str, old: int | None) -> int | None:
    """A diff side given by its name or by its older one (`from`, `to`, kept so that existing links and
    callers keep working), never by both."""
    if new is not None and old is not None:
        raise InvalidArgumentError(f"give {new_name} or its older name {old_name}, not both")
    return new if new is not None else old


@router.get(TOPIC + "/diff", **READ.route_options(400, 404, 412))
def diff_versions(
    tenant: str,
    namespace: str,
    topic: str,
    registry: Reg,
    old_version: Annotated[int | None, Query(ge=0, description="the old live version (required)")] = None,
    new_version: Annotated[int | None, Query(ge=0, description="the new live version (default: the latest)")] = None,
    from_: Annotated[int | None, Query(alias="from", ge=0, deprecated=True, description="use old_version")] = None,
    to: Annotated[int | None, Query(ge=0, deprecated=True, description="use new_version")] = None,
) -> SchemaDiff:
    """Semantic and textual diff of two live versions, each change marked for BACKWARD and FORWARD reading.
    The answer names both versions it compared (`old_version`, `new_version`), the latest included."""
    old = _one_of("old_version", old_version, "from", from_)
    if old is None:
        raise InvalidArgumentError("old_version is required: the live version to diff from")
    new = _one_of("new_version", new_version, "to", to)
    return SchemaDiff.of(registry.diff(_topic("persistent", tenant, namespace, topic), old, new))


@router.post(TOPIC + "/diff", **READ.route_options(400, 404, 412, 422))
def diff_candidate(tenant: str, namespace: str, topic: str, body: DiffRequest, registry: Reg) -> SchemaDiff:
    """Diff from a live version (the latest when `old_version` is omitted) to a candidate schema; the answer's
    `old_version` says which version that was, `new_version` is "candidate"."""
    name = _topic("persistent", tenant, namespace, topic)
    old = registry.get(name, _one_of("old_version", body.old_version, "from", body.from_)).version
    return SchemaDiff.of(registry.diff(name, old, body.candidate.to_info()))


@router.post(TOPIC + "/what-if", **auth.explorer(Role.PRODUCER, "what-if").route_options(400, 409, 412, 422))
def what_if(tenant: str, namespace: str, topic: str, payload: PostSchemaPayload, registry: Reg) -> WhatIf:
    """Everything Pulsar would say about this candidate, under all 8 strategies, without writing anything:
    verdicts with explanations, advisories, simulated registration and admission, the diff against the
    latest version and the upgrade order."""
    return WhatIf.of(registry.what_if(_topic("persistent", tenant, namespace, topic), payload.to_info()))


@router.get(TOPIC + "/upgrade-plan", **READ.route_options(400, 404, 412))
def upgrade_plan(
    tenant: str,
    namespace: str,
    topic: str,
    registry: Reg,
    target: Annotated[int | None, Query(ge=0, description="a live version (default: the latest)")] = None,
) -> UpgradePlan:
    """The order in which to move the topic's recorded clients to `target` so every reader keeps reading."""
    return UpgradePlan.of(registry.upgrade_plan(_topic("persistent", tenant, namespace, topic), target))


@router.post(TOPIC + "/upgrade-plan", **READ.route_options(400, 404, 412, 422))
def upgrade_plan_to_candidate(
    tenant: str, namespace: str, topic: str, payload: PostSchemaPayload, registry: Reg
) -> UpgradePlan:
    """The order in which to move the topic's recorded clients to a candidate schema."""
    return UpgradePlan.of(registry.upgrade_plan(_topic("persistent", tenant, namespace, topic), payload.to_info()))


@router.get("/clients", **READ.route_options(400, 404, 412))
def recorded_clients(
    registry: Reg,
    topic: Annotated[str | None, Query(description="a topic's full name: its clients only")] = None,
    namespace: Annotated[
        str | None, Query(description='"tenant/namespace": the clients of its topics', examples=["acme/orders"])
    ] = None,
) -> list[Client]:
    """The recorded producers and consumers, with the schema version each uses (all of them when neither
    `topic` nor `namespace` is given): what Pulsar's admin API does not keep, and what a remote registry needs
    for upgrade plans, admission checks and policy previews."""
    if topic is not None and namespace is not None:
        raise InvalidArgumentError("give topic or namespace, not both")
    if topic is not None:
        return [Client.of(c) for c in registry.clients(topic)]
    if namespace is not None:
        ns = str(NamespaceName.parse(namespace))
        registry.namespace_policy(ns)  # 404 for a namespace that does not exist, as every namespace route
        return [Client.of(c) for c in registry.clients() if str(TopicName.parse(c.topic).namespace_name) == ns]
    return [Client.of(c) for c in registry.clients()]


@router.get("/namespaces/{tenant}/{namespace}/policy-impact", **READ.route_options(400, 404, 412))
def policy_impact(
    tenant: str,
    namespace: str,
    registry: Reg,
    strategy: Annotated[CompatibilityStrategy, Query(description="the strategy to preview", examples=["BACKWARD"])],
) -> PolicyImpact:
    """What setting `strategy` on the namespace would have refused: live registrations and recorded consumers."""
    return PolicyImpact.of(registry.policy_impact(f"{tenant}/{namespace}", strategy))
