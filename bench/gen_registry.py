"""Generate synthetic registries (as snapshots) and message archives for the Spark pipeline's benchmarks,
and the small sample archive in sample_data/messages/.

    python bench/gen_registry.py registry --out /tmp/big.jsonl [--topics 10000 --versions 20]
    python bench/gen_registry.py registry --db postgresql://u@host/db --topics 1000000 --versions 3
    python bench/gen_registry.py archive --snapshot /tmp/big.jsonl --out /tmp/archive [--messages 2000000]
    python bench/gen_registry.py sample            # rewrites sample_data/messages/ from sample_data/

Synthetic registry: tenants t0.., 10 namespaces per tenant with strategies in turn, topics with `--versions`
AVRO versions each: version k adds an optional field with a default to version k-1 (every strategy accepts
it); one topic in 10 also adds a required field without a default at version versions/2 (BACKWARD refuses
it), and one in 10 drops an enum symbol at the last version (Pulsar accepts it; data with that symbol then
fails to resolve). Every topic has one producer (latest version) and one consumer (version 0).

Archive: Parquet files (topic, version, publish_time, payload) over the first `--archive-topics` topics, each
message written with a random live version; payloads are drawn from 256 encoded random datums per version
(decode cost is what matters, not entropy). All output is deterministic for a given `--seed`.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import fastavro  # noqa: E402

STRATEGIES = ("BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")
SYMBOLS = ["NEW", "ACTIVE", "PAUSED", "CLOSED", "ARCHIVED"]
BASE_MILLIS = 1_704_067_200_000  # 2024-01-01T00:00:00Z


# --- random datums for an Avro schema --------------------------------------------------------------------------


def random_datum(node: Any, rng: random.Random, named: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A random value of an Avro schema (JSON form), using plain values for logical types (ints for
    timestamps and dates, Decimal for decimals) so it can be written as Avro or as JSON."""
    named = {} if named is None else named
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if "null" in node and (rng.random() < 0.2 or not branches or depth > 6):
            return None
        return random_datum(rng.choice(branches), rng, named, depth + 1)
    if isinstance(node, str):
        if node in named:
            return random_datum(named[node], rng, named, depth + 1)
        node = {"type": node}
    kind = node.get("type")
    if isinstance(kind, (list, dict)):
        return random_datum(kind, rng, named, depth + 1)
    if kind in ("record", "error"):
        named[node["name"]] = node
        if "namespace" in node:
            named[f"{node['namespace']}.{node['name']}"] = node
        return {f["name"]: random_datum(f["type"], rng, named, depth + 1) for f in node.get("fields", [])}
    if kind == "enum":
        named[node["name"]] = node
        return rng.choice(node["symbols"])
    if kind == "fixed":
        named[node["name"]] = node
        return rng.randbytes(node["size"])
    if kind == "array":
        return [
            random_datum(node["items"], rng, named, depth + 1) for _ in range(rng.randint(0, 3 if depth < 4 else 0))
        ]
    if kind == "map":
        count = rng.randint(0, 3 if depth < 4 else 0)
        return {f"k{i}": random_datum(node["values"], rng, named, depth + 1) for i in range(count)}
    logical = node.get("logicalType")
    if logical == "decimal":
        from decimal import Decimal

        scale = int(node.get("scale", 0))
        return Decimal(rng.randint(0, 10**6)).scaleb(-scale)
    if logical in ("timestamp-millis", "local-timestamp-millis"):
        return BASE_MILLIS + rng.randint(0, 10**10)
    if logical in ("timestamp-micros", "local-timestamp-micros"):
        return (BASE_MILLIS + rng.randint(0, 10**10)) * 1000
    if logical == "date":
        return 19_723 + rng.randint(0, 700)
    if logical in ("time-millis",):
        return rng.randint(0, 86_399_999)
    if logical in ("time-micros",):
        return rng.randint(0, 86_399_999_999)
    if logical == "uuid":
        return f"{rng.getrandbits(128):032x}"[:8] + "-0000-4000-8000-" + f"{rng.getrandbits(48):012x}"
    return {
        "null": lambda: None,
        "boolean": lambda: rng.random() < 0.5,
        "int": lambda: rng.randint(-1000, 100_000),
        "long": lambda: rng.randint(0, 10**12),
        "float": lambda: round(rng.uniform(-100, 100), 2),
        "double": lambda: rng.uniform(-1000, 1000),
        "string": lambda: rng.choice(["alpha", "beta", "gamma", "delta", "ε-unicode", ""]) + str(rng.randint(0, 99)),
        "bytes": lambda: rng.randbytes(rng.randint(0, 8)),
    }.get(str(kind), lambda: None)()


def avro_payload(parsed: Any, datum: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, datum)
    return out.getvalue()


# --- synthetic registry ----------------------------------------------------------------------------------------


def topic_schema(index: int, version: int, versions: int) -> dict[str, Any]:
    """Version `version` of synthetic topic `index` (see the module docstring for the evolution)."""
    symbols = list(SYMBOLS)
    if index % 10 == 3 and version == versions - 1 and versions > 1:
        symbols.remove("ARCHIVED")  # Pulsar accepts a removed symbol; archived data with it will not resolve
    fields: list[dict[str, Any]] = [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "count", "type": "int"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": symbols}},
        {"name": "createdAt", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "address",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "string"]}],
                },
            ],
            "default": None,
        },
    ]
    for k in range(1, version + 1):
        fields.append({"name": f"extra{k}", "type": ["null", "long"], "default": None})
    if index % 10 == 7 and version >= versions // 2 and versions > 1:
        fields.append({"name": "region", "type": "string"})  # no default: BACKWARD refuses it
    return {"type": "record", "name": f"Event{index}", "namespace": "bench.synthetic", "fields": fields}


def synthetic_records(topics: int, versions: int, tenants: int) -> Iterator[dict[str, Any]]:
    yield {"kind": "snapshot", "format": 1, "broker": {"compatibility": "FULL"}}
    per_tenant = [f"t{i}" for i in range(tenants)]
    namespaces = [f"{t}/ns{j}" for t in per_tenant for j in range(10)]
    for tenant in per_tenant:
        yield {"kind": "tenant", "name": tenant}
    for j, ns in enumerate(namespaces):
        policy = {"compatibility": STRATEGIES[j % len(STRATEGIES)]}
        yield {"kind": "namespace", "name": ns, "policy": policy}
    names = [f"persistent://{namespaces[i % len(namespaces)]}/topic-{i}" for i in range(topics)]
    for name in names:
        yield {"kind": "topic", "name": name, "namespace": name.split("://")[1].rsplit("/", 1)[0], "policy": None}
    for i, name in enumerate(names):
        for v in range(versions):
            yield {
                "kind": "version",
                "topic": name.split("://")[1],
                "version": v,
                "type": "AVRO",
                "deleted": False,
                "timestamp": BASE_MILLIS + (i * versions + v) * 60_000,
                "user": "bench",
                "properties": {},
                "schema": json.dumps(topic_schema(i, v, versions), separators=(",", ":")),
            }
    for name in names:
        yield {"kind": "client", "topic": name, "role": "producer", "name": "writer", "version": versions - 1}
        yield {"kind": "client", "topic": name, "role": "consumer", "name": "reader", "subscription": "reader",
               "schema_type": "AVRO", "version": 0}  # fmt: skip


def load_registry(location: str, topics: int, versions: int, tenants: int) -> None:
    """The synthetic registry straight into an empty SQLite file or PostgreSQL database, streamed through the
    import's bulk path (COPY on PostgreSQL), never held in memory: what `schema-explorer import` does."""
    from registry import Registry
    from registry._snapshot import registry_from_records

    reg = Registry.open(location, create=True)
    try:
        registry_from_records(synthetic_records(topics, versions, tenants), into=reg)
    finally:
        reg.close()


def write_registry(out: Path, topics: int, versions: int, tenants: int) -> int:
    lines = 0
    with out.open("w", encoding="utf-8") as handle:
        for record in synthetic_records(topics, versions, tenants):
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
            lines += 1
    return lines


# --- archives --------------------------------------------------------------------------------------------------


def write_archive(snapshot: Path, out: Path, messages: int, archive_topics: int, seed: int, files: int = 8) -> int:
    """Parquet archive of `messages` Avro messages over the snapshot's first `archive_topics` AVRO topics."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from registry._snapshot import read_snapshot_records

    rng = random.Random(seed)
    histories: dict[str, list[tuple[int, str]]] = {}
    for record in read_snapshot_records(snapshot):
        if record["kind"] == "version" and record.get("type") == "AVRO" and not record.get("deleted"):
            if record["topic"] in histories or len(histories) < archive_topics:
                histories.setdefault(record["topic"], []).append((record["version"], record["schema"]))
    pools: list[tuple[str, int, list[bytes]]] = []
    for topic, entries in histories.items():
        for version, text in entries:
            doc = json.loads(text)
            parsed = fastavro.parse_schema(doc)
            pools.append((topic, version, [avro_payload(parsed, random_datum(doc, rng)) for _ in range(256)]))
    out.mkdir(parents=True, exist_ok=True)
    per_file = -(-messages // files)
    written = 0
    for f in range(files):
        count = min(per_file, messages - written)
        if count <= 0:
            break
        picks = [rng.randrange(len(pools)) for _ in range(count)]
        table = pa.table(
            {
                "topic": [f"persistent://{pools[p][0]}" for p in picks],
                "version": pa.array([pools[p][1] for p in picks], pa.int64()),
                "publish_time": pa.array([BASE_MILLIS + written + i for i in range(count)], pa.int64()),
                "payload": pa.array([rng.choice(pools[p][2]) for p in picks], pa.binary()),
            }
        )
        pq.write_table(table, out / f"part-{f:03d}.parquet")
        written += count
    return written


SAMPLE_TOPICS = (
    "acme/orders/order-created",
    "acme/orders/order-status-changed",
    "acme/orders/order-line-items",
    "acme/inventory/stock-levels",
    "acme/payments/ledger-entries",
    "globex/telemetry/sensor-readings",
    "globex/telemetry/device-heartbeat",
    "initech/hr/employee-records",
    "initech/analytics/page-views",
)
# KEY_VALUE (INLINE and SEPARATED, AVRO/JSON/primitive parts) and primitive topics: keyed-and-primitive.jsonl,
# drawn from their own random stream so the files above stay as they were.
KEYED_AND_PRIMITIVE_TOPICS = (
    "acme/inventory/sku-reservations",
    "acme/orders/cart-events",
    "acme/payments/payment-methods",
    "globex/iot/device-commands",
    "globex/telemetry/alerts",
    "initech/analytics/session-aggregates",
    "initech/hr/badge-swipes",
    "acme/inventory/restock-paused",
    "acme/orders/order-notes",
    "acme/orders/order-sequence",
    "acme/payments/fx-rate-eur-usd",
    "globex/iot/battery-level",
    "globex/telemetry/cpu-temperature",
    "globex/telemetry/raw-frames",
    "initech/legacy/fax-gateway",
)


def write_sample(out: Path, per_version: int = 12, seed: int = 7) -> int:
    """sample_data/messages/: JSON lines per tenant from the sample registry, keyed-and-primitive.jsonl for
    the KEY_VALUE and primitive topics, and damaged.jsonl."""
    from registry import Registry, SchemaType, seed_sample_data

    reg = Registry.in_memory()
    seed_sample_data(reg)
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    by_tenant: dict[str, list[str]] = {}
    written = 0
    for topic in SAMPLE_TOPICS:
        tenant = topic.split("/")[0]
        for entry in reg.history(topic):
            for i in range(per_version):
                payload = sample_payload(entry, rng)
                at = entry.timestamp + (i + 1) * 3_600_000
                row = {"topic": f"persistent://{topic}", "version": entry.version, "publish_time": at}
                row["payload"] = base64.b64encode(payload).decode("ascii")
                by_tenant.setdefault(tenant, []).append(json.dumps(row, separators=(",", ":")))
                written += 1
        assert reg.get(topic).type in (SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF_NATIVE)
    for tenant, lines in by_tenant.items():
        (out / f"{tenant}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    good = base64.b64encode(sample_payload(reg.get("acme/orders/order-created"), rng)).decode("ascii")
    damaged = [
        # cut off mid-write (a crashed exporter)
        '{"topic":"persistent://acme/orders/order-created","version":13,"payl',
        # a payload truncated to 3 bytes
        json.dumps(
            {
                "topic": "persistent://acme/orders/order-created",
                "version": 13,
                "payload": base64.b64encode(base64.b64decode(good)[:3]).decode(),
            }
        ),  # fmt: skip
        # a version that was never registered
        json.dumps({"topic": "persistent://acme/orders/order-created", "version": 99, "payload": good}),
        # a topic the registry does not know
        json.dumps({"topic": "persistent://acme/orders/order-archived", "version": 0, "payload": good}),
        # not base64
        json.dumps({"topic": "persistent://acme/orders/order-created", "version": 13, "payload": "%%%"}),
    ]
    kv_rng = random.Random(seed + 1)
    lines = []
    for topic in KEYED_AND_PRIMITIVE_TOPICS:
        for entry in reg.history(topic):
            for i in range(per_version):
                payload, key = sample_message(entry, kv_rng)
                row = {"topic": f"persistent://{topic}", "version": entry.version}
                row["publish_time"] = entry.timestamp + (i + 1) * 3_600_000
                if key is not None:
                    row["key"] = key
                row["payload"] = base64.b64encode(payload).decode("ascii")
                lines.append(json.dumps(row, separators=(",", ":")))
                written += 1
    (out / "keyed-and-primitive.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    separated = reg.get("acme/payments/payment-methods")
    value, key = sample_message(separated, kv_rng)
    damaged += [
        # an INT32 payload of 3 bytes (IntSchema refuses it)
        json.dumps({"topic": "persistent://globex/iot/battery-level", "version": 0, "payload": "AAAA"}),
        # a SEPARATED KEY_VALUE message whose key is not base64
        json.dumps(
            {
                "topic": "persistent://acme/payments/payment-methods",
                "version": separated.version,
                "key": "not base64!",
                "payload": base64.b64encode(value).decode(),
            }
        ),  # fmt: skip
        # an INLINE KEY_VALUE payload whose key length runs past its end
        json.dumps(
            {
                "topic": "persistent://initech/hr/badge-swipes",
                "version": reg.get("initech/hr/badge-swipes").version,
                "payload": base64.b64encode(b"\x00\x00\x01\x00" + b"\x00" * 8).decode(),
            }
        ),  # fmt: skip
    ]
    (out / "damaged.jsonl").write_text("\n".join(damaged) + "\n", encoding="utf-8")
    return written + len(damaged)


def sample_message(entry: Any, rng: random.Random) -> tuple[bytes, str | None]:
    """A random message of a schema version as the Java client writes it: (payload, message key or None).
    KEY_VALUE: INLINE puts both parts in the payload, SEPARATED the key's bytes in the key (base64)."""
    from pipeline._payload import encode_inline
    from registry import SchemaType
    from registry._key_value import decode_key_value
    from registry._types import SchemaData

    schema = SchemaData(entry.type, entry.data, entry.properties)
    if schema.type is not SchemaType.KEY_VALUE:
        return sample_payload(schema, rng), None
    parts = decode_key_value(schema)
    key, value = sample_payload(parts.key, rng), sample_payload(parts.value, rng)
    if parts.encoding == "SEPARATED":
        return value, base64.b64encode(key).decode("ascii")
    return encode_inline(key, value), None


def sample_payload(entry: Any, rng: random.Random) -> bytes:
    from pipeline._payload import encode_primitive
    from registry import SchemaType

    if entry.type is SchemaType.PROTOBUF_NATIVE:
        return protobuf_payload(entry.data, rng)
    if entry.type.is_primitive:
        return encode_primitive(entry.type, primitive_value(entry.type, rng))
    doc = json.loads(entry.data)
    datum = random_datum(doc, rng)
    if entry.type is SchemaType.JSON:
        return json.dumps(datum, default=str, ensure_ascii=False).encode("utf-8")
    return avro_payload(fastavro.parse_schema(doc), datum)


def primitive_value(kind: Any, rng: random.Random) -> Any:
    """A plausible random value of a primitive type, in decode_primitive's form."""
    from registry import SchemaType as T

    name = str(kind)
    if kind is T.BOOLEAN:
        return rng.random() < 0.5
    if kind in (T.STRING,):
        return rng.choice(["ok", "late", "back-ordered", "Grüße", "fax page"]) + f" {rng.randint(0, 999)}"
    if kind in (T.BYTES, T.NONE):
        return rng.randbytes(rng.randint(0, 24))
    if kind in (T.FLOAT, T.DOUBLE):
        return round(rng.uniform(-40, 120), 3)
    if kind in (T.DATE, T.TIME, T.TIMESTAMP):
        return BASE_MILLIS + rng.randint(0, 86_400_000 * 700)
    if kind is T.INSTANT:
        return (BASE_MILLIS // 1000 + rng.randint(0, 86_400 * 700), rng.randint(0, 999_999_999))
    if kind is T.LOCAL_DATE:
        return 19_723 + rng.randint(0, 700)
    if kind is T.LOCAL_TIME:
        return rng.randint(0, 86_400 * 10**9 - 1)
    if kind is T.LOCAL_DATE_TIME:
        return (19_723 + rng.randint(0, 700), rng.randint(0, 86_400 * 10**9 - 1))
    bits = {"INT8": 7, "INT16": 15, "INT32": 31, "INT64": 63}[name]
    return rng.randint(0, 2**bits - 1) if name != "INT32" else rng.randint(0, 100)


def protobuf_payload(data: bytes, rng: random.Random) -> bytes:
    from google.protobuf import message_factory
    from google.protobuf.descriptor import FieldDescriptor as F

    from registry.protobuf._native import parse_protobuf_native

    root = parse_protobuf_native(data).root
    message = message_factory.GetMessageClass(root)()
    for f in root.fields:
        if f.containing_oneof is not None and rng.random() < 0.5:
            continue
        if f.is_repeated or f.type == F.TYPE_MESSAGE or f.type == F.TYPE_GROUP:
            continue
        if f.type == F.TYPE_ENUM:
            setattr(message, f.name, rng.choice(f.enum_type.values).number)
        elif f.type == F.TYPE_BOOL:
            setattr(message, f.name, rng.random() < 0.5)
        elif f.type == F.TYPE_STRING:
            setattr(message, f.name, f"s{rng.randint(0, 999)}")
        elif f.type == F.TYPE_BYTES:
            setattr(message, f.name, rng.randbytes(4))
        elif f.type in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
            setattr(message, f.name, round(rng.uniform(0, 1000), 2))
        else:
            setattr(message, f.name, rng.randint(0, 100_000))
    return message.SerializeToString()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    reg = sub.add_parser("registry", help="write a synthetic registry snapshot")
    target = reg.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="a snapshot file (JSON lines)")
    target.add_argument("--db", help="an empty registry: a SQLite file or postgresql://... (bulk-loaded)")
    reg.add_argument("--topics", type=int, default=2_000)
    reg.add_argument("--versions", type=int, default=20)
    reg.add_argument("--tenants", type=int, default=5)
    arc = sub.add_parser("archive", help="write a Parquet message archive for a snapshot")
    arc.add_argument("--snapshot", required=True, type=Path)
    arc.add_argument("--out", required=True, type=Path)
    arc.add_argument("--messages", type=int, default=200_000)
    arc.add_argument("--archive-topics", type=int, default=100)
    arc.add_argument("--seed", type=int, default=1)
    sample = sub.add_parser("sample", help="rewrite sample_data/messages/ from the sample registry")
    sample.add_argument("--out", type=Path, default=ROOT / "sample_data" / "messages")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.what == "registry" and args.db:
        load_registry(args.db, args.topics, args.versions, args.tenants)
        print(f"loaded {args.topics} topics x {args.versions} versions into {args.db}")
    elif args.what == "registry":
        lines = write_registry(args.out, args.topics, args.versions, args.tenants)
        print(f"wrote {args.out}: {args.topics} topics x {args.versions} versions ({lines} lines)")
    elif args.what == "archive":
        count = write_archive(args.snapshot, args.out, args.messages, args.archive_topics, args.seed)
        print(f"wrote {count} messages under {args.out}")
    else:
        count = write_sample(args.out)
        print(f"wrote {count} sample messages under {args.out}")
    print(f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
