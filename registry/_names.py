"""Tenant, namespace and topic names, parsed the way Pulsar's `TopicName` does (§1).

A topic's schema history is keyed by its *schema id* `tenant/namespace/base-topic`: no domain, no partition
suffix, so `persistent://t/n/x`, `non-persistent://t/n/x-partition-2` and `t/n/x` share one history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._errors import InvalidNameError

DOMAINS = ("persistent", "non-persistent")
# Pulsar's NamedEntity pattern for tenants and namespaces, also applied to topic local names here so that a
# name can never smuggle a path separator or a control character into URLs, files or SQL.
_NAME = re.compile(r"[-=:.\w]+", re.ASCII)  # Java's \w (NamedEntity) is ASCII-only: Pulsar refuses "tøpic" with 412
_PARTITION = re.compile(r"^(?P<base>.+)-partition-(?P<n>\d+)$")
_DEFAULT_TENANT, _DEFAULT_NAMESPACE = "public", "default"
MAX_NAME_LENGTH = 255

# Topics the broker treats as system topics (§2.4: their strategy is systemTopicSchemaCompatibilityStrategy, and
# auto-update is always allowed). BrokerService.isSystemTopic = NamespaceService.isSystemServiceNamespace (the
# pulsar/system namespace; the per-broker heartbeat/SLA namespaces are not modelled) or
# pulsar-common/.../naming/SystemTopicNames.isSystemTopic: the partitioned local name is exactly one of
# EVENTS_TOPIC_NAMES, or the name ends with PENDING_ACK_STORE_SUFFIX (the transaction coordinator topics live
# in pulsar/system). A name that merely starts with `__change_events` is an ordinary topic
# (SystemTopicNamesTest: `__change_events-diff-suffix` → false).
_SYSTEM_TOPIC_LOCAL_NAMES = frozenset({"__change_events", "__transaction_buffer_snapshot"})
_SYSTEM_TOPIC_SUFFIX = "__transaction_pending_ack"
_SYSTEM_NAMESPACES = frozenset({"pulsar/system"})


def _check_part(kind: str, value: str, whole: str) -> str:
    if not value:
        raise InvalidNameError(f"{kind} name is empty in {whole!r}")
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidNameError(f"{kind} name in {whole!r} is longer than {MAX_NAME_LENGTH} characters")
    if value in (".", "..") or not _NAME.fullmatch(value) or not value.isprintable():
        raise InvalidNameError(f"invalid {kind} name {value!r} in {whole!r}: use letters, digits and - _ = : . only")
    return value


def parse_tenant(name: str) -> str:
    if not isinstance(name, str):
        raise InvalidNameError(f"tenant name must be text, not {type(name).__name__}")
    return _check_part("tenant", name.strip(), name)


@dataclass(frozen=True, slots=True)
class NamespaceName:
    tenant: str
    namespace: str

    @classmethod
    def parse(cls, name: str) -> NamespaceName:
        if not isinstance(name, str):
            raise InvalidNameError(f"namespace name must be text, not {type(name).__name__}")
        parts = name.strip().split("/")
        if len(parts) != 2:
            raise InvalidNameError(f"invalid namespace name {name!r}: expected 'tenant/namespace'")
        return cls(_check_part("tenant", parts[0], name), _check_part("namespace", parts[1], name))

    def __str__(self) -> str:
        return f"{self.tenant}/{self.namespace}"


@dataclass(frozen=True, slots=True)
class TopicName:
    domain: str
    tenant: str
    namespace: str
    local_name: str

    @classmethod
    def parse(cls, name: str | TopicName) -> TopicName:
        """Accept `domain://t/n/x`, `t/n/x` and a bare `x` (→ public/default), as Pulsar's TopicName.get."""
        if isinstance(name, TopicName):
            return name
        if not isinstance(name, str):
            raise InvalidNameError(f"topic name must be text, not {type(name).__name__}")
        text = name.strip()
        domain = "persistent"
        if "://" in text:
            domain, _, text = text.partition("://")
            if domain not in DOMAINS:
                raise InvalidNameError(f"invalid topic domain {domain!r} in {name!r}: expected one of {DOMAINS}")
        parts = text.split("/")
        if len(parts) == 1 and "://" not in name:
            parts = [_DEFAULT_TENANT, _DEFAULT_NAMESPACE, parts[0]]
        if len(parts) != 3:
            raise InvalidNameError(f"invalid topic name {name!r}: expected '[persistent://]tenant/namespace/topic'")
        return cls(
            domain,
            _check_part("tenant", parts[0], name),
            _check_part("namespace", parts[1], name),
            _check_part("topic", parts[2], name),
        )

    @property
    def partition(self) -> int | None:
        match = _PARTITION.match(self.local_name)
        return int(match["n"]) if match else None

    @property
    def base_name(self) -> str:
        """The local name without a `-partition-N` suffix."""
        match = _PARTITION.match(self.local_name)
        return match["base"] if match else self.local_name

    @property
    def namespace_name(self) -> NamespaceName:
        return NamespaceName(self.tenant, self.namespace)

    @property
    def schema_id(self) -> str:
        """`TopicName.getSchemaName`: tenant/namespace/base topic, without domain (§1)."""
        return f"{self.tenant}/{self.namespace}/{self.base_name}"

    @property
    def base(self) -> TopicName:
        return TopicName(self.domain, self.tenant, self.namespace, self.base_name)

    @property
    def is_system_topic(self) -> bool:
        base = self.base_name
        return (
            str(self.namespace_name) in _SYSTEM_NAMESPACES
            or base in _SYSTEM_TOPIC_LOCAL_NAMES
            or base.endswith(_SYSTEM_TOPIC_SUFFIX)
        )

    def __str__(self) -> str:
        return f"{self.domain}://{self.tenant}/{self.namespace}/{self.local_name}"
