"""What-if answers, upgrade plans and policy impact: Pulsar's verdicts on what has not happened yet, computed
over a `RegistryState` and writing nothing, so the embedded and the remote registry give the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._admission import admit_consumer, admit_producer, check_consumer
from .._changes import CANDIDATE
from .._compatibility import can_read, invalid_default_advisories
from .._errors import InvalidSchemaError, PoisonedHistoryError, SchemaNotFoundError
from .._history import data_of, next_version, trim
from .._model import (
    STRATEGIES,
    Admission,
    ClientRole,
    CompatibilityStrategy,
    PolicySource,
    Problem,
    SchemaInfo,
    SchemaVersion,
)
from .._names import NamespaceName, TopicName
from .._schema_data import parse_avro_data, to_schema_data
from .._state import RegistryState
from .._types import AVRO_PARSED_TYPES, SchemaData
from ._diff import diff_schemas
from ._upgrade import UpgradePlan, change_order, plan_upgrade, strategy_order
from ._whatif import PolicyImpact, RefusedClient, TopicImpact, WhatIf

S = CompatibilityStrategy


def what_if(state: RegistryState, name: TopicName, info: SchemaInfo) -> WhatIf:
    """Pulsar's answer to `info` on the topic under each of the 8 strategies, with the effective verdict,
    simulated registration and admission, advisories, the diff against the latest version and the upgrade
    order."""
    data = to_schema_data(info)
    entries = state.history(name)
    live = trim(entries)
    effective = state.admin_strategy(name)
    by_strategy = {s: state.judge(live, data, s) for s in STRATEGIES}
    result = by_strategy[effective.value]
    advisories = result.advisories + by_strategy[S.FULL].advisories
    if data.type in AVRO_PARSED_TYPES:
        advisories += tuple(invalid_default_advisories(parse_avro_data(data.type, data.data)))
    registration = simulate_registration(state, name, entries, data, effective.value)
    producer, _ = admit_producer(state, None, name, info, False, "")
    consumer, _ = admit_consumer(state, None, name, info, ("", ""), "")
    latest = live[-1] if live else None
    latest_data = data_of(latest) if latest else None
    order = None
    if latest_data is not None:
        order = change_order(not can_read(data, latest_data), not can_read(latest_data, data))
    return WhatIf(
        topic=str(name.base),
        candidate_type=data.type,
        effective=effective,
        result=result,
        by_strategy=by_strategy,
        duplicate_of=registration.version if not registration.registered and registration.accepted else None,
        registration=registration,
        producer=producer,
        consumer=consumer,
        advisories=tuple(dict.fromkeys(advisories)),
        diff=diff_schemas(str(name.base), (latest.version, latest_data), (CANDIDATE, data))
        if latest is not None and latest_data is not None
        else None,
        latest_version=latest.version if latest else None,
        strategy_order=strategy_order(effective.value),
        change_order=order,
        plan=upgrade_plan(state, name, live, data) if live else None,
    )


def simulate_registration(
    state: RegistryState,
    name: TopicName,
    entries: Sequence[SchemaVersion],
    data: SchemaData,
    strategy: CompatibilityStrategy,
) -> Admission:
    """What registering `data` would do (§3.3), as an admission: the duplicate it returns, the version it
    stores, or the refusal."""
    try:
        match, result = state.plan_put(name, entries, data, strategy)
    except (InvalidSchemaError, PoisonedHistoryError) as exc:
        return Admission(accepted=False, role=ClientRole.PRODUCER, reason=str(exc))
    if match is not None:
        return Admission(
            accepted=True,
            role=ClientRole.PRODUCER,
            version=match,
            reason=f"identical to live version {match}: registering returns it and stores nothing",
        )
    if result is not None and not result.compatible:
        return Admission(accepted=False, role=ClientRole.PRODUCER, reason=result.message, result=result)
    return Admission(
        accepted=True, role=ClientRole.PRODUCER, version=next_version(entries), registered=True, result=result
    )


def diff_side(state: RegistryState, name: TopicName, ref: int | SchemaInfo | None) -> tuple[int | str, SchemaData]:
    """A live version (None: the latest) or a candidate, as the checks compare it, with the version it is
    (CANDIDATE for a candidate), so that a diff names what it compared."""
    if isinstance(ref, SchemaInfo):
        return CANDIDATE, to_schema_data(ref)
    entry = live_version(state, name, ref)
    return entry.version, data_of(entry)


def live_version(state: RegistryState, name: TopicName, version: int | None) -> SchemaVersion:
    """The latest live version, or a given version if it is live (§3.6); SchemaNotFoundError otherwise."""
    entries = state.history(name)
    if version is None:
        if not entries or entries[-1].deleted:
            raise SchemaNotFoundError(f"Schema not found: topic {name} has no schema")
        return entries[-1]
    for entry in trim(entries):
        if entry.version == version:
            return entry
    raise SchemaNotFoundError(f"Schema not found: topic {name} has no live version {version}")


def upgrade_plan(
    state: RegistryState, name: TopicName, live: Sequence[SchemaVersion], target: SchemaData
) -> UpgradePlan:
    """Order in which to move the topic's recorded clients to `target` so that every reader can read every
    writer at each step."""
    schemas: dict[int | str, SchemaData] = {e.version: data_of(e) for e in live}
    target_key: int | str = next(
        (v for v, d in schemas.items() if d.type is target.type and d.data == target.data), CANDIDATE
    )
    schemas[target_key] = target

    def reads(reader: int | str, writer: int | str) -> str | None:
        if reader not in schemas or writer not in schemas:
            return f"version {reader if reader not in schemas else writer} is not live any more"
        reasons = can_read(schemas[reader], schemas[writer])
        return reasons[0] if reasons else None

    return plan_upgrade(str(name.base), state.clients(name), target_key, reads)


def policy_impact(
    state: RegistryState, ns: NamespaceName, proposed: CompatibilityStrategy, topics: list[str]
) -> PolicyImpact:
    """What setting `proposed` on a namespace would have refused, per topic of it."""
    impacts = [topic_impact(state, TopicName.parse(t), proposed) for t in topics]
    return PolicyImpact(namespace=str(ns), proposed=proposed, topics=tuple(impacts))


def topic_impact(state: RegistryState, name: TopicName, proposed: CompatibilityStrategy) -> TopicImpact:
    """One topic under a proposed namespace strategy: the registrations it would have refused and the
    recorded consumers that could no longer subscribe; a topic with its own strategy is overridden."""
    current = state.admin_strategy(name)
    overridden = current.source is PolicySource.TOPIC
    strategy = current.value if overridden else proposed
    live = state.live(name)
    refused, first = replay(state, live, strategy)
    clients = []
    for client in state.clients(name):
        if client.role is not ClientRole.CONSUMER or client.version is None:
            continue
        entry = next((e for e in live if e.version == client.version), None)
        if entry is None:
            continue
        admission = check_consumer(live, data_of(entry), strategy)
        if not admission.accepted:
            clients.append(RefusedClient(client=client, reason=admission.reason))
    return TopicImpact(
        topic=str(name.base),
        current=current,
        proposed=proposed,
        overridden=overridden,
        refused_versions=refused,
        first_problem=first,
        latest_refused=bool(live) and len(live) > 1 and live[-1].version in refused,
        refused_clients=tuple(clients),
    )


def replay(
    state: RegistryState, live: Sequence[SchemaVersion], strategy: CompatibilityStrategy
) -> tuple[tuple[int, ...], Problem | None]:
    """Each live registration checked again, under `strategy`, against the versions before it: the versions
    that would have been refused, and the first problem found."""
    refused: list[int] = []
    first: Problem | None = None
    for i in range(1, len(live)):
        verdict = state.judge(live[:i], data_of(live[i]), strategy)
        if not verdict.compatible:
            refused.append(live[i].version)
            first = first or verdict.problems[0]
    return tuple(refused), first
