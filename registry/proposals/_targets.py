"""Where a proposal is applied, apart from where it is kept: the registry a `ProposalDesk` reads policies from
and writes the approved change to.

The desk keeps proposals, rules and the audit trail in one storage (a registry's own, or a workspace beside a
broker: registry/remote/_workspace.py) and hands the write itself to a target. `EmbeddedTarget` is the embedded
registry's: the write runs inside the desk's storage transaction, so the base check is a compare-and-set and
nothing can come between it and the write. A broker's target (registry/remote/_apply.py) cannot do that:
Pulsar's admin API has no compare-and-set, so it reads just before writing and reads back after, and says so
(`Applied.interleaved`) when another write came between.

A target raises StaleProposalError (schema) or PolicyChangedError (policy) when the base is no longer the latest
right before the write, with nothing written; the desk marks the proposal stale and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .._model import NamespacePolicy, TopicPolicy
from .._names import NamespaceName, TopicName
from .._schema_data import checked_info, to_schema_data
from .._state import RegistryState
from .._writes import LocalWrites
from ..policy._rules import changed_namespace_policy, changed_topic_policy, policy_topic, require_expected
from ..storage._base import LocalStorage
from ._model import Actor, Proposal


@dataclass(frozen=True, slots=True)
class Applied:
    """What an apply wrote: the schema version stored or found (None for a policy), whether anything was stored,
    and, where the read-back found another write than this one ("version 7"), what it found: the proposal and its
    audit line then say "applied, but another write interleaved (version 7)"."""

    version: int | None
    stored: bool
    interleaved: str = ""


class ApplyTarget(Protocol):
    """The registry a desk applies to, and reads stored policies from."""

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        """A namespace's stored schema policies; None when the namespace does not exist."""
        ...

    def topic_policy(self, topic: str) -> TopicPolicy:
        """A topic's own schema policies (empty when it has none)."""
        ...

    def apply_schema(self, proposal: Proposal, actor: Actor) -> Applied:
        """Register exactly the approved revision, only while its base is the latest (StaleProposalError
        otherwise, nothing written), under the strategy in force now (which may refuse it)."""
        ...

    def apply_policy(self, proposal: Proposal) -> Applied:
        """Change the policy exactly as approved, only while the stored one is the revision's base
        (PolicyChangedError otherwise, nothing written)."""
        ...


class EmbeddedTarget:
    """An embedded registry's storage, written inside the desk's transaction: the desk's review found the base
    still the latest in that transaction, which holds the registry's write lock, so nothing moves it before the
    write (a compare-and-set, as appends are)."""

    def __init__(self, storage: LocalStorage, state: RegistryState, writes: LocalWrites) -> None:
        self._storage = storage
        self._state = state
        self._writes = writes

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self._storage.namespace_policy(namespace)

    def topic_policy(self, topic: str) -> TopicPolicy:
        return self._storage.topic_policy(topic) or TopicPolicy()

    def apply_schema(self, proposal: Proposal, actor: Actor) -> Applied:
        name = TopicName.parse(proposal.target)
        revision = proposal.revision
        assert revision.schema is not None
        data = to_schema_data(checked_info(revision.schema))
        self._writes.ensure_topic(name)
        strategy = self._state.admin_strategy(name).value
        version, stored, _ = self._writes.put_if_absent(name, data, strategy, actor.name)
        return Applied(version, stored)

    def apply_policy(self, proposal: Proposal) -> Applied:
        revision = proposal.revision
        changes = dict(revision.policy or {})
        if proposal.target == proposal.namespace:
            ns = NamespaceName.parse(proposal.target)
            stored = self._storage.namespace_policy(str(ns)) or NamespacePolicy()
            require_expected(revision.base_policy, stored, str(ns))
            current = self._writes.namespace(ns, create=self._state.auto_create)
            self._writes.put_namespace_policy(ns, changed_namespace_policy(current, **changes))
        else:
            name = policy_topic(proposal.target, self._state.broker)
            stored_topic = self.topic_policy(str(name))
            require_expected(revision.base_policy, stored_topic, str(name))
            self._writes.ensure_topic(name)
            self._writes.put_topic_policy(name, changed_topic_policy(stored_topic, **changes))
        return Applied(None, True)
