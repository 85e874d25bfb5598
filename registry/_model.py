"""Values of the registry: schema types, strategies, schema infos, versions, verdicts and policies.

Names are Pulsar's, verbatim (pulsar-semantics.md §1, §2.1), so users can map every value to the broker.
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from ._errors import InvalidSchemaError, PolicyError
from ._key_value import render_schema_text
from ._records import load_record, record_schema
from ._types import (
    SchemaType,
)

if TYPE_CHECKING:
    from ._changes import Advisory


class CompatibilityStrategy(enum.StrEnum):
    """Pulsar's `SchemaCompatibilityStrategy`, in declaration order (§2.1)."""

    UNDEFINED = "UNDEFINED"
    ALWAYS_INCOMPATIBLE = "ALWAYS_INCOMPATIBLE"
    ALWAYS_COMPATIBLE = "ALWAYS_COMPATIBLE"
    BACKWARD = "BACKWARD"
    FORWARD = "FORWARD"
    FULL = "FULL"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"

    @property
    def is_transitive(self) -> bool:
        """Checked against every live version rather than the latest (STRATEGY_FACTS)."""
        facts = STRATEGY_FACTS.get(self)
        return facts is not None and facts.transitive

    @classmethod
    def parse(cls, value: str | CompatibilityStrategy) -> CompatibilityStrategy:
        if isinstance(value, CompatibilityStrategy):
            return value
        try:
            return cls(str(value).strip().upper())
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise PolicyError(f"unknown compatibility strategy {value!r}; expected one of {valid}") from None


class UpgradeOrder(enum.StrEnum):
    """Which clients must move to a new schema first so that no one meets data it cannot read."""

    CONSUMERS_FIRST = "consumers first"
    PRODUCERS_FIRST = "producers first"
    ANY_ORDER = "any order"
    BREAKING = "breaking: no safe order"
    EVOLUTION_DISABLED = "evolution disabled"


@dataclass(frozen=True, slots=True)
class StrategyFacts:
    """What a strategy demands of a new schema (§2.1, §3.4) and what follows for clients (§8.2, users.md)."""

    backward: bool  # the new schema must read data written with existing versions
    forward: bool  # existing versions must read data written with the new schema
    transitive: bool  # against every live version, not only the latest
    consumer_checks_latest: bool  # §8.2: a consumer on a topic in use is checked (as BACKWARD) against the latest only
    upgrade_order: UpgradeOrder  # users.md "Upgrade order table": the order it guarantees to be safe


_S = CompatibilityStrategy
_U = UpgradeOrder
# Every fact about the eight strategies, in one table; the checks, admission and upgrade advice read it.
STRATEGY_FACTS: Mapping[CompatibilityStrategy, StrategyFacts] = {
    _S.ALWAYS_INCOMPATIBLE: StrategyFacts(False, False, False, False, _U.EVOLUTION_DISABLED),
    _S.ALWAYS_COMPATIBLE: StrategyFacts(False, False, False, False, _U.ANY_ORDER),
    _S.BACKWARD: StrategyFacts(True, False, False, True, _U.CONSUMERS_FIRST),
    _S.FORWARD: StrategyFacts(False, True, False, True, _U.PRODUCERS_FIRST),
    _S.FULL: StrategyFacts(True, True, False, True, _U.ANY_ORDER),
    _S.BACKWARD_TRANSITIVE: StrategyFacts(True, False, True, False, _U.CONSUMERS_FIRST),
    _S.FORWARD_TRANSITIVE: StrategyFacts(False, True, True, True, _U.PRODUCERS_FIRST),
    _S.FULL_TRANSITIVE: StrategyFacts(True, True, True, False, _U.ANY_ORDER),
}
# The eight strategies a user can choose (UNDEFINED means "not set"), in Pulsar's declaration order.
STRATEGIES: tuple[CompatibilityStrategy, ...] = tuple(s for s in CompatibilityStrategy if s in STRATEGY_FACTS)


class AutoUpdateStrategy(enum.StrEnum):
    """Pulsar's deprecated namespace `SchemaAutoUpdateCompatibilityStrategy` (§2.1)."""

    AutoUpdateDisabled = "AutoUpdateDisabled"
    Backward = "Backward"
    Forward = "Forward"
    Full = "Full"
    AlwaysCompatible = "AlwaysCompatible"
    BackwardTransitive = "BackwardTransitive"
    ForwardTransitive = "ForwardTransitive"
    FullTransitive = "FullTransitive"

    def to_strategy(self) -> CompatibilityStrategy:
        """`fromAutoUpdatePolicy`: AutoUpdateDisabled maps to ALWAYS_INCOMPATIBLE."""
        return AUTO_UPDATE_MAPPING[self]

    @classmethod
    def parse(cls, value: str | AutoUpdateStrategy) -> AutoUpdateStrategy:
        if isinstance(value, AutoUpdateStrategy):
            return value
        for member in cls:
            if member.value.lower() == str(value).strip().lower():
                return member
        valid = ", ".join(s.value for s in cls)
        raise PolicyError(f"unknown auto-update strategy {value!r}; expected one of {valid}")


AUTO_UPDATE_MAPPING: Mapping[AutoUpdateStrategy, CompatibilityStrategy] = {
    AutoUpdateStrategy.AutoUpdateDisabled: CompatibilityStrategy.ALWAYS_INCOMPATIBLE,
    AutoUpdateStrategy.Backward: CompatibilityStrategy.BACKWARD,
    AutoUpdateStrategy.Forward: CompatibilityStrategy.FORWARD,
    AutoUpdateStrategy.Full: CompatibilityStrategy.FULL,
    AutoUpdateStrategy.AlwaysCompatible: CompatibilityStrategy.ALWAYS_COMPATIBLE,
    AutoUpdateStrategy.BackwardTransitive: CompatibilityStrategy.BACKWARD_TRANSITIVE,
    AutoUpdateStrategy.ForwardTransitive: CompatibilityStrategy.FORWARD_TRANSITIVE,
    AutoUpdateStrategy.FullTransitive: CompatibilityStrategy.FULL_TRANSITIVE,
}


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    """A schema as Pulsar's admin API takes it.

    `schema` is Avro JSON for AVRO/JSON/PROTOBUF, "" for primitives, the ProtobufNative JSON document, and for
    KEY_VALUE the admin form `{"key": ..., "value": ...}` with `key.schema.type` / `value.schema.type` in
    `properties` (§5). `name` is kept for the client's benefit only: Pulsar's registry does not store it.
    """

    type: SchemaType
    schema: str | bytes = ""
    properties: Mapping[str, str] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", SchemaType.parse(self.type))
        if not isinstance(self.schema, (str, bytes)):
            raise InvalidSchemaError(f"schema must be text or bytes, not {type(self.schema).__name__}")
        props = dict(self.properties or {})
        for key, value in props.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidSchemaError(f"schema properties must map text to text; got {key!r}: {value!r}")
        object.__setattr__(self, "properties", props)

    @property
    def text(self) -> str:
        """The schema as text (bytes decoded as UTF-8, undecodable bytes replaced)."""
        if isinstance(self.schema, bytes):
            return self.schema.decode("utf-8", errors="replace")
        return self.schema

    @classmethod
    def from_record(cls, record: builtins.type | str, schema_type: SchemaType | str | None = None) -> SchemaInfo:
        """The schema the installed pulsar-client sends for a Record class (or "package.module:ClassName"):
        AVRO by default or JSON, as its AvroSchema / JsonSchema build it; PROTOBUF_NATIVE for a generated
        protobuf message class. `registry.record_advisories` names the class's pitfalls (registry/_records.py)."""
        kind, text = record_schema(load_record(record), schema_type)
        return cls(type=kind, schema=text, name=kind.value)


# `schema-explorer serve` says in this response header of POST /schema whether the schema was stored ("true") or
# found identical to a live version ("false"); Pulsar's body answers both alike with `{"version": N}`.
STORED_HEADER = "X-Registry-Stored"
# ... and in this one the strategy a stored schema was checked under (absent: nothing was checked).
JUDGED_HEADER = "X-Registry-Judged-Under"
# `schema-explorer serve` says in this header of GET /explorer/v1/proposal-counts (the remote registry's first
# explorer call) whether it records producers and consumers: "false" from the review gateway, whose registry is
# a plain broker; absent means it does.
RECORDS_CLIENTS_HEADER = "X-Registry-Records-Clients"


@dataclass(frozen=True, slots=True)
class Registration:
    """What a registration did: the version `info` has now (REST POST /schema answers only this), and whether
    it was stored as a new version (False: a live version was already identical, §3.3, and nothing changed)."""

    version: int
    stored: bool
    # The strategy the schema was checked under before it was stored. None when nothing was checked: the first
    # schema of a history (or the first after a deletion), a duplicate, or a remote handle the server does not
    # tell (a plain broker). Pulsar's metrics count checks (server/_pulsar_stats.py), and only the core knows.
    judged_under: CompatibilityStrategy | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaVersion:
    """One entry of a topic's schema history, as the broker stores it (§1, §3.1); tombstones included."""

    topic: str
    version: int
    type: SchemaType
    data: bytes
    properties: Mapping[str, str]
    timestamp: int
    deleted: bool = False
    user: str = ""

    @property
    def schema(self) -> str:
        """The schema text as Pulsar's REST API renders it (KEY_VALUE as `{"key":…,"value":…}`, §5)."""
        return render_schema_text(self.type, self.data, self.properties)

    @property
    def info(self) -> SchemaInfo:
        return SchemaInfo(type=self.type, schema=self.schema, properties=dict(self.properties))

    def __repr__(self) -> str:
        state = ", deleted" if self.deleted else ""
        return f"SchemaVersion({self.topic!r}, version={self.version}, {self.type}, {len(self.data)} bytes{state})"


class Direction(enum.StrEnum):
    """Which side reads which when a check fails."""

    BACKWARD = "BACKWARD"  # the new schema reads data written with an existing version
    FORWARD = "FORWARD"  # an existing version reads data written with the new schema
    NONE = "NONE"  # not about reading: a type change or a strategy that forbids every change


class RuleCode(enum.StrEnum):
    """Stable codes of why Pulsar refuses a schema; shells and tests key on these, never on messages."""

    SCHEMA_TYPE_CHANGED = "SCHEMA_TYPE_CHANGED"
    STRATEGY_FORBIDS_CHANGE = "STRATEGY_FORBIDS_CHANGE"
    READER_FIELD_WITHOUT_DEFAULT = "READER_FIELD_WITHOUT_DEFAULT"
    TYPE_MISMATCH = "TYPE_MISMATCH"
    NAME_MISMATCH = "NAME_MISMATCH"
    FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
    NO_MATCHING_UNION_BRANCH = "NO_MATCHING_UNION_BRANCH"
    INVALID_DEFAULT = "INVALID_DEFAULT"
    UNPARSEABLE_SCHEMA = "UNPARSEABLE_SCHEMA"
    ROOT_MESSAGE_CHANGED = "ROOT_MESSAGE_CHANGED"
    KEY_VALUE_PART_TYPE_CHANGED = "KEY_VALUE_PART_TYPE_CHANGED"
    NOT_KEY_VALUE = "NOT_KEY_VALUE"
    NO_SCHEMA_ON_ACTIVE_TOPIC = "NO_SCHEMA_ON_ACTIVE_TOPIC"
    JSON_SCHEMA_ID_CHANGED = "JSON_SCHEMA_ID_CHANGED"
    DUPLICATE_FIELD = "DUPLICATE_FIELD"


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One reason a candidate is incompatible: rule, where (JSON pointers), which direction, which version."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("path", "direction_text")

    code: RuleCode
    message: str
    direction: Direction = Direction.NONE
    version: int | None = None
    reader_path: str = ""
    writer_path: str = ""
    hint: str = ""

    @property
    def path(self) -> str:
        """The most telling pointer: into the reader for a reader-side rule, else into the writer."""
        return self.reader_path or self.writer_path

    @property
    def direction_text(self) -> str:
        """The direction in words, e.g. "the new schema, as a reader, cannot read data written with version 3"."""
        against = "the latest version" if self.version is None else f"version {self.version}"
        if self.direction is Direction.BACKWARD:
            return f"the new schema, as a reader, cannot read data written with {against}"
        if self.direction is Direction.FORWARD:
            return f"{against}, as a reader, cannot read data written with the new schema"
        return f"the new schema cannot follow {against}"

    def __repr__(self) -> str:
        against = "" if self.version is None else f", version={self.version}"
        where = f", path={self.path!r}" if self.path else ""
        return f"Problem({self.code}, {self.direction}{against}{where})"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompatibilityResult:
    """Pulsar's verdict for one candidate, with every problem found. Compatible ⇔ no problems."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("message",)

    compatible: bool
    strategy: CompatibilityStrategy
    checked_versions: tuple[int, ...] = ()
    problems: tuple[Problem, ...] = ()
    advisories: tuple[Advisory, ...] = ()

    def __post_init__(self) -> None:
        if self.compatible == bool(self.problems):
            raise AssertionError("a compatible verdict has no problems and an incompatible one has at least one")

    @property
    def message(self) -> str:
        """One line for logs and error messages."""
        if self.compatible:
            return f"compatible under {self.strategy}"
        first = self.problems[0]
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return f"incompatible under {self.strategy}: {first.message}{more}"

    def __repr__(self) -> str:
        codes = ", ".join(dict.fromkeys(p.code.value for p in self.problems))
        problems = f", problems={len(self.problems)} [{codes}]" if self.problems else ""
        advisories = f", advisories={len(self.advisories)}" if self.advisories else ""
        return f"CompatibilityResult(compatible={self.compatible}, strategy={self.strategy}{problems}{advisories})"


class ClientRole(enum.StrEnum):
    """Which side of a topic a client is on: admission rules differ (pulsar-semantics.md §8)."""

    PRODUCER = "producer"
    CONSUMER = "consumer"


@dataclass(frozen=True, slots=True, kw_only=True)
class Admission:
    """Would the broker let this producer or consumer in, and with which schema version (§8)."""

    accepted: bool
    role: ClientRole
    version: int | None = None
    reason: str = ""
    registered: bool = False
    result: CompatibilityResult | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientRecord:
    """A producer or consumer the embedded registry saw connect, so "topic in use" and upgrade plans are real."""

    topic: str
    role: ClientRole
    name: str
    subscription: str = ""
    schema_type: SchemaType | None = None
    version: int | None = None
    connected_at: int = 0
    replicator: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectedClient:
    """A producer or consumer connected to a topic, as a broker's topic stats show it (GET .../stats:
    `publishers`, and `consumers` of each subscription). A broker does not say which schema version a client
    uses, so there is none here: only `ClientRecord`s (an embedded registry's, or `serve`'s) carry one."""

    topic: str
    role: ClientRole
    name: str
    subscription: str = ""
    subscription_type: str = ""  # Exclusive, Shared, Failover, Key_Shared; "" when not reported
    address: str = ""
    client_version: str = ""
    connected_since: str = ""  # as the broker reports it (ISO-8601 text)

    @property
    def order(self) -> tuple[str, str, str]:
        """Listing order, the same from every registry: consumers by subscription, then producers; by name."""
        return (str(self.role), self.subscription, self.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerConfig:
    """The broker settings that shape schema behaviour, with Pulsar's defaults (§2.3)."""

    compatibility: CompatibilityStrategy = CompatibilityStrategy.FULL
    system_topic_compatibility: CompatibilityStrategy = CompatibilityStrategy.ALWAYS_COMPATIBLE
    allow_auto_update: bool = True
    validation_enforced: bool = False
    topic_level_policies_enabled: bool = True

    def __post_init__(self) -> None:
        # ServiceConfiguration's getter turns UNDEFINED into FULL.
        strategy = CompatibilityStrategy.parse(self.compatibility)
        if strategy is CompatibilityStrategy.UNDEFINED:
            strategy = CompatibilityStrategy.FULL
        object.__setattr__(self, "compatibility", strategy)
        object.__setattr__(
            self, "system_topic_compatibility", CompatibilityStrategy.parse(self.system_topic_compatibility)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class NamespacePolicy:
    """The schema fields of a namespace's `Policies` with their defaults (§2.2)."""

    compatibility: CompatibilityStrategy = CompatibilityStrategy.UNDEFINED
    auto_update_strategy: AutoUpdateStrategy | None = None
    allow_auto_update: bool | None = None
    allow_auto_update_with_replicator: bool = True
    validation_enforced: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPolicy:
    """Topic-level schema policies; None means "not set" (UNDEFINED is stored as unset, §2.4)."""

    compatibility: CompatibilityStrategy | None = None
    validation_enforced: bool | None = None


class PolicySource(enum.StrEnum):
    """Where an effective policy value comes from."""

    TOPIC = "topic"
    NAMESPACE = "namespace"
    AUTO_UPDATE_MAPPING = "namespace auto-update strategy"
    BROKER_DEFAULT = "broker default"
    SYSTEM_TOPIC = "system topic"


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Effective(Generic[T]):
    value: T
    source: PolicySource


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectivePolicy:
    """The policy values in force for a topic and where each comes from (§2.4).

    `compatibility` is what producers and consumers meet (broker connection path, with the system-topic
    rule); `admin_compatibility` is what REST POST /schema and /compatibility use (no system-topic rule).
    """

    topic: str
    compatibility: Effective[CompatibilityStrategy]
    admin_compatibility: Effective[CompatibilityStrategy]
    allow_auto_update: Effective[bool]
    validation_enforced: Effective[bool]
    is_system_topic: bool = False

    def __repr__(self) -> str:
        return (
            f"EffectivePolicy({self.topic!r}, compatibility={self.compatibility.value} ({self.compatibility.source}), "
            f"allow_auto_update={self.allow_auto_update.value}, validation_enforced={self.validation_enforced.value})"
        )
