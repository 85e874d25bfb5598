"""How stored rows map to the model, shared by the SQL backends (SQLite and PostgreSQL): a `schemas` row as a
SchemaVersion, policies as JSON text, and the equality-key mark both stores keep in `meta`."""

from __future__ import annotations

import json
from typing import Any

from .._model import AutoUpdateStrategy, CompatibilityStrategy, NamespacePolicy, SchemaVersion, TopicPolicy
from .._text import readable_mapping
from .._types import SchemaType

# Which equality key (`AvroSchema.equality_key`) the stored equality digests were made with. Bump it whenever
# that key changes; files with another mark forget their digests (NULL), which dedup then recomputes from the
# stored text as it does for any version it has no digest for. 2: an enum's default left out and numeric text
# defaults of float/double fields read as numbers, as Java Avro's Schema.equals sees them.
EQUALITY_FORM = "2"


def history_size(entries: tuple[SchemaVersion, ...]) -> int:
    return sum(len(e.data) + 256 for e in entries)


def schema_version_of(schema_id: str, row: tuple[Any, ...]) -> SchemaVersion:
    """A `schemas` row (version, type, data, properties, timestamp, deleted, user) as a SchemaVersion."""
    v, t, d, p, ts, dl, u = row
    return SchemaVersion(
        topic=schema_id,
        version=int(v),
        type=SchemaType(str(t)),
        data=bytes(d),
        properties=readable_mapping(json.loads(str(p))),  # files from before check_text may hold lone surrogates
        timestamp=int(ts),
        deleted=bool(dl),
        user=str(u),
    )


def topic_policy_to_json(policy: TopicPolicy) -> str:
    return json.dumps({"compatibility": policy.compatibility, "validation_enforced": policy.validation_enforced})


def topic_policy_from_json(text: str) -> TopicPolicy:
    raw = json.loads(text)
    strategy = raw.get("compatibility")
    return TopicPolicy(
        compatibility=CompatibilityStrategy(strategy) if strategy else None,
        validation_enforced=raw.get("validation_enforced"),
    )


def namespace_policy_to_json(policy: NamespacePolicy) -> str:
    return json.dumps(
        {
            "compatibility": policy.compatibility,
            "auto_update_strategy": policy.auto_update_strategy,
            "allow_auto_update": policy.allow_auto_update,
            "allow_auto_update_with_replicator": policy.allow_auto_update_with_replicator,
            "validation_enforced": policy.validation_enforced,
        }
    )


def namespace_policy_from_json(text: str) -> NamespacePolicy:
    raw = json.loads(text)
    auto = raw.get("auto_update_strategy")
    return NamespacePolicy(
        compatibility=CompatibilityStrategy(raw.get("compatibility") or "UNDEFINED"),
        auto_update_strategy=AutoUpdateStrategy(auto) if auto else None,
        allow_auto_update=raw.get("allow_auto_update"),
        allow_auto_update_with_replicator=bool(raw.get("allow_auto_update_with_replicator", True)),
        validation_enforced=bool(raw.get("validation_enforced", False)),
    )
