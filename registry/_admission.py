"""Would the broker let this client in (pulsar-semantics.md §8)? The binary protocol's producer and consumer
paths: `AbstractTopic.addSchema` for producers and for consumers on an idle topic, and
`checkConsumerCompatibility` for consumers on a topic in use.

Admission is decided over a `RegistryState`. A producer or an idle-topic consumer may register its schema
when auto-update allows it: that write goes through `writes` (the embedded registry's `LocalWrites`); with
`writes=None` the answer is a dry run that writes nothing (what-if, previews).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._compatibility import check_with_all, check_with_latest
from ._errors import IncompatibleSchemaError, InvalidSchemaError, PoisonedHistoryError
from ._history import next_version, versioned
from ._model import (
    STRATEGY_FACTS,
    Admission,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    Problem,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
)
from ._names import TopicName
from ._schema_data import checked_info, to_schema_data
from ._state import RegistryState
from ._types import SCHEMALESS_CLIENT_TYPES, SchemaData, SchemaType

if TYPE_CHECKING:
    from ._writes import LocalWrites

S = CompatibilityStrategy
_NO_SCHEMA_ENFORCED = (
    "Producers cannot connect or send message without a schema to topics with a schema"
    "when SchemaValidationEnforced is enabled"
)
_AUTO_UPDATE_DISABLED = "Schema not found and schema auto updating is disabled."


def admit_producer(
    state: RegistryState,
    writes: LocalWrites | None,
    name: TopicName,
    info: SchemaInfo | None,
    replicator: bool,
    user: str,
) -> tuple[Admission, SchemaType | None]:
    """§8.1: the producer's admission and the schema type it connects with (None: no schema)."""
    policy = state.effective_policy(name)
    if info is None or checked_info(info).type in SCHEMALESS_CLIENT_TYPES:
        if state.live(name) and policy.validation_enforced.value:
            return Admission(accepted=False, role=ClientRole.PRODUCER, reason=_NO_SCHEMA_ENFORCED), None
        return Admission(accepted=True, role=ClientRole.PRODUCER), None
    data = client_schema(info)
    ns_policy = state.stored_namespace_policy(name)
    allowed = policy.allow_auto_update.value or (replicator and ns_policy.allow_auto_update_with_replicator)
    strategy = policy.compatibility.value
    return _add_schema(state, writes, name, data, ClientRole.PRODUCER, allowed, strategy, user), data.type


def admit_consumer(
    state: RegistryState,
    writes: LocalWrites | None,
    name: TopicName,
    info: SchemaInfo | None,
    client: tuple[str, str],
    user: str,
) -> tuple[Admission, SchemaType | None]:
    """§8.2: the consumer's admission and the schema type it subscribes with; `client` is its (name,
    subscription), which does not count as a user of the topic it is joining."""
    info = None if info is None else checked_info(info)
    if info is None or info.type is SchemaType.AUTO_CONSUME or info.type in SCHEMALESS_CLIENT_TYPES:
        kind = info.type if info is not None and info.type is SchemaType.AUTO_CONSUME else None
        return Admission(accepted=True, role=ClientRole.CONSUMER), kind
    policy = state.effective_policy(name)
    strategy = policy.compatibility.value
    live = state.live(name)
    if not in_use(state, name, live, exclude=client):
        data = client_schema(info)
        allowed = policy.allow_auto_update.value
        return _add_schema(state, writes, name, data, ClientRole.CONSUMER, allowed, strategy, user), data.type
    # On a topic in use Pulsar never validates the consumer's schema as a new one: only
    # SchemaRegistryServiceWithSchemaDataValidator.putSchemaIfAbsent runs SchemaDataValidator, and
    # SchemaRegistryServiceImpl.checkConsumerCompatibility goes straight to the compatibility check.
    data = client_schema(info, validate=False)
    return check_consumer(live, data, strategy), data.type


def check_consumer(live: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy) -> Admission:
    """checkConsumerCompatibility (§8.2): never registers anything."""
    role = ClientRole.CONSUMER
    matched = next((e.version for e in live if e.type is data.type and e.data == data.data), None)
    if strategy is S.ALWAYS_COMPATIBLE:
        return Admission(accepted=True, role=role, version=matched)
    if not live:
        problem = Problem(
            code=RuleCode.NO_SCHEMA_ON_ACTIVE_TOPIC,
            direction=Direction.NONE,
            message=f"Failed to add schema to an active topic with empty(BYTES) schema: new schema type {data.type}",
            hint="connect without a schema, or register the schema while the topic is idle",
        )
        result = CompatibilityResult(compatible=False, strategy=strategy, problems=(problem,))
        return Admission(accepted=False, role=role, reason=problem.message, result=result)
    existing = versioned(live)
    if STRATEGY_FACTS[strategy].consumer_checks_latest:
        result = check_with_latest(existing, data, strategy, check_strategy=S.BACKWARD)
    else:
        result = check_with_all(existing, data, strategy)
    if not result.compatible:
        return Admission(accepted=False, role=role, reason=result.message, result=result)
    return Admission(
        accepted=True, role=role, version=matched if matched is not None else live[-1].version, result=result
    )


def in_use(state: RegistryState, name: TopicName, live: Sequence[SchemaVersion], exclude: tuple[str, str]) -> bool:
    """§8.2: a live schema, a producer (replicators only count on non-persistent topics), or a consumer
    that is not AUTO_CONSUME. The embedded registry has no message data, so ledger size does not apply."""
    if live:
        return True
    for client in state.clients(name):
        # persistent topics count user-created producers only; non-persistent ones count any producer
        if client.role is ClientRole.PRODUCER and (not client.replicator or name.domain == "non-persistent"):
            return True
        if (
            client.role is ClientRole.CONSUMER
            and client.schema_type is not SchemaType.AUTO_CONSUME
            and (client.name, client.subscription) != exclude
        ):
            return True
    return False


def client_schema(info: SchemaInfo, *, validate: bool = True) -> SchemaData:
    """A client's declared schema as stored data; the AUTO* types exist only in clients (§1)."""
    info = checked_info(info)
    if info.type.is_client_side:
        raise InvalidSchemaError(f"Schema {info.type} is a client-side schema type; connect without a schema instead")
    return to_schema_data(info, validate=validate)


def _add_schema(
    state: RegistryState,
    writes: LocalWrites | None,
    name: TopicName,
    data: SchemaData,
    role: ClientRole,
    allowed: bool,
    strategy: CompatibilityStrategy,
    user: str,
) -> Admission:
    """AbstractTopic.addSchema: register when auto-update is allowed, else only match a live version."""
    try:
        if allowed and writes is None:
            entries = state.history(name)
            match, result = state.plan_put(name, entries, data, strategy)
            if result is not None and not result.compatible:
                return Admission(accepted=False, role=role, reason=result.message, result=result)
            if match is not None:
                return Admission(accepted=True, role=role, version=match)
            return Admission(accepted=True, role=role, version=next_version(entries), registered=True, result=result)
        if allowed and writes is not None:
            version, stored, result = writes.put_if_absent(name, data, strategy, user)
            return Admission(accepted=True, role=role, version=version, registered=stored, result=result)
        match = state.duplicate(name, state.live(name), data)
    except IncompatibleSchemaError as exc:
        return Admission(accepted=False, role=role, reason=str(exc), result=exc.result)
    except (InvalidSchemaError, PoisonedHistoryError) as exc:
        return Admission(accepted=False, role=role, reason=str(exc))
    if match is None:
        return Admission(accepted=False, role=role, reason=_AUTO_UPDATE_DISABLED)
    return Admission(accepted=True, role=role, version=match)
