"""The embedded registry: Pulsar's broker-side schema registry over a local file or memory (architecture.md,
the contract).

Every flow follows pulsar-semantics.md: register = REST POST /schema (§3.3), check = POST /compatibility
(§3.4), admission = the binary protocol's producer and consumer paths (§8), policies = §2. This class is a
thin front: reads and explanations come from the shared facade (registry/_facade.py), writes go through
`LocalWrites` (registry/_writes.py), admission through registry/_admission.py, and each write attempt is
recorded by the `Auditor` (registry/_auditing.py) in the same transaction.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ._admission import admit_consumer, admit_producer
from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._auditing import Auditor, created, topic_target
from ._cache_budget import bounded
from ._cache_usage import CacheUsage, cache_usage
from ._errors import InvalidArgumentError, InvalidNameError, RegistryNotFoundError, StorageError
from ._facade import BackedRegistry
from ._history import version_number
from ._location import LocationKind, locate
from ._model import (
    Admission,
    BrokerConfig,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    NamespacePolicy,
    Registration,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName, parse_tenant
from ._pulsar_version import PULSAR_LINES, PULSAR_VERSION_SETTING, PulsarLine, pulsar_line
from ._schema_data import checked_info, to_schema_data
from ._state import RegistryState
from ._writes import LocalWrites
from .explain._answers import live_version
from .explain._preview import describe_changes
from .policy._changes import NamespacePolicyChange, TopicPolicyChange
from .policy._rules import asked_fields, policy_topic, require_expected
from .proposals._desk import ProposalDesk
from .proposals._facade import EmbeddedProposals
from .proposals._permissions import Step, proposals_required
from .proposals._records import rules as stored_rules
from .proposals._targets import EmbeddedTarget
from .storage._base import LocalStorage
from .storage._locations import open_plugin
from .storage._memory import MemoryStorage
from .storage._read_cache import ReadCache
from .storage._sqlite import SqliteStorage
from .webhooks._desk import WebhookDesk
from .webhooks._notices import Notices


class Registry(BackedRegistry):
    """A Pulsar-faithful schema registry over a local storage (embedded SQLite by default, or memory)."""

    def __init__(
        self,
        storage: LocalStorage,
        *,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        location: str = ":memory:",
        clock: Callable[[], int] | None = None,
        pulsar_version: str | None = None,
    ) -> None:
        # The line this handle answers as: the one asked for, else the one stored with the registry.
        self._asked = bool(pulsar_version)
        chosen, source = (pulsar_line(pulsar_version), "asked when opened") if pulsar_version else _stored(storage)
        state = RegistryState(storage, broker or BrokerConfig(), chosen, auto_create=auto_create)
        super().__init__(state, location=location, line_source=source)
        self._storage = storage
        self._clock = clock or (lambda: time.time_ns() // 1_000_000)
        stamp = lambda: self._clock()  # noqa: E731 - read at each call: the seeder sets its own clock
        self._writes = LocalWrites(storage, state, stamp)
        self._notices = Notices(storage, stamp)
        self._auditor = Auditor(storage, stamp, self._count_write, self._notices)
        desk = ProposalDesk(storage, state, EmbeddedTarget(storage, state, self._writes), self._auditor, stamp)
        self._proposals = EmbeddedProposals(desk, state)
        self._webhooks = WebhookDesk(storage, self._auditor, stamp)

    # --- opening ----------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str],
        *,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        create: bool = False,
        pulsar_version: str | None = None,
        wrap: Callable[[LocalStorage], LocalStorage] | None = None,
    ) -> Registry:
        """Open the embedded registry a location names (_location.py): a file path or
        `sqlite:///path`, `memory:`, `postgresql://...`, `package.module:factory` or a scheme a package registers
        as a storage. An http(s) URL names a remote registry, which `registry.open` opens (StorageError here: a
        caller that needs what only an embedded registry does, such as `serve`, must not get a remote one).

        A file or database without a registry raises RegistryNotFoundError unless `create=True`: reading,
        checking or diffing against a registry made on the spot would answer from an empty history (fail
        closed).

        `pulsar_version` ("3.0", "4.0", "master") is the broker line to answer as; None takes the one stored with
        the registry (default "master"). A new file stores it; an existing file keeps its own
        (`set_pulsar_version` changes that) and this handle answers as asked.

        `wrap` puts a storage of one's own around the one the location names (`ForwardingStorage`: timing,
        logging, mirroring); `serve` times its storage for /metrics this way."""
        text = os.fspath(target)
        location = locate(text)
        if location.kind is LocationKind.REMOTE:
            raise StorageError(
                f"{text} is a remote admin API, not an embedded registry: open it with registry.open(url)"
            )
        chosen = pulsar_line(pulsar_version).name if pulsar_version else None  # a bad name opens nothing
        storage: LocalStorage
        if location.kind is LocationKind.SQLITE:
            path = _registry_file(location.target, create=create)
            created = not path.exists()
            storage, shown = SqliteStorage(path), str(path)
        elif location.kind is LocationKind.MEMORY:
            storage, shown, created = MemoryStorage(), location.shown, True
        elif location.kind is LocationKind.POSTGRESQL:
            from .storage._postgres import PostgresStorage  # psycopg is only imported for a postgresql:// location

            storage, shown = PostgresStorage(location.target, create=create), location.shown
            created = storage.created
        else:
            storage, shown = open_plugin(location, create=create), location.shown
            created = bool(getattr(storage, "created", False))
        if wrap is not None:
            storage = wrap(storage)
        if chosen and created:  # a new registry stores the line it was made as; opening one never writes
            storage.put_setting(PULSAR_VERSION_SETTING, chosen)
        return cls(storage, broker=broker, auto_create=auto_create, location=shown, pulsar_version=chosen)

    @classmethod
    def open_file(
        cls,
        target: str | os.PathLike[str],
        *,
        broker: BrokerConfig | None = None,
        auto_create: bool = True,
        create: bool = False,
        pulsar_version: str | None = None,
    ) -> Registry:
        """`open` for an embedded registry file only: a path is never read as a location or a URL."""
        path = _registry_file(os.fspath(target), create=create)
        chosen = pulsar_line(pulsar_version).name if pulsar_version else None  # a bad name stores nothing
        new = not path.exists()
        storage = SqliteStorage(path)
        if new and chosen:
            storage.put_setting(PULSAR_VERSION_SETTING, chosen)
        return cls(storage, broker=broker, auto_create=auto_create, location=str(path), pulsar_version=chosen)

    @classmethod
    def in_memory(
        cls, *, broker: BrokerConfig | None = None, auto_create: bool = True, pulsar_version: str | None = None
    ) -> Registry:
        """A registry in memory, gone when the handle is (tests, scratch copies)."""
        storage = MemoryStorage()
        if pulsar_version:
            storage.put_setting(PULSAR_VERSION_SETTING, pulsar_line(pulsar_version).name)
        return cls(storage, broker=broker, auto_create=auto_create)

    def close(self) -> None:
        self._notices.deliveries.closing(self._storage)  # its notices get a few seconds to go out
        self._storage.close()

    def __repr__(self) -> str:
        return f"Registry({self._location!r})"

    # --- which Pulsar -------------------------------------------------------------------------------------

    def _follow_stored_line(self) -> None:
        """Answer as the line stored with the registry (after a snapshot import stored one), unless this
        handle was opened asking for a line."""
        if not self._asked:
            self._state.line, self._line_source = _stored(self._storage)

    def stored_pulsar_version(self) -> str:
        """The line stored with the registry (what a handle opened without `pulsar_version` answers as)."""
        return _stored(self._storage)[0].name

    def set_pulsar_version(self, version: str, *, user: str = "") -> str:
        """Store the Pulsar version line the registry answers as, for every handle opened after (and this one)."""
        with self._auditor.audited(AuditAction.SET_PULSAR_VERSION, "registry", user) as note:
            before = self.stored_pulsar_version()
            chosen = pulsar_line(version)
            self._storage.put_setting(PULSAR_VERSION_SETTING, chosen.name)
            note.detail = f"Pulsar version line {before} → {chosen.name}"
            note.outcome = AuditOutcome.OK if before != chosen.name else AuditOutcome.UNCHANGED
        self._state.line = chosen  # once stored: a failed write leaves the handle as it was
        self._line_source = "stored with the registry"
        return chosen.name

    # --- schemas ----------------------------------------------------------------------------------------

    @bounded
    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        # Ignores auto-update, as REST POST /schema does (§3.3).
        with self._auditor.audited(AuditAction.REGISTER, topic, user) as note:
            note.input = info.schema if isinstance(info, SchemaInfo) else None
            name = TopicName.parse(topic)
            note.target = str(name.base)
            self._require_direct(Step.REGISTER, name.namespace_name)
            data, version, stored, verdict = self._writes.register(name, info, user)
            note.detail = (
                f"{data.type} schema stored as version {version}"
                if stored
                else f"identical to live version {version}: nothing stored"
            )
            note.outcome = AuditOutcome.OK if stored else AuditOutcome.UNCHANGED
            note.version = version if stored else None
        return Registration(version, stored, None if verdict is None else verdict.strategy)

    @bounded
    def check(
        self, topic: str, info: SchemaInfo, strategy: CompatibilityStrategy | str | None = None
    ) -> CompatibilityResult:
        """REST POST /compatibility (§3.4): validate, then the latest or (transitive) every live version.

        No dedup. `strategy=None` uses the topic's effective strategy.
        """
        name = TopicName.parse(topic)
        self._state.require_namespace(name)
        data = to_schema_data(checked_info(info))
        chosen = self._state.resolve_strategy(name, strategy)
        return self._state.judge(self._state.live(name), data, chosen)

    def get(self, topic: str, version: int | None = None) -> SchemaVersion:
        """The latest live version, or a given version if it is live (§3.6); SchemaNotFoundError otherwise."""
        name = TopicName.parse(topic)
        return live_version(self._state, name, None if version is None else version_number(version, negative=True))

    @bounded
    def find_version(self, topic: str, info: SchemaInfo) -> int | None:
        """REST POST /version (§3.4): the first live version with the same type and identical bytes, or None."""
        name = TopicName.parse(topic)
        self._state.require_namespace(name)
        data = to_schema_data(checked_info(info), validate=False)
        for entry in self._state.live(name):
            if entry.type is data.type and entry.data == data.data:
                return entry.version
        return None

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """Soft delete appends a tombstone and returns its version (always, §3.5); force drops the history
        and returns None, after which numbering restarts at 0."""
        with self._auditor.audited(AuditAction.DELETE, topic, user) as note:
            name = TopicName.parse(topic)
            note.target = str(name.base)
            self._require_direct(Step.DELETE, name.namespace_name)
            if force:
                dropped = self._storage.drop(name.schema_id)
                note.detail = "force: the whole history dropped" if dropped else "force: there was no history"
                note.outcome = AuditOutcome.OK if dropped else AuditOutcome.UNCHANGED
                return None
            version = self._writes.soft_delete(name, user)
            note.detail = f"soft delete: deletion marker stored as version {version}"
        return version

    # --- policies ---------------------------------------------------------------------------------------

    def _set_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None, user: str
    ) -> NamespacePolicy:
        fields = change.fields()
        with self._auditor.audited(AuditAction.SET_NAMESPACE_POLICY, namespace, user) as note:
            note.detail = asked_fields(fields)
            ns = NamespaceName.parse(namespace)
            note.target = str(ns)
            self._require_direct(Step.SET_POLICY, ns)
            before, after = self._writes.change_namespace_policy(ns, change, expected)
            note.detail = _policy_change(before, after)
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def _set_topic_policy(
        self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None, user: str
    ) -> TopicPolicy:
        fields = change.fields()
        with self._auditor.audited(AuditAction.SET_TOPIC_POLICY, topic, user) as note:
            note.detail = asked_fields(fields)
            note.target = topic_target(topic)
            require_expected(expected, self._storage.topic_policy(note.target) or TopicPolicy(), note.target)
            name = policy_topic(topic, self.broker)
            self._require_direct(Step.SET_POLICY, name.namespace_name)
            before, after = self._writes.change_topic_policy(name, change, expected)
            note.detail = _policy_change(before, after)
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def _require_direct(self, step: Step, namespace: NamespaceName) -> None:
        """A direct schema or policy write is refused where the namespace's review rules require proposals
        (read inside the write's transaction: a rule set meanwhile holds). Applying a proposal does not come
        here: it is the way such a change is made."""
        refusal = proposals_required(str(namespace), stored_rules(self._storage, str(namespace)), step)
        if refusal is not None:
            raise refusal.exception()

    # --- admission (§8) ---------------------------------------------------------------------------------

    @bounded
    def connect_producer(
        self, topic: str, info: SchemaInfo | None, *, name: str, replicator: bool = False, user: str = ""
    ) -> Admission:
        """Would the broker let this producer in (§8.1)? Accepted producers are recorded as connected."""
        topic_name = TopicName.parse(topic)
        client_name = _client_name(name)
        with self._auditor.atomic():
            self._writes.ensure_topic(topic_name)
            admission, kind = admit_producer(self._state, self._writes, topic_name, info, replicator, user)
            if admission.accepted:
                self._writes.record_client(
                    topic_name, ClientRole.PRODUCER, client_name, "", kind, admission.version, replicator
                )
        return admission

    @bounded
    def connect_consumer(
        self, topic: str, info: SchemaInfo | None, *, subscription: str, name: str = "", user: str = ""
    ) -> Admission:
        """Would the broker let this consumer subscribe (§8.2)? Accepted consumers are recorded."""
        topic_name = TopicName.parse(topic)
        sub = _client_name(subscription, "subscription")
        client_name = _client_name(name or sub)
        with self._auditor.atomic():
            self._writes.ensure_topic(topic_name)
            admission, kind = admit_consumer(self._state, self._writes, topic_name, info, (client_name, sub), user)
            if admission.accepted:
                self._writes.record_client(
                    topic_name, ClientRole.CONSUMER, client_name, sub, kind, admission.version, False
                )
        return admission

    def disconnect(self, topic: str, *, name: str, role: ClientRole | str | None = None) -> int:
        """Forget a recorded client; returns how many records went."""
        topic_name = TopicName.parse(topic)
        kind = None if role is None else str(ClientRole(role))
        return self._storage.remove_clients(str(topic_name.base), name, kind)

    # --- creation ---------------------------------------------------------------------------------------

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        """Create a tenant; False when it already existed."""
        with self._auditor.audited(AuditAction.CREATE_TENANT, tenant, user) as note:
            note.target = parse_tenant(tenant)
            was_created = self._writes.create_tenant(note.target)
            note.outcome, note.detail = created(was_created, "tenant")
        return was_created

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        """Create a namespace with default policies (and its tenant, when auto-creation is on)."""
        with self._auditor.audited(AuditAction.CREATE_NAMESPACE, namespace, user) as note:
            ns = NamespaceName.parse(namespace)
            note.target = str(ns)
            was_created = self._storage.namespace_policy(str(ns)) is None
            if was_created:
                self._writes.namespace(ns, create=True)
            note.outcome, note.detail = created(was_created, "namespace")
        return was_created

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        """Create a topic (and its namespace, when auto-creation is on); False when it already existed."""
        with self._auditor.audited(AuditAction.CREATE_TOPIC, topic, user) as note:
            name = TopicName.parse(topic)
            note.target = str(name.base)
            was_created = not self._storage.has_topic(str(name.base))
            if was_created:
                self._writes.ensure_topic(name)
            note.outcome, note.detail = created(was_created, "topic")
        return was_created

    # --- proposals and notifications ----------------------------------------------------------------------

    @property
    def proposals(self) -> EmbeddedProposals:
        return self._proposals

    @property
    def webhooks(self) -> WebhookDesk:
        return self._webhooks

    # --- audit trail and transactions ---------------------------------------------------------------------

    def audit_trail(self, target: str | None = None, *, limit: int = 200) -> list[AuditEntry]:
        """Write attempts through this registry, newest first: all of them, or those about `target` (a topic,
        or a namespace or tenant with everything inside it). Refusals are included with their reason."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number >= 1, got {limit!r}")
        return self._auditor.trail(target, limit)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: the writes made inside (on this thread) commit together when the block ends, one
        fsync for all of them. Each write stays all-or-nothing (a savepoint), refusals are recorded as
        usual; nothing inside is durable before the block ends, so acknowledge the writes after it. An
        exception escaping the block undoes every write made inside it."""
        with self._auditor.transaction():
            yield

    def cache_usage(self) -> tuple[CacheUsage, ...]:
        """How much of the memory budget each cache uses now, this registry's storage read cache included when
        it has one (`serve` exposes it on /metrics). Reads counters only: no storage is touched."""
        read_cache = getattr(self._storage, "read_cache", None)  # a storage of one's own may keep none
        return cache_usage(read_cache.bytes if isinstance(read_cache, ReadCache) else None)

    def _count_write(self) -> None:
        self._own_writes += 1


def _registry_file(text: str, *, create: bool) -> Path:
    """The path of a registry file to open: refused when empty or a folder, and when missing unless `create`."""
    if not text.strip():
        raise StorageError("no registry location given (an empty path)")
    path = Path(text).expanduser()
    if path.is_dir():
        raise StorageError(f"cannot open {text!r}: it is a directory, not a registry file")
    if not create and not path.exists():
        raise RegistryNotFoundError(f"no registry at {text}: pass create=True to make a new one")
    return path


def _stored(storage: LocalStorage) -> tuple[PulsarLine, str]:
    """The line a registry's stored setting names (the default when none is stored), and that source."""
    stored = storage.setting(PULSAR_VERSION_SETTING)
    try:
        chosen = pulsar_line(stored)
    except InvalidArgumentError:  # written by a newer release with a line this one lacks
        raise StorageError(
            f"this registry answers as the Pulsar version line {stored!r}, which this release does not "
            f"know (it knows {', '.join(PULSAR_LINES)}): open it with pulsar_version=... or upgrade"
        ) from None
    return chosen, "stored with the registry" if stored else "the default (none stored)"


def _policy_change(before: NamespacePolicy | TopicPolicy, after: NamespacePolicy | TopicPolicy) -> str:
    """ "field: old → new" for each field that changed, or "no change"."""
    return "; ".join(describe_changes(before, after)) or "no change"


def _client_name(name: object, what: str = "client name") -> str:
    if not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > 255:
        raise InvalidNameError(f"invalid {what} {name!r}: expected 1-255 printable characters")
    return name.strip()
