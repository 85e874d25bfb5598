"""`ForwardingRegistry`: a registry handle that forwards every member of the contract to the handle it wraps.

It implements the whole `SchemaRegistry` contract by hand, member by member, so a type checker sees exactly what
it offers, and a member added to the contract later is abstract here until someone writes how it forwards (the
class cannot be made until then). A subclass overrides what it answers differently: `ReadOnlyRegistry`
(_read_only.py) refuses the writes. Nothing reaches the wrapped handle's storage or connection except through
its public members.
"""

from __future__ import annotations

from ._audit import AuditEntry
from ._catalog import BrokerIndex, TopicPage, TopicQuery, TopicSummary
from ._changes import SchemaDiff
from ._handle import SchemaRegistry
from ._model import (
    BrokerConfig,
    ClientRecord,
    CompatibilityResult,
    CompatibilityStrategy,
    ConnectedClient,
    EffectivePolicy,
    NamespacePolicy,
    Registration,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._pulsar_version import PulsarChoice
from .explain._preview import PolicyPreview
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._changes import NamespacePolicyChange, P, PolicyChange, TopicPolicyChange
from .proposals._handle import Proposals
from .webhooks._handle import Webhooks


class ForwardingRegistry(SchemaRegistry):
    """A handle that answers every member of the contract by asking the handle it wraps (`inner`), as it is:
    the base of a handle that changes a few answers and forwards the rest (ReadOnlyRegistry refuses the
    writes)."""

    __slots__ = ("_inner",)

    def __init__(self, inner: SchemaRegistry) -> None:
        self._inner = inner

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inner!r})"

    # --- which Pulsar, which backend -------------------------------------------------------------------------

    @property
    def pulsar(self) -> PulsarChoice:
        return self._inner.pulsar

    @property
    def broker(self) -> BrokerConfig:
        return self._inner.broker

    @property
    def location(self) -> str:
        return self._inner.location

    @property
    def is_read_only(self) -> bool:
        return self._inner.is_read_only

    def read_only(self) -> SchemaRegistry:
        return self._inner.read_only()

    @property
    def requests_sent(self) -> int:
        return self._inner.requests_sent

    @property
    def records_clients(self) -> bool:
        return self._inner.records_clients

    def close(self) -> None:
        self._inner.close()

    # --- writes ----------------------------------------------------------------------------------------------

    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        return self._inner.register(topic, info, user=user)

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        return self._inner.delete(topic, force=force, user=user)

    def set_policy(self, target: str, change: PolicyChange[P], *, expected: P | None = None, user: str = "") -> P:
        return self._inner.set_policy(target, change, expected=expected, user=user)

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        return self._inner.create_tenant(tenant, user=user)

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        return self._inner.create_namespace(namespace, user=user)

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        return self._inner.create_topic(topic, user=user)

    # --- reads ---------------------------------------------------------------------------------------------

    @property
    def proposals(self) -> Proposals:
        return self._inner.proposals

    @property
    def webhooks(self) -> Webhooks:
        return self._inner.webhooks

    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        return self._inner.check(topic, info, strategy)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        return self._inner.get(topic, version)

    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        return self._inner.find_version(topic, info)

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        return self._inner.audit_trail(target, limit=limit)

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        return self._inner.history(topic, include_deleted=include_deleted)

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        return self._inner.namespace_policy(namespace)

    def topic_policy(self, topic: str) -> TopicPolicy:
        return self._inner.topic_policy(topic)

    def effective_policy(self, topic: str) -> EffectivePolicy:
        return self._inner.effective_policy(topic)

    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        return self._inner.clients(topic)

    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        return self._inner.connected_clients(topic)

    def tenants(self) -> list[str]:
        return self._inner.tenants()

    def namespaces(self, tenant: str) -> list[str]:
        return self._inner.namespaces(tenant)

    def topics(self, namespace: str) -> list[str]:
        return self._inner.topics(namespace)

    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        return self._inner.diff(topic, old, new)

    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        return self._inner.what_if(topic, info)

    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        return self._inner.upgrade_plan(topic, target)

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        return self._inner.policy_impact(namespace, strategy)

    def preview_policy(self, target: str, change: NamespacePolicyChange | TopicPolicyChange) -> PolicyPreview:
        return self._inner.preview_policy(target, change)

    def change_token(self) -> int:
        return self._inner.change_token()

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        return self._inner.search_topics(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        return self._inner.topic_summary(topic)

    @property
    def broker_index(self) -> BrokerIndex | None:
        return self._inner.broker_index

    @property
    def workspace(self) -> str | None:
        return self._inner.workspace
