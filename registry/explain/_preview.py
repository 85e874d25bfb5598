"""A preview of a policy change before it is saved: what the proposed namespace or topic policy would refuse.

Every schema policy an operator can change (compatibility strategy, allow auto-update, validation enforced,
the deprecated auto-update strategy, a topic's own strategy) is previewed the same way: the change is applied
to a staged copy of the policies (`StagedPolicies`, the registry's storage with the policy writes kept in
memory), through the very code that saves it, so the preview validates the values exactly as saving would.
Then, per topic in scope, the registry as it is and the staged one answer the same questions:

- would the live registrations still pass under the proposed admin strategy (replayed, each against the
  versions before it), and is the latest one refused;
- would each recorded producer and consumer still be let in (its recorded schema version, admitted dry-run
  under both policies): the ones let in now and refused then "could no longer connect";
- which topics the change does not reach, and why (their own strategy or validation setting, the broker's
  enforcement, the system-topic rule): they are listed apart, as shielded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from .._admission import admit_consumer, admit_producer
from .._errors import NamespaceNotFoundError
from .._model import ClientRecord, ClientRole, EffectivePolicy, NamespacePolicy, Problem, TopicPolicy
from .._names import NamespaceName, TopicName
from .._state import RegistryState
from ..policy._rules import changed_namespace_policy, changed_topic_policy, policy_topic
from ._answers import replay
from ._whatif import RefusedClient

if TYPE_CHECKING:
    from ..storage._base import Storage


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicPreview:
    """One topic under a proposed policy: what is in force now and then, and what the change would refuse."""

    # Facts its JSON carries beside the fields (_wire.to_json).
    JSON_DERIVED: ClassVar[tuple[str, ...]] = ("changed", "affected")

    topic: str
    current: EffectivePolicy
    proposed: EffectivePolicy
    shielded_by: tuple[str, ...]  # why (part of) the change does not reach this topic; () when it all does
    refused_versions: tuple[int, ...]  # live registrations the proposed admin strategy would have refused
    latest_refused: bool
    first_problem: Problem | None
    refused_clients: tuple[RefusedClient, ...]  # let in now, refused under the proposed policy

    @property
    def changed(self) -> bool:
        """Whether any value in force for this topic changes."""
        return _values(self.current) != _values(self.proposed)

    @property
    def affected(self) -> bool:
        return self.latest_refused or bool(self.refused_clients)


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyPreview:
    """What saving a proposed policy would change and refuse. `target` is a namespace (tenant/ns) or a topic;
    `changes` says each stored value that changes ("compatibility: BACKWARD → FULL"); empty when nothing would.
    `before` is the stored policy the change was previewed against: passed back as `expected=` when saving, the
    save is refused if another write changed it since (a compare-and-set, not a re-read in the shell)."""

    target: str
    scope: str  # "namespace" or "topic"
    changes: tuple[str, ...]
    topics: tuple[TopicPreview, ...]
    before: TopicPolicy | NamespacePolicy

    @property
    def refused_topics(self) -> tuple[TopicPreview, ...]:
        """Topics whose latest registration the proposed strategy would have refused."""
        return tuple(t for t in self.topics if t.latest_refused)

    @property
    def refused_clients(self) -> tuple[RefusedClient, ...]:
        return tuple(c for t in self.topics for c in t.refused_clients)

    @property
    def shielded(self) -> tuple[TopicPreview, ...]:
        """Topics that a part of the change does not reach (their own setting, the broker, system topics)."""
        return tuple(t for t in self.topics if t.shielded_by)

    def __repr__(self) -> str:
        return (
            f"PolicyPreview({self.target!r}, changes={list(self.changes)}, topics={len(self.topics)}, "
            f"refused_topics={len(self.refused_topics)}, refused_clients={len(self.refused_clients)}, "
            f"shielded={len(self.shielded)})"
        )


class StagedPolicies:
    """The registry's storage with policy writes (and the topics or namespaces they would create) kept in this
    object: reads see them, the storage never does. Every other member is the storage's own."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._namespaces: dict[str, NamespacePolicy] = {}
        self._topic_policies: dict[str, TopicPolicy | None] = {}
        self._topics: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        if namespace in self._namespaces:
            return self._namespaces[namespace]
        return self._storage.namespace_policy(namespace)

    def put_namespace(self, namespace: str, policy: NamespacePolicy, created_at: int) -> None:
        self._namespaces[namespace] = policy

    def put_tenant(self, tenant: str, created_at: int) -> bool:
        return False

    def topic_policy(self, topic: str) -> TopicPolicy | None:
        if topic in self._topic_policies:
            return self._topic_policies[topic]
        return self._storage.topic_policy(topic)

    def put_topic_policy(self, topic: str, policy: TopicPolicy | None) -> None:
        self._topic_policies[topic] = policy

    def has_topic(self, topic: str) -> bool:
        return topic in self._topics or self._storage.has_topic(topic)

    def put_topic(self, topic: str, namespace: str, created_at: int) -> bool:
        self._topics.add(topic)
        return True

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        yield


def preview_namespace(state: RegistryState, ns: NamespaceName, **fields: Any) -> PolicyPreview:
    """What `set_namespace_policy(ns, **fields)` would change and refuse, writing nothing; values are read
    and checked as saving reads them (registry/policy/_rules.py)."""
    before = state.storage.namespace_policy(str(ns))
    if before is None and not state.auto_create:
        raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
    after = changed_namespace_policy(before or NamespacePolicy(), **fields)
    staged = StagedPolicies(state.storage)
    staged.put_namespace(str(ns), after, 0)
    topics = [] if before is None else state.storage.topics(str(ns))
    changes = describe_changes(before or NamespacePolicy(), after)
    return _preview(state, _staged_state(state, staged), str(ns), "namespace", changes, topics, before)


def preview_topic(state: RegistryState, topic: str, **fields: Any) -> PolicyPreview:
    """What `set_topic_policy(topic, **fields)` would change and refuse on that topic, writing nothing."""
    name = policy_topic(topic, state.broker)
    if not state.auto_create and state.storage.namespace_policy(str(name.namespace_name)) is None:
        raise NamespaceNotFoundError(f"Namespace does not exist: {name.namespace_name}")
    before = state.topic_policy(name)
    after = changed_topic_policy(before, **fields)
    staged = StagedPolicies(state.storage)
    staged.put_topic_policy(str(name), None if after == TopicPolicy() else after)
    changes = describe_changes(before, after)
    return _preview(state, _staged_state(state, staged), str(name), "topic", changes, [str(name)], before)


def _staged_state(state: RegistryState, staged: StagedPolicies) -> RegistryState:
    return RegistryState(cast("Storage", staged), state.broker, state.line, auto_create=state.auto_create)


def _preview(
    state: RegistryState,
    staged: RegistryState,
    target: str,
    scope: str,
    changes: tuple[str, ...],
    topics: list[str],
    before: NamespacePolicy | TopicPolicy | None,
) -> PolicyPreview:
    """Compare `state` (as it is) with `staged` (the same storage with the proposed policy) on `topics`;
    `before` is the stored policy (None: a namespace not created yet, which saving would create)."""
    return PolicyPreview(
        target=target,
        scope=scope,
        changes=changes,
        topics=tuple(_topic(state, staged, TopicName.parse(t), scope) for t in topics) if changes else (),
        before=NamespacePolicy() if before is None else before,
    )


def _topic(state: RegistryState, staged: RegistryState, name: TopicName, scope: str) -> TopicPreview:
    current, proposed = state.effective_policy(name), staged.effective_policy(name)
    live = state.live(name)
    strategy = proposed.admin_compatibility.value
    unchanged = strategy is current.admin_compatibility.value  # then nothing registered before is refused now
    refused, first = ((), None) if unchanged else replay(state, live, strategy)
    clients: list[RefusedClient] = []
    if _admission_values(current) != _admission_values(proposed):
        for client in state.clients(name):
            now, then = _admit(state, name, client, live), _admit(staged, name, client, live)
            if now is not None and then is not None and now[0] and not then[0]:
                clients.append(RefusedClient(client=client, reason=then[1]))
    return TopicPreview(
        topic=str(name.base),
        current=current,
        proposed=proposed,
        shielded_by=_shields(state, staged, name, current) if scope == "namespace" else (),
        refused_versions=refused,
        latest_refused=len(live) > 1 and live[-1].version in refused,
        first_problem=first,
        refused_clients=tuple(clients),
    )


def _admit(state: RegistryState, name: TopicName, client: ClientRecord, live: list[Any]) -> tuple[bool, str] | None:
    """(accepted, reason) for a recorded client coming back with its recorded schema, written nowhere;
    None when that schema is no longer live (nothing can say how it would connect)."""
    info = None
    if client.version is not None:
        entry = next((e for e in live if e.version == client.version), None)
        if entry is None:
            return None
        info = entry.info
    if client.role is ClientRole.PRODUCER:
        admission, _ = admit_producer(state, None, name, info, client.replicator, "")
    else:
        admission, _ = admit_consumer(state, None, name, info, (client.name, client.subscription), "")
    return admission.accepted, admission.reason


def _shields(state: RegistryState, staged: RegistryState, name: TopicName, current: EffectivePolicy) -> tuple[str, ...]:
    """Which parts of a namespace change stop short of this topic, and why."""
    before = state.stored_namespace_policy(name)
    after = staged.stored_namespace_policy(name)
    own = state.topic_policy(name)
    reasons: list[str] = []
    strategy_changed = (before.compatibility, before.auto_update_strategy) != (
        after.compatibility,
        after.auto_update_strategy,
    )
    if strategy_changed and own.compatibility is not None:
        reasons.append(f"its own strategy {own.compatibility}")
    if before.validation_enforced != after.validation_enforced:
        if state.broker.validation_enforced:
            reasons.append("the broker enforces validation (isSchemaValidationEnforced=true)")
        elif own.validation_enforced is not None:
            reasons.append(f"its own validation setting ({str(own.validation_enforced).lower()})")
    if current.is_system_topic and (strategy_changed or before.allow_auto_update != after.allow_auto_update):
        reasons.append("a system topic: producers and consumers meet the broker's system-topic policy")
    return tuple(reasons)


def _values(policy: EffectivePolicy) -> tuple[object, ...]:
    return (
        policy.compatibility.value,
        policy.admin_compatibility.value,
        policy.allow_auto_update.value,
        policy.validation_enforced.value,
    )


def _admission_values(policy: EffectivePolicy) -> tuple[object, ...]:
    return policy.compatibility.value, policy.allow_auto_update.value, policy.validation_enforced.value


def describe_changes(before: Any, after: Any) -> tuple[str, ...]:
    """`field: old → new` for each field of two policy dataclasses that differs (the audit trail's form too)."""
    return tuple(
        f"{f}: {_plain(getattr(before, f))} → {_plain(getattr(after, f))}"
        for f in before.__dataclass_fields__
        if getattr(before, f) != getattr(after, f)
    )


def _plain(value: object) -> str:
    return "unset" if value is None else str(value)
