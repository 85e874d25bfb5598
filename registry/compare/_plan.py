"""What replicating A into B would do, and the plan to converge B on A.

Pulsar's replicator connects to the remote cluster as a producer with each schema it meets (§8.1,
`AbstractTopic.addSchema` with the replicator flag): B takes a version only when its auto-update policy lets
the replicator register (`isAllowAutoUpdateSchema`, or `allowAutoUpdateWithReplicator`) and the version passes
B's strategy in force; a producer without a schema is refused where B enforces validation. Each topic's
missing versions are judged in order over an in-memory copy of B's topic (its history, namespace and topic
policies, broker settings and Pulsar line), each as if the ones before it had been registered, with the same
admission code the rest of the explorer uses (`_admission.py`); after a refusal replication stalls, so the
later versions are not judged.
"""

from __future__ import annotations

import dataclasses
from contextlib import suppress

from .._admission import admit_producer
from .._errors import NotFoundError, RegistryError
from .._history import trim
from .._model import ClientRole, SchemaVersion
from .._names import TopicName
from .._pulsar_version import answering_as
from .._state import RegistryState
from .._types import SCHEMALESS_CLIENT_TYPES
from ..storage._memory import MemoryStorage
from ._sides import Side
from ._values import Hazard, HazardReason, PlanStep, TopicDrift, TopicPlan, TopicState

_REPLICATED = (TopicState.TO_BEHIND, TopicState.ONLY_IN_FROM)
_NOT_BY_REGISTERING = {
    TopicState.DIVERGED: "the histories part at version {first}: registering A's versions into B cannot make "
    "them equal (B would number them after its own); decide which side is right, then delete and re-register "
    "the topic's schema on the other",
    TopicState.DELETED_IN_TO: "B deleted the schema A still has: replication would start a new history on B "
    "at the next version number; delete on A, or re-register on B on purpose",
}


def copy_of(target: Side, name: TopicName) -> RegistryState:
    """An in-memory copy of B's topic: its history, namespace and topic policies, broker and Pulsar line."""
    storage = MemoryStorage()
    handle = target.handle
    with suppress(NotFoundError):
        storage.put_namespace(str(name.namespace_name), handle.namespace_policy(str(name.namespace_name)), 0)
    storage.put_topic_policy(str(name.base), target.own_policy(str(name.base)))
    expected = None
    for entry in target.history(name.schema_id):
        storage.append(dataclasses.replace(entry, topic=name.schema_id), expected)
        expected = entry.version
    return RegistryState(storage, handle.broker, handle.pulsar_line, auto_create=True)


def plan_topic(drift: TopicDrift, source: Side, target: Side) -> tuple[TopicPlan, RegistryState | None]:
    """The topic's plan, and the copy of B it leaves (with the accepted steps registered)."""
    name = TopicName.parse(drift.topic)
    if drift.state not in _REPLICATED:
        note = _NOT_BY_REGISTERING[drift.state].format(first=drift.first_difference)
        return TopicPlan(topic=drift.topic, state=drift.state, steps=(), note=note), None
    a, b = source.history(name.schema_id), target.history(name.schema_id)
    missing = trim(a[len(b) :])  # B's history is a prefix of A's: what follows, after any tombstone in it
    state = copy_of(target, name)
    steps: list[PlanStep] = []
    refused: int | None = None
    for entry in missing:
        if refused is not None:
            steps.append(PlanStep(version=entry.version, schema_type=entry.type, accepted=False, blocked_by=refused))
            continue
        step = judge_step(state, name, entry)
        steps.append(step)
        if not step.accepted:
            refused = entry.version
    ns = str(name.namespace_name)
    note = "" if ns in target.namespaces else f"B has no namespace {ns}: the steps are judged under its defaults"
    return TopicPlan(topic=drift.topic, state=drift.state, steps=tuple(steps), note=note), state


def judge_step(state: RegistryState, name: TopicName, entry: SchemaVersion) -> PlanStep:
    """B's verdict on one of A's versions, the replicator connecting with it; registered in the copy when B
    would store it, so the next step is judged after it."""
    with answering_as(state.line):
        try:
            admission, _ = admit_producer(state, None, name, entry.info, True, "")
        except RegistryError as exc:
            return PlanStep(version=entry.version, schema_type=entry.type, accepted=False, reason=str(exc))
    if not admission.accepted:
        problems = admission.result.problems if admission.result is not None else ()
        return PlanStep(
            version=entry.version,
            schema_type=entry.type,
            accepted=False,
            reason=admission.reason,
            problems=problems,
        )
    if admission.registered and admission.version is not None:
        latest = state.history(name)
        added = dataclasses.replace(entry, topic=name.schema_id, version=admission.version)
        state.storage.append(added, latest[-1].version if latest else None)
        return PlanStep(version=entry.version, schema_type=entry.type, accepted=True, registers_as=admission.version)
    return PlanStep(version=entry.version, schema_type=entry.type, accepted=True, duplicate_of=admission.version)


def step_hazard(plan: TopicPlan, state: RegistryState) -> Hazard | None:
    """The hazard of a plan's first refused step, with the policy on B that decides it."""
    step = next((s for s in plan.steps if not s.accepted and s.blocked_by is None), None)
    if step is None:
        return None
    policy = state.effective_policy(TopicName.parse(plan.topic))
    ns_policy = state.stored_namespace_policy(TopicName.parse(plan.topic))
    value: object
    if step.problems:
        reason, field = HazardReason.INCOMPATIBLE, "compatibility"
        value, source = policy.compatibility.value, str(policy.compatibility.source)
    elif not (policy.allow_auto_update.value or ns_policy.allow_auto_update_with_replicator):
        reason, field = HazardReason.AUTO_UPDATE_DISALLOWED, "allow_auto_update"
        value, source = policy.allow_auto_update.value, str(policy.allow_auto_update.source)
    else:
        reason, field, value, source = HazardReason.INVALID, "pulsar_version", state.line.name, "registry"
    return Hazard(
        topic=plan.topic,
        reason=reason,
        version=step.version,
        message=step.reason,
        policy=field,
        policy_value=value,
        policy_source=source,
        problems=step.problems,
    )


def schemaless_hazard(topic: str, state: RegistryState) -> Hazard | None:
    """A producer of A's without a schema, replicated into B: refused where B enforces validation on a topic
    with a schema (§8.1)."""
    name = TopicName.parse(topic)
    admission, _ = admit_producer(state, None, name, None, True, "")
    if admission.accepted:
        return None
    enforced = state.effective_policy(name).validation_enforced
    return Hazard(
        topic=topic,
        reason=HazardReason.VALIDATION_ENFORCED,
        version=None,
        message=admission.reason,
        policy="validation_enforced",
        policy_value=enforced.value,
        policy_source=str(enforced.source),
    )


def schemaless_producers(source: Side) -> set[str]:
    """The schema ids of A's topics with a recorded producer that connects without a schema (not a replicator;
    a producer recorded with a version uses a schema)."""
    found: set[str] = set()
    if not source.handle.records_clients:
        return found
    for client in source.handle.clients():
        if client.role is ClientRole.PRODUCER and not client.replicator:
            if (client.schema_type is None and client.version is None) or client.schema_type in SCHEMALESS_CLIENT_TYPES:
                found.add(TopicName.parse(client.topic).schema_id)
    return found


def topic_plan_and_hazard(
    drift: TopicDrift, source: Side, target: Side, schemaless: set[str]
) -> tuple[TopicPlan | None, Hazard | None]:
    """One topic's plan (None when replication neither touches it nor can converge it) and its hazard, the
    first that stalls it (a `same` topic too: a schema-less producer is a hazard on any of them). `schemaless`
    holds the schema ids of A's schema-less producers (`schemaless_producers`, read once per comparison)."""
    plan: TopicPlan | None = None
    state: RegistryState | None = None
    if drift.state in _REPLICATED or drift.state in _NOT_BY_REGISTERING:
        plan, state = plan_topic(drift, source, target)
        found = step_hazard(plan, state) if state is not None else None
        if found is not None:
            return plan, found
    schema_id = TopicName.parse(drift.topic).schema_id
    if schema_id in schemaless and drift.state is not TopicState.ONLY_IN_TO and _enforced(target, drift.topic):
        return plan, schemaless_hazard(drift.topic, state or copy_of(target, TopicName.parse(drift.topic)))
    return plan, None


def _enforced(target: Side, topic: str) -> bool:
    """Whether B enforces validation on the topic (else a schema-less producer is never refused: §8.1)."""
    with suppress(NotFoundError):
        return bool(target.handle.effective_policy(topic).validation_enforced.value)
    return False
