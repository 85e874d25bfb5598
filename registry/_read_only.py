"""A read-only view of a registry: reads pass through, every write raises ReadOnlyError before touching storage.

The view allows methods by name (an allowlist, not a list of writes): a write method added to Registry later is
refused until someone decides it only reads. Private attributes are refused too, so nothing reaches the storage
behind the view's back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import ReadOnlyError

if TYPE_CHECKING:
    from ._facade import SchemaRegistry

# Every public Registry member that neither writes nor hands out a way to write.
READS = frozenset(
    {
        "audit_trail",
        "broker",
        "cancel_index",
        "change_token",
        "check",
        "clients",
        "close",
        "connected_clients",
        "diff",
        "effective_policy",
        "find_version",
        "get",
        "history",
        "index_status",
        "location",
        "namespace_policy",
        "namespaces",
        "policy_impact",
        "preview_namespace_policy",
        "preview_topic_policy",
        "pulsar_profile",
        "pulsar_version",
        "pulsar_version_source",
        "records_clients",
        "refresh_index",
        "requests_sent",
        "search_topics",
        "stored_pulsar_version",
        "tenants",
        "topic_policy",
        "topic_summary",
        "topics",
        "upgrade_plan",
        "what_if",
    }
)
# Every public Registry member that writes (kept beside READS so a test can check that each member is in one).
WRITES = frozenset(
    {
        "batch",
        "connect_consumer",
        "connect_producer",
        "create_namespace",
        "create_tenant",
        "create_topic",
        "delete",
        "disconnect",
        "register",
        "set_namespace_policy",
        "set_pulsar_version",
        "set_topic_policy",
    }
)


class ReadOnlyRegistry:
    """What `Registry.read_only()` returns: answers like the registry it wraps, refuses every write."""

    __slots__ = ("_registry",)

    def __init__(self, registry: SchemaRegistry) -> None:
        self._registry = registry

    @property
    def is_read_only(self) -> bool:
        return True

    def read_only(self) -> ReadOnlyRegistry:
        return self

    def __getattr__(self, name: str) -> Any:
        if name in READS:
            return getattr(self._registry, name)
        raise ReadOnlyError(f"this registry handle is read-only: {name} is refused and nothing was written")

    def __repr__(self) -> str:
        return f"ReadOnlyRegistry({self._registry!r})"
