"""A change of schema policies as a typed value: `NamespacePolicyChange` and `TopicPolicyChange`.

A handle's `set_policy` and `preview_policy` take one, and so does a policy proposal, so a type checker sees
every value a policy write is given (the keyword arguments of `set_namespace_policy` / `set_topic_policy` build
one). The values are read and checked when the change is applied to a policy (`applied_to`, _rules.py), as
saving reads them; building a change checks only which fields it names. `of` builds one from a mapping of field
to value (a REST body, a stored proposal), `as_mapping` gives the fields it sets back, for storage and the wire.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from .._errors import InvalidArgumentError
from .._model import NamespacePolicy, TopicPolicy
from ._rules import (
    UNSET,
    AutoUpdateChange,
    ClearableFlagChange,
    FlagChange,
    StrategyChange,
    changed_namespace_policy,
    changed_topic_policy,
)

P = TypeVar("P", NamespacePolicy, TopicPolicy)


class PolicyChange(abc.ABC, Generic[P]):
    """A change of the schema policies of one level: P is the policy it changes."""

    __slots__ = ()

    FIELDS: ClassVar[tuple[str, ...]]

    @abc.abstractmethod
    def applied_to(self, current: P) -> P:
        """`current` with the fields this change sets, each read and checked as saving checks it; PolicyError
        names the first bad value."""

    def fields(self) -> dict[str, object]:
        """Every field, UNSET for those left alone."""
        return {name: getattr(self, name) for name in self.FIELDS}

    def as_mapping(self) -> dict[str, object]:
        """The fields this change sets, field name to value: what a proposal stores and the REST API carries."""
        return {name: value for name, value in self.fields().items() if value is not UNSET}


def _named(changes: Mapping[str, object], allowed: tuple[str, ...]) -> dict[str, Any]:
    """`changes` as keyword arguments, refused when it names a field the level does not have."""
    if not isinstance(changes, Mapping):
        raise InvalidArgumentError(f"a policy change is a mapping of field to value, not {type(changes).__name__}")
    unknown = sorted(set(map(str, changes)) - set(allowed))
    if unknown:
        raise InvalidArgumentError(f"unknown policy field(s) {', '.join(unknown)}: choose from {', '.join(allowed)}")
    return {str(name): value for name, value in changes.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class NamespacePolicyChange(PolicyChange[NamespacePolicy]):
    """A change of a namespace's schema policies (§2.2); fields left UNSET stay as they are. None clears
    `compatibility` (to UNDEFINED), `auto_update_strategy` and `allow_auto_update` (to the next level)."""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "compatibility",
        "auto_update_strategy",
        "allow_auto_update",
        "allow_auto_update_with_replicator",
        "validation_enforced",
    )

    compatibility: StrategyChange = UNSET
    auto_update_strategy: AutoUpdateChange = UNSET
    allow_auto_update: ClearableFlagChange = UNSET
    allow_auto_update_with_replicator: FlagChange = UNSET
    validation_enforced: FlagChange = UNSET

    @classmethod
    def of(cls, changes: Mapping[str, object]) -> NamespacePolicyChange:
        """From a mapping of field name to value; InvalidArgumentError names a field a namespace has not."""
        return cls(**_named(changes, cls.FIELDS))

    def applied_to(self, current: NamespacePolicy) -> NamespacePolicy:
        return changed_namespace_policy(
            current,
            compatibility=self.compatibility,
            auto_update_strategy=self.auto_update_strategy,
            allow_auto_update=self.allow_auto_update,
            allow_auto_update_with_replicator=self.allow_auto_update_with_replicator,
            validation_enforced=self.validation_enforced,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPolicyChange(PolicyChange[TopicPolicy]):
    """A change of a topic's own schema policies (§7.3); None (or UNDEFINED) removes the strategy, None removes
    the validation setting."""

    FIELDS: ClassVar[tuple[str, ...]] = ("compatibility", "validation_enforced")

    compatibility: StrategyChange = UNSET
    validation_enforced: ClearableFlagChange = UNSET

    @classmethod
    def of(cls, changes: Mapping[str, object]) -> TopicPolicyChange:
        """From a mapping of field name to value; InvalidArgumentError names a field a topic has not."""
        return cls(**_named(changes, cls.FIELDS))

    def applied_to(self, current: TopicPolicy) -> TopicPolicy:
        return changed_topic_policy(
            current, compatibility=self.compatibility, validation_enforced=self.validation_enforced
        )


def names_namespace(target: str) -> bool:
    """Whether a policy target names a namespace ("tenant/ns") rather than a topic: how a proposal's target,
    a REST body and the CLI tell the two apart."""
    text = str(target).strip()
    return "://" not in text and text.count("/") == 1


def policy_change(target: str, changes: Mapping[str, object]) -> NamespacePolicyChange | TopicPolicyChange:
    """The change of `target`'s policies a mapping names: a namespace's or a topic's, by the target."""
    return NamespacePolicyChange.of(changes) if names_namespace(target) else TopicPolicyChange.of(changes)


def checked_change(
    target: str, change: NamespacePolicyChange | TopicPolicyChange
) -> NamespacePolicyChange | TopicPolicyChange:
    """`change`, refused when it is of the other level than `target` (a namespace's change for a topic, or the
    reverse): its fields would be read as the other level's."""
    wanted = NamespacePolicyChange if names_namespace(target) else TopicPolicyChange
    if not isinstance(change, wanted):
        kind = "namespace" if wanted is NamespacePolicyChange else "topic"
        raise InvalidArgumentError(f"{target} is a {kind}: change its policies with a {wanted.__name__}")
    return change
