"""`compare_registries(a, b)`: registry A against registry B, any two handles `registry.open` gives (embedded,
remote, read-only), in one pass: each topic's state, the policy differences, and, from A into B, the
replication hazards and the plan to converge."""

from __future__ import annotations

from collections.abc import Iterable

from .._changes import SchemaDiff
from .._errors import NotFoundError
from .._handle import SchemaRegistry
from .._history import data_of
from .._names import TopicName
from .._pulsar_version import answering_as
from ..explain._diff import diff_schemas
from ._drift import topic_drift
from ._plan import schemaless_producers, topic_plan_and_hazard
from ._policies import namespace_differences, topic_differences
from ._sides import Side
from ._values import Comparison, PolicyDifference, TopicComparison


def compare_registries(source: SchemaRegistry, target: SchemaRegistry) -> Comparison:
    """Registry `source` (A) against `target` (B): every topic with a schema history on either side, in
    schema id order. Versions are compared under B's Pulsar line (its name rules parse both sides)."""
    a, b = Side(source), Side(target)
    return assemble(source.location, target.location, _namespaces(a, b), _topics(a, b))


def compare_topics(source: SchemaRegistry, target: SchemaRegistry) -> list[TopicComparison]:
    """The per-topic part of `compare_registries` over the topics the two handles hold, in schema id order:
    what a comparison run in parts computes for each batch of topics, over registries that hold that batch's
    topics and every namespace of their side (a plan judges a topic under its namespace's policies on B)."""
    return _topics(Side(source), Side(target))


def compare_namespaces(source: SchemaRegistry, target: SchemaRegistry) -> tuple[PolicyDifference, ...]:
    """The namespace part of `compare_registries`: the policies in force differently on the namespaces both
    hold (a comparison run in parts reads it from the namespaces alone)."""
    return _namespaces(Side(source), Side(target))


def assemble(
    source: str,
    target: str,
    namespaces: Iterable[PolicyDifference],
    topics: Iterable[TopicComparison],
    *,
    unlisted_same: int = 0,
) -> Comparison:
    """The comparison of A (`source`, its location) and B from its parts, whatever order they come in: the
    namespace differences, then each topic's answers in schema id order (`unlisted_same`: `same` topics
    counted but not given)."""
    ordered = sorted(topics, key=lambda t: t.schema_id)
    drifts = tuple(t.drift for t in ordered if t.drift is not None)
    return Comparison(
        source=source,
        target=target,
        topics=drifts,
        policies=(*namespaces, *(p for t in ordered for p in t.policies)),
        hazards=tuple(t.hazard for t in ordered if t.hazard is not None),
        plan=tuple(t.plan for t in ordered if t.plan is not None),
        unlisted_same=unlisted_same,
    )


def _namespaces(a: Side, b: Side) -> tuple[PolicyDifference, ...]:
    return tuple(namespace_differences(a, b))


def _topics(a: Side, b: Side) -> list[TopicComparison]:
    line = b.handle.pulsar_line
    schemaless = schemaless_producers(a)
    found: list[TopicComparison] = []
    for schema_id in sorted(set(a.names) | set(b.names)):
        with answering_as(line):
            drift = topic_drift(schema_id, a, b, line)
        policies = tuple(topic_differences(a, b, schema_id))
        if drift is None and not policies:
            continue
        plan, hazard = topic_plan_and_hazard(drift, a, b, schemaless) if drift is not None else (None, None)
        found.append(TopicComparison(schema_id=schema_id, drift=drift, policies=policies, plan=plan, hazard=hazard))
    return found


def drift_diff(source: SchemaRegistry, target: SchemaRegistry, topic: str, version: int) -> SchemaDiff | None:
    """What differs between B's and A's `version` of a topic (B's as the old side, A's as the new), each
    change marked for BACKWARD and FORWARD reading; None when either side has no live version of that number."""
    found = []
    for handle in (target, source):
        try:
            found.append(handle.get(topic, version))
        except NotFoundError:
            return None
    old, new = found
    with answering_as(target.pulsar_line):
        return diff_schemas(
            str(TopicName.parse(topic).base), (f"B v{version}", data_of(old)), (f"A v{version}", data_of(new))
        )
