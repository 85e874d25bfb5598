"""What-if values: one candidate against a topic under every strategy, and a strategy against a namespace.

These are plain values that a page, an endpoint, a notebook or a Spark row renders as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from .._changes import Advisory, SchemaDiff
from .._model import (
    Admission,
    ClientRecord,
    CompatibilityResult,
    CompatibilityStrategy,
    Effective,
    Problem,
    UpgradeOrder,
)
from .._types import SchemaType
from ._upgrade import ChangeOrder, UpgradePlan


@dataclass(frozen=True, slots=True, kw_only=True)
class WhatIf:
    """Everything Pulsar would say about registering `candidate` on a topic, plus what it does not say.

    `result` is the effective strategy's verdict (REST /compatibility semantics); `by_strategy` holds all 8;
    `duplicate_of` is the live version a registration would return without storing anything (§3.3).
    """

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("would_register",)

    topic: str
    candidate_type: SchemaType
    effective: Effective[CompatibilityStrategy]
    result: CompatibilityResult
    by_strategy: Mapping[CompatibilityStrategy, CompatibilityResult]
    duplicate_of: int | None
    registration: Admission
    producer: Admission
    consumer: Admission
    advisories: tuple[Advisory, ...]
    diff: SchemaDiff | None
    latest_version: int | None
    strategy_order: UpgradeOrder
    change_order: ChangeOrder | None
    plan: UpgradePlan | None

    @property
    def would_register(self) -> bool:
        return self.registration.accepted

    def __repr__(self) -> str:
        return (
            f"WhatIf({self.topic!r}, candidate={self.candidate_type}, effective={self.effective.value}, "
            f"compatible={self.result.compatible}, would_register={self.would_register})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RefusedClient:
    client: ClientRecord
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicImpact:
    """A topic under a proposed namespace strategy: which of its live registrations would have been refused."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("affected",)

    topic: str
    current: Effective[CompatibilityStrategy]
    proposed: CompatibilityStrategy
    overridden: bool  # a topic-level strategy keeps the namespace value from applying
    refused_versions: tuple[int, ...]
    first_problem: Problem | None
    latest_refused: bool
    refused_clients: tuple[RefusedClient, ...]

    @property
    def affected(self) -> bool:
        return bool(self.refused_versions or self.refused_clients)


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyImpact:
    namespace: str
    proposed: CompatibilityStrategy
    topics: tuple[TopicImpact, ...]

    @property
    def refused_topics(self) -> tuple[TopicImpact, ...]:
        return tuple(t for t in self.topics if t.latest_refused)

    @property
    def refused_clients(self) -> tuple[RefusedClient, ...]:
        return tuple(c for t in self.topics for c in t.refused_clients)

    def __repr__(self) -> str:
        return (
            f"PolicyImpact({self.namespace!r}, proposed={self.proposed}, topics={len(self.topics)}, "
            f"refused_topics={len(self.refused_topics)}, refused_clients={len(self.refused_clients)})"
        )
