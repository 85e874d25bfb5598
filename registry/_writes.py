"""The embedded registry's writes: schemas (putSchemaIfAbsent and tombstones, pulsar-semantics.md §3.1–§3.5),
the tenants, namespaces and topics they need, policies and recorded clients.

There is one schema write path. Both local storages keep each version's fingerprints (`IndexedHistory`), so
a registration compares digests instead of parsing every stored version, reads only the versions its
strategy checks, and appends with compare-and-set on the latest version, retried when another writer (thread
or process) got there first: Pulsar serialises concurrent puts the same way (§3.1).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from ._dedup import equality_digest, invalid_default_error, legacy_json_refusal, parse_stored, poisoned_error
from ._errors import (
    IncompatibleSchemaError,
    InvalidSchemaError,
    NamespaceNotFoundError,
    StorageError,
    TenantNotFoundError,
)
from ._history import next_version, stored_type
from ._model import (
    ClientRecord,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    NamespacePolicy,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName
from ._schema_data import checked_info, parse_avro_data, to_schema_data
from ._state import RegistryState
from ._types import AVRO_PARSED_TYPES, SchemaData, SchemaType
from .avro._nodes import AvroSchema
from .policy._changes import NamespacePolicyChange, TopicPolicyChange
from .policy._rules import require_expected
from .storage._base import Fingerprint, LocalStorage, StaleHistoryError

_MAX_ATTEMPTS = 200


class LocalWrites:
    """Writes to one local storage; `state` reads the same storage, `clock` stamps what is stored (ms)."""

    def __init__(self, storage: LocalStorage, state: RegistryState, clock: Callable[[], int]) -> None:
        self._storage = storage
        self._state = state
        self._clock = clock

    # --- schemas -------------------------------------------------------------------------------------------

    def register(
        self, name: TopicName, info: SchemaInfo, user: str
    ) -> tuple[SchemaData, int, bool, CompatibilityResult | None]:
        """REST POST /schema's write (§3.3): validated, the topic made where auto-creation allows, appended
        under the strategy the admin API judges by (auto-update ignored). One path for a direct registration
        and an applied proposal: (the stored form, version, stored, verdict)."""
        data = to_schema_data(checked_info(info))
        self.ensure_topic(name)
        strategy = self._state.admin_strategy(name).value
        version, stored, verdict = self.put_if_absent(name, data, strategy, user)
        return data, version, stored, verdict

    def put_if_absent(
        self, name: TopicName, data: SchemaData, strategy: CompatibilityStrategy, user: str
    ) -> tuple[int, bool, CompatibilityResult | None]:
        """putSchemaIfAbsent (§3.3): (version, stored, verdict). Dedup compares digests (filtered by the
        storage), and only the versions the strategy checks are read (the latest, or every live one when
        transitive), so its cost hardly grows with the history's length."""
        storage = self._storage
        sha256 = hashlib.sha256(data.data).digest()
        parsed: AvroSchema | InvalidSchemaError | None = None
        equality = None
        if data.type in AVRO_PARSED_TYPES:
            try:
                parsed = parse_avro_data(data.type, data.data)
            except InvalidSchemaError as exc:
                parsed = legacy_json_refusal(data, exc, self._state.line)
            else:
                equality = equality_digest(parsed)
        for _ in range(_MAX_ATTEMPTS):
            scan = storage.dedup_scan(name.schema_id, data.type, sha256, equality)
            if scan.has_live and isinstance(parsed, InvalidSchemaError):
                raise parsed
            if scan.has_live and isinstance(parsed, AvroSchema) and parsed.invalid_defaults:
                raise invalid_default_error(data.type, parsed)
            try:
                match = self._duplicate(name, scan.rows, data.type, equality)
            except StaleHistoryError:
                continue
            if match is not None:
                return match, False, None
            result = None
            if scan.has_live and scan.latest is not None:
                transitive_from = -1 if scan.tombstone is None else scan.tombstone + 1
                first = transitive_from if strategy.is_transitive else scan.latest
                entries: list[SchemaVersion] = []
                if strategy is not CompatibilityStrategy.ALWAYS_COMPATIBLE:  # which answers without looking
                    entries = storage.history_range(name.schema_id, first, scan.latest)
                    if not entries or entries[-1].version != scan.latest:
                        continue  # another process changed the history meanwhile
                result = self._state.judge(entries, data, strategy)
                if not result.compatible:
                    raise IncompatibleSchemaError(f"Incompatible schema for {name}: {result.message}", result)
            entry = self._entry(name, 0 if scan.latest is None else scan.latest + 1, data, user)
            stored_equality = equality if isinstance(parsed, AvroSchema) and not parsed.invalid_defaults else None
            try:
                storage.append_indexed(entry, scan.latest, stored_equality)
            except StaleHistoryError:
                continue
            return entry.version, True, result
        raise StorageError(f"could not register a schema on {name}: too many concurrent writers")

    def _duplicate(
        self, name: TopicName, rows: Sequence[Fingerprint], kind: SchemaType, equality: bytes | None
    ) -> int | None:
        """The duplicate check over the live versions a `DedupScan` kept: the first equal to the candidate.

        A version whose equality digest is not known yet is parsed, as `find_duplicate` would parse it (a
        poisoned one refuses), and its digest remembered. The other versions can neither match nor refuse."""
        learned: dict[int, bytes] = {}
        match = None
        for found in rows:
            digest = found.equality
            if kind in AVRO_PARSED_TYPES and digest is None:
                stored = self._storage.history_range(name.schema_id, found.version, found.version)
                if not stored:
                    raise StaleHistoryError(name.schema_id)
                old = parse_stored(name, found.version, found.type, stored[0].data)
                if old.invalid_defaults:
                    raise poisoned_error(name, found.version, old)
                digest = learned[found.version] = equality_digest(old)
            if found.type is kind and (digest == equality if kind in AVRO_PARSED_TYPES else True):
                match = found.version
                break
        if learned:
            self._storage.put_equalities(name.schema_id, learned)
        return match

    def soft_delete(self, name: TopicName, user: str) -> int:
        """Append a tombstone (§3.5) and return its version."""
        self.ensure_topic(name)
        for _ in range(_MAX_ATTEMPTS):
            entries = self._storage.history(name.schema_id)
            latest = entries[-1].version if entries else None
            tombstone = SchemaVersion(
                topic=name.schema_id,
                version=next_version(entries),
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
            except StaleHistoryError:
                continue
        raise StorageError(f"could not delete the schema of {name}: too many concurrent writers")

    def _entry(self, name: TopicName, version: int, data: SchemaData, user: str) -> SchemaVersion:
        return SchemaVersion(
            topic=name.schema_id,
            version=version,
            type=stored_type(data.type),
            data=data.data,
            properties=dict(data.properties),
            timestamp=self._clock(),
            deleted=False,
            user=user,
        )

    # --- tenants, namespaces, topics ------------------------------------------------------------------------

    def namespace(self, ns: NamespaceName, *, create: bool) -> NamespacePolicy:
        """A namespace's policies; with `create`, made (and its tenant, when auto-creation is on) if missing."""
        policy = self._storage.namespace_policy(str(ns))
        if policy is not None:
            return policy
        if not create:
            raise NamespaceNotFoundError(f"Namespace does not exist: {ns}")
        if ns.tenant not in self._storage.tenants():
            if not self._state.auto_create:
                raise TenantNotFoundError(f"Tenant does not exist: {ns.tenant}")
            self._storage.put_tenant(ns.tenant, self._clock())
        policy = NamespacePolicy()
        self._storage.put_namespace(str(ns), policy, self._clock())
        return policy

    def ensure_topic(self, name: TopicName) -> None:
        """The topic exists after this: created, with its namespace when auto-creation is on."""
        base = str(name.base)
        if self._storage.has_topic(base):
            return
        if self._storage.namespace_policy(str(name.namespace_name)) is None:
            if not self._state.auto_create:
                raise NamespaceNotFoundError(f"Namespace does not exist: {name.namespace_name}")
            self.namespace(name.namespace_name, create=True)
        self._storage.put_topic(base, str(name.namespace_name), self._clock())

    def create_tenant(self, tenant: str) -> bool:
        """False when it already existed."""
        return self._storage.put_tenant(tenant, self._clock())

    # --- policies and clients -------------------------------------------------------------------------------

    def change_namespace_policy(
        self, ns: NamespaceName, change: NamespacePolicyChange, expected: object | None
    ) -> tuple[NamespacePolicy, NamespacePolicy]:
        """A namespace policy change, only while the stored policy is `expected` (PolicyChangedError otherwise,
        nothing written); the namespace made where auto-creation allows. One path for a direct change and an
        applied proposal: (before, after)."""
        before = self._storage.namespace_policy(str(ns)) or NamespacePolicy()
        require_expected(expected, before, str(ns))
        after = change.applied_to(self.namespace(ns, create=self._state.auto_create))
        self._storage.put_namespace(str(ns), after, self._clock())
        return before, after

    def change_topic_policy(
        self, name: TopicName, change: TopicPolicyChange, expected: object | None
    ) -> tuple[TopicPolicy, TopicPolicy]:
        """A topic's own policy change, as `change_namespace_policy`; all-default policies are removed rather
        than stored."""
        before = self._storage.topic_policy(str(name)) or TopicPolicy()
        require_expected(expected, before, str(name))
        self.ensure_topic(name)
        after = change.applied_to(before)
        self._storage.put_topic_policy(str(name), None if after == TopicPolicy() else after)
        return before, after

    def record_client(
        self,
        name: TopicName,
        role: ClientRole,
        client: str,
        subscription: str,
        kind: SchemaType | None,
        version: int | None,
        replicator: bool,
    ) -> None:
        """Record an admitted producer or consumer as connected."""
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
