"""What a registry knows, read from its backend, and the verdicts Pulsar derives from it without writing.

Both facades, the embedded `Registry` and the `RemoteRegistry` over a broker's admin API, hold one state over
their backend (a storage: SQLite, memory, or the admin API read over HTTP). Admission, what-if, upgrade plans,
policy impact and previews are computed over a state, so embedded and remote answer them with the same code.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ._compatibility import check_with_all, check_with_latest
from ._dedup import find_duplicate
from ._errors import NamespaceNotFoundError
from ._history import trim, versioned
from ._model import (
    BrokerConfig,
    ClientRecord,
    CompatibilityResult,
    CompatibilityStrategy,
    Effective,
    EffectivePolicy,
    NamespacePolicy,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName
from ._pulsar_version import PulsarLine, answering_as
from ._types import SchemaData
from .policy._rules import admin_strategy, effective_policy
from .storage._base import Storage


@runtime_checkable
class Snapshotting(Protocol):
    """Optional for a backend: `with backend.snapshot():` answers every read inside from one fetch each (a
    remote backend, where a facade call reads the same records several times over the network)."""

    def snapshot(self) -> contextlib.AbstractContextManager[None]: ...


class RegistryState:
    """Reads of one backend under one broker configuration and one Pulsar version line.

    `line` is the line the owning facade answers as; the facade updates it when that changes
    (`Registry.set_pulsar_version`, a snapshot import)."""

    def __init__(self, storage: Storage, broker: BrokerConfig, line: PulsarLine, *, auto_create: bool) -> None:
        self.storage = storage
        self.broker = broker
        self.line = line
        self.auto_create = auto_create

    def snapshot(self) -> contextlib.AbstractContextManager[None]:
        """One consistent read of the backend for the block (see Snapshotting); free for local storages."""
        if isinstance(self.storage, Snapshotting):
            return self.storage.snapshot()
        return contextlib.nullcontext()

    def history(self, name: TopicName) -> list[SchemaVersion]:
        """Every stored version of the topic, tombstones included."""
        return self.storage.history(name.schema_id)

    def live(self, name: TopicName) -> list[SchemaVersion]:
        """The versions after the last tombstone (§3.2)."""
        return trim(self.storage.history(name.schema_id))

    def stored_namespace_policy(self, name: TopicName) -> NamespacePolicy:
        """The topic's namespace policies as stored, defaults when the namespace has none."""
        return self.storage.namespace_policy(str(name.namespace_name)) or NamespacePolicy()

    def namespace_policy(self, ns: NamespaceName) -> NamespacePolicy:
        """A namespace's stored policies; NamespaceNotFoundError when it does not exist."""
        policy = self.storage.namespace_policy(str(ns))
        if policy is None:
            raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
        return policy

    def require_namespace(self, name: TopicName) -> None:
        """The read-only REST checks (/compatibility, /version) start with SchemasResourceBase's
        validateTopicOwnershipAsync, which answers 404 "Namespace does not exist" before any schema logic.
        With auto_create a write would create the namespace, so a check on it goes on as on an empty one."""
        if not self.auto_create and self.storage.namespace_policy(str(name.namespace_name)) is None:
            raise NamespaceNotFoundError(f"Namespace does not exist: {name.namespace_name}")

    def topic_policy(self, name: TopicName) -> TopicPolicy:
        """The topic's own policies (empty when it has none)."""
        return self.storage.topic_policy(str(name.base)) or TopicPolicy()

    def admin_strategy(self, name: TopicName) -> Effective[CompatibilityStrategy]:
        """The strategy the admin API checks with (§2.4), and its level."""
        topic_policy = self.storage.topic_policy(str(name.base))
        ns_policy = self.storage.namespace_policy(str(name.namespace_name))
        return admin_strategy(topic_policy, ns_policy, self.broker)

    def effective_policy(self, name: TopicName) -> EffectivePolicy:
        """Each schema policy in force for the topic, and its level (§2.4)."""
        return effective_policy(name, self.stored_namespace_policy(name), self.topic_policy(name), self.broker)

    def resolve_strategy(self, name: TopicName, strategy: CompatibilityStrategy | str | None) -> CompatibilityStrategy:
        """An explicit strategy, or (None or UNDEFINED) the topic's admin strategy."""
        if strategy is not None:
            chosen = CompatibilityStrategy.parse(strategy)
            if chosen is not CompatibilityStrategy.UNDEFINED:
                return chosen
        return self.admin_strategy(name).value

    def clients(self, name: TopicName) -> list[ClientRecord]:
        """The producers and consumers recorded on the topic."""
        return self.storage.clients([str(name.base)])

    def judge(
        self, live: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> CompatibilityResult:
        """Pulsar's compatibility check of `data` against a live history: the latest version, or every live one
        under a transitive strategy (§3.4), with this state's line (also for the calls that replay a history
        outside a facade call: policy impact, previews)."""
        existing = versioned(live)
        with answering_as(self.line):
            if strategy.is_transitive:
                return check_with_all(existing, data, strategy)
            return check_with_latest(existing, data, strategy)

    def duplicate(self, name: TopicName, live: Sequence[SchemaVersion], data: SchemaData) -> int | None:
        """The live version a registration of `data` would return instead of storing it (§3.3), or None."""
        return find_duplicate(name, live, data, self.line)

    def plan_put(
        self, name: TopicName, entries: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> tuple[int | None, CompatibilityResult | None]:
        """putSchemaIfAbsent's decision without the write: (existing version, None) when dedup matches, else
        (None, verdict) — verdict None on an empty history, which stores without any check (§3.3)."""
        live = trim(entries)
        match = self.duplicate(name, live, data)
        if match is not None:
            return match, None
        return None, self.judge(live, data, strategy) if live else None
