"""The implementation both registries share (architecture.md, the contract): the reads, the verdicts computed
from them and the catalog, over a `RegistryState` of a backend.

`Registry` (embedded: SQLite, memory, PostgreSQL) and `RemoteRegistry` (a Pulsar admin v2 endpoint over HTTP)
are siblings under `BackedRegistry`, which implements the `SchemaRegistry` contract (_handle.py, where every
member is documented) except the calls where the backend decides (register, check, get, delete, policy and
creation writes, the audit trail). Everything else is answered here, by the same units (explain/_answers.py,
explain/_preview.py, _catalog_cache.py), so the same question gets the same answer from both. What only an
embedded registry can do (recording clients, group commits, the stored Pulsar line) is on `Registry` alone.
"""

from __future__ import annotations

import abc

from ._cache_budget import bounded
from ._catalog import TopicPage, TopicQuery, TopicSummary
from ._catalog_cache import CatalogCache, IndexedCatalog
from ._changes import SchemaDiff
from ._errors import InvalidArgumentError, PolicyError, TenantNotFoundError, TopicNotFoundError
from ._handle import SchemaRegistry
from ._history import version_number
from ._model import (
    BrokerConfig,
    ClientRecord,
    CompatibilityStrategy,
    ConnectedClient,
    EffectivePolicy,
    NamespacePolicy,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._pulsar_version import PulsarChoice
from ._read_only import ReadOnlyRegistry
from ._schema_data import checked_info
from ._state import RegistryState
from ._text import iso_millis
from ._types import SchemaData
from .explain._answers import diff_side, policy_impact, upgrade_plan, what_if
from .explain._diff import diff_schemas
from .explain._preview import PolicyPreview, preview_namespace, preview_topic
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._changes import NamespacePolicyChange, P, PolicyChange, TopicPolicyChange
from .policy._rules import policy_topic


class BackedRegistry(SchemaRegistry):
    """A registry handle over a `RegistryState`: the reads, explanations and catalog of both registries."""

    def __init__(
        self, state: RegistryState, *, location: str, line_source: str, index: IndexedCatalog | None = None
    ) -> None:
        self._state = state
        self._location = location
        self._line_source = line_source
        self._own_writes = 0
        self._catalog = CatalogCache(state, lambda: self._own_writes, index)

    # --- which Pulsar, which backend -------------------------------------------------------------------------

    @property
    def pulsar(self) -> PulsarChoice:
        return PulsarChoice(self._state.line, self._line_source)

    @property
    def broker(self) -> BrokerConfig:
        return self._state.broker

    @property
    def location(self) -> str:
        return self._location

    def read_only(self) -> ReadOnlyRegistry:
        return ReadOnlyRegistry(self)

    # --- policy writes: each level where the backend decides ---------------------------------------------

    def set_policy(self, target: str, change: PolicyChange[P], *, expected: P | None = None, user: str = "") -> P:
        if isinstance(change, NamespacePolicyChange):
            return self._set_namespace_policy(target, change, expected, user)
        if isinstance(change, TopicPolicyChange):
            return self._set_topic_policy(target, change, expected, user)
        raise InvalidArgumentError(f"a policy change is a NamespacePolicyChange or a TopicPolicyChange, not {change!r}")

    @abc.abstractmethod
    def _set_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None, user: str
    ) -> NamespacePolicy:
        """`set_policy` of a namespace, where the backend decides."""

    @abc.abstractmethod
    def _set_topic_policy(
        self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None, user: str
    ) -> TopicPolicy:
        """`set_policy` of a topic, where the backend decides."""

    # --- reads ------------------------------------------------------------------------------------------

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        name = TopicName.parse(topic)
        with self._state.snapshot():
            return self._state.history(name) if include_deleted else self._state.live(name)

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        ns = NamespaceName.parse(namespace)
        with self._state.snapshot():
            return self._state.namespace_policy(ns)

    def topic_policy(self, topic: str) -> TopicPolicy:
        name = policy_topic(topic, self.broker)
        with self._state.snapshot():
            return self._state.topic_policy(name)

    def effective_policy(self, topic: str) -> EffectivePolicy:
        name = TopicName.parse(topic)
        with self._state.snapshot():
            return self._state.effective_policy(name)

    @property
    def records_clients(self) -> bool:
        return True

    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        topics = None if topic is None else [str(TopicName.parse(topic).base)]
        return self._state.storage.clients(topics)

    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        name = TopicName.parse(topic)
        base = str(name.base)
        if not self._state.storage.has_topic(base):
            raise TopicNotFoundError(f"Topic does not exist: {base}")
        connected = [
            ConnectedClient(
                topic=c.topic,
                role=c.role,
                name=c.name,
                subscription=c.subscription,
                connected_since=iso_millis(c.connected_at) if c.connected_at else "",
            )
            for c in self._state.storage.clients([base])
        ]
        return sorted(connected, key=lambda c: c.order)

    def tenants(self) -> list[str]:
        return self._state.storage.tenants()

    def namespaces(self, tenant: str) -> list[str]:
        name = parse_tenant(tenant)
        with self._state.snapshot():
            if name not in self._state.storage.tenants():
                raise TenantNotFoundError(f"Tenant does not exist: {name}")
            return self._state.storage.namespaces(name)

    def topics(self, namespace: str) -> list[str]:
        ns = NamespaceName.parse(namespace)
        with self._state.snapshot():
            self._state.namespace_policy(ns)
            return self._state.storage.topics(str(ns))

    # --- explanations, diffs, what-if ------------------------------------------------------------------

    @bounded
    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        name = TopicName.parse(topic)
        with self._state.snapshot():
            return diff_schemas(str(name.base), self._side(name, old), self._side(name, new))

    @bounded
    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        name = TopicName.parse(topic)
        info = checked_info(info)
        with self._state.snapshot():
            return what_if(self._state, name, info)

    @bounded
    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        name = TopicName.parse(topic)
        with self._state.snapshot():
            return upgrade_plan(self._state, name, self._state.live(name), self._side(name, target)[1])

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        ns = NamespaceName.parse(namespace)
        proposed = CompatibilityStrategy.parse(strategy)
        if proposed is CompatibilityStrategy.UNDEFINED:
            raise PolicyError("choose one of the 8 strategies to preview; UNDEFINED only clears the namespace value")
        with self._state.snapshot():
            return policy_impact(self._state, ns, proposed, self.topics(str(ns)))

    def preview_policy(self, target: str, change: NamespacePolicyChange | TopicPolicyChange) -> PolicyPreview:
        if isinstance(change, NamespacePolicyChange):
            ns = NamespaceName.parse(target)
            with self._state.snapshot():
                return preview_namespace(self._state, ns, **change.fields())
        with self._state.snapshot():
            return preview_topic(self._state, target, **change.fields())

    def _side(self, name: TopicName, ref: int | SchemaInfo | None) -> tuple[int | str, SchemaData]:
        if ref is None or isinstance(ref, SchemaInfo):
            return diff_side(self._state, name, ref)
        return diff_side(self._state, name, version_number(ref, negative=True))

    # --- catalog ----------------------------------------------------------------------------------------

    def change_token(self) -> int:
        return self._catalog.change_token()

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        with self._state.snapshot():
            return self._catalog.search(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        name = TopicName.parse(topic)
        with self._state.snapshot():
            return self._catalog.summary(name)
