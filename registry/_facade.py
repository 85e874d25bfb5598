"""The facade both registries share (architecture.md, the contract): the reads, the verdicts computed from
them and the catalog, over a `RegistryView` of a backend.

`Registry` (embedded: SQLite or memory) and `RemoteRegistry` (a Pulsar admin v2 endpoint over HTTP) are
siblings under `SchemaRegistry`. Each implements the calls where the backend decides (register, check, get,
delete, policy and creation writes, the audit trail); everything else is answered here, by the same units
(explain/_answers.py, policy/_preview.py, _catalog_cache.py), so the same question gets the same answer from
both. A method that cannot work for a backend does not exist on its facade: recording clients, group
commits and the stored Pulsar version are the embedded registry's alone.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self, TypeVar, cast

from ._audit import AuditEntry
from ._cache_budget import CANDIDATES
from ._catalog import TopicPage, TopicQuery, TopicSummary
from ._catalog_cache import CatalogCache, IndexedCatalog
from ._errors import PolicyError, TenantNotFoundError, TopicNotFoundError
from ._history import version_number
from ._model import (
    BrokerConfig,
    ClientRecord,
    CompatibilityResult,
    CompatibilityStrategy,
    ConnectedClient,
    EffectivePolicy,
    NamespacePolicy,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._pulsar_version import PulsarProfile, using
from ._read_only import ReadOnlyRegistry
from ._schema_data import checked_info
from ._text import iso_millis
from ._types import SchemaData
from ._view import RegistryView
from .explain._answers import diff_side, policy_impact, upgrade_plan, what_if
from .explain._changes import SchemaDiff
from .explain._diff import diff_schemas
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._preview import PolicyPreview, preview_namespace, preview_topic
from .policy._rules import UNSET, policy_topic
from .remote._broker_index import IndexStatus

F = TypeVar("F", bound=Callable[..., Any])


def bounded(method: F) -> F:
    """The facade calls that work on candidate schemas: large candidates in work at once are bounded by bytes
    (registry/_cache_budget.py), so a storm of them cannot hold the memory of all of them at once; and they
    answer with the rules of the registry's Pulsar version profile (registry/_pulsar_version.py)."""

    @functools.wraps(method)
    def wrapper(self: SchemaRegistry, *args: Any, **kwargs: Any) -> Any:
        size = sum(len(a.schema) for a in (*args, *kwargs.values()) if isinstance(a, SchemaInfo))
        with CANDIDATES.admit(size), using(self.pulsar_profile):
            return method(self, *args, **kwargs)

    return cast(F, wrapper)


class SchemaRegistry(abc.ABC):
    """A Pulsar-faithful schema registry: what every registry handle answers, embedded or remote."""

    def __init__(
        self, view: RegistryView, *, location: str, profile_source: str, index: IndexedCatalog | None = None
    ) -> None:
        self._view = view
        self._location = location
        self._profile_source = profile_source
        self._own_writes = 0
        self._catalog = CatalogCache(view, lambda: self._own_writes, index)

    # --- which Pulsar, which backend -------------------------------------------------------------------------

    @property
    def pulsar_profile(self) -> PulsarProfile:
        """The Pulsar release line whose rules this handle answers with (README "Which Pulsar")."""
        return self._view.profile

    @property
    def pulsar_version(self) -> str:
        """The name of that line ("3.0", "4.0", "master")."""
        return self._view.profile.name

    @property
    def pulsar_version_source(self) -> str:
        """Where the profile comes from: asked when opened, stored with the registry, the default, or (remote)
        what the broker reports."""
        return self._profile_source

    @property
    def broker(self) -> BrokerConfig:
        """The broker settings the rules read (defaults, or what a remote broker reports)."""
        return self._view.broker

    @property
    def location(self) -> str:
        """The registry file's path, ":memory:", or the admin endpoint's URL."""
        return self._location

    @property
    def is_read_only(self) -> bool:
        """False: this handle writes. `read_only()` gives a view that refuses every write."""
        return False

    def read_only(self) -> ReadOnlyRegistry:
        """A view of this registry that answers every read and raises ReadOnlyError on every write (the app's
        --read-only holds only such a view, so no page can write)."""
        return ReadOnlyRegistry(self)

    @abc.abstractmethod
    def close(self) -> None:
        """Release the backend (a database connection, an HTTP client)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self.close()

    # --- schemas: where the backend decides --------------------------------------------------------------

    @abc.abstractmethod
    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> int:
        """REST POST /schema (§3.3): the version `info` is stored as, or the live duplicate's."""

    @abc.abstractmethod
    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        """REST POST /compatibility (§3.4), explained; `strategy=None` uses the topic's effective one."""

    @abc.abstractmethod
    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        """The latest live version, or a given live version (§3.6); SchemaNotFoundError otherwise."""

    @abc.abstractmethod
    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        """REST POST /version (§3.4): the first live version with identical bytes, or None."""

    @abc.abstractmethod
    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """Soft delete (the tombstone's version) or, with `force`, drop the history (None)."""

    @abc.abstractmethod
    def set_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: Any = UNSET,
        auto_update_strategy: Any = UNSET,
        allow_auto_update: Any = UNSET,
        allow_auto_update_with_replicator: Any = UNSET,
        validation_enforced: Any = UNSET,
        user: str = "",
    ) -> NamespacePolicy:
        """Change the given fields of a namespace's schema policies (§2.2); omitted fields stay as they are."""

    @abc.abstractmethod
    def set_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET, user: str = ""
    ) -> TopicPolicy:
        """Topic-level schema policies (§7.3); None or UNDEFINED removes the strategy."""

    @abc.abstractmethod
    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        """Create a tenant; False when it already existed."""

    @abc.abstractmethod
    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        """Create a namespace with default policies; False when it already existed."""

    @abc.abstractmethod
    def create_topic(self, topic: str, *, user: str = "") -> bool:
        """Create a topic; False when it already existed."""

    @abc.abstractmethod
    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        """Write attempts, newest first: all of them, or those about `target` (a topic, or a namespace or
        tenant with everything inside it). Refusals are included with their reason."""

    # --- reads ------------------------------------------------------------------------------------------

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        """Live versions oldest first (REST GET /schemas); with `include_deleted`, the whole index with
        tombstones and the versions before them."""
        name = TopicName.parse(topic)
        with self._view.snapshot():
            return self._view.history(name) if include_deleted else self._view.live(name)

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        """A namespace's stored schema policies; NamespaceNotFoundError when it does not exist."""
        ns = NamespaceName.parse(namespace)
        with self._view.snapshot():
            return self._view.namespace_policy(ns)

    def topic_policy(self, topic: str) -> TopicPolicy:
        """A topic's own schema policies (empty when it has none)."""
        name = policy_topic(topic, self.broker)
        with self._view.snapshot():
            return self._view.topic_policy(name)

    def effective_policy(self, topic: str) -> EffectivePolicy:
        """Each schema policy in force for a topic, and which level it comes from (§2.4)."""
        name = TopicName.parse(topic)
        with self._view.snapshot():
            return self._view.effective_policy(name)

    @property
    def requests_sent(self) -> int:
        """HTTP requests this handle has sent (retries included): 0 for an embedded registry. What benchmarks
        and tests count to hold a remote registry to its request budget."""
        return 0

    @property
    def records_clients(self) -> bool:
        """Whether this registry knows the producers and consumers and the schema each uses. A plain broker's
        admin API does not (its `clients()` is []): shells say so instead of showing an empty list."""
        return True

    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        """Recorded producers and consumers, of one topic or of all ([] from a plain broker, whose admin API
        has no record of them: see `records_clients`)."""
        topics = None if topic is None else [str(TopicName.parse(topic).base)]
        return self._view.storage.clients(topics)

    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        """The producers and consumers connected to `topic`, as a broker's topic stats list them (no schema
        versions: a broker does not tell them). Embedded, the recorded clients stand for the connected ones;
        remotely the broker's GET .../stats answers, from a plain broker too. TopicNotFoundError when the topic
        does not exist."""
        name = TopicName.parse(topic)
        base = str(name.base)
        if not self._view.storage.has_topic(base):
            raise TopicNotFoundError(f"Topic does not exist: {base}")
        connected = [
            ConnectedClient(
                topic=c.topic,
                role=c.role,
                name=c.name,
                subscription=c.subscription,
                connected_since=iso_millis(c.connected_at) if c.connected_at else "",
            )
            for c in self._view.storage.clients([base])
        ]
        return sorted(connected, key=lambda c: c.order)

    def tenants(self) -> list[str]:
        """Every tenant."""
        return self._view.storage.tenants()

    def namespaces(self, tenant: str) -> list[str]:
        """The namespaces of a tenant; TenantNotFoundError when it does not exist."""
        name = parse_tenant(tenant)
        with self._view.snapshot():
            if name not in self._view.storage.tenants():
                raise TenantNotFoundError(f"Tenant does not exist: {name}")
            return self._view.storage.namespaces(name)

    def topics(self, namespace: str) -> list[str]:
        """The topics of a namespace; NamespaceNotFoundError when it does not exist."""
        ns = NamespaceName.parse(namespace)
        with self._view.snapshot():
            self._view.namespace_policy(ns)
            return self._view.storage.topics(str(ns))

    # --- explanations, diffs, what-if ------------------------------------------------------------------

    @bounded
    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        """Semantic and textual diff between two live versions, or a version and a candidate (new=None:
        the latest live version)."""
        name = TopicName.parse(topic)
        with self._view.snapshot():
            return diff_schemas(str(name.base), self._side(name, old), self._side(name, new))

    @bounded
    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        """Pulsar's answer to `info` on `topic` under each of the 8 strategies, with the effective verdict,
        simulated registration and admission (nothing is written), advisories, the diff against the latest
        version and the upgrade order."""
        name = TopicName.parse(topic)
        info = checked_info(info)
        with self._view.snapshot():
            return what_if(self._view, name, info)

    @bounded
    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        """Order in which to move the topic's recorded clients to `target` (a live version or a candidate;
        default: the latest version) so that every reader can read every writer at each step."""
        name = TopicName.parse(topic)
        with self._view.snapshot():
            return upgrade_plan(self._view, name, self._view.live(name), self._side(name, target)[1])

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        """What setting `strategy` on a namespace would have refused: per topic, the live registrations that
        would not have passed (replaying each against the versions before it) and the recorded consumers
        that could no longer subscribe. Topics with their own strategy are reported as overridden."""
        ns = NamespaceName.parse(namespace)
        proposed = CompatibilityStrategy.parse(strategy)
        if proposed is CompatibilityStrategy.UNDEFINED:
            raise PolicyError("choose one of the 8 strategies to preview; UNDEFINED only clears the namespace value")
        with self._view.snapshot():
            return policy_impact(self._view, ns, proposed, self.topics(str(ns)))

    def preview_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: Any = UNSET,
        auto_update_strategy: Any = UNSET,
        allow_auto_update: Any = UNSET,
        allow_auto_update_with_replicator: Any = UNSET,
        validation_enforced: Any = UNSET,
    ) -> PolicyPreview:
        """What `set_namespace_policy` with the same arguments would change and refuse, writing nothing: per
        topic of the namespace, the values in force now and then, the live registrations the proposed strategy
        would refuse, the recorded clients that could no longer connect, and the topics it does not reach
        (registry/policy/_preview.py). Values are checked as saving checks them."""
        ns = NamespaceName.parse(namespace)
        with self._view.snapshot():
            return preview_namespace(
                self._view,
                ns,
                compatibility=compatibility,
                auto_update_strategy=auto_update_strategy,
                allow_auto_update=allow_auto_update,
                allow_auto_update_with_replicator=allow_auto_update_with_replicator,
                validation_enforced=validation_enforced,
            )

    def preview_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET
    ) -> PolicyPreview:
        """What `set_topic_policy` with the same arguments would change and refuse on that topic, writing
        nothing (see preview_namespace_policy)."""
        with self._view.snapshot():
            return preview_topic(
                self._view, topic, compatibility=compatibility, validation_enforced=validation_enforced
            )

    def _side(self, name: TopicName, ref: int | SchemaInfo | None) -> tuple[int | str, SchemaData]:
        if ref is None or isinstance(ref, SchemaInfo):
            return diff_side(self._view, name, ref)
        return diff_side(self._view, name, version_number(ref, negative=True))

    # --- catalog ----------------------------------------------------------------------------------------

    def change_token(self) -> int:
        """A number that changes whenever anything in the registry changes, from any process; cheap to read,
        so shells key their caches on it. Backends that cannot tell (remote ones) change it every few
        seconds and after this handle's own writes."""
        return self._catalog.change_token()

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        """One page of the topics matching `query` (all topics when None), in tenant, namespace, topic order.

        Served from a catalog built once per change of the registry (one backend read for every topic) and
        searched in memory, so a page of 100k topics answers in milliseconds once built."""
        with self._view.snapshot():
            return self._catalog.search(query, offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        """The catalog row of one topic (404-style TopicNotFoundError when the topic does not exist)."""
        name = TopicName.parse(topic)
        with self._view.snapshot():
            return self._catalog.summary(name)

    # --- a plain broker's search index (remote/_broker_index.py) ------------------------------------------

    def index_status(self) -> IndexStatus | None:
        """Where the background search index of a plain broker stands; None when this registry searches
        without one (embedded, or `schema-explorer serve`, which searches itself)."""
        return None

    def refresh_index(self) -> IndexStatus | None:
        """Start reading the broker again in the background (a no-op while a run goes on); None as above."""
        return None

    def cancel_index(self) -> IndexStatus | None:
        """Stop the running index: what it read stays cached, and the next refresh resumes; None as above."""
        return None
