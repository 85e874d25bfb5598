"""`audit compat-matrix`: for every topic, can each live version read the data of each other one?

Per pair (reader version R, writer version W, R != W) of a topic's latest `max_versions` live versions:

- `compatible`: Pulsar's verdict when R is checked against W as BACKWARD (R reads data written with W), with
  the first problem's rule code and JSON pointers: what the broker's compatibility check says;
- `readable`: the core's `can_read(R, W)`, which adds the wire breaks Pulsar's checkers let through
  (PROTOBUF_NATIVE field changes, PROTOBUF without a checker): whether R's consumers really decode W's data.

Per topic, `readable_since` is the oldest live version from which every version up to the latest reads every
other one (both ways): the versions that are still mutually readable.

Tables (Parquet under OUT/):
  compat_matrix: tenant, namespace, topic, schema_type, reader_version, writer_version, compatible, readable,
                 rule_code, reader_path, writer_path, message
  compat_topics: tenant, namespace, topic, schema_type, live_versions, checked_versions, pairs,
                 incompatible_pairs, unreadable_pairs, readable_since, error
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from registry import RegistryError
from registry._compatibility import pair_verdict as core_pair_verdict
from registry._pulsar_version import answering_as
from registry._types import SchemaData
from registry.storage._ranges import TopicBundle

from ._arrow import schema
from ._source import batch_registry, topics_of

if TYPE_CHECKING:
    from ._tasks import Job

PAIR_COLUMNS = [
    "tenant", "namespace", "topic", "schema_type", "reader_version", "writer_version", "compatible", "readable",
    "rule_code", "reader_path", "writer_path", "message",
]  # fmt: skip
TOPIC_COLUMNS = [
    "tenant", "namespace", "topic", "schema_type", "live_versions", "checked_versions", "pairs",
    "incompatible_pairs", "unreadable_pairs", "readable_since", "error",
]  # fmt: skip
OUTPUT = schema(
    ("kind", pa.string()), ("tenant", pa.string()), ("namespace", pa.string()), ("topic", pa.string()),
    ("schema_type", pa.string()), ("reader_version", pa.int64()), ("writer_version", pa.int64()),
    ("compatible", pa.bool_()), ("readable", pa.bool_()), ("rule_code", pa.string()), ("reader_path", pa.string()),
    ("writer_path", pa.string()), ("message", pa.string()), ("live_versions", pa.int64()),
    ("checked_versions", pa.int64()), ("pairs", pa.int64()), ("incompatible_pairs", pa.int64()),
    ("unreadable_pairs", pa.int64()), ("readable_since", pa.int64()), ("error", pa.string()),
)  # fmt: skip
MESSAGE_LIMIT = 500


def topic_rows(registry: Any, tenant: str, namespace: str, topic: str, max_versions: int) -> list[dict[str, Any]]:
    """The pair rows and the topic row for one topic (kind = "pair" / "topic"), from the core's verdicts."""
    base = {"tenant": tenant, "namespace": namespace, "topic": topic}
    live = registry.history(topic)
    line = registry.pulsar_version
    checked = live[-max_versions:] if max_versions > 0 else live
    schemas = [SchemaData(e.type, e.data, e.properties) for e in checked]
    rows: list[dict[str, Any]] = []
    readable: dict[tuple[int, int], bool] = {}
    incompatible = unreadable = 0
    for r, reader in enumerate(checked):
        for w, writer in enumerate(checked):
            if r == w:
                continue
            compatible, reads, verdict = pair_verdict(schemas[r], schemas[w], writer.version, line)
            readable[(r, w)] = reads
            incompatible += not compatible
            unreadable += not reads
            rows.append(
                {
                    **base,
                    "kind": "pair",
                    "schema_type": str(reader.type),
                    "reader_version": reader.version,
                    "writer_version": writer.version,
                    **verdict,
                }
            )
    since = None
    for start in range(len(checked) - 1, -1, -1):
        if all(readable[(start, o)] and readable[(o, start)] for o in range(start + 1, len(checked))):
            since = checked[start].version
        else:
            break
    rows.append(
        {
            **base,
            "kind": "topic",
            "schema_type": str(live[-1].type) if live else None,
            "live_versions": len(live),
            "checked_versions": len(checked),
            "pairs": len(checked) * (len(checked) - 1),
            "incompatible_pairs": incompatible,
            "unreadable_pairs": unreadable,
            "readable_since": since,
        }
    )
    return rows


# The core's verdicts per schema pair, kept by the worker process across batches and tasks (Spark reuses Python
# workers): topics made from one template share their pairs. Bounded, since a fleet's pairs are many.
_VERDICTS: dict[tuple[Any, ...], tuple[bool, bool, dict[str, Any]]] = {}
VERDICT_CACHE = 200_000


def pair_verdict(
    reader: SchemaData, writer: SchemaData, writer_version: int, line: str
) -> tuple[bool, bool, dict[str, Any]]:
    """(compatible, readable, the pair row's verdict columns) from the core, once per identical pair and Pulsar
    line (run under `answering_as(line)`). The writer version is part of the key: the core's problems name the
    version they fail against."""
    key = (line, writer_version, reader.type, reader.data, tuple(sorted(reader.properties.items())),
           writer.type, writer.data, tuple(sorted(writer.properties.items())))  # fmt: skip
    found = _VERDICTS.get(key)
    if found is not None:
        return found
    core = core_pair_verdict(reader, writer, writer_version)
    first = core.first
    verdict = {
        "compatible": core.compatible,
        "readable": core.readable,
        "rule_code": None if first is None else str(first.code),
        "reader_path": None if first is None else first.reader_path,
        "writer_path": None if first is None else first.writer_path,
        "message": None if first is None else first.message[:MESSAGE_LIMIT],
    }
    if len(_VERDICTS) >= VERDICT_CACHE:
        _VERDICTS.clear()
    found = _VERDICTS[key] = (core.compatible, core.readable, verdict)
    return found


def error_row(tenant: str, namespace: str, topic: str, error: str) -> dict[str, Any]:
    return {"kind": "topic", "tenant": tenant, "namespace": namespace, "topic": topic, "error": error[:MESSAGE_LIMIT]}


def make_job(header: dict[str, Any], max_versions: int) -> Job:
    """The job a task runs on each batch of topic bundles: one in-memory registry per batch, the core's
    verdicts for every topic in it (a bundle that does not load is one error row per topic)."""

    def job(batch: list[TopicBundle]) -> list[dict[str, Any]]:
        registry, errors = batch_registry(header, batch)
        rows: list[dict[str, Any]] = []
        # The verdicts of the registry's Pulsar line (pair_verdict calls the core's checkers directly).
        with answering_as(registry.pulsar_version):
            for bundle in batch:
                for tenant, namespace, topic in topics_of(bundle):
                    if bundle.key in errors:
                        rows.append(error_row(tenant, namespace, topic, errors[bundle.key]))
                        continue
                    try:
                        rows += topic_rows(registry, tenant, namespace, topic, max_versions)
                    except (RegistryError, ValueError, KeyError) as exc:
                        rows.append(error_row(tenant, namespace, topic, f"{type(exc).__name__}: {exc}"))
        return rows

    return job
