"""Pulsar admin v2 routes (pulsar-semantics.md §7): paths, bodies, JSON names and status codes as the broker's.

Routes translate: path → topic name, wire model → facade call → wire model. Pulsar's decisions live in the core.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.responses import PlainTextResponse
from pydantic import StrictBool

from registry import (
    AutoUpdateStrategy,
    ClientRole,
    CompatibilityStrategy,
    ConnectedClient,
    IncompatibleSchemaError,
    Role,
    SchemaRegistry,
    StorageError,
)
from registry._history import version_number
from registry._model import JUDGED_HEADER, STORED_HEADER
from registry.policy._rules import namespace_allow_auto_update, namespace_validation_enforced
from registry.proposals._permissions import Step

from . import _auth as auth
from . import _pulsar_stats as pulsar_stats
from ._admin_wire import (
    GetAllVersionsSchemaResponse,
    GetSchemaResponse,
    IndexEntry,
    IsCompatibilityResponse,
    LongSchemaVersion,
    Policies,
    PostSchemaPayload,
    PostSchemaResponse,
    SchemaMetadata,
    TenantInfo,
)
from ._deps import Reg, caller, json_answer, written
from ._errors import ApiError
from ._fast_reads import all_schemas, latest_schema, namespace_strategy, schema_topic

DOMAINS = ("persistent", "non-persistent")
NO_CONTENT: dict[str, Any] = {"status_code": 204, "response_class": Response}

# Pulsar's resources take these bodies as Java objects (enums) or primitives (booleans) through Jackson: a JSON
# null is a null strategy (clears it, like "UNDEFINED") and, for a primitive boolean, false.
Strategy = Annotated[CompatibilityStrategy | None, Body(examples=["BACKWARD"])]
Flag = Annotated[StrictBool | None, Body(examples=[True])]
Applied = Annotated[bool, Query(description="the value in force (with fallbacks) rather than the one set here")]

router = APIRouter(prefix="/admin/v2")


# --- §7.1 schemas -----------------------------------------------------------------------------------------

SCHEMAS = "/schemas/{tenant}/{namespace}/{topic}"
LOOKUP = auth.topic_operation("LOOKUP", Role.VIEWER)
PRODUCE = auth.topic_operation("PRODUCE", Step.REGISTER.role)  # the core's rule (registry/proposals/_permissions.py)


# Plain reads are one quick facade call (tens of µs on SQLite): they run on the event loop (`async def`)
# rather than paying a threadpool hop. Reads that may take long (catalog rebuilds, checks, diffs) and every
# write stay off the loop.


@router.get(SCHEMAS + "/schema", tags=["schemas"], **LOOKUP.route_options(404, 412, ok=GetSchemaResponse))
async def get_schema(tenant: str, namespace: str, topic: str, registry: Reg) -> Response:
    """The latest live schema; 404 "Schema not found" when there is none or it was deleted."""
    return json_answer(latest_schema(registry, tenant, namespace, topic))


@router.get(SCHEMAS + "/schema/{version}", tags=["schemas"], **LOOKUP.route_options(400, 404, 412))
async def get_schema_version(tenant: str, namespace: str, topic: str, version: str, registry: Reg) -> GetSchemaResponse:
    """One live version; 404 when it is not after the last delete, and for a negative version (-1), as in
    Pulsar. A version that is not a whole number, or does not fit a long, is a 400 here (Pulsar answers 500
    from `Long.parseLong`, a bug)."""
    return GetSchemaResponse.of(
        registry.get(schema_topic(tenant, namespace, topic), version_number(version, negative=True))
    )


@router.get(SCHEMAS + "/schemas", tags=["schemas"], **LOOKUP.route_options(412, ok=GetAllVersionsSchemaResponse))
async def get_all_schemas(tenant: str, namespace: str, topic: str, registry: Reg) -> Response:
    """Every live version, oldest first; an empty list (not 404) after a delete."""
    return json_answer(all_schemas(registry, tenant, namespace, topic))


@router.get(
    SCHEMAS + "/metadata",
    tags=["schemas"],
    response_model=SchemaMetadata,
    **LOOKUP.route_options(412, empty="no history"),
)
async def get_schema_metadata(tenant: str, namespace: str, topic: str, registry: Reg) -> Any:
    """The storage index, tombstones included; 204 when the topic has no history at all."""
    entries = registry.history(schema_topic(tenant, namespace, topic), include_deleted=True)
    if not entries:
        return Response(status_code=204)
    index = [IndexEntry(version=e.version) for e in entries]
    return SchemaMetadata(info=index[-1], index=index)


@router.delete(SCHEMAS + "/schema", tags=["schemas"], **auth.tenant_admin(Step.DELETE).route_options(404, 412))
async def delete_schema(
    request: Request,
    tenant: str,
    namespace: str,
    topic: str,
    registry: Reg,
    force: Annotated[bool, Query(description="drop the whole history; numbering restarts at 0")] = False,
) -> LongSchemaVersion:
    """Soft delete appends a tombstone and returns its version; `force=true` drops the history and returns -1."""
    version = await written(
        request, registry.delete, schema_topic(tenant, namespace, topic), force=force, user=caller()
    )
    return LongSchemaVersion(version=-1 if version is None else version)


@router.post(SCHEMAS + "/schema", tags=["schemas"], **PRODUCE.route_options(400, 404, 409, 412, 422))
async def post_schema(
    request: Request,
    tenant: str,
    namespace: str,
    topic: str,
    payload: PostSchemaPayload,
    registry: Reg,
    response: Response,
) -> PostSchemaResponse:
    """Register (§3.3): an identical live version is returned as is; else checked with the topic's
    strategy and stored. 409 incompatible, 422 invalid schema data. Ignores allow-auto-update, like Pulsar.
    The `X-Registry-Stored` header says which it was ("true": stored; "false": an identical live version)."""
    name = schema_topic(tenant, namespace, topic)
    try:
        done = await written(request, registry.register, name, payload.to_info(), user=caller())
    except (IncompatibleSchemaError, StorageError) as exc:
        pulsar_stats.note_refused_registration(name, exc)  # for Pulsar's metrics, from the write's error
        raise
    pulsar_stats.note_registration(name, done)  # for Pulsar's metrics, from the write's answer
    response.headers[STORED_HEADER] = "true" if done.stored else "false"
    if done.judged_under is not None:
        response.headers[JUDGED_HEADER] = done.judged_under.value
    return PostSchemaResponse(version=LongSchemaVersion(version=done.version))


@router.post(
    SCHEMAS + "/compatibility",
    tags=["schemas"],
    status_code=202,
    **PRODUCE.route_options(
        400, 404, 412, 422, 500, e500="Incompatible: Pulsar answers 500 with the checker's message as reason"
    ),
)
def post_compatibility(
    tenant: str, namespace: str, topic: str, payload: PostSchemaPayload, registry: Reg
) -> IsCompatibilityResponse:
    """Check against the latest (or, transitive strategies, every live) version without registering.

    Pulsar's convention, kept for its tooling: 202 when compatible, 500 when not. The explorer's what-if
    endpoint gives the full explanation."""
    result = registry.check(schema_topic(tenant, namespace, topic), payload.to_info())
    pulsar_stats.note_check(schema_topic(tenant, namespace, topic), result)  # for Pulsar's metrics
    if not result.compatible:
        raise ApiError(500, result.message)
    return IsCompatibilityResponse(compatibility=True, schemaCompatibilityStrategy=result.strategy.value)


@router.post(SCHEMAS + "/version", tags=["schemas"], **LOOKUP.route_options(400, 404, 412, 422))
def post_version(
    tenant: str, namespace: str, topic: str, payload: PostSchemaPayload, registry: Reg
) -> LongSchemaVersion:
    """The first live version with the same type and identical bytes, or -1."""
    version = registry.find_version(schema_topic(tenant, namespace, topic), payload.to_info())
    return LongSchemaVersion(version=-1 if version is None else version)


# --- §7.2 namespace policies -----------------------------------------------------------------------------

NAMESPACE = "/namespaces/{tenant}/{namespace}"
NS_READ = auth.READ.route_options(404, 412)


@router.get(
    NAMESPACE + "/schemaCompatibilityStrategy",
    tags=["namespace policies"],
    **auth.READ.route_options(404, 412, ok=CompatibilityStrategy),
)
async def get_namespace_strategy(tenant: str, namespace: str, registry: Reg) -> Response:
    """The raw namespace value: "UNDEFINED" when never set (no fallback)."""
    return json_answer(namespace_strategy(registry, tenant, namespace))


@router.put(
    NAMESPACE + "/schemaCompatibilityStrategy",
    tags=["namespace policies"],
    **NO_CONTENT,
    **auth.namespace_policy("SCHEMA_COMPATIBILITY_STRATEGY").route_options(400, 404, 412),
)
async def put_namespace_strategy(
    request: Request, tenant: str, namespace: str, strategy: Strategy, registry: Reg
) -> None:
    """Set the namespace strategy; "UNDEFINED" or null clears it."""
    value = CompatibilityStrategy.UNDEFINED if strategy is None else strategy
    await written(request, registry.set_namespace_policy, f"{tenant}/{namespace}", compatibility=value, user=caller())


@router.get(
    NAMESPACE + "/schemaAutoUpdateCompatibilityStrategy",
    tags=["namespace policies"],
    response_model=AutoUpdateStrategy,
    **auth.READ.route_options(404, 412, empty="not set"),
)
async def get_namespace_auto_update(tenant: str, namespace: str, registry: Reg) -> Any:
    """The deprecated auto-update strategy, or 204 when unset."""
    value = registry.namespace_policy(f"{tenant}/{namespace}").auto_update_strategy
    return Response(status_code=204) if value is None else value


@router.put(
    NAMESPACE + "/schemaAutoUpdateCompatibilityStrategy",
    tags=["namespace policies"],
    **NO_CONTENT,
    **auth.namespace_policy("SCHEMA_COMPATIBILITY_STRATEGY").route_options(400, 404, 412),
)
async def put_namespace_auto_update(
    request: Request,
    tenant: str,
    namespace: str,
    strategy: Annotated[AutoUpdateStrategy | None, Body(examples=["AutoUpdateDisabled"])],
    registry: Reg,
) -> None:
    """Set the deprecated auto-update strategy (AutoUpdateDisabled maps to ALWAYS_INCOMPATIBLE); null clears
    it, as Pulsar stores the null it reads."""
    await written(
        request, registry.set_namespace_policy, f"{tenant}/{namespace}", auto_update_strategy=strategy, user=caller()
    )


@router.get(NAMESPACE + "/isAllowAutoUpdateSchema", tags=["namespace policies"], **NS_READ)
async def get_allow_auto_update(tenant: str, namespace: str, registry: Reg) -> bool:
    """The namespace value, or the broker default when unset."""
    return namespace_allow_auto_update(registry.namespace_policy(f"{tenant}/{namespace}"), registry.broker).value


@router.post(
    NAMESPACE + "/isAllowAutoUpdateSchema",
    tags=["namespace policies"],
    **NO_CONTENT,
    **auth.namespace_policy("SCHEMA_COMPATIBILITY_STRATEGY").route_options(400, 404, 412),
)
async def post_allow_auto_update(
    request: Request,
    tenant: str,
    namespace: str,
    allowed: Flag,
    registry: Reg,
    allowAutoUpdateSchemaWithReplicator: bool | None = None,  # noqa: N803 (Pulsar's query name)
) -> None:
    """Allow or refuse producers' and idle consumers' new schemas; 400 when allowing while refusing the
    replicator. Null is false (Pulsar's parameter is a primitive boolean): it does not clear the value."""
    changes: dict[str, Any] = {"allow_auto_update": bool(allowed)}
    if allowAutoUpdateSchemaWithReplicator is not None:
        changes["allow_auto_update_with_replicator"] = allowAutoUpdateSchemaWithReplicator
    await written(request, registry.set_namespace_policy, f"{tenant}/{namespace}", **changes, user=caller())


@router.get(NAMESPACE + "/schemaValidationEnforced", tags=["namespace policies"], **NS_READ)
async def get_namespace_validation(tenant: str, namespace: str, registry: Reg, applied: Applied = False) -> bool:
    """The namespace flag; with applied=true a false flag falls back to the broker's."""
    policy = registry.namespace_policy(f"{tenant}/{namespace}")
    return namespace_validation_enforced(policy, registry.broker).value if applied else policy.validation_enforced


@router.post(
    NAMESPACE + "/schemaValidationEnforced",
    tags=["namespace policies"],
    **NO_CONTENT,
    **auth.namespace_policy("SCHEMA_COMPATIBILITY_STRATEGY").route_options(400, 404, 412),
)
async def post_namespace_validation(
    request: Request, tenant: str, namespace: str, enforced: Flag, registry: Reg
) -> None:
    """Refuse schema-less producers on topics that have a schema. Null is false (a primitive boolean in Pulsar)."""
    await written(
        request,
        registry.set_namespace_policy,
        f"{tenant}/{namespace}",
        validation_enforced=bool(enforced),
        user=caller(),
    )


# --- §7.3 topic policies, listing and creation ------------------------------------------------------------


def _existing_topic(registry: SchemaRegistry, domain: str, tenant: str, namespace: str, topic: str) -> str:
    """Pulsar's topic policy endpoints need an existing topic (404). The facade's policy setters would
    create it, so ask the catalog first (TopicNotFoundError → 404)."""
    name = f"{domain}://{tenant}/{namespace}/{topic}"
    registry.topic_summary(name)
    return name


def _set_topic_policy(
    registry: SchemaRegistry, domain: str, tenant: str, namespace: str, topic: str, **changes: Any
) -> None:
    """Check the topic exists, then set: both on the writer thread, so no write slips in between."""
    registry.set_topic_policy(_existing_topic(registry, domain, tenant, namespace, topic), **changes)


def _add_topic_routes(domain: str) -> None:
    base = f"/{domain}/{{tenant}}/{{namespace}}"
    topic_path = base + "/{topic}"
    tags: list[str | Enum] = ["topics"]
    policy_tags: list[str | Enum] = ["topic policies"]
    # 405: topic policies disabled on the broker; 412: a partition (policies belong to the partitioned topic).
    write = auth.topic_policy("SCHEMA_COMPATIBILITY_STRATEGY").route_options(400, 404, 405, 412)

    @router.get(base, tags=tags, name=f"list_{domain}_topics", **auth.READ.route_options(404, 412))
    async def list_topics(tenant: str, namespace: str, registry: Reg) -> list[str]:
        """The namespace's topics of this domain, full names."""
        return [t for t in registry.topics(f"{tenant}/{namespace}") if t.startswith(f"{domain}://")]

    @router.put(
        topic_path,
        tags=tags,
        name=f"create_{domain}_topic",
        **NO_CONTENT,
        **auth.namespace_operation("CREATE_TOPIC").route_options(404, 409, 412),
    )
    async def create_topic(request: Request, tenant: str, namespace: str, topic: str, registry: Reg) -> None:
        """Create a non-partitioned topic; 409 when it exists."""
        if not await written(request, registry.create_topic, f"{domain}://{tenant}/{namespace}/{topic}", user=caller()):
            raise ApiError(409, "This topic already exists")

    @router.get(topic_path + "/stats", tags=tags, name=f"get_{domain}_topic_stats", **auth.READ.route_options(404, 412))
    async def topic_stats(tenant: str, namespace: str, topic: str, registry: Reg) -> dict[str, Any]:
        """Pulsar's TopicStats, the part this registry knows: `publishers` and the `consumers` of each
        subscription, from the recorded clients (no rates, backlogs or storage figures: it moves no messages;
        no subscription `type`: it is not recorded)."""
        name = _existing_topic(registry, domain, tenant, namespace, topic)
        return topic_stats_json(registry.connected_clients(name))

    @router.get(
        topic_path + "/schemaCompatibilityStrategy",
        tags=policy_tags,
        name=f"get_{domain}_topic_strategy",
        response_model=CompatibilityStrategy,
        **auth.READ.route_options(400, 404, 405, 412, empty="no topic-level value"),
    )
    async def get_topic_strategy(
        tenant: str, namespace: str, topic: str, registry: Reg, applied: Applied = False
    ) -> Any:
        """The topic's own strategy (204 when none), or with applied=true the one in force: topic →
        namespace → namespace auto-update mapping → broker."""
        name = _existing_topic(registry, domain, tenant, namespace, topic)
        if applied:
            return registry.effective_policy(name).admin_compatibility.value
        value = registry.topic_policy(name).compatibility
        return Response(status_code=204) if value is None else value

    @router.put(topic_path + "/schemaCompatibilityStrategy", tags=policy_tags, **NO_CONTENT, **write)
    async def put_topic_strategy(
        request: Request, tenant: str, namespace: str, topic: str, strategy: Strategy, registry: Reg
    ) -> None:
        """Set the topic's strategy; "UNDEFINED" or null removes it."""
        await written(
            request,
            _set_topic_policy,
            registry,
            domain,
            tenant,
            namespace,
            topic,
            compatibility=strategy,
            user=caller(),
        )

    @router.delete(topic_path + "/schemaCompatibilityStrategy", tags=policy_tags, **NO_CONTENT, **write)
    async def delete_topic_strategy(request: Request, tenant: str, namespace: str, topic: str, registry: Reg) -> None:
        """Remove the topic's strategy: the namespace's (or broker's) applies again."""
        await written(
            request, _set_topic_policy, registry, domain, tenant, namespace, topic, compatibility=None, user=caller()
        )

    @router.get(
        topic_path + "/schemaValidationEnforced",
        tags=policy_tags,
        name=f"get_{domain}_topic_validation",
        **auth.READ.route_options(400, 404, 405, 412),
    )
    async def get_topic_validation(
        tenant: str, namespace: str, topic: str, registry: Reg, applied: Applied = False
    ) -> bool:
        """The topic's flag; without one, false, or with applied=true the namespace flag OR the broker's."""
        name = _existing_topic(registry, domain, tenant, namespace, topic)
        value = registry.topic_policy(name).validation_enforced
        if value is not None:
            return value
        return applied and registry.effective_policy(name).validation_enforced.value

    @router.post(topic_path + "/schemaValidationEnforced", tags=policy_tags, **NO_CONTENT, **write)
    async def post_topic_validation(
        request: Request, tenant: str, namespace: str, topic: str, enforced: Flag, registry: Reg
    ) -> None:
        """Set the topic's flag. Null is false (a primitive boolean in Pulsar): it does not remove the policy."""
        changes = {"validation_enforced": bool(enforced)}
        await written(request, _set_topic_policy, registry, domain, tenant, namespace, topic, **changes, user=caller())


for _domain in DOMAINS:
    _add_topic_routes(_domain)


@router.get("/tenants", tags=["tenants"], **auth.READ.route_options())
async def list_tenants(registry: Reg) -> list[str]:
    return registry.tenants()


@router.get("/tenants/{tenant}", tags=["tenants"], **auth.READ.route_options(404, 412))
async def get_tenant(tenant: str, registry: Reg) -> TenantInfo:
    """404 "Tenant does not exist" for an unknown tenant."""
    registry.namespaces(tenant)
    return TenantInfo()


@router.put("/tenants/{tenant}", tags=["tenants"], **NO_CONTENT, **auth.super_user().route_options(409, 412))
async def create_tenant(request: Request, tenant: str, registry: Reg) -> None:
    """Create a tenant; 409 when it exists. A TenantInfo body is accepted and ignored (no clusters here)."""
    if not await written(request, registry.create_tenant, tenant, user=caller()):
        raise ApiError(409, "Tenant already exists")


@router.get("/namespaces/{tenant}", tags=["namespaces"], **auth.READ.route_options(404, 412))
async def list_namespaces(tenant: str, registry: Reg) -> list[str]:
    """The tenant's namespaces as "tenant/namespace"."""
    return registry.namespaces(tenant)


@router.get(NAMESPACE, tags=["namespaces"], response_model_exclude_none=True, **auth.READ.route_options(404, 412))
async def get_namespace(tenant: str, namespace: str, registry: Reg) -> Policies:
    """The namespace's schema policies, with Pulsar's `Policies` field names."""
    return Policies.of(registry.namespace_policy(f"{tenant}/{namespace}"))


@router.put(NAMESPACE, tags=["namespaces"], **NO_CONTENT, **auth.tenant_admin().route_options(404, 409, 412))
async def create_namespace(request: Request, tenant: str, namespace: str, registry: Reg) -> None:
    """Create a namespace with default policies; 404 for an unknown tenant, 409 when it exists. A Policies
    body is accepted and ignored: set schema policies with their own endpoints."""
    if not await written(request, registry.create_namespace, f"{tenant}/{namespace}", user=caller()):
        raise ApiError(409, "Namespace already exists")


@router.get("/brokers/version", tags=["brokers"], response_class=PlainTextResponse, **auth.READ.route_options())
async def broker_version(registry: Reg) -> str:
    """The Pulsar version this server answers as: its line's name (`3.0`, `4.0`, `master`) where a broker
    reports its release (`4.0.7`); a remote explorer reads either and answers with that line's rules."""
    return str(registry.pulsar_version)


@router.get("/brokers/configuration/runtime", tags=["brokers"], **auth.READ.route_options())
async def broker_configuration(registry: Reg) -> dict[str, str]:
    """The broker settings that shape schema behaviour, as Pulsar's runtime configuration map (strings)."""
    broker = registry.broker
    return {
        "schemaCompatibilityStrategy": broker.compatibility.value,
        "systemTopicSchemaCompatibilityStrategy": broker.system_topic_compatibility.value,
        "isAllowAutoUpdateSchemaEnabled": str(broker.allow_auto_update).lower(),
        "isSchemaValidationEnforced": str(broker.validation_enforced).lower(),
        "topicLevelPoliciesEnabled": str(broker.topic_level_policies_enabled).lower(),
    }


def topic_stats_json(clients: list[ConnectedClient]) -> dict[str, Any]:
    """TopicStats' `publishers` and `subscriptions` with Pulsar's field names."""
    publishers = [
        {"producerName": c.name, "connectedSince": c.connected_since} for c in clients if c.role is ClientRole.PRODUCER
    ]
    subscriptions: dict[str, dict[str, Any]] = {}
    for c in clients:
        if c.role is ClientRole.CONSUMER:
            subscription = subscriptions.setdefault(c.subscription, {"consumers": []})
            subscription["consumers"].append({"consumerName": c.name, "connectedSince": c.connected_since})
    return {"publishers": publishers, "subscriptions": subscriptions}
