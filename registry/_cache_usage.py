"""How much of the one cache budget (registry/_cache_budget.py) each cache uses now.

`schema-explorer serve` exposes it on /metrics (`schema_explorer_cache_bytes{part=...}`), so an operator sees
the budget filling before requests slow down. Every figure is a byte count each cache already keeps: reading
them costs nothing and touches no storage.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._cache_budget import (
    AVRO_PARSED_BYTES,
    CANDIDATE_WORK_BYTES,
    CANDIDATES,
    PROTOBUF_MODEL_BYTES,
    PROTOBUF_PARSED_BYTES,
    READ_CACHE_BYTES,
)


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """One part of the budget: its name, the bytes it accounts for now, and its share."""

    part: str
    used_bytes: int
    budget_bytes: int


def cache_usage(read_cache_bytes: int | None = None) -> tuple[CacheUsage, ...]:
    """Each cache's bytes: parsed Avro and PROTOBUF_NATIVE schemas, PROTOBUF_NATIVE diff models, large
    candidates being worked on and, when given, the histories a storage's read cache holds
    (`Registry.cache_usage()` passes its storage's). The server's own cache of hot answers is the server's to
    report."""
    from .avro._schema import parse_cache_bytes
    from .protobuf._descriptor import MODELS
    from .protobuf._native import PARSED

    parts = [
        CacheUsage("avro_parsed", parse_cache_bytes(), AVRO_PARSED_BYTES),
        CacheUsage("protobuf_parsed", PARSED.bytes, PROTOBUF_PARSED_BYTES),
        CacheUsage("protobuf_models", MODELS.bytes, PROTOBUF_MODEL_BYTES),
        CacheUsage("large_candidates", CANDIDATES.bytes, CANDIDATE_WORK_BYTES),
    ]
    if read_cache_bytes is not None:
        parts.append(CacheUsage("read_histories", read_cache_bytes, READ_CACHE_BYTES))
    return tuple(parts)
