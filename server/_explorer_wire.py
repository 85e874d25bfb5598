"""Wire models of the explorer API: the core's JSON (`registry.to_json`), described and checked.

The core's enums are used as field types so OpenAPI lists their values; names follow the core's fields.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from registry import (
    AdvisoryCode,
    ChangeKind,
    ClientRole,
    CompatibilityStrategy,
    Direction,
    PolicySource,
    RuleCode,
    SchemaType,
    Severity,
    UpgradeOrder,
    to_json,
)
from registry._changes import Effect

from ._admin_wire import AVRO_EXAMPLE, PostSchemaPayload


class Wire(BaseModel):
    """A core value's JSON (`registry.to_json`, the one serialiser the CLI and the app use too), described for
    OpenAPI and validated: a key the model lacks, or a field the core's JSON lacks, fails here."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def of(cls, value: Any) -> Self:
        return cls.model_validate(to_json(value))


class EffectiveStrategy(Wire):
    value: CompatibilityStrategy
    source: PolicySource


class EffectiveFlag(Wire):
    value: bool
    source: PolicySource


class TopicSummary(Wire):
    topic: str = Field(examples=["persistent://acme/orders/order-created"])
    tenant: str
    namespace: str
    schema_type: SchemaType | None = Field(description="type of the latest live version; null when none")
    versions: int = Field(description="live versions (after the last delete)")
    latest_version: int | None
    updated_at: int | None = Field(description="registration time of the latest live version, ms since the epoch")
    deleted: bool = Field(description="the history ends with a delete (tombstone)")
    strategy: CompatibilityStrategy = Field(description="the strategy registrations meet (admin path)")
    strategy_source: PolicySource
    producers: int
    consumers: int
    fields: list[str] = Field(description="field names of the latest AVRO/JSON schema, dotted when nested")
    error: str = Field(description="why the latest schema could not be read, when it could not")


class TopicPage(Wire):
    items: list[TopicSummary]
    total: int = Field(description="topics matching the search, over all pages")
    offset: int
    limit: int
    has_more: bool
    by_type: dict[str, int] = Field(description="matches per schema type (NONE: no live schema)")
    by_strategy: dict[str, int] = Field(description="matches per strategy in force")
    by_namespace: dict[str, int] = Field(description="matches per namespace (tenant/namespace)")


class Problem(Wire):
    code: RuleCode
    message: str
    direction: Direction
    direction_text: str = Field(description="who cannot read whom, in words")
    version: int | None = Field(description="the version it fails against")
    path: str = Field(description="JSON pointer to the offending element")
    reader_path: str
    writer_path: str
    hint: str = Field(description="how to fix it")


class Advisory(Wire):
    code: AdvisoryCode
    severity: Severity
    message: str
    path: str
    version: int | None
    direction: Direction
    hint: str
    source: str = Field(description="the rule set that flags it")


class CompatibilityResult(Wire):
    compatible: bool
    strategy: CompatibilityStrategy
    message: str
    checked_versions: list[int]
    problems: list[Problem]
    advisories: list[Advisory]


class Change(Wire):
    kind: ChangeKind
    path: str
    message: str
    backward: Effect = Field(description="effect on the new schema reading old data")
    forward: Effect = Field(description="effect on old schemas reading new data")
    is_breaking: bool
    before: str | None
    after: str | None
    old_pointer: str
    new_pointer: str


class SchemaDiff(Wire):
    topic: str = Field(examples=["persistent://acme/orders/order-created"])
    old_version: int | Literal["candidate"] = Field(description='the old side: a live version, or "candidate"')
    new_version: int | Literal["candidate"] = Field(
        description='the new side: a live version (the latest when none was named: this says which), or "candidate"'
    )
    old_type: SchemaType
    new_type: SchemaType
    backward: Effect
    forward: Effect
    changes: list[Change]
    old_text: str = Field(description="the old schema, normalised for a side-by-side text diff")
    new_text: str


class Client(Wire):
    topic: str
    role: ClientRole
    name: str
    subscription: str
    schema_type: SchemaType | None
    version: int | None
    connected_at: int
    replicator: bool


class Admission(Wire):
    accepted: bool
    role: ClientRole
    version: int | None
    reason: str
    registered: bool
    result: CompatibilityResult | None


class UpgradeStep(Wire):
    number: int
    role: ClientRole
    clients: list[Client]
    explanation: str


class UpgradePlan(Wire):
    topic: str
    target_version: int | str = Field(description='a live version, or "candidate"')
    feasible: bool
    steps: list[UpgradeStep]
    reason: str = Field(description="why no safe order exists, when none does")
    unaffected: list[Client] = Field(description="recorded clients without a schema")


class ChangeOrder(Wire):
    order: UpgradeOrder
    new_reads_old: bool
    old_reads_new: bool
    explanation: str


class WhatIf(Wire):
    topic: str
    candidate_type: SchemaType
    effective: EffectiveStrategy
    result: CompatibilityResult = Field(description="the verdict under the effective strategy")
    by_strategy: dict[CompatibilityStrategy, CompatibilityResult] = Field(description="the verdict under each")
    would_register: bool
    duplicate_of: int | None = Field(description="the live version registering would return, storing nothing")
    registration: Admission = Field(description="REST POST /schema, simulated")
    producer: Admission = Field(description="a producer connecting with this schema, simulated")
    consumer: Admission = Field(description="a consumer subscribing with this schema, simulated")
    advisories: list[Advisory]
    diff: SchemaDiff | None = Field(description="from the latest live version to the candidate")
    latest_version: int | None
    strategy_order: UpgradeOrder = Field(description="the upgrade order the effective strategy guarantees")
    change_order: ChangeOrder | None = Field(description="the order this change needs")
    plan: UpgradePlan | None = Field(description="moving recorded clients to the candidate")


class RefusedClient(Wire):
    client: Client
    reason: str


class TopicImpact(Wire):
    topic: str
    current: EffectiveStrategy
    proposed: CompatibilityStrategy
    overridden: bool = Field(description="a topic-level strategy keeps the namespace value from applying")
    affected: bool
    refused_versions: list[int] = Field(description="live versions the proposed strategy would have refused")
    first_problem: Problem | None
    latest_refused: bool
    refused_clients: list[RefusedClient]


class PolicyImpact(Wire):
    namespace: str
    proposed: CompatibilityStrategy
    topics: list[TopicImpact]


class EffectivePolicy(Wire):
    topic: str
    compatibility: EffectiveStrategy = Field(description="what producers and consumers meet")
    admin_compatibility: EffectiveStrategy = Field(description="what REST POST /schema and /compatibility use")
    allow_auto_update: EffectiveFlag
    validation_enforced: EffectiveFlag
    is_system_topic: bool


class DiffRequest(BaseModel):
    """A candidate to compare with a live version (`old_version`; the latest when omitted). `from` is the
    older name of `old_version`, still read so that existing callers keep working."""

    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra={"examples": [{"old_version": 0, "candidate": {"type": "AVRO", "schema": AVRO_EXAMPLE}}]},
    )

    old_version: int | None = Field(default=None, ge=0)
    from_: int | None = Field(default=None, alias="from", ge=0, description="deprecated: the older name of old_version")
    candidate: PostSchemaPayload
