"""`compare_registries(a, b)`: registry A against registry B, any two handles `registry.open` gives (embedded,
remote, read-only), in one pass: each topic's state, the policy differences, and, from A into B, the
replication hazards and the plan to converge."""

from __future__ import annotations

from .._changes import SchemaDiff
from .._errors import NotFoundError
from .._handle import SchemaRegistry
from .._history import data_of
from .._names import TopicName
from .._pulsar_version import answering_as
from ..explain._diff import diff_schemas
from ._drift import topic_drift
from ._plan import plans_and_hazards
from ._policies import policy_differences
from ._sides import Side
from ._values import Comparison, TopicDrift


def compare_registries(source: SchemaRegistry, target: SchemaRegistry) -> Comparison:
    """Registry `source` (A) against `target` (B): every topic with a schema history on either side, in
    schema id order. Versions are compared under B's Pulsar line (its name rules parse both sides)."""
    a, b = Side(source), Side(target)
    schema_ids = sorted(set(a.names) | set(b.names))
    drifts: list[TopicDrift] = []
    with answering_as(target.pulsar_line):
        for schema_id in schema_ids:
            found = topic_drift(schema_id, a, b, target.pulsar_line)
            if found is not None:
                drifts.append(found)
    policies = tuple(policy_differences(a, b, schema_ids))
    plan, hazards = plans_and_hazards(drifts, a, b)
    return Comparison(
        source=source.location,
        target=target.location,
        topics=tuple(drifts),
        policies=policies,
        hazards=hazards,
        plan=plan,
    )


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
