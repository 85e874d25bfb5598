"""`SchemaRegistry`: the one handle type every shell holds, whatever kind of registry is behind it.

`registry.open(location)` returns one for every kind of location: an embedded `Registry` (a SQLite file, memory,
PostgreSQL or a storage of your own), a `RemoteRegistry` (a Pulsar admin API: a broker or `schema-explorer
serve`), and, with `read_only=True` or `handle.read_only()`, a `ReadOnlyRegistry` that answers every read and
refuses every write. The app, the server, the CLI, the pipeline and notebooks are typed against this class, so
a type checker sees exactly what every kind offers, and a shell never needs to know which it holds.

Every member is documented here: the contract. The abstract ones are what each kind answers for itself; the
others follow from them here (the Pulsar line's name and source from `pulsar`, the keyword policy calls from
`set_policy` and `preview_policy`; no search index and no HTTP requests unless a handle has them). Proposals,
webhooks and a plain broker's search index are small interfaces of their own, reached as `reg.proposals`,
`reg.webhooks` and `reg.broker_index`. `_facade.py` implements the reads and the explanations once for both
registries over their `RegistryState`; `_registry.py` and `remote/_handle.py` implement the writes where their
backend decides; `_forwarding.py` forwards every member to another handle, and `_read_only.py` builds on it to
refuse the writes. What only an embedded registry can do (recording producers and consumers, group commits, the
stored Pulsar line) is on `Registry` alone.
"""

from __future__ import annotations

import abc
from types import TracebackType
from typing import Self

from ._audit import AuditEntry
from ._catalog import BrokerIndex, TopicPage, TopicQuery, TopicSummary
from ._changes import SchemaDiff
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
from ._pulsar_version import PulsarChoice, PulsarLine
from .explain._preview import PolicyPreview
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._changes import NamespacePolicyChange, P, PolicyChange, TopicPolicyChange
from .policy._rules import UNSET, AutoUpdateChange, ClearableFlagChange, FlagChange, StrategyChange
from .proposals._handle import Proposals
from .webhooks._handle import Webhooks


class SchemaRegistry(abc.ABC):
    """A Pulsar-faithful schema registry: what every registry handle answers, embedded, remote or read-only."""

    __slots__ = ()

    # --- which Pulsar, which backend -------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def pulsar(self) -> PulsarChoice:
        """The Pulsar release line whose rules this handle answers with (docs/guide/fidelity.md "Which Pulsar"),
        and where it comes from; the three members below read it."""

    @property
    def pulsar_line(self) -> PulsarLine:
        """The Pulsar release line whose rules this handle answers with."""
        return self.pulsar.line

    @property
    def pulsar_version(self) -> str:
        """The name of that line ("3.0", "4.0", "master")."""
        return self.pulsar.line.name

    @property
    def pulsar_version_source(self) -> str:
        """Where the line comes from: asked when opened, stored with the registry, the default, or (remote)
        what the broker reports."""
        return self.pulsar.source

    @property
    @abc.abstractmethod
    def broker(self) -> BrokerConfig:
        """The broker settings the rules read (defaults, or what a remote broker reports)."""

    @property
    @abc.abstractmethod
    def location(self) -> str:
        """The registry file's path, ":memory:", a database location without its password, or the admin
        endpoint's URL."""

    @property
    def is_read_only(self) -> bool:
        """True when every write of this handle raises ReadOnlyError before touching anything: a handle is one
        only when it is a ReadOnlyRegistry (_read_only.py), which says so, or forwards to one."""
        return False

    @abc.abstractmethod
    def read_only(self) -> SchemaRegistry:
        """A handle on the same registry that answers every read and raises ReadOnlyError on every write (the
        app's --read-only holds only such a handle, so no page can write)."""

    @property
    def requests_sent(self) -> int:
        """HTTP requests this handle has sent (retries included). What benchmarks and tests count to hold a
        remote registry to its request budget: a handle that sends none (an embedded registry) answers 0, a
        remote one counts its own."""
        return 0

    @property
    @abc.abstractmethod
    def records_clients(self) -> bool:
        """Whether this registry knows the producers and consumers and the schema each uses. A plain broker's
        admin API does not (its `clients()` is []): shells say so instead of showing an empty list."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the backend (a database connection, an HTTP client)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    # --- schemas: where the backend decides --------------------------------------------------------------

    @abc.abstractmethod
    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        """REST POST /schema (§3.3): dedup, check with the admin effective strategy, store. The version `info`
        is stored as, or the live duplicate's, and whether anything was stored (`Registration.stored`).

        Raises IncompatibleSchemaError (with `.result`), InvalidSchemaError or PoisonedHistoryError;
        ProposalsRequiredError where the namespace's review rules require proposals (as for every direct schema
        or policy write: delete and the policy setters too)."""

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
        """REST POST /version (§3.4): the first live version with the same type and identical bytes, or None."""

    @abc.abstractmethod
    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """Soft delete appends a tombstone and returns its version (§3.5); `force` drops the history and
        returns None, after which numbering restarts at 0."""

    # --- policies and creation ----------------------------------------------------------------------------

    @abc.abstractmethod
    def set_policy(self, target: str, change: PolicyChange[P], *, expected: P | None = None, user: str = "") -> P:
        """Change a namespace's ("tenant/ns": a NamespacePolicyChange, §2.2) or a topic's (a TopicPolicyChange,
        §7.3) schema policies: the fields the change sets, the others stay as they are. With `expected` (the
        policy the caller previewed the change against), nothing is saved and PolicyChangedError is raised when
        the stored policy is no longer that one: another write got there first. The policy stored after."""

    def set_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: StrategyChange = UNSET,
        auto_update_strategy: AutoUpdateChange = UNSET,
        allow_auto_update: ClearableFlagChange = UNSET,
        allow_auto_update_with_replicator: FlagChange = UNSET,
        validation_enforced: FlagChange = UNSET,
        expected: NamespacePolicy | None = None,
        user: str = "",
    ) -> NamespacePolicy:
        """Change the given fields of a namespace's schema policies (§2.2); omitted fields stay as they are.

        `compatibility=UNDEFINED` clears the strategy; `auto_update_strategy=None` and `allow_auto_update=None`
        clear theirs (fall back to the next level). `expected` as for `set_policy`, which this calls with a
        NamespacePolicyChange of the same fields."""
        change = NamespacePolicyChange(
            compatibility=compatibility,
            auto_update_strategy=auto_update_strategy,
            allow_auto_update=allow_auto_update,
            allow_auto_update_with_replicator=allow_auto_update_with_replicator,
            validation_enforced=validation_enforced,
        )
        return self.set_policy(namespace, change, expected=expected, user=user)

    def set_topic_policy(
        self,
        topic: str,
        *,
        compatibility: StrategyChange = UNSET,
        validation_enforced: ClearableFlagChange = UNSET,
        expected: TopicPolicy | None = None,
        user: str = "",
    ) -> TopicPolicy:
        """Topic-level schema policies (§7.3); None or UNDEFINED removes the strategy. `expected` as for
        `set_policy`, which this calls with a TopicPolicyChange of the same fields."""
        change = TopicPolicyChange(compatibility=compatibility, validation_enforced=validation_enforced)
        return self.set_policy(topic, change, expected=expected, user=user)

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

    @abc.abstractmethod
    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        """Live versions oldest first (REST GET /schemas); with `include_deleted`, the whole index with
        tombstones and the versions before them."""

    @abc.abstractmethod
    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        """A namespace's stored schema policies; NamespaceNotFoundError when it does not exist."""

    @abc.abstractmethod
    def topic_policy(self, topic: str) -> TopicPolicy:
        """A topic's own schema policies (empty when it has none)."""

    @abc.abstractmethod
    def effective_policy(self, topic: str) -> EffectivePolicy:
        """Each schema policy in force for a topic, and which level it comes from (§2.4)."""

    @abc.abstractmethod
    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        """Recorded producers and consumers, of one topic or of all ([] from a plain broker, whose admin API
        has no record of them: see `records_clients`)."""

    @abc.abstractmethod
    def connected_clients(self, topic: str) -> list[ConnectedClient]:
        """The producers and consumers connected to `topic`, as a broker's topic stats list them (no schema
        versions: a broker does not tell them). Embedded, the recorded clients stand for the connected ones;
        remotely the broker's GET .../stats answers. TopicNotFoundError when the topic does not exist."""

    @abc.abstractmethod
    def tenants(self) -> list[str]:
        """Every tenant."""

    @abc.abstractmethod
    def namespaces(self, tenant: str) -> list[str]:
        """The namespaces of a tenant; TenantNotFoundError when it does not exist."""

    @abc.abstractmethod
    def topics(self, namespace: str) -> list[str]:
        """The topics of a namespace; NamespaceNotFoundError when it does not exist."""

    # --- explanations, diffs, what-if ------------------------------------------------------------------

    @abc.abstractmethod
    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        """Semantic and textual diff between two live versions, or a version and a candidate (new=None: the
        latest live version)."""

    @abc.abstractmethod
    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        """Pulsar's answer to `info` on `topic` under each of the 8 strategies, with the effective verdict,
        simulated registration and admission (nothing is written), advisories, the diff against the latest
        version and the upgrade order."""

    @abc.abstractmethod
    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        """Order in which to move the topic's recorded clients to `target` (a live version or a candidate;
        default: the latest version) so that every reader can read every writer at each step."""

    @abc.abstractmethod
    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        """What setting `strategy` on a namespace would have refused: per topic, the live registrations that
        would not have passed (replaying each against the versions before it) and the recorded consumers that
        could no longer subscribe. Topics with their own strategy are reported as overridden."""

    @abc.abstractmethod
    def preview_policy(self, target: str, change: NamespacePolicyChange | TopicPolicyChange) -> PolicyPreview:
        """What `set_policy` with the same change would change and refuse, writing nothing: per topic it reaches,
        the values in force now and then, the live registrations the proposed strategy would refuse, the
        recorded clients that could no longer connect, and the topics it does not reach
        (registry/explain/_preview.py). Values are checked as saving checks them; `PolicyPreview.before` is the
        policy to pass back as `expected` when saving."""

    def preview_namespace_policy(
        self,
        namespace: str,
        *,
        compatibility: StrategyChange = UNSET,
        auto_update_strategy: AutoUpdateChange = UNSET,
        allow_auto_update: ClearableFlagChange = UNSET,
        allow_auto_update_with_replicator: FlagChange = UNSET,
        validation_enforced: FlagChange = UNSET,
    ) -> PolicyPreview:
        """What `set_namespace_policy` with the same arguments would change and refuse, writing nothing (see
        preview_policy)."""
        change = NamespacePolicyChange(
            compatibility=compatibility,
            auto_update_strategy=auto_update_strategy,
            allow_auto_update=allow_auto_update,
            allow_auto_update_with_replicator=allow_auto_update_with_replicator,
            validation_enforced=validation_enforced,
        )
        return self.preview_policy(namespace, change)

    def preview_topic_policy(
        self, topic: str, *, compatibility: StrategyChange = UNSET, validation_enforced: ClearableFlagChange = UNSET
    ) -> PolicyPreview:
        """What `set_topic_policy` with the same arguments would change and refuse on that topic, writing
        nothing (see preview_policy)."""
        return self.preview_policy(
            topic, TopicPolicyChange(compatibility=compatibility, validation_enforced=validation_enforced)
        )

    # --- catalog ----------------------------------------------------------------------------------------

    @abc.abstractmethod
    def change_token(self) -> int:
        """A number that changes whenever anything in the registry changes, from any process; cheap to read,
        so shells key their caches on it. Backends that cannot tell (remote ones) change it every few seconds
        and after this handle's own writes."""

    @abc.abstractmethod
    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        """One page of the topics matching `query` (all topics when None), in tenant, namespace, topic order.

        Served from a catalog built once per change of the registry (one backend read for every topic) and
        searched in memory, so a page of 100k topics answers in milliseconds once built."""

    @abc.abstractmethod
    def topic_summary(self, topic: str) -> TopicSummary:
        """The catalog row of one topic (TopicNotFoundError when the topic does not exist)."""

    # --- schema change proposals (registry/proposals/) -------------------------------------------------------

    @property
    @abc.abstractmethod
    def proposals(self) -> Proposals:
        """The registry's schema change proposals (registry/proposals/_handle.py): propose, review, approve,
        apply. A plain broker's are kept in its workspace (`workspace`)."""

    # --- notifications (registry/webhooks/) -------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def webhooks(self) -> Webhooks:
        """The registry's webhooks (registry/webhooks/_handle.py): list, add, remove. A plain broker's are kept
        in its workspace (`workspace`)."""

    # --- a plain broker's search index (remote/_broker_index.py) ------------------------------------------

    @property
    def broker_index(self) -> BrokerIndex | None:
        """The background search index of a plain broker (status, refresh, cancel), a capability only a handle
        on a plain broker has (remote/_broker_index.py), so this is None unless that handle says otherwise:
        embedded registries and `schema-explorer serve` search without one."""
        return None

    @property
    def workspace(self) -> str | None:
        """Where a plain broker's proposals, review rules, audit trail and webhooks are kept (remote/_workspace.py;
        a database location without its password), a capability only a handle on a plain broker has: None for
        embedded registries and `schema-explorer serve`, which keep them in their own storage."""
        return None
