"""The registry facade: Pulsar's broker-side schema registry, embedded (architecture.md, the contract).

Every flow follows pulsar-semantics.md: register = REST POST /schema (§3.3), check = POST /compatibility
(§3.4), admission = the binary protocol's producer and consumer paths (§8), policies = §2.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar, cast

from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._avro_schema import AvroSchema
from ._cache_budget import CANDIDATES
from ._catalog import (
    Catalog,
    CatalogStorage,
    TopicPage,
    TopicQuery,
    TopicSummary,
    read_fields,
)
from ._changes import SchemaDiff
from ._compatibility import Versioned, can_read, check_with_all, check_with_latest, invalid_default_advisories
from ._diff import diff_schemas
from ._errors import (
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    NamespaceNotFoundError,
    PartitionPolicyError,
    PoisonedHistoryError,
    PolicyError,
    RegistryError,
    RegistryNotFoundError,
    SchemaNotFoundError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
    TopicPoliciesDisabledError,
)
from ._json_legacy import jackson_schema
from ._model import (
    STRATEGIES,
    Admission,
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    Effective,
    EffectivePolicy,
    NamespacePolicy,
    PolicySource,
    Problem,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._paths import remote_url
from ._policy_preview import PolicyPreview, StagedPolicies, describe_changes, preview
from ._pulsar_version import PROFILES, PULSAR_VERSION_SETTING, PulsarProfile, in_force, profile, using
from ._read_only import ReadOnlyRegistry
from ._schema_data import parse_avro_data, to_schema_data
from ._sqlite import SqliteStorage
from ._storage import (
    AuditLog,
    ChangeTracking,
    Fingerprint,
    IndexedHistory,
    MemoryStorage,
    StaleHistory,
    Storage,
    Transactional,
)
from ._text import readable
from ._types import AVRO_PARSED_TYPES, SCHEMALESS_CLIENT_TYPES, SchemaData, SchemaType
from ._upgrade import UpgradePlan, change_order, plan_upgrade, strategy_order
from ._whatif import PolicyImpact, RefusedClient, TopicImpact, WhatIf

S = CompatibilityStrategy


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final[Any] = _Unset()
_MAX_ATTEMPTS = 200
_UNTRACKED_TTL_S = 5  # how long a storage without change tracking may serve a cached catalog
# §8.2: for these topic strategies a consumer only has to read the latest version (checked as BACKWARD).
_CONSUMER_READS_LATEST = frozenset({S.BACKWARD, S.FORWARD, S.FORWARD_TRANSITIVE, S.FULL})
_NO_SCHEMA_ENFORCED = (
    "Producers cannot connect or send message without a schema to topics with a schema"
    "when SchemaValidationEnforced is enabled"
)
_AUTO_UPDATE_DISABLED = "Schema not found and schema auto updating is disabled."


def _stored_profile(stored: str | None) -> PulsarProfile:
    """The profile a registry's stored setting names (the default when none is stored)."""
    try:
        return profile(stored)
    except InvalidArgumentError:  # written by a newer release with a profile this one lacks
        raise StorageError(
            f"this registry answers as the Pulsar version profile {stored!r}, which this release does not "
            f"know (it knows {', '.join(PROFILES)}): open it with pulsar_version=... or upgrade"
        ) from None


def _parse_stored(kind: SchemaType, data: bytes) -> AvroSchema | None:
    """A stored AVRO/JSON/PROTOBUF version as the duplicate check parses it; None for a JSON version in the
    legacy Jackson form under a profile that took it (3.0/4.0): it equals no Avro schema."""
    try:
        return parse_avro_data(kind, data)
    except InvalidSchemaError:
        if kind is SchemaType.JSON and in_force().legacy_json and jackson_schema(data) is not None:
            return None
        raise


def stored_type(kind: SchemaType) -> SchemaType:
    """The broker stores every negative Java type (BYTES; AUTO* never get this far) as NONE (§1)."""
    return SchemaType.NONE if kind.java_value < 0 else kind


def trim(entries: Sequence[SchemaVersion]) -> list[SchemaVersion]:
    """Entries strictly after the last tombstone (§3.2): the only ones that exist for any purpose."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].deleted:
            return list(entries[i + 1 :])
    return list(entries)


def _trim_fingerprints(prints: Sequence[Fingerprint]) -> Sequence[Fingerprint]:
    """`trim` for fingerprints."""
    for i in range(len(prints) - 1, -1, -1):
        if prints[i].deleted:
            return prints[i + 1 :]
    return prints


def _versioned(entries: Sequence[SchemaVersion]) -> list[Versioned]:
    return [Versioned(e.version, SchemaData(e.type, e.data, e.properties)) for e in entries]


F = TypeVar("F", bound=Callable[..., Any])


def _bounded(method: F) -> F:
    """The facade calls that work on candidate schemas: large candidates in work at once are bounded by bytes
    (registry/_cache_budget.py), so a storm of them cannot hold the memory of all of them at once; and they
    answer with the rules of the registry's Pulsar version profile (registry/_pulsar_version.py)."""

    @functools.wraps(method)
    def bounded(self: Registry, *args: Any, **kwargs: Any) -> Any:
        size = sum(len(a.schema) for a in (*args, *kwargs.values()) if isinstance(a, SchemaInfo))
        with CANDIDATES.admit(size), using(self.pulsar_profile):
            return method(self, *args, **kwargs)

    return cast(F, bounded)


class Registry:
    """A Pulsar-faithful schema registry over a storage (embedded SQLite by default)."""

    def __init__(
        self,
        storage: Storage,
        *,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        location: str = ":memory:",
        clock: Callable[[], int] | None = None,
        pulsar_version: str | None = None,
    ) -> None:
        self._storage = storage
        # The profile this handle answers as: the one asked for, else the one stored with the registry.
        self._asked = bool(pulsar_version)
        if pulsar_version:
            self._profile, self._profile_source = profile(pulsar_version), "asked when opened"
        else:
            self._follow_stored_profile()
        self._broker = broker or BrokerConfig()
        self._auto_create = auto_create
        self._location = location
        self._clock = clock or (lambda: time.time_ns() // 1_000_000)
        self._own_writes = 0
        self._catalog_cache: Catalog | None = None
        self._catalog_lock = threading.Lock()
        self._fields_memo: dict[tuple[str, int, int], tuple[tuple[str, ...], str]] = {}  # (id, version, hash)

    # --- opening ----------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str],
        *,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        token: str | None = None,
        create: bool = False,
        pulsar_version: str | None = None,
    ) -> Registry:
        """Open an embedded registry file, or a remote admin endpoint named by an http(s) URL (a broker's web
        service or `schema-explorer serve`, reached with `token` as a bearer token).

        A file that does not exist raises RegistryNotFoundError unless `create=True`: reading, checking or
        diffing against a registry made on the spot would answer from an empty history (fail closed).

        `pulsar_version` ("3.0", "4.0", "master") is the broker line to answer as; None takes the one stored with
        the registry (default "master"), or for a URL the one the broker reports. A new file stores it; an
        existing file keeps its own (`set_pulsar_version` changes that) and this handle answers as asked."""
        text = os.fspath(target)
        url = remote_url(text)
        if url is not None:
            from ._remote import RemoteRegistry  # httpx is only imported when a URL is opened

            return RemoteRegistry(
                url, token=token, broker=broker, auto_create=auto_create, pulsar_version=pulsar_version
            )
        if token is not None:
            raise StorageError("a token only applies to remote registries (http:// or https:// URLs)")
        if not text.strip():
            raise StorageError("no registry location given (an empty path)")
        path = Path(text).expanduser()
        if path.is_dir():
            raise StorageError(f"cannot open {text!r}: it is a directory, not a registry file")
        new = not path.exists()
        if not create and new:
            raise RegistryNotFoundError(f"no registry at {text}: pass create=True to make a new one")
        chosen = profile(pulsar_version).name if pulsar_version else None  # a bad name stores nothing
        storage = SqliteStorage(path)
        if new and chosen:
            storage.put_setting(PULSAR_VERSION_SETTING, chosen)
        return cls(storage, broker=broker, auto_create=auto_create, location=str(path), pulsar_version=chosen)

    @classmethod
    def in_memory(
        cls, *, broker: BrokerConfig | None = None, auto_create: bool = True, pulsar_version: str | None = None
    ) -> Registry:
        storage = MemoryStorage()
        if pulsar_version:
            storage.put_setting(PULSAR_VERSION_SETTING, profile(pulsar_version).name)
        return cls(storage, broker=broker, auto_create=auto_create)

    # --- which Pulsar -------------------------------------------------------------------------------------

    @property
    def pulsar_profile(self) -> PulsarProfile:
        """The Pulsar release line whose rules this handle answers with (README "Which Pulsar")."""
        return self._profile

    @property
    def pulsar_version(self) -> str:
        return self._profile.name

    @property
    def pulsar_version_source(self) -> str:
        """Where the profile comes from: asked when opened, stored with the registry, the default, or (remote)
        what the broker reports."""
        return self._profile_source

    def _follow_stored_profile(self) -> None:
        """Answer as the profile stored with the registry (at open, and after a snapshot import stored one),
        unless this handle was opened asking for a line."""
        if self._asked:
            return
        stored = self._storage.setting(PULSAR_VERSION_SETTING)
        self._profile = _stored_profile(stored)
        self._profile_source = "stored with the registry" if stored else "the default (none stored)"

    def stored_pulsar_version(self) -> str:
        """The profile stored with the registry (what a handle opened without `pulsar_version` answers as)."""
        return _stored_profile(self._storage.setting(PULSAR_VERSION_SETTING)).name

    def set_pulsar_version(self, version: str, *, user: str = "") -> str:
        """Store the Pulsar version profile the registry answers as, for every handle opened after (and this one)."""
        with self._audited(AuditAction.SET_PULSAR_VERSION, "registry", user) as note:
            before = self.stored_pulsar_version()
            chosen = profile(version)
            self._storage.put_setting(PULSAR_VERSION_SETTING, chosen.name)
            note.detail = f"Pulsar version profile {before} → {chosen.name}"
            note.outcome = AuditOutcome.OK if before != chosen.name else AuditOutcome.UNCHANGED
        self._profile = chosen  # once stored: a failed write leaves the handle as it was
        self._profile_source = "stored with the registry"
        return chosen.name

    @property
    def broker(self) -> BrokerConfig:
        return self._broker

    @property
    def location(self) -> str:
        """The registry file's path, or ":memory:"."""
        return self._location

    def close(self) -> None:
        self._storage.close()

    @property
    def is_read_only(self) -> bool:
        """False: this handle writes. `read_only()` gives a view that refuses every write."""
        return False

    def read_only(self) -> ReadOnlyRegistry:
        """A view of this registry that answers every read and raises ReadOnlyError on every write (the app's
        --read-only holds only such a view, so no page can write)."""
        return ReadOnlyRegistry(self)

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Registry({self._location!r})"

    # --- schemas ----------------------------------------------------------------------------------------

    @_bounded
    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> int:
        """REST POST /schema (§3.3): dedup, check with the admin effective strategy, store. Ignores auto-update.

        Raises IncompatibleSchemaError (with `.result`), InvalidSchemaError or PoisonedHistoryError.
        """
        with self._audited(AuditAction.REGISTER, topic, user) as note:
            note.input = info.schema if isinstance(info, SchemaInfo) else None
            name = TopicName.parse(topic)
            note.target = str(name.base)
            data = to_schema_data(_info(info))
            self._ensure_topic(name)
            strategy = self._admin_strategy(name).value
            version, stored, _ = self._put_if_absent(name, data, strategy, user)
            note.detail = (
                f"{data.type} schema stored as version {version}"
                if stored
                else (f"identical to live version {version}: nothing stored")
            )
            note.outcome = AuditOutcome.OK if stored else AuditOutcome.UNCHANGED
        return version

    @_bounded
    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        """REST POST /compatibility (§3.4): validate, then the latest or (transitive) every live version.

        No dedup. `strategy=None` uses the topic's effective strategy.
        """
        name = TopicName.parse(topic)
        self._require_namespace(name)
        data = to_schema_data(_info(info))
        chosen = self._resolve_strategy(name, strategy)
        return self._check(self._live(name), data, chosen)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        """The latest live version, or a given version if it is live (§3.6); SchemaNotFoundError otherwise."""
        name = TopicName.parse(topic)
        entries = self._storage.history(name.schema_id)
        if version is None:
            if not entries or entries[-1].deleted:
                raise SchemaNotFoundError(f"Schema not found: topic {name} has no schema")
            return entries[-1]
        wanted = _version_number(version, negative=True)
        for entry in trim(entries):
            if entry.version == wanted:
                return entry
        raise SchemaNotFoundError(f"Schema not found: topic {name} has no live version {wanted}")

    def history(self, topic: str, *, include_deleted: bool = False) -> list[SchemaVersion]:
        """Live versions oldest first (REST GET /schemas); with `include_deleted`, the whole index with
        tombstones and the versions before them."""
        entries = self._storage.history(TopicName.parse(topic).schema_id)
        return entries if include_deleted else trim(entries)

    @_bounded
    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        """REST POST /version (§3.4): the first live version with the same type and identical bytes, or None."""
        name = TopicName.parse(topic)
        self._require_namespace(name)
        data = to_schema_data(_info(info), validate=False)
        for entry in self._live(name):
            if entry.type is data.type and entry.data == data.data:
                return entry.version
        return None

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """Soft delete appends a tombstone and returns its version (always, §3.5); force drops the history
        and returns None, after which numbering restarts at 0."""
        with self._audited(AuditAction.DELETE, topic, user) as note:
            name = TopicName.parse(topic)
            note.target = str(name.base)
            if force:
                dropped = self._storage.drop(name.schema_id)
                note.detail = "force: the whole history dropped" if dropped else "force: there was no history"
                note.outcome = AuditOutcome.OK if dropped else AuditOutcome.UNCHANGED
                return None
            version = self._soft_delete(name, user)
            note.detail = f"soft delete: deletion marker stored as version {version}"
        return version

    def _soft_delete(self, name: TopicName, user: str) -> int:
        self._ensure_topic(name)
        for _ in range(_MAX_ATTEMPTS):
            entries = self._storage.history(name.schema_id)
            latest = entries[-1].version if entries else None
            tombstone = SchemaVersion(
                topic=name.schema_id,
                version=_next_version(entries),
                type=SchemaType.NONE,
                data=b"",
                properties={},
                timestamp=self._clock(),
                deleted=True,
                user=user,
            )
            try:
                self._storage.append(tombstone, latest)
                return tombstone.version
            except StaleHistory:
                continue
        raise StorageError(f"could not delete the schema of {name}: too many concurrent writers")

    # --- policies ---------------------------------------------------------------------------------------

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
        """Change the given fields of a namespace's schema policies (§2.2); omitted fields stay as they are.

        `compatibility=UNDEFINED` clears the strategy; `auto_update_strategy=None` and `allow_auto_update=None`
        clear theirs (fall back to the next level).
        """
        fields = dict(
            compatibility=compatibility,
            auto_update_strategy=auto_update_strategy,
            allow_auto_update=allow_auto_update,
            allow_auto_update_with_replicator=allow_auto_update_with_replicator,
            validation_enforced=validation_enforced,
        )
        with self._audited(AuditAction.SET_NAMESPACE_POLICY, namespace, user) as note:
            note.detail = _asked(fields)
            ns = NamespaceName.parse(namespace)
            note.target = str(ns)
            before = self._storage.namespace_policy(str(ns))
            after = self._set_namespace_policy(ns, **fields)
            note.detail = _policy_change(before or NamespacePolicy(), after)
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def _set_namespace_policy(
        self,
        ns: NamespaceName,
        *,
        compatibility: Any,
        auto_update_strategy: Any,
        allow_auto_update: Any,
        allow_auto_update_with_replicator: Any,
        validation_enforced: Any,
    ) -> NamespacePolicy:
        current = self._namespace(ns, create=self._auto_create)
        changes: dict[str, Any] = {}
        if compatibility is not UNSET:
            changes["compatibility"] = (
                S.UNDEFINED if compatibility is None else CompatibilityStrategy.parse(compatibility)
            )
        if auto_update_strategy is not UNSET:
            changes["auto_update_strategy"] = (
                None if auto_update_strategy is None else AutoUpdateStrategy.parse(auto_update_strategy)
            )
        if allow_auto_update is not UNSET:
            changes["allow_auto_update"] = _optional_bool("allow_auto_update", allow_auto_update)
        if allow_auto_update_with_replicator is not UNSET:
            changes["allow_auto_update_with_replicator"] = _bool(
                "allow_auto_update_with_replicator", allow_auto_update_with_replicator
            )
        if validation_enforced is not UNSET:
            changes["validation_enforced"] = _bool("validation_enforced", validation_enforced)
        if changes.get("allow_auto_update") is True and changes.get("allow_auto_update_with_replicator") is False:
            # NamespacesBase: allowing auto-update while refusing it to the replicator is a 400.
            raise PolicyError("allow_auto_update=True cannot be combined with allow_auto_update_with_replicator=False")
        policy = replace(current, **changes)
        self._storage.put_namespace(str(ns), policy, self._clock())
        return policy

    def namespace_policy(self, namespace: str) -> NamespacePolicy:
        return self._namespace(NamespaceName.parse(namespace), create=False)

    def set_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET, user: str = ""
    ) -> TopicPolicy:
        """Topic-level schema policies (§7.3); None or UNDEFINED removes the strategy."""
        fields = dict(compatibility=compatibility, validation_enforced=validation_enforced)
        with self._audited(AuditAction.SET_TOPIC_POLICY, topic, user) as note:
            note.detail = _asked(fields)
            note.target = _topic_target(topic)
            before = self._storage.topic_policy(note.target) or TopicPolicy()
            after = self._set_topic_policy(topic, **fields)
            note.detail = _policy_change(before, after)
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def _set_topic_policy(self, topic: str, *, compatibility: Any, validation_enforced: Any) -> TopicPolicy:
        name = self._policy_topic(topic)
        self._ensure_topic(name)
        current = self._storage.topic_policy(str(name)) or TopicPolicy()
        changes: dict[str, Any] = {}
        if compatibility is not UNSET:
            strategy = None if compatibility is None else CompatibilityStrategy.parse(compatibility)
            changes["compatibility"] = None if strategy is S.UNDEFINED else strategy
        if validation_enforced is not UNSET:
            changes["validation_enforced"] = _optional_bool("validation_enforced", validation_enforced)
        policy = replace(current, **changes)
        empty = policy == TopicPolicy()
        self._storage.put_topic_policy(str(name), None if empty else policy)
        return policy

    def topic_policy(self, topic: str) -> TopicPolicy:
        name = self._policy_topic(topic)
        return self._storage.topic_policy(str(name)) or TopicPolicy()

    def effective_policy(self, topic: str) -> EffectivePolicy:
        """Each schema policy in force for a topic, and which level it comes from (§2.4)."""
        name = TopicName.parse(topic)
        ns_policy = self._storage.namespace_policy(str(name.namespace_name)) or NamespacePolicy()
        topic_policy = self._storage.topic_policy(str(name.base)) or TopicPolicy()
        admin = self._admin_strategy(name)
        system = name.is_system_topic
        connection = Effective(self._broker.system_topic_compatibility, PolicySource.SYSTEM_TOPIC) if system else admin
        if system:
            auto_update = Effective(True, PolicySource.SYSTEM_TOPIC)
        else:
            auto_update = namespace_allow_auto_update(ns_policy, self._broker)
        # ServerCnx: broker flag OR the topic's value (topic policy, else the namespace flag).
        if self._broker.validation_enforced:
            enforced = Effective(True, PolicySource.BROKER_DEFAULT)
        elif topic_policy.validation_enforced is not None:
            enforced = Effective(topic_policy.validation_enforced, PolicySource.TOPIC)
        elif ns_policy.validation_enforced:
            enforced = Effective(True, PolicySource.NAMESPACE)
        else:
            enforced = Effective(False, PolicySource.BROKER_DEFAULT)
        return EffectivePolicy(
            topic=str(name.base),
            compatibility=connection,
            admin_compatibility=admin,
            allow_auto_update=auto_update,
            validation_enforced=enforced,
            is_system_topic=system,
        )

    # --- admission (§8) ---------------------------------------------------------------------------------

    @_bounded
    def connect_producer(
        self, topic: str, info: SchemaInfo | None, *, name: str, replicator: bool = False, user: str = ""
    ) -> Admission:
        """Would the broker let this producer in (§8.1)? Accepted producers are recorded as connected."""
        topic_name = TopicName.parse(topic)
        client_name = _client_name(name)
        with self._atomic():
            self._ensure_topic(topic_name)
            admission, kind = self._admit_producer(topic_name, info, replicator, user, dry_run=False)
            if admission.accepted:
                self._record(topic_name, ClientRole.PRODUCER, client_name, "", kind, admission.version, replicator)
        return admission

    @_bounded
    def connect_consumer(
        self, topic: str, info: SchemaInfo | None, *, subscription: str, name: str = "", user: str = ""
    ) -> Admission:
        """Would the broker let this consumer subscribe (§8.2)? Accepted consumers are recorded."""
        topic_name = TopicName.parse(topic)
        sub = _client_name(subscription, "subscription")
        client_name = _client_name(name or sub)
        with self._atomic():
            self._ensure_topic(topic_name)
            admission, kind = self._admit_consumer(topic_name, info, (client_name, sub), user, dry_run=False)
            if admission.accepted:
                self._record(topic_name, ClientRole.CONSUMER, client_name, sub, kind, admission.version, False)
        return admission

    def _admit_producer(
        self, name: TopicName, info: SchemaInfo | None, replicator: bool, user: str, *, dry_run: bool
    ) -> tuple[Admission, SchemaType | None]:
        policy = self.effective_policy(str(name))
        if info is None or _info(info).type in SCHEMALESS_CLIENT_TYPES:
            if self._live(name) and policy.validation_enforced.value:
                return Admission(accepted=False, role=ClientRole.PRODUCER, reason=_NO_SCHEMA_ENFORCED), None
            return Admission(accepted=True, role=ClientRole.PRODUCER), None
        data = self._client_schema(info)
        ns_policy = self._storage.namespace_policy(str(name.namespace_name)) or NamespacePolicy()
        allowed = policy.allow_auto_update.value or (replicator and ns_policy.allow_auto_update_with_replicator)
        strategy = policy.compatibility.value
        return self._add_schema(name, data, ClientRole.PRODUCER, allowed, strategy, user, dry_run=dry_run), data.type

    def _admit_consumer(
        self, name: TopicName, info: SchemaInfo | None, client: tuple[str, str], user: str, *, dry_run: bool
    ) -> tuple[Admission, SchemaType | None]:
        info = None if info is None else _info(info)
        if info is None or info.type is SchemaType.AUTO_CONSUME or info.type in SCHEMALESS_CLIENT_TYPES:
            kind = info.type if info is not None and info.type is SchemaType.AUTO_CONSUME else None
            return Admission(accepted=True, role=ClientRole.CONSUMER), kind
        policy = self.effective_policy(str(name))
        strategy = policy.compatibility.value
        live = self._live(name)
        if not self._in_use(name, live, exclude=client):
            data = self._client_schema(info)
            allowed = policy.allow_auto_update.value
            return self._add_schema(
                name, data, ClientRole.CONSUMER, allowed, strategy, user, dry_run=dry_run
            ), data.type
        # On a topic in use Pulsar never validates the consumer's schema as a new one: only
        # SchemaRegistryServiceWithSchemaDataValidator.putSchemaIfAbsent runs SchemaDataValidator, and
        # SchemaRegistryServiceImpl.checkConsumerCompatibility goes straight to the compatibility check.
        data = self._client_schema(info, validate=False)
        return self._check_consumer(live, data, strategy), data.type

    def disconnect(self, topic: str, *, name: str, role: ClientRole | str | None = None) -> int:
        """Forget a recorded client; returns how many records went."""
        topic_name = TopicName.parse(topic)
        kind = None if role is None else str(ClientRole(role))
        return self._storage.remove_clients(str(topic_name.base), name, kind)

    def clients(self, topic: str | None = None) -> list[ClientRecord]:
        """Recorded producers and consumers, of one topic or of all."""
        topics = None if topic is None else [str(TopicName.parse(topic).base)]
        return self._storage.clients(topics)

    # --- explanations, diffs, what-if (issue "Compatibility explanations…") ------------------------------

    @_bounded
    def diff(self, topic: str, old: int | SchemaInfo, new: int | SchemaInfo | None = None) -> SchemaDiff:
        """Semantic and textual diff between two live versions, or a version and a candidate (new=None:
        the latest live version)."""
        name = TopicName.parse(topic)
        return diff_schemas(self._schema_of(name, old), self._schema_of(name, new))

    @_bounded
    def what_if(self, topic: str, info: SchemaInfo) -> WhatIf:
        """Pulsar's answer to `info` on `topic` under each of the 8 strategies, with the effective verdict,
        simulated registration and admission (nothing is written), advisories, the diff against the latest
        version and the upgrade order."""
        name = TopicName.parse(topic)
        data = to_schema_data(_info(info))
        entries = self._storage.history(name.schema_id)
        live = trim(entries)
        effective = self._admin_strategy(name)
        by_strategy = {s: self._check(live, data, s) for s in STRATEGIES}
        result = by_strategy[effective.value]
        advisories = result.advisories + by_strategy[S.FULL].advisories
        if data.type in AVRO_PARSED_TYPES:
            advisories += tuple(invalid_default_advisories(parse_avro_data(data.type, data.data)))
        registration = self._simulate_registration(name, entries, data, effective.value)
        producer, _ = self._admit_producer(name, info, False, "", dry_run=True)
        consumer, _ = self._admit_consumer(name, info, ("", ""), "", dry_run=True)
        latest = live[-1] if live else None
        latest_data = SchemaData(latest.type, latest.data, latest.properties) if latest else None
        order = None
        if latest_data is not None:
            order = change_order(not can_read(data, latest_data), not can_read(latest_data, data))
        plan = self._plan(name, live, data) if live else None
        return WhatIf(
            topic=str(name.base),
            candidate_type=data.type,
            effective=effective,
            result=result,
            by_strategy=by_strategy,
            duplicate_of=registration.version if not registration.registered and registration.accepted else None,
            registration=registration,
            producer=producer,
            consumer=consumer,
            advisories=tuple(dict.fromkeys(advisories)),
            diff=diff_schemas(latest_data, data) if latest_data is not None else None,
            latest_version=latest.version if latest else None,
            strategy_order=strategy_order(effective.value),
            change_order=order,
            plan=plan,
        )

    @_bounded
    def upgrade_plan(self, topic: str, target: int | SchemaInfo | None = None) -> UpgradePlan:
        """Order in which to move the topic's recorded clients to `target` (a live version or a candidate;
        default: the latest version) so that every reader can read every writer at each step."""
        name = TopicName.parse(topic)
        live = self._live(name)
        return self._plan(name, live, self._schema_of(name, target))

    def policy_impact(self, namespace: str, strategy: CompatibilityStrategy | str) -> PolicyImpact:
        """What setting `strategy` on a namespace would have refused: per topic, the live registrations that
        would not have passed (replaying each against the versions before it) and the recorded consumers
        that could no longer subscribe. Topics with their own strategy are reported as overridden."""
        ns = NamespaceName.parse(namespace)
        proposed = CompatibilityStrategy.parse(strategy)
        if proposed is S.UNDEFINED:
            raise PolicyError("choose one of the 8 strategies to preview; UNDEFINED only clears the namespace value")
        impacts = [self._topic_impact(TopicName.parse(t), proposed) for t in self.topics(str(ns))]
        return PolicyImpact(namespace=str(ns), proposed=proposed, topics=tuple(impacts))

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
        (registry/_policy_preview.py). Values are checked as saving checks them."""
        ns = NamespaceName.parse(namespace)
        staged = self._staged()
        after = staged._set_namespace_policy(
            ns,
            compatibility=compatibility,
            auto_update_strategy=auto_update_strategy,
            allow_auto_update=allow_auto_update,
            allow_auto_update_with_replicator=allow_auto_update_with_replicator,
            validation_enforced=validation_enforced,
        )
        before = self._storage.namespace_policy(str(ns))
        topics = [] if before is None else self._storage.topics(str(ns))
        changes = describe_changes(before or NamespacePolicy(), after)
        return preview(self, staged, target=str(ns), scope="namespace", changes=changes, topics=topics)

    def preview_topic_policy(
        self, topic: str, *, compatibility: Any = UNSET, validation_enforced: Any = UNSET
    ) -> PolicyPreview:
        """What `set_topic_policy` with the same arguments would change and refuse on that topic, writing
        nothing (see preview_namespace_policy)."""
        staged = self._staged()
        after = staged._set_topic_policy(topic, compatibility=compatibility, validation_enforced=validation_enforced)
        name = self._policy_topic(topic)
        before = self._storage.topic_policy(str(name)) or TopicPolicy()
        changes = describe_changes(before, after)
        return preview(self, staged, target=str(name), scope="topic", changes=changes, topics=[str(name)])

    def _staged(self) -> Registry:
        """This registry with policy writes kept aside (a preview's "after")."""
        storage = cast(Storage, StagedPolicies(self._storage))
        return Registry(storage, broker=self._broker, auto_create=self._auto_create, location=self._location)

    def _replay(
        self, live: Sequence[SchemaVersion], strategy: CompatibilityStrategy
    ) -> tuple[tuple[int, ...], Problem | None]:
        """Each live registration checked again, under `strategy`, against the versions before it: the versions
        that would have been refused, and the first problem found."""
        refused: list[int] = []
        first: Problem | None = None
        for i in range(1, len(live)):
            verdict = self._check(live[:i], SchemaData(live[i].type, live[i].data, live[i].properties), strategy)
            if not verdict.compatible:
                refused.append(live[i].version)
                first = first or verdict.problems[0]
        return tuple(refused), first

    def _topic_impact(self, name: TopicName, proposed: CompatibilityStrategy) -> TopicImpact:
        current = self._admin_strategy(name)
        overridden = current.source is PolicySource.TOPIC
        strategy = current.value if overridden else proposed
        live = self._live(name)
        refused, first = self._replay(live, strategy)
        clients = []
        for client in self._storage.clients([str(name.base)]):
            if client.role is not ClientRole.CONSUMER or client.version is None:
                continue
            entry = next((e for e in live if e.version == client.version), None)
            if entry is None:
                continue
            admission = self._check_consumer(live, SchemaData(entry.type, entry.data, entry.properties), strategy)
            if not admission.accepted:
                clients.append(RefusedClient(client=client, reason=admission.reason))
        return TopicImpact(
            topic=str(name.base),
            current=current,
            proposed=proposed,
            overridden=overridden,
            refused_versions=refused,
            first_problem=first,
            latest_refused=bool(live) and len(live) > 1 and live[-1].version in refused,
            refused_clients=tuple(clients),
        )

    def _simulate_registration(
        self, name: TopicName, entries: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> Admission:
        try:
            match, result = self._plan_put(name, entries, data, strategy)
        except (InvalidSchemaError, PoisonedHistoryError) as exc:
            return Admission(accepted=False, role=ClientRole.PRODUCER, reason=str(exc))
        if match is not None:
            return Admission(
                accepted=True,
                role=ClientRole.PRODUCER,
                version=match,
                reason=f"identical to live version {match}: registering returns it and stores nothing",
            )
        if result is not None and not result.compatible:
            return Admission(accepted=False, role=ClientRole.PRODUCER, reason=result.message, result=result)
        return Admission(
            accepted=True, role=ClientRole.PRODUCER, version=_next_version(entries), registered=True, result=result
        )

    def _plan(self, name: TopicName, live: Sequence[SchemaVersion], target: SchemaData) -> UpgradePlan:
        schemas: dict[int | str, SchemaData] = {e.version: SchemaData(e.type, e.data, e.properties) for e in live}
        target_key: int | str = next(
            (v for v, d in schemas.items() if d.type is target.type and d.data == target.data), "candidate"
        )
        schemas[target_key] = target

        def reads(reader: int | str, writer: int | str) -> str | None:
            if reader not in schemas or writer not in schemas:
                return f"version {reader if reader not in schemas else writer} is not live any more"
            reasons = can_read(schemas[reader], schemas[writer])
            return reasons[0] if reasons else None

        return plan_upgrade(str(name.base), self._storage.clients([str(name.base)]), target_key, reads)

    def _schema_of(self, name: TopicName, ref: int | SchemaInfo | None) -> SchemaData:
        if isinstance(ref, SchemaInfo):
            return to_schema_data(ref)
        entry = self.get(str(name), ref)
        return SchemaData(entry.type, entry.data, entry.properties)

    # --- catalog ----------------------------------------------------------------------------------------

    def change_token(self) -> int:
        """A number that changes whenever anything in the registry changes, from any process; cheap to read,
        so shells key their caches on it. Storages that cannot tell (remote ones) change it every few
        seconds and after this handle's own writes."""
        if isinstance(self._storage, ChangeTracking):
            return self._storage.change_token()
        return int(time.monotonic() // _UNTRACKED_TTL_S) * 1_000_000 + self._own_writes

    def search_topics(self, query: TopicQuery | None = None, *, offset: int = 0, limit: int = 50) -> TopicPage:
        """One page of the topics matching `query` (all topics when None), in tenant, namespace, topic order.

        Served from a catalog built once per change of the registry (one storage read for every topic) and
        searched in memory, so a page of 100k topics answers in milliseconds once built."""
        if isinstance(offset, bool) or isinstance(limit, bool) or offset < 0 or limit < 1:
            raise InvalidArgumentError(f"a page needs offset >= 0 and limit >= 1, got offset={offset}, limit={limit}")
        return self._topic_catalog().search(query or TopicQuery(), offset=offset, limit=limit)

    def topic_summary(self, topic: str) -> TopicSummary:
        """The catalog row of one topic (404-style TopicNotFoundError when the topic does not exist)."""
        name = TopicName.parse(topic)
        if not self._storage.has_topic(str(name.base)):
            raise TopicNotFoundError(f"Topic does not exist: {name.base}")
        counts = Counter((c.role, c.topic) for c in self._storage.clients([str(name.base)]))
        return self._summary(name, counts)

    def _topic_catalog(self) -> Catalog:
        """The cached catalog, rebuilt when the storage's change token moved (a write from any process)."""
        cached = self._catalog_cache
        if cached is not None and cached.token == self.change_token():
            return cached
        with self._catalog_lock:  # one rebuild at a time; the others then find it done
            token = self.change_token()
            cached = self._catalog_cache
            if cached is not None and cached.token == token:
                return cached
            if isinstance(self._storage, CatalogStorage):
                catalog = Catalog.build(self._storage.catalog_source(), self._strategy_from, self._fields_of)
            else:
                catalog = Catalog(list(self._summaries()), token)
            self._catalog_cache = catalog
            return catalog

    def _strategy_from(
        self, topic_policy: TopicPolicy | None, ns_policy: NamespacePolicy | None
    ) -> Effective[CompatibilityStrategy]:
        return admin_strategy(topic_policy, ns_policy, self._broker)

    def _fields_of(self, schema_id: str, version: int, kind: SchemaType, data: bytes) -> tuple[tuple[str, ...], str]:
        """Search fields of a version whose storage did not keep them, read once per version."""
        key = (schema_id, version, hash(data))
        found = self._fields_memo.get(key)
        if found is None:
            found = self._fields_memo[key] = read_fields(kind, data)
        return found

    def _summaries(self) -> Iterator[TopicSummary]:
        """Every topic's summary the slow way (one history read each): for storages without a catalog source."""
        counts = Counter((c.role, c.topic) for c in self._storage.clients(None))
        for tenant in self._storage.tenants():
            for namespace in self._storage.namespaces(tenant):
                for topic in self._storage.topics(namespace):
                    yield self._summary(TopicName.parse(topic), counts)

    def _summary(self, name: TopicName, counts: Counter[tuple[ClientRole, str]]) -> TopicSummary:
        topic = str(name.base)
        history = self._storage.history(name.schema_id)
        live = trim(history)
        latest = live[-1] if live else None
        fields, error = read_fields(latest.type, latest.data) if latest is not None else ((), "")
        strategy = self._admin_strategy(name)
        return TopicSummary(
            topic=topic,
            tenant=name.tenant,
            namespace=str(name.namespace_name),
            schema_type=latest.type if latest else None,
            versions=len(live),
            latest_version=latest.version if latest else None,
            updated_at=latest.timestamp if latest else None,
            deleted=bool(history) and history[-1].deleted,
            strategy=strategy.value,
            strategy_source=strategy.source,
            producers=counts[(ClientRole.PRODUCER, topic)],
            consumers=counts[(ClientRole.CONSUMER, topic)],
            fields=fields,
            error=error,
        )

    # --- listing and creation ---------------------------------------------------------------------------

    def tenants(self) -> list[str]:
        return self._storage.tenants()

    def namespaces(self, tenant: str) -> list[str]:
        name = parse_tenant(tenant)
        if name not in self._storage.tenants():
            raise TenantNotFoundError(f"Tenant does not exist: {name}")
        return self._storage.namespaces(name)

    def topics(self, namespace: str) -> list[str]:
        ns = NamespaceName.parse(namespace)
        if self._storage.namespace_policy(str(ns)) is None:
            raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
        return self._storage.topics(str(ns))

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        """Create a tenant; False when it already existed."""
        with self._audited(AuditAction.CREATE_TENANT, tenant, user) as note:
            note.target = parse_tenant(tenant)
            created = self._storage.put_tenant(note.target, self._clock())
            note.outcome, note.detail = _created(created, "tenant")
        return created

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        """Create a namespace with default policies (and its tenant, when auto-creation is on)."""
        with self._audited(AuditAction.CREATE_NAMESPACE, namespace, user) as note:
            ns = NamespaceName.parse(namespace)
            note.target = str(ns)
            created = self._storage.namespace_policy(str(ns)) is None
            if created:
                self._namespace(ns, create=True)
            note.outcome, note.detail = _created(created, "namespace")
        return created

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        with self._audited(AuditAction.CREATE_TOPIC, topic, user) as note:
            name = TopicName.parse(topic)
            note.target = str(name.base)
            created = not self._storage.has_topic(str(name.base))
            if created:
                self._ensure_topic(name)
            note.outcome, note.detail = _created(created, "topic")
        return created

    # --- audit trail ------------------------------------------------------------------------------------

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        """Write attempts through this registry, newest first: all of them, or those about `target` (a topic,
        or a namespace or tenant with everything inside it). Refusals are included with their reason."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number >= 1, got {limit!r}")
        if not isinstance(self._storage, AuditLog):
            return []
        return self._storage.audit(None if target is None else _audit_target(target), limit)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: the writes made inside (on this thread) commit together when the block ends, one
        fsync for all of them. Each write stays all-or-nothing (a savepoint), refusals are recorded as
        usual; nothing inside is durable before the block ends, so acknowledge the writes after it. An
        exception escaping the block undoes every write made inside it."""
        if isinstance(self._storage, Transactional):
            with self._storage.transaction():
                yield
        else:
            yield

    @contextlib.contextmanager
    def _atomic(self) -> Iterator[None]:
        """One storage transaction for a facade write (one commit, one fsync). A RegistryError commits what
        was written before it, as the separate commits of each storage write used to, and is then raised."""
        if not isinstance(self._storage, Transactional):
            yield
            return
        refused: RegistryError | None = None
        with self._storage.transaction():
            try:
                yield
            except RegistryError as exc:
                refused = exc
        if refused is not None:
            raise refused

    @contextlib.contextmanager
    def _audited(self, action: AuditAction, target: str, user: str) -> Iterator[_AuditNote]:
        """Record one write attempt: the body fills in the note; a RegistryError is recorded as refused.

        The audit line commits in the same transaction as the write it records (one fsync for both)."""
        note = _AuditNote(target=str(target))
        refused: RegistryError | None = None
        try:
            with self._atomic():
                try:
                    yield note
                except RegistryError as exc:
                    refused = exc
                    self._write_audit(action, note.target, user, _refusal(exc, note.input), AuditOutcome.REFUSED)
                else:
                    self._write_audit(action, note.target, user, note.detail, note.outcome)
        except StorageError as exc:
            if exc is not refused:  # the transaction itself failed (busy, disk): nothing of it was kept
                self._write_audit(action, note.target, user, str(exc), AuditOutcome.REFUSED)
            raise
        finally:
            self._own_writes += 1
        if refused is not None:
            raise refused

    def _write_audit(self, action: AuditAction, target: str, user: str, detail: str, outcome: AuditOutcome) -> None:
        if not isinstance(self._storage, AuditLog):
            return
        entry = AuditEntry(
            at=self._clock(),
            user=_audit_text(user, _AUDIT_NAME_BYTES),
            action=action,
            target=_audit_text(target, _AUDIT_NAME_BYTES),
            detail=_audit_text(detail, AUDIT_DETAIL_BYTES),
            outcome=outcome,
        )
        with contextlib.suppress(StorageError):  # the write itself is done: a lost audit line must not undo it
            self._storage.append_audit(entry)

    # --- internals --------------------------------------------------------------------------------------

    def _namespace(self, ns: NamespaceName, *, create: bool) -> NamespacePolicy:
        policy = self._storage.namespace_policy(str(ns))
        if policy is not None:
            return policy
        if not create:
            raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
        if ns.tenant not in self._storage.tenants():
            if not self._auto_create:
                raise TenantNotFoundError(f"Tenant does not exist: {ns.tenant}")
            self._storage.put_tenant(ns.tenant, self._clock())
        policy = NamespacePolicy()
        self._storage.put_namespace(str(ns), policy, self._clock())
        return policy

    def _require_namespace(self, name: TopicName) -> None:
        """The read-only REST checks (/compatibility, /version) start with SchemasResourceBase's
        validateTopicOwnershipAsync, which answers 404 "Namespace does not exist" before any schema logic.
        With auto_create a write would create the namespace, so a check on it goes on as on an empty one."""
        if not self._auto_create and self._storage.namespace_policy(str(name.namespace_name)) is None:
            raise NamespaceNotFoundError(f"Namespace does not exist: {name.namespace_name}")

    def _ensure_topic(self, name: TopicName) -> None:
        base = str(name.base)
        if self._storage.has_topic(base):
            return
        if self._storage.namespace_policy(str(name.namespace_name)) is None:
            if not self._auto_create:
                raise NamespaceNotFoundError(f"Namespace does not exist: {name.namespace_name}")
            self._namespace(name.namespace_name, create=True)
        self._storage.put_topic(base, str(name.namespace_name), self._clock())

    def _policy_topic(self, topic: str) -> TopicName:
        name = TopicName.parse(topic)
        if not self._broker.topic_level_policies_enabled:
            raise TopicPoliciesDisabledError(
                "Topic level policies is disabled, to enable the topic level policy and retry."
            )
        if name.partition is not None:
            raise PartitionPolicyError(f"Not allowed to set/get topic policy for a partition: {name}")
        return name

    def _live(self, name: TopicName) -> list[SchemaVersion]:
        return trim(self._storage.history(name.schema_id))

    def _admin_strategy(self, name: TopicName) -> Effective[CompatibilityStrategy]:
        topic_policy = self._storage.topic_policy(str(name.base))
        ns_policy = self._storage.namespace_policy(str(name.namespace_name))
        return admin_strategy(topic_policy, ns_policy, self._broker)

    def _resolve_strategy(self, name: TopicName, strategy: CompatibilityStrategy | str | None) -> CompatibilityStrategy:
        if strategy is not None:
            chosen = CompatibilityStrategy.parse(strategy)
            if chosen is not S.UNDEFINED:
                return chosen
        return self._admin_strategy(name).value

    def _check(
        self, live: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> CompatibilityResult:
        existing = _versioned(live)
        with using(self._profile):  # also for the calls that replay a history (policy impact, previews)
            if strategy.is_transitive:
                return check_with_all(existing, data, strategy)
            return check_with_latest(existing, data, strategy)

    def _plan_put(
        self, name: TopicName, entries: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> tuple[int | None, CompatibilityResult | None]:
        """putSchemaIfAbsent's decision without the write: (existing version, None) when dedup matches, else
        (None, verdict) — verdict None on an empty history, which stores without any check (§3.3)."""
        live = trim(entries)
        match = self._dedup(name, live, data)
        if match is not None:
            return match, None
        return None, self._check(live, data, strategy) if live else None

    def _put_if_absent(
        self, name: TopicName, data: SchemaData, strategy: CompatibilityStrategy, user: str
    ) -> tuple[int, bool, CompatibilityResult | None]:
        """putSchemaIfAbsent (§3.3) with compare-and-set retries; returns (version, stored, verdict)."""
        if isinstance(self._storage, IndexedHistory):
            return self._put_indexed(self._storage, name, data, strategy, user)
        for _ in range(_MAX_ATTEMPTS):
            entries = self._storage.history(name.schema_id)
            match, result = self._plan_put(name, entries, data, strategy)
            if match is not None:
                return match, False, None
            if result is not None and not result.compatible:
                raise IncompatibleSchemaError(f"Incompatible schema for {name}: {result.message}", result)
            latest = entries[-1].version if entries else None
            entry = SchemaVersion(
                topic=name.schema_id,
                version=_next_version(entries),
                type=stored_type(data.type),
                data=data.data,
                properties=dict(data.properties),
                timestamp=self._clock(),
                deleted=False,
                user=user,
            )
            try:
                self._storage.append(entry, latest)
            except StaleHistory:
                continue
            return entry.version, True, result
        raise StorageError(f"could not register a schema on {name}: too many concurrent writers")

    def _put_indexed(
        self, storage: IndexedHistory, name: TopicName, data: SchemaData, strategy: CompatibilityStrategy, user: str
    ) -> tuple[int, bool, CompatibilityResult | None]:
        """`_put_if_absent` over fingerprints: dedup compares digests (filtered by the storage), and only the
        versions the strategy checks are read (the latest, or every live one when transitive), so its cost
        hardly grows with the history's length. The same answers, in the same order (§3.3)."""
        sha256 = hashlib.sha256(data.data).digest()
        parsed: AvroSchema | InvalidSchemaError | None = None
        equality = None
        if data.type in AVRO_PARSED_TYPES:
            try:
                parsed = parse_avro_data(data.type, data.data)
            except InvalidSchemaError as exc:
                parsed = self._legacy_json_refusal(data, exc)
            else:
                equality = _equality_digest(parsed)
        for _ in range(_MAX_ATTEMPTS):
            scan = storage.dedup_scan(name.schema_id, data.type, sha256, equality)
            if scan.has_live and isinstance(parsed, InvalidSchemaError):
                raise parsed
            if scan.has_live and isinstance(parsed, AvroSchema) and parsed.invalid_defaults:
                raise _invalid_default_error(data.type, parsed)
            try:
                match = self._dedup_indexed(storage, name, scan.rows, data.type, equality)
            except StaleHistory:
                continue
            if match is not None:
                return match, False, None
            result = None
            if scan.has_live and scan.latest is not None:
                first = (
                    scan.latest if not strategy.is_transitive else -1 if scan.tombstone is None else scan.tombstone + 1
                )
                entries: list[SchemaVersion] = []
                if strategy is not S.ALWAYS_COMPATIBLE:  # which answers without looking (§3.3)
                    entries = storage.history_range(name.schema_id, first, scan.latest)
                    if not entries or entries[-1].version != scan.latest:
                        continue  # another process changed the history meanwhile
                result = self._check(entries, data, strategy)
                if not result.compatible:
                    raise IncompatibleSchemaError(f"Incompatible schema for {name}: {result.message}", result)
            entry = SchemaVersion(
                topic=name.schema_id,
                version=0 if scan.latest is None else scan.latest + 1,
                type=stored_type(data.type),
                data=data.data,
                properties=dict(data.properties),
                timestamp=self._clock(),
                deleted=False,
                user=user,
            )
            stored_equality = equality if isinstance(parsed, AvroSchema) and not parsed.invalid_defaults else None
            try:
                storage.append_indexed(entry, scan.latest, stored_equality)
            except StaleHistory:
                continue
            return entry.version, True, result
        raise StorageError(f"could not register a schema on {name}: too many concurrent writers")

    @staticmethod
    def _dedup_indexed(
        storage: IndexedHistory, name: TopicName, rows: Sequence[Fingerprint], kind: SchemaType, equality: bytes | None
    ) -> int | None:
        """`_dedup` over the live versions a `DedupScan` kept: the first equal to the candidate, or None.

        A version whose equality digest is not known yet is parsed, as `_dedup` would parse it (a poisoned
        one refuses), and its digest remembered. The other versions can neither match nor refuse."""
        learned: dict[int, bytes] = {}
        match = None
        for found in rows:
            digest = found.equality
            if kind in AVRO_PARSED_TYPES and digest is None:
                stored = storage.history_range(name.schema_id, found.version, found.version)
                if not stored:
                    raise StaleHistory(name.schema_id)
                old = _parse_stored(found.type, stored[0].data)
                if old is None:  # the legacy Jackson form: equal to no Avro schema, and never remembered
                    continue
                if old.invalid_defaults:
                    raise _poisoned_error(name, found.version, old)
                digest = learned[found.version] = _equality_digest(old)
            if found.type is kind and (digest == equality if kind in AVRO_PARSED_TYPES else True):
                match = found.version
                break
        if learned:
            storage.put_equalities(name.schema_id, learned)
        return match

    def _dedup(self, name: TopicName, live: Sequence[SchemaVersion], data: SchemaData) -> int | None:
        """getSchemaVersionBySchemaData (§3.3): the first live version equal to the candidate, or None.

        AVRO/JSON/PROTOBUF compare parsed Avro schemas, parsed with default validation on; Pulsar then fails
        with an internal error on an invalid default (§4.8) — we refuse with a clear error instead.
        """
        if not live:
            return None
        if data.type not in AVRO_PARSED_TYPES:
            return next((e.version for e in live if e.type is data.type and e.data == data.data), None)
        try:
            new = parse_avro_data(data.type, data.data)
        except InvalidSchemaError as exc:
            raise self._legacy_json_refusal(data, exc) from None
        if new.invalid_defaults:
            raise _invalid_default_error(data.type, new)
        for entry in live:
            if entry.type in AVRO_PARSED_TYPES:
                old = _parse_stored(entry.type, entry.data)
                if old is None:
                    continue
                if old.invalid_defaults:
                    raise _poisoned_error(name, entry.version, old)
                if entry.type is data.type and old == new:
                    return entry.version
            elif entry.type is data.type and entry.data == data.data:
                return entry.version
        return None

    def _legacy_json_refusal(self, data: SchemaData, exc: InvalidSchemaError) -> InvalidSchemaError:
        """The duplicate check's refusal of a candidate that does not parse as Avro; for the legacy Jackson
        JSON-Schema form (3.0/4.0), said plainly (inferred: the broker's dedup parse fails with an internal
        error, so the form is only ever taken by a topic without a schema)."""
        if data.type is not SchemaType.JSON or not self._profile.legacy_json or jackson_schema(data.data) is None:
            return exc
        return InvalidSchemaError(
            f"{exc}. A Jackson JSON-Schema document is taken by {self._profile.title} on a topic without a "
            "schema, but once the topic has one the broker's duplicate check parses every new JSON schema as "
            "Avro and fails (an internal error there): register the Avro form instead"
        )

    def _client_schema(self, info: SchemaInfo, *, validate: bool = True) -> SchemaData:
        info = _info(info)
        if info.type.is_client_side:
            raise InvalidSchemaError(
                f"Schema {info.type} is a client-side schema type; connect without a schema instead"
            )
        return to_schema_data(info, validate=validate)

    def _add_schema(
        self,
        name: TopicName,
        data: SchemaData,
        role: ClientRole,
        allowed: bool,
        strategy: CompatibilityStrategy,
        user: str,
        *,
        dry_run: bool = False,
    ) -> Admission:
        """AbstractTopic.addSchema: register when auto-update is allowed, else only match a live version.

        With `dry_run`, say what would happen and write nothing."""
        try:
            if allowed and dry_run:
                entries = self._storage.history(name.schema_id)
                match, result = self._plan_put(name, entries, data, strategy)
                if result is not None and not result.compatible:
                    return Admission(accepted=False, role=role, reason=result.message, result=result)
                if match is not None:
                    return Admission(accepted=True, role=role, version=match)
                return Admission(
                    accepted=True, role=role, version=_next_version(entries), registered=True, result=result
                )
            if allowed:
                version, stored, result = self._put_if_absent(name, data, strategy, user)
                return Admission(accepted=True, role=role, version=version, registered=stored, result=result)
            match = self._dedup(name, self._live(name), data)
        except IncompatibleSchemaError as exc:
            return Admission(accepted=False, role=role, reason=str(exc), result=exc.result)
        except (InvalidSchemaError, PoisonedHistoryError) as exc:
            return Admission(accepted=False, role=role, reason=str(exc))
        if match is None:
            return Admission(accepted=False, role=role, reason=_AUTO_UPDATE_DISABLED)
        return Admission(accepted=True, role=role, version=match)

    def _in_use(self, name: TopicName, live: Sequence[SchemaVersion], exclude: tuple[str, str]) -> bool:
        """§8.2: a live schema, a producer (replicators only count on non-persistent topics), or a consumer
        that is not AUTO_CONSUME. The embedded registry has no message data, so ledger size does not apply."""
        if live:
            return True
        for client in self._storage.clients([str(name.base)]):
            # persistent topics count user-created producers only; non-persistent ones count any producer
            if client.role is ClientRole.PRODUCER and (not client.replicator or name.domain == "non-persistent"):
                return True
            if (
                client.role is ClientRole.CONSUMER
                and client.schema_type is not SchemaType.AUTO_CONSUME
                and (client.name, client.subscription) != exclude
            ):
                return True
        return False

    def _check_consumer(
        self, live: Sequence[SchemaVersion], data: SchemaData, strategy: CompatibilityStrategy
    ) -> Admission:
        """checkConsumerCompatibility (§8.2): never registers anything."""
        role = ClientRole.CONSUMER
        matched = next((e.version for e in live if e.type is data.type and e.data == data.data), None)
        if strategy is S.ALWAYS_COMPATIBLE:
            return Admission(accepted=True, role=role, version=matched)
        if not live:
            problem = Problem(
                code=RuleCode.NO_SCHEMA_ON_ACTIVE_TOPIC,
                direction=Direction.NONE,
                message="Failed to add schema to an active topic with empty(BYTES) schema: new schema "
                f"type {data.type}",
                hint="connect without a schema, or register the schema while the topic is idle",
            )
            result = CompatibilityResult(compatible=False, strategy=strategy, problems=(problem,))
            return Admission(accepted=False, role=role, reason=problem.message, result=result)
        existing = _versioned(live)
        if strategy in _CONSUMER_READS_LATEST:
            result = check_with_latest(existing, data, strategy, check_strategy=S.BACKWARD)
        else:
            result = check_with_all(existing, data, strategy)
        if not result.compatible:
            return Admission(accepted=False, role=role, reason=result.message, result=result)
        return Admission(
            accepted=True, role=role, version=matched if matched is not None else live[-1].version, result=result
        )

    def _record(
        self,
        name: TopicName,
        role: ClientRole,
        client: str,
        subscription: str,
        kind: SchemaType | None,
        version: int | None,
        replicator: bool,
    ) -> None:
        self._storage.put_client(
            ClientRecord(
                topic=str(name.base),
                role=role,
                name=client,
                subscription=subscription,
                schema_type=kind,
                version=version,
                connected_at=self._clock(),
                replicator=replicator,
            )
        )


def namespace_allow_auto_update(ns_policy: NamespacePolicy, broker: BrokerConfig) -> Effective[bool]:
    """`isAllowAutoUpdateSchema` in force: the namespace's value, else the broker default (§2.2)."""
    if ns_policy.allow_auto_update is not None:
        return Effective(ns_policy.allow_auto_update, PolicySource.NAMESPACE)
    return Effective(broker.allow_auto_update, PolicySource.BROKER_DEFAULT)


def namespace_validation_enforced(ns_policy: NamespacePolicy, broker: BrokerConfig) -> Effective[bool]:
    """`schemaValidationEnforced?applied=true` of a namespace: its flag, else the broker's (§7.2)."""
    if ns_policy.validation_enforced:
        return Effective(True, PolicySource.NAMESPACE)
    return Effective(broker.validation_enforced, PolicySource.BROKER_DEFAULT)


def admin_strategy(
    topic_policy: TopicPolicy | None, ns_policy: NamespacePolicy | None, broker: BrokerConfig
) -> Effective[CompatibilityStrategy]:
    """AdminResource order: topic → namespace strategy → mapped auto-update → broker (§2.4)."""
    if topic_policy is not None and topic_policy.compatibility not in (None, S.UNDEFINED):
        return Effective(topic_policy.compatibility, PolicySource.TOPIC)
    if ns_policy is not None:
        if ns_policy.compatibility is not S.UNDEFINED:
            return Effective(ns_policy.compatibility, PolicySource.NAMESPACE)
        if ns_policy.auto_update_strategy is not None:
            return Effective(ns_policy.auto_update_strategy.to_strategy(), PolicySource.AUTO_UPDATE_MAPPING)
    return Effective(broker.compatibility, PolicySource.BROKER_DEFAULT)


def _equality_digest(schema: AvroSchema) -> bytes:
    """What dedup compares of a parsed schema: equal schemas have equal equality keys (`AvroSchema.__eq__`)."""
    return hashlib.sha256(schema.equality_key.encode("utf-8")).digest()


def _invalid_default_error(kind: SchemaType, schema: AvroSchema) -> InvalidSchemaError:
    bad = schema.invalid_defaults[0]
    return InvalidSchemaError(
        f"Invalid schema definition data for {kind} schema: {bad.message} (at {bad.pointer}); Pulsar "
        "would fail this registration with an internal error (HTTP 500)"
    )


def _poisoned_error(name: TopicName, version: int, schema: AvroSchema) -> PoisonedHistoryError:
    bad = schema.invalid_defaults[0]
    return PoisonedHistoryError(
        f"version {version} of {name} has an {bad.message} (at {bad.pointer}); Pulsar fails "
        "every later registration on this topic with an internal error (HTTP 500). Delete the "
        "schema to start a new history."
    )


@dataclass(slots=True)
class _AuditNote:
    """What a write fills in for its audit entry while it runs; `input` is the schema it was given, named in
    the line of a refused write by its size and digest (never kept whole)."""

    target: str
    detail: str = ""
    outcome: AuditOutcome = AuditOutcome.OK
    input: str | bytes | None = None


# An audit line is a record of who did what, not a copy of the input: a refused 1 MiB schema is named by its
# size and digest, so refused writes cannot grow the registry by their inputs.
AUDIT_DETAIL_BYTES = 1024
_AUDIT_NAME_BYTES = 300  # a topic name is at most 3 x 255 characters by Pulsar's rules; longer ones are refused


def _audit_text(text: str, limit: int) -> str:
    """`text` made encodable and cut to at most `limit` UTF-8 bytes, saying how long it was."""
    data = readable(text).encode("utf-8")
    if len(data) <= limit:
        return data.decode("utf-8")
    return f"{data[: limit - 40].decode('utf-8', 'ignore')}… ({len(data):,} bytes in all)"


def _refusal(exc: RegistryError, given: str | bytes | None) -> str:
    """A refused write's audit detail: the reason (at most ~1 KiB) and the input's size and SHA-256."""
    reason = _audit_text(str(exc), AUDIT_DETAIL_BYTES - 100)
    if given is None:
        return reason
    data = given if isinstance(given, bytes) else given.encode("utf-8", "surrogatepass")
    return f"{reason} [input: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}]"


def _asked(fields: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in fields.items() if v is not UNSET)


def _policy_change(before: Any, after: Any) -> str:
    """ "field: old → new" for each field that changed, or "no change"."""
    return "; ".join(describe_changes(before, after)) or "no change"


def _created(created: bool, kind: str) -> tuple[AuditOutcome, str]:
    return (AuditOutcome.OK, f"{kind} created") if created else (AuditOutcome.UNCHANGED, f"{kind} already existed")


def _topic_target(topic: str) -> str:
    return str(TopicName.parse(topic).base)


def _audit_target(target: str) -> str:
    """A topic, namespace or tenant name as the audit trail stores it."""
    text = str(target).strip()
    if "://" in text or text.count("/") >= 2:
        return _topic_target(text)
    if "/" in text:
        return str(NamespaceName.parse(text))
    return parse_tenant(text)


def _next_version(entries: Sequence[SchemaVersion]) -> int:
    """Versions start at 0 and each stored entry, tombstones included, takes the next number (§3.1)."""
    return entries[-1].version + 1 if entries else 0


def _info(info: SchemaInfo) -> SchemaInfo:
    if not isinstance(info, SchemaInfo):
        raise InvalidSchemaError(f"expected a SchemaInfo, got {type(info).__name__}")
    return info


_LONG = range(-(2**63), 2**63)  # a version is a Java long (`Long.parseLong` in SchemasResourceBase)


def _version_number(version: object, *, negative: bool = False) -> int:
    """A version number from an int or text; `negative` lets a negative long through (a GET of version -1
    finds nothing in Pulsar: 404). A number that is no long is a 400 here (Pulsar: 500 from parseLong)."""
    if isinstance(version, bool):
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0")
    try:
        number = int(str(version).strip()) if not isinstance(version, int) else version
    except ValueError:
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0") from None
    if number not in _LONG:
        raise InvalidVersionError(f"invalid schema version {version!r}: it does not fit a 64-bit version number")
    if number < 0 and not negative:
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0")
    return number


def _bool(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise PolicyError(f"{field} must be true or false, not {value!r}")
    return value


def _optional_bool(field: str, value: object) -> bool | None:
    return None if value is None else _bool(field, value)


def _client_name(name: object, what: str = "client name") -> str:
    if not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > 255:
        raise InvalidNameError(f"invalid {what} {name!r}: expected 1-255 printable characters")
    return name.strip()
