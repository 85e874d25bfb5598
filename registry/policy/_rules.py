"""Schema policies (pulsar-semantics.md §2): which value is in force for a topic and where it comes from, and
how a requested change is read and checked before anything is stored.

Pure functions over the stored records, so the embedded registry, the remote one (which sends the change to
a broker) and a policy preview (which stages it) resolve and validate policies with the same code.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, TypeAlias

from .._errors import PartitionPolicyError, PolicyChangedError, PolicyError, TopicPoliciesDisabledError
from .._model import (
    AutoUpdateStrategy,
    BrokerConfig,
    CompatibilityStrategy,
    Effective,
    EffectivePolicy,
    NamespacePolicy,
    PolicySource,
    TopicPolicy,
)
from .._names import TopicName

S = CompatibilityStrategy


class Unset(enum.Enum):
    """The type of `UNSET`: a policy field the caller left alone. None means "clear it", so absence needs a
    marker of its own; a one-member enum, so a type checker narrows `value is UNSET` away and sees the rest."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET

# What each policy field takes: the value, text naming it, None to clear it (where it can be cleared), or UNSET.
StrategyChange: TypeAlias = CompatibilityStrategy | str | None | Unset
AutoUpdateChange: TypeAlias = AutoUpdateStrategy | str | None | Unset
ClearableFlagChange: TypeAlias = bool | None | Unset
FlagChange: TypeAlias = bool | Unset


def namespace_allow_auto_update(ns_policy: NamespacePolicy, broker: BrokerConfig) -> Effective[bool]:
    """`isAllowAutoUpdateSchema` in force: the namespace's value, else the broker default (§2.2)."""
    if ns_policy.allow_auto_update is not None:
        return Effective(ns_policy.allow_auto_update, PolicySource.NAMESPACE)
    return Effective(broker.allow_auto_update, PolicySource.BROKER_DEFAULT)


def namespace_validation_enforced(ns_policy: NamespacePolicy, broker: BrokerConfig) -> Effective[bool]:
    """`schemaValidationEnforced?applied=true` of a namespace: its flag, else the broker's (§7.2)."""
    if ns_policy.validation_enforced:
        return Effective(True, PolicySource.NAMESPACE)
    return Effective(broker.validation_enforced, PolicySource.BROKER_DEFAULT)


def admin_strategy(
    topic_policy: TopicPolicy | None, ns_policy: NamespacePolicy | None, broker: BrokerConfig
) -> Effective[CompatibilityStrategy]:
    """AdminResource order: topic → namespace strategy → mapped auto-update → broker (§2.4)."""
    if topic_policy is not None and topic_policy.compatibility not in (None, S.UNDEFINED):
        return Effective(topic_policy.compatibility, PolicySource.TOPIC)
    if ns_policy is not None:
        if ns_policy.compatibility is not S.UNDEFINED:
            return Effective(ns_policy.compatibility, PolicySource.NAMESPACE)
        if ns_policy.auto_update_strategy is not None:
            return Effective(ns_policy.auto_update_strategy.to_strategy(), PolicySource.AUTO_UPDATE_MAPPING)
    return Effective(broker.compatibility, PolicySource.BROKER_DEFAULT)


def effective_policy(
    name: TopicName, ns_policy: NamespacePolicy, topic_policy: TopicPolicy, broker: BrokerConfig
) -> EffectivePolicy:
    """Each schema policy in force for a topic, and which level it comes from (§2.4)."""
    admin = admin_strategy(topic_policy, ns_policy, broker)
    system = name.is_system_topic
    connection = Effective(broker.system_topic_compatibility, PolicySource.SYSTEM_TOPIC) if system else admin
    auto_update = (
        Effective(True, PolicySource.SYSTEM_TOPIC) if system else namespace_allow_auto_update(ns_policy, broker)
    )
    # ServerCnx: broker flag OR the topic's value (topic policy, else the namespace flag).
    if broker.validation_enforced:
        enforced = Effective(True, PolicySource.BROKER_DEFAULT)
    elif topic_policy.validation_enforced is not None:
        enforced = Effective(topic_policy.validation_enforced, PolicySource.TOPIC)
    elif ns_policy.validation_enforced:
        enforced = Effective(True, PolicySource.NAMESPACE)
    else:
        enforced = Effective(False, PolicySource.BROKER_DEFAULT)
    return EffectivePolicy(
        topic=str(name.base),
        compatibility=connection,
        admin_compatibility=admin,
        allow_auto_update=auto_update,
        validation_enforced=enforced,
        is_system_topic=system,
    )


def changed_namespace_policy(
    current: NamespacePolicy,
    *,
    compatibility: StrategyChange = UNSET,
    auto_update_strategy: AutoUpdateChange = UNSET,
    allow_auto_update: ClearableFlagChange = UNSET,
    allow_auto_update_with_replicator: FlagChange = UNSET,
    validation_enforced: FlagChange = UNSET,
) -> NamespacePolicy:
    """`current` with the given fields changed, each read and checked as Pulsar's admin API does (§2.2):
    `compatibility=None` or UNDEFINED clears the strategy, `auto_update_strategy=None` and
    `allow_auto_update=None` clear theirs. PolicyError names the first bad value."""
    changes: dict[str, Any] = {}
    if compatibility is not UNSET:
        changes["compatibility"] = S.UNDEFINED if compatibility is None else CompatibilityStrategy.parse(compatibility)
    if auto_update_strategy is not UNSET:
        changes["auto_update_strategy"] = (
            None if auto_update_strategy is None else AutoUpdateStrategy.parse(auto_update_strategy)
        )
    if allow_auto_update is not UNSET:
        changes["allow_auto_update"] = optional_flag("allow_auto_update", allow_auto_update)
    if allow_auto_update_with_replicator is not UNSET:
        changes["allow_auto_update_with_replicator"] = flag(
            "allow_auto_update_with_replicator", allow_auto_update_with_replicator
        )
    if validation_enforced is not UNSET:
        changes["validation_enforced"] = flag("validation_enforced", validation_enforced)
    if changes.get("allow_auto_update") is True and changes.get("allow_auto_update_with_replicator") is False:
        # NamespacesBase: allowing auto-update while refusing it to the replicator is a 400.
        raise PolicyError("allow_auto_update=True cannot be combined with allow_auto_update_with_replicator=False")
    return replace(current, **changes)


def changed_topic_policy(
    current: TopicPolicy, *, compatibility: StrategyChange = UNSET, validation_enforced: ClearableFlagChange = UNSET
) -> TopicPolicy:
    """`current` with the given topic-level fields changed (§7.3); None or UNDEFINED removes the strategy,
    None removes the validation setting."""
    changes: dict[str, Any] = {}
    if compatibility is not UNSET:
        strategy = None if compatibility is None else CompatibilityStrategy.parse(compatibility)
        changes["compatibility"] = None if strategy is S.UNDEFINED else strategy
    if validation_enforced is not UNSET:
        changes["validation_enforced"] = optional_flag("validation_enforced", validation_enforced)
    return replace(current, **changes)


def policy_topic(topic: str, broker: BrokerConfig) -> TopicName:
    """The topic a topic-level policy call names, refused as the broker refuses it: topic policies switched
    off (a 405 there), or a partition rather than the partitioned topic."""
    name = TopicName.parse(topic)
    if not broker.topic_level_policies_enabled:
        raise TopicPoliciesDisabledError(
            "Topic level policies is disabled, to enable the topic level policy and retry."
        )
    if name.partition is not None:
        raise PartitionPolicyError(f"Not allowed to set/get topic policy for a partition: {name}")
    return name


def asked_fields(fields: Mapping[str, object]) -> str:
    """The fields a policy call was given, for an audit line written before they are checked."""
    return ", ".join(f"{k}={v}" for k, v in fields.items() if v is not UNSET)


def flag(field: str, value: object) -> bool:
    """A policy flag: true or false, nothing else (Pulsar's admin API reads JSON booleans)."""
    if not isinstance(value, bool):
        raise PolicyError(f"{field} must be true or false, not {value!r}")
    return value


def optional_flag(field: str, value: object) -> bool | None:
    """A policy flag that None clears."""
    return None if value is None else flag(field, value)


def require_expected(expected: object | None, stored: object, target: str) -> None:
    """The compare of a policy compare-and-set: nothing is saved unless the stored policy is still the one the
    change was previewed against. Embedded, it runs inside the write's transaction, so no write interleaves."""
    if expected is not None and expected != stored:
        raise PolicyChangedError(
            f"the policies of {target} changed since this change was previewed (another write got there first); "
            "nothing was saved: preview the change again"
        )
