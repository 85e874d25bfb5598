"""The schema policies two registries hold differently: per namespace both hold, each policy in force at the
namespace level (its own value, else the broker's) and its level; per topic both hold, the strategy and
validation in force where either side sets the topic's own policy (namespace differences are not repeated for
every topic). Values and levels come from the rules the rest of the explorer uses (policy/_rules.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._errors import NotFoundError
from .._handle import SchemaRegistry
from .._model import Effective, NamespacePolicy, PolicySource, TopicPolicy
from ..policy._rules import admin_strategy, namespace_allow_auto_update, namespace_validation_enforced
from ._sides import Side
from ._values import PolicyDifference


def namespace_values(handle: SchemaRegistry, namespace: str) -> dict[str, Effective[Any]] | None:
    """Each schema policy of a namespace in force and its level; None when the namespace does not exist."""
    try:
        policy = handle.namespace_policy(namespace)
    except NotFoundError:
        return None
    broker = handle.broker
    strategy = policy.auto_update_strategy
    return {
        "compatibility": admin_strategy(None, policy, broker),
        "allow_auto_update": namespace_allow_auto_update(policy, broker),
        "auto_update_strategy": Effective(
            strategy, PolicySource.NAMESPACE if strategy is not None else PolicySource.BROKER_DEFAULT
        ),
        "allow_auto_update_with_replicator": Effective(policy.allow_auto_update_with_replicator, _level(policy)),
        "validation_enforced": namespace_validation_enforced(policy, broker),
    }


def _level(policy: NamespacePolicy) -> PolicySource:
    return PolicySource.NAMESPACE if policy != NamespacePolicy() else PolicySource.BROKER_DEFAULT


def namespace_differences(source: Side, target: Side) -> Iterator[PolicyDifference]:
    """The differences of the namespaces both sides hold, in namespace order."""
    for namespace in sorted(set(source.namespaces) & set(target.namespaces)):
        a, b = namespace_values(source.handle, namespace), namespace_values(target.handle, namespace)
        if a is None or b is None:
            continue
        yield from _differences(namespace, a, b)


def topic_differences(source: Side, target: Side, schema_id: str) -> Iterator[PolicyDifference]:
    """The differences of one topic (a schema id) both sides list, where either sets its own policy."""
    a_name, b_name = source.names.get(schema_id), target.names.get(schema_id)
    if a_name is None or b_name is None:
        return
    a_own, b_own = source.own_policy(a_name), target.own_policy(b_name)
    if a_own == TopicPolicy() and b_own == TopicPolicy():
        return
    a_values, b_values = _topic_values(source.handle, a_name), _topic_values(target.handle, b_name)
    for diff in _differences(a_name, a_values, b_values):
        if PolicySource.TOPIC in (diff.from_source, diff.to_source):
            yield diff


def _topic_values(handle: SchemaRegistry, topic: str) -> dict[str, Effective[Any]]:
    in_force = handle.effective_policy(topic)
    return {"compatibility": in_force.admin_compatibility, "validation_enforced": in_force.validation_enforced}


def _differences(target: str, a: dict[str, Effective[Any]], b: dict[str, Effective[Any]]) -> Iterator[PolicyDifference]:
    for field, mine in a.items():
        theirs = b[field]
        if mine.value != theirs.value:
            yield PolicyDifference(
                target=target,
                field=field,
                from_value=mine.value,
                to_value=theirs.value,
                from_source=str(mine.source),
                to_source=str(theirs.source),
            )
