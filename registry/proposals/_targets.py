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
from .._state import RegistryState
from .._writes import LocalWrites
from ..policy._changes import NamespacePolicyChange, policy_change
from ..policy._rules import policy_topic
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
        revision = proposal.revision
        assert revision.schema is not None
        _, version, stored, _ = self._writes.register(TopicName.parse(proposal.target), revision.schema, actor.name)
        return Applied(version, stored)

    def apply_policy(self, proposal: Proposal) -> Applied:
        """The same write as a direct policy change (LocalWrites), checked against the revision's base policy."""
        revision = proposal.revision
        change = policy_change(proposal.target, revision.policy or {})
        if isinstance(change, NamespacePolicyChange):
            self._writes.change_namespace_policy(NamespaceName.parse(proposal.target), change, revision.base_policy)
        else:
            name = policy_topic(proposal.target, self._state.broker)
            self._writes.change_topic_policy(name, change, revision.base_policy)
        return Applied(None, True)
