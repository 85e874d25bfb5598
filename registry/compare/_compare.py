"""`compare_registries(a, b)`: registry A against registry B, any two handles `registry.open` gives (embedded,
remote, read-only), in one pass: each topic's state, the policy differences, and, from A into B, the
replication hazards and the plan to converge."""

from __future__ import annotations

from .._handle import SchemaRegistry
from .._pulsar_version import answering_as
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
