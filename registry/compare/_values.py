"""The values a comparison of two registries answers with: per topic its drift state, the policy differences,
the replication hazards from one registry into the other, and the plan to converge.

Plain frozen values, rendered as they are by the CLI, the app or a notebook; `Comparison.as_json` is the one
JSON form (`schema-explorer compare --json`), made of `registry.to_json` of each part.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .._model import Problem
from .._types import SchemaType


class TopicState(enum.StrEnum):
    """How a topic's history in the `to` registry (B) stands to the one in the `from` registry (A)."""

    SAME = "same"  # the same versions, each equal as Pulsar's duplicate check compares schemas
    ONLY_IN_FROM = "only_in_from"  # A has the topic (with a schema), B does not
    ONLY_IN_TO = "only_in_to"
    TO_BEHIND = "to_behind"  # B's history is a prefix of A's: replication would append A's versions
    TO_AHEAD = "to_ahead"  # A's history is a prefix of B's
    DIVERGED = "diverged"  # the same version number holds different schemas, or the histories part
    DELETED_IN_TO = "deleted_in_to"  # B's history ends with a tombstone, A's does not
    DELETED_IN_FROM = "deleted_in_from"


class HazardReason(enum.StrEnum):
    """Why B would refuse a version A replicates into it (the replicator connects to B as a producer, §8.1)."""

    AUTO_UPDATE_DISALLOWED = "auto_update_disallowed"
    VALIDATION_ENFORCED = "validation_enforced"  # a schema-less producer of A's, refused by B's enforcement
    INCOMPATIBLE = "incompatible"  # B's strategy refuses the version
    INVALID = "invalid"  # B's Pulsar line refuses the schema itself (or B's history is poisoned)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicDrift:
    """One topic's state; `*_latest` the last live version number on each side (None: none), `*_versions` the
    number of live versions; `first_difference` the first version number at which the histories part."""

    topic: str
    state: TopicState
    from_latest: int | None
    to_latest: int | None
    from_versions: int
    to_versions: int
    first_difference: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyDifference:
    """One schema policy in force differently: on a namespace ("tenant/ns") or a topic (its own policy set on
    either side), with each side's value and the level it comes from (`PolicySource` values)."""

    target: str
    field: str
    from_value: Any
    to_value: Any
    from_source: str
    to_source: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Hazard:
    """A topic on which replication from A into B would stall: the first of A's versions B refuses (None for a
    schema-less producer), why, B's message and the explanation objects (rule, direction, field, hint), and the
    policy in force on B that decides it, with its level."""

    topic: str
    reason: HazardReason
    version: int | None
    message: str
    policy: str
    policy_value: object
    policy_source: str
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanStep:
    """One of A's versions to register into B, in order, judged as if the steps before it were registered:
    `accepted` with the version B would store it as (`registers_as`; `duplicate_of` when B already holds an
    equal live version), or refused with `reason` and `problems`. After a refusal replication stops, so the
    later steps are not judged (`blocked_by` names the refused version)."""

    version: int
    schema_type: SchemaType
    accepted: bool
    registers_as: int | None = None
    duplicate_of: int | None = None
    reason: str = ""
    problems: tuple[Problem, ...] = ()
    blocked_by: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPlan:
    """What converging one topic takes: the steps, or (`steps` empty) why registering cannot converge it."""

    topic: str
    state: TopicState
    steps: tuple[PlanStep, ...]
    note: str = ""

    @property
    def safe(self) -> bool:
        """B accepts every step: a proposal may be opened for it."""
        return bool(self.steps) and all(step.accepted for step in self.steps)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicComparison:
    """What a comparison answers for one topic (a schema id): its drift (None when neither side has a schema
    history for it), the policy differences of its own policies, its plan and its hazard. A comparison run in
    parts (`schema-explorer audit drift`) computes these per batch of topics and assembles them."""

    schema_id: str
    drift: TopicDrift | None
    policies: tuple[PolicyDifference, ...] = ()
    plan: TopicPlan | None = None
    hazard: Hazard | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """Registry A (`source`) against registry B (`target`): every topic's state (`same` ones included),
    the policy differences, the replication hazards from A into B and the plan to converge."""

    source: str
    target: str
    topics: tuple[TopicDrift, ...]
    policies: tuple[PolicyDifference, ...]
    hazards: tuple[Hazard, ...]
    plan: tuple[TopicPlan, ...]
    unlisted_same: int = 0  # `same` topics counted but not in `topics` (a comparison run in parts keeps few)

    @property
    def drifted(self) -> tuple[TopicDrift, ...]:
        return tuple(t for t in self.topics if t.state is not TopicState.SAME)

    @property
    def has_drift(self) -> bool:
        """Any topic not `same`, or any policy difference: what `compare` exits 1 on."""
        return bool(self.drifted or self.policies)

    @property
    def summary(self) -> dict[str, int]:
        """How many topics are in each state (every state named), policy differences and hazards."""
        counts = Counter(t.state for t in self.topics)
        counts[TopicState.SAME] += self.unlisted_same
        found = {state.value: counts.get(state, 0) for state in TopicState}
        return {**found, "policies": len(self.policies), "hazards": len(self.hazards)}

    def as_json(self, *, include_same: bool = False) -> dict[str, Any]:
        """The wire form: `{"summary", "topics", "policies", "hazards", "plan"}`; `same` topics only with
        `include_same`. Each part is `registry.to_json` of its value (a difference's sides as "from"/"to")."""
        from .._wire import to_json

        policies = []
        for diff in self.policies:
            policies.append(
                {
                    "target": diff.target,
                    "field": diff.field,
                    "from": to_json(diff.from_value),
                    "to": to_json(diff.to_value),
                    "from_source": diff.from_source,
                    "to_source": diff.to_source,
                }
            )
        topics = self.topics if include_same else self.drifted
        plan = [{**to_json(p), "safe": p.safe} for p in self.plan]
        return {
            "from": self.source,
            "to": self.target,
            "summary": self.summary,
            "topics": [to_json(t) for t in topics],
            "policies": policies,
            "hazards": [to_json(h) for h in self.hazards],
            "plan": plan,
        }
