"""`audit policy-impact --strategy S [--namespace TENANT/NS]`: what a proposed namespace strategy would have
refused, for one namespace or all, computed by the core's `Registry.policy_impact` on in-memory registries
rebuilt per Arrow batch (a namespace's topics may spread over batches; each answers for its own topics).

Tables (Parquet under OUT/):
  policy_impact: tenant, namespace, topic, proposed, current_strategy, current_source, overridden,
                 live_versions, refused_versions (array<bigint>), first_refused_version, rule_code, reader_path,
                 writer_path, message, latest_refused, refused_clients, error
  policy_impact_clients: tenant, namespace, topic, role, client, subscription, version, reason
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry import CompatibilityStrategy, RegistryError
from registry.storage._ranges import TopicBundle

from ._arrow import schema

if TYPE_CHECKING:
    from ._tasks import Job

MESSAGE_LIMIT = 500

OUTPUT = schema(
    ("kind", pa.string()), ("tenant", pa.string()), ("namespace", pa.string()), ("topic", pa.string()),
    ("proposed", pa.string()), ("current_strategy", pa.string()), ("current_source", pa.string()),
    ("overridden", pa.bool_()), ("live_versions", pa.int64()), ("refused_versions", pa.list_(pa.int64())),
    ("first_refused_version", pa.int64()), ("rule_code", pa.string()), ("reader_path", pa.string()),
    ("writer_path", pa.string()), ("message", pa.string()), ("latest_refused", pa.bool_()),
    ("refused_clients", pa.int64()), ("error", pa.string()), ("role", pa.string()), ("client", pa.string()),
    ("subscription", pa.string()), ("version", pa.int64()), ("reason", pa.string()),
)  # fmt: skip
TOPIC_COLUMNS = [
    "tenant", "namespace", "topic", "proposed", "current_strategy", "current_source", "overridden",
    "live_versions", "refused_versions", "first_refused_version", "rule_code", "reader_path", "writer_path",
    "message", "latest_refused", "refused_clients", "error",
]  # fmt: skip
CLIENT_COLUMNS = ["tenant", "namespace", "topic", "role", "client", "subscription", "version", "reason"]


def namespace_rows(registry: Any, namespace: str, strategy: CompatibilityStrategy) -> list[dict[str, Any]]:
    """Topic rows and refused-client rows of one namespace, straight from `Registry.policy_impact`."""
    tenant = namespace.split("/")[0]
    impact = registry.policy_impact(namespace, strategy)
    rows: list[dict[str, Any]] = []
    for t in impact.topics:
        first = t.first_problem
        base = {"tenant": tenant, "namespace": namespace, "topic": t.topic}
        rows.append(
            {
                **base,
                "kind": "topic",
                "proposed": str(t.proposed),
                "current_strategy": str(t.current.value),
                "current_source": str(t.current.source),
                "overridden": t.overridden,
                "live_versions": len(registry.history(t.topic)),
                "refused_versions": list(t.refused_versions),
                "first_refused_version": t.refused_versions[0] if t.refused_versions else None,
                "rule_code": None if first is None else str(first.code),
                "reader_path": None if first is None else first.reader_path,
                "writer_path": None if first is None else first.writer_path,
                "message": None if first is None else first.message[:MESSAGE_LIMIT],
                "latest_refused": t.latest_refused,
                "refused_clients": len(t.refused_clients),
            }
        )
        for refused in t.refused_clients:
            c = refused.client
            rows.append(
                {
                    **base,
                    "kind": "client",
                    "role": str(c.role),
                    "client": c.name,
                    "subscription": c.subscription,
                    "version": c.version,
                    "reason": refused.reason[:MESSAGE_LIMIT],
                }
            )
    return rows


def make_job(header: dict[str, Any], strategy: CompatibilityStrategy) -> Job:
    """The job a task runs on each batch of topic bundles: one in-memory registry per batch, the policy impact
    of each namespace in it (each answers for its own topics; a namespace may spread over batches)."""
    from ._source import batch_registry, topics_of

    def job(batch: list[TopicBundle]) -> list[dict[str, Any]]:
        registry, errors = batch_registry(header, batch)
        rows: list[dict[str, Any]] = []
        by_namespace: dict[str, list[TopicBundle]] = defaultdict(list)
        for bundle in batch:
            if bundle.key in errors:
                rows += [_error(t, ns, topic, errors[bundle.key]) for t, ns, topic in topics_of(bundle)]
            else:
                by_namespace[bundle.namespace].append(bundle)
        for namespace, bundles in by_namespace.items():
            try:
                rows += namespace_rows(registry, namespace, strategy)
            except (RegistryError, ValueError, KeyError) as exc:
                reason = f"{type(exc).__name__}: {exc}"
                rows += [_error(t, ns, topic, reason) for b in bundles for t, ns, topic in topics_of(b)]
        return rows

    return job


def _error(tenant: str, namespace: str, topic: str, error: str) -> dict[str, Any]:
    return {"kind": "topic", "tenant": tenant, "namespace": namespace, "topic": topic, "error": error[:MESSAGE_LIMIT]}
