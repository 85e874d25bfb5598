"""Applying an approved proposal to a plain Pulsar broker (`ApplyTarget`, registry/proposals/_targets.py).

Pulsar's admin API has no compare-and-set: `SchemaRegistryServiceImpl.putSchemaIfAbsent` appends whatever
passes the strategy, and a policy PUT overwrites. So the apply is read, compare, write, read back. The topic's
latest live version (or the stored policy) is read immediately before the write and must still be the
proposal's base, else StaleProposalError (PolicyChangedError for a policy) and nothing is written. After the
write the latest version is read back: when it is not base+1, or not the approved schema (another write landed
between the read and the write, or right after), the apply is still done, and `Applied.interleaved` names the
version found, which the proposal and its audit line record. The window between the read and the write is a
few milliseconds of one HTTP round trip; nothing closes it but a broker that offered compare-and-set.
"""

from __future__ import annotations

from typing import Protocol

from .._errors import StaleProposalError
from .._model import NamespacePolicy, Registration, SchemaInfo, TopicPolicy
from .._names import NamespaceName, TopicName
from .._schema_data import checked_info, to_schema_data
from .._state import RegistryState
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange
from ..policy._rules import policy_topic, require_expected
from ..proposals._model import Actor, Proposal
from ..proposals._targets import Applied


class BrokerWrites(Protocol):
    """The broker's writes themselves, without the workspace's gate (a remote registry's `_send_*`)."""

    def _send_register(self, topic: str, info: SchemaInfo) -> Registration: ...

    def _send_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None
    ) -> NamespacePolicy: ...

    def _send_topic_policy(
        self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None
    ) -> TopicPolicy: ...


class BrokerTarget:
    """A plain broker as the registry a workspace's proposals are applied to: `state` reads it (uncached outside
    a snapshot, so every read here is the broker's answer now), `writes` sends to it."""

    def __init__(self, state: RegistryState, writes: BrokerWrites) -> None:
        self._state = state
        self._writes = writes

    def namespace_policy(self, namespace: str) -> NamespacePolicy | None:
        return self._state.storage.namespace_policy(namespace)

    def topic_policy(self, topic: str) -> TopicPolicy:
        return self._state.storage.topic_policy(topic) or TopicPolicy()

    def apply_schema(self, proposal: Proposal, actor: Actor) -> Applied:
        name = TopicName.parse(proposal.target)
        revision = proposal.revision
        assert revision.schema is not None
        info = checked_info(revision.schema)
        data = to_schema_data(info)
        live = self._state.live(name)
        now = live[-1].version if live else None
        if now != revision.base_version:
            raise StaleProposalError(f"proposal #{proposal.id}: {name}'s latest version is now {now}")
        made = self._writes._send_register(str(name), info)
        after = self._state.live(name)
        if not after:
            return Applied(made.version, made.stored, "the topic has no live schema now")
        latest = after[-1]
        if made.stored:  # the new latest must be base+1 and exactly the approved schema
            ours = now is None or made.version == now + 1
            clean = ours and latest.version == made.version and latest.type is data.type and latest.data == data.data
        else:  # identical to a live version: nothing stored, the latest must still be the base
            clean = latest.version == now
        return Applied(made.version, made.stored, "" if clean else f"version {latest.version}")

    def apply_policy(self, proposal: Proposal) -> Applied:
        revision = proposal.revision
        changes = dict(revision.policy or {})
        if proposal.target == proposal.namespace:
            ns = NamespaceName.parse(proposal.target)
            stored = self.namespace_policy(str(ns)) or NamespacePolicy()
            require_expected(revision.base_policy, stored, str(ns))
            change = NamespacePolicyChange.of(changes)
            wanted: NamespacePolicy | TopicPolicy = change.applied_to(stored)
            after: NamespacePolicy | TopicPolicy = self._writes._send_namespace_policy(str(ns), change, None)
        else:
            name = policy_topic(proposal.target, self._state.broker)
            stored_topic = self.topic_policy(str(name))
            require_expected(revision.base_policy, stored_topic, str(name))
            topic_change = TopicPolicyChange.of(changes)
            wanted = topic_change.applied_to(stored_topic)
            after = self._writes._send_topic_policy(str(name), topic_change, None)
        if after != wanted:
            return Applied(None, True, f"the policy read back is {after}")
        return Applied(None, True)
