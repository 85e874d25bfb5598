"""Values for semantic diffs and advisories: what changed between two schemas, and what it breaks.

A change is marked with its effect on both readings Pulsar's strategies care about: BACKWARD (the new
schema reads data written with the old) and FORWARD (the old schema reads data written with the new).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

from ._model import Direction, Problem
from ._types import SchemaType


class Effect(enum.StrEnum):
    """What a change does to one direction of reading."""

    OK = "ok"  # readers keep working
    RISK = "risk"  # Pulsar accepts it, but some data fails at read time (e.g. an enum symbol removed)
    BREAKS = "breaks"  # Pulsar's check (or the wire format) refuses this direction


class ChangeKind(enum.StrEnum):
    """What one semantic diff entry changed; stable names, so reviews and scripts can match on them."""

    SCHEMA_TYPE_CHANGED = "SCHEMA_TYPE_CHANGED"
    TYPE_CHANGED = "TYPE_CHANGED"
    TYPE_PROMOTED = "TYPE_PROMOTED"
    NAME_CHANGED = "NAME_CHANGED"
    DOC_CHANGED = "DOC_CHANGED"
    ALIASES_CHANGED = "ALIASES_CHANGED"
    PROPERTY_CHANGED = "PROPERTY_CHANGED"
    LOGICAL_TYPE_CHANGED = "LOGICAL_TYPE_CHANGED"
    FIELD_ADDED = "FIELD_ADDED"
    FIELD_REMOVED = "FIELD_REMOVED"
    FIELD_RENAMED = "FIELD_RENAMED"
    FIELD_MOVED = "FIELD_MOVED"
    DEFAULT_ADDED = "DEFAULT_ADDED"
    DEFAULT_REMOVED = "DEFAULT_REMOVED"
    DEFAULT_CHANGED = "DEFAULT_CHANGED"
    ORDER_CHANGED = "ORDER_CHANGED"
    ENUM_SYMBOL_ADDED = "ENUM_SYMBOL_ADDED"
    ENUM_SYMBOL_REMOVED = "ENUM_SYMBOL_REMOVED"
    ENUM_DEFAULT_CHANGED = "ENUM_DEFAULT_CHANGED"
    UNION_BRANCH_ADDED = "UNION_BRANCH_ADDED"
    UNION_BRANCH_REMOVED = "UNION_BRANCH_REMOVED"
    FIXED_SIZE_CHANGED = "FIXED_SIZE_CHANGED"
    # PROTOBUF_NATIVE
    ROOT_MESSAGE_CHANGED = "ROOT_MESSAGE_CHANGED"
    MESSAGE_ADDED = "MESSAGE_ADDED"
    MESSAGE_REMOVED = "MESSAGE_REMOVED"
    FIELD_NUMBER_CHANGED = "FIELD_NUMBER_CHANGED"
    FIELD_LABEL_CHANGED = "FIELD_LABEL_CHANGED"
    FIELD_ONEOF_CHANGED = "FIELD_ONEOF_CHANGED"
    ENUM_VALUE_ADDED = "ENUM_VALUE_ADDED"
    ENUM_VALUE_REMOVED = "ENUM_VALUE_REMOVED"
    ENUM_VALUE_RENAMED = "ENUM_VALUE_RENAMED"
    ENUM_VALUE_NUMBER_CHANGED = "ENUM_VALUE_NUMBER_CHANGED"
    ENUM_ADDED = "ENUM_ADDED"
    ENUM_REMOVED = "ENUM_REMOVED"
    RESERVED_CHANGED = "RESERVED_CHANGED"
    # KEY_VALUE
    KEY_VALUE_ENCODING_CHANGED = "KEY_VALUE_ENCODING_CHANGED"


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One semantic change from an old schema to a new one.

    `path` is human ("order.customer.zip", "acme.Order.items" for protobuf); pointers are JSON pointers into
    the old and new schema documents ("" when the side does not have the element). KEY_VALUE changes carry
    a "key." or "value." path prefix and "/key" or "/value" pointer prefix.
    """

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("is_breaking",)

    kind: ChangeKind
    path: str
    message: str
    backward: Effect = Effect.OK
    forward: Effect = Effect.OK
    before: str | None = None
    after: str | None = None
    old_pointer: str = ""
    new_pointer: str = ""

    @property
    def is_breaking(self) -> bool:
        return Effect.BREAKS in (self.backward, self.forward)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaDiff:
    """A semantic diff with each side's normalised text, for a side-by-side textual diff.

    It names what it compared (`topic`, `old_version`, `new_version`: a version number, or `CANDIDATE` for a
    schema not in the registry), because a caller that asked for "the latest" cannot otherwise tell which
    version that was when the answer came; the REST API, the CLI's `--json` and the app all show these."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("backward", "forward")

    topic: str
    old_version: int | str
    new_version: int | str
    old_type: SchemaType
    new_type: SchemaType
    changes: tuple[Change, ...]
    old_text: str
    new_text: str

    @property
    def backward(self) -> Effect:
        return max((c.backward for c in self.changes), key=_SEVERITY.__getitem__, default=Effect.OK)

    @property
    def forward(self) -> Effect:
        return max((c.forward for c in self.changes), key=_SEVERITY.__getitem__, default=Effect.OK)

    def __repr__(self) -> str:
        kinds = f"{self.old_type}->{self.new_type}" if self.old_type != self.new_type else str(self.new_type)
        sides = f"{self.topic!r}, {self.old_version!r}->{self.new_version!r}, {kinds}"
        return f"SchemaDiff({sides}, changes={len(self.changes)}, backward={self.backward}, forward={self.forward})"


CANDIDATE = "candidate"  # a diff side (or upgrade target) that is a candidate schema, not a stored version

_SEVERITY = {Effect.OK: 0, Effect.RISK: 1, Effect.BREAKS: 2}


class Severity(enum.StrEnum):
    """How much an advisory matters when Pulsar itself accepts the change."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"  # will fail for some data or some client, though Pulsar accepts it


class AdvisoryCode(enum.StrEnum):
    """What Pulsar accepts but will hurt later; never counted in a verdict."""

    ENUM_SYMBOL_REMOVED = "ENUM_SYMBOL_REMOVED"
    RECORD_RENAMED = "RECORD_RENAMED"
    UNION_RECORD_BRANCH_RENAMED = "UNION_RECORD_BRANCH_RENAMED"
    INVALID_DEFAULT = "INVALID_DEFAULT"
    PROTOBUF_NO_CHECKER = "PROTOBUF_NO_CHECKER"
    PROTOBUF_FIELD_NUMBER_REUSED = "PROTOBUF_FIELD_NUMBER_REUSED"
    PROTOBUF_FIELD_DELETED = "PROTOBUF_FIELD_DELETED"
    PROTOBUF_FIELD_TYPE_CHANGED = "PROTOBUF_FIELD_TYPE_CHANGED"
    PROTOBUF_FIELD_CARDINALITY_CHANGED = "PROTOBUF_FIELD_CARDINALITY_CHANGED"
    PROTOBUF_FIELD_ONEOF_CHANGED = "PROTOBUF_FIELD_ONEOF_CHANGED"
    PROTOBUF_REQUIRED_FIELDS_CHANGED = "PROTOBUF_REQUIRED_FIELDS_CHANGED"
    PROTOBUF_ENUM_VALUE_DELETED = "PROTOBUF_ENUM_VALUE_DELETED"
    PROTOBUF_JSON_NAME_CHANGED = "PROTOBUF_JSON_NAME_CHANGED"
    PROTOBUF_ENUM_VALUE_NAME_CHANGED = "PROTOBUF_ENUM_VALUE_NAME_CHANGED"
    PROTOBUF_FIELD_DEFAULT_CHANGED = "PROTOBUF_FIELD_DEFAULT_CHANGED"
    PROTOBUF_RESERVED_DELETED = "PROTOBUF_RESERVED_DELETED"
    PROTOBUF_JSON_FORMAT_CHANGED = "PROTOBUF_JSON_FORMAT_CHANGED"
    RECORD_OPTIONAL_WITHOUT_DEFAULT = "RECORD_OPTIONAL_WITHOUT_DEFAULT"
    RECORD_DEFAULT_DROPPED = "RECORD_DEFAULT_DROPPED"
    RECORD_DEFAULT_INVALID = "RECORD_DEFAULT_INVALID"
    RECORD_NAMESPACE_LOST = "RECORD_NAMESPACE_LOST"


@dataclass(frozen=True, slots=True, kw_only=True)
class Advisory:
    """A warning about a change Pulsar lets through. `source` names the rule set that flags it
    (e.g. "buf WIRE", "Avro SchemaCompatibility")."""

    code: AdvisoryCode
    severity: Severity
    message: str
    path: str = ""
    version: int | None = None
    direction: Direction = Direction.NONE
    hint: str = ""
    source: str = ""


@dataclass(slots=True)
class Outcome:
    """What a checker found: problems decide the verdict, advisories never do."""

    problems: list[Problem]
    advisories: list[Advisory]

    def __iadd__(self, other: Outcome) -> Outcome:
        self.problems += other.problems
        self.advisories += other.advisories
        return self
