"""Comparing two registries (docs/guide/compare.md): drift per topic, policy differences,
replication hazards from one into the other, and the plan to converge."""

from ._compare import assemble, compare_namespaces, compare_registries, compare_topics, drift_diff
from ._propose import propose_plan
from ._sides import open_side, parquet_side
from ._values import (
    Comparison,
    Hazard,
    HazardReason,
    PlanStep,
    PolicyDifference,
    TopicComparison,
    TopicDrift,
    TopicPlan,
    TopicState,
)

__all__ = [
    "Comparison",
    "Hazard",
    "HazardReason",
    "PlanStep",
    "PolicyDifference",
    "TopicComparison",
    "TopicDrift",
    "TopicPlan",
    "TopicState",
    "assemble",
    "compare_namespaces",
    "compare_registries",
    "compare_topics",
    "drift_diff",
    "open_side",
    "parquet_side",
    "propose_plan",
]
