"""How many bytes of memory a cached parse holds per byte of its input: the factors of registry/_cache_budget.py.

    python bench/bench_cache_factors.py

The caches account each entry as (input bytes x factor), so the factor must not be lower than what a parse
really keeps. Measured here on the shapes that keep the most per input byte (many short fields, deep
nesting) and on a text-heavy one, each parsed fresh (distinct texts: names and docs salted) and kept, as a
cache keeps it:
- Avro (`parse_avro`): tracemalloc's growth per parse, after a check and a dedup key computed on it (every
  object of a parse is a Python allocation, compiled or not), plus the key text the cache holds.
- PROTOBUF_NATIVE (`parse_protobuf_native`, `_model_of`): the descriptor pool lives in protobuf's C library
  (upb), which tracemalloc does not see, so the process's RSS growth over 200 kept parses, then their models.
  A cached model keeps its root descriptor (the cache's key), and with it the pool: its factor is both.
Prints input size, bytes kept and the factor per shape; the budget's factors are rounded up from the maxima.
"""

from __future__ import annotations

import base64
import gc
import json
import sys
import tracemalloc
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "bench")]

from google.protobuf import descriptor_pb2  # noqa: E402

from registry.avro._nodes import AvroSchema  # noqa: E402
from registry.avro._parser import parse_text  # noqa: E402
from registry.avro._resolution import resolve  # noqa: E402
from registry.protobuf._descriptor import build_model  # noqa: E402
from registry.protobuf._native import _parse_protobuf_native  # noqa: E402
from schemas import large_record  # noqa: E402


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def avro_shapes(salt: int) -> dict[str, str]:
    many = {
        "type": "record",
        "name": f"Many{salt}",
        "fields": [{"name": f"f{i}", "type": "int"} for i in range(20_000)],
    }
    docs = {
        "type": "record",
        "name": f"Docs{salt}",
        "fields": [{"name": f"f{i}", "type": "string", "doc": "x" * 200} for i in range(3000)],
    }
    return {
        "20,000 int fields": json.dumps(many),
        "3,000 fields with 200-byte docs": json.dumps(docs),
        "large_record (1,900 fields, 3 deep)": large_record().replace("bench.large", f"bench.large{salt}"),
    }


def used(schema: AvroSchema) -> AvroSchema:
    """The schema after a check and a dedup lookup: what they compute on demand is kept with it."""
    assert schema.equality_key and resolve(schema, schema) == []
    return schema


def measure_avro() -> float:
    worst = 0.0
    for shape in avro_shapes(0):
        texts = [avro_shapes(salt)[shape] for salt in range(1, 6)]
        parse_text(avro_shapes(0)[shape])  # warm the name tables
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = [used(parse_text(text)) for text in texts]
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        size = sum(len(t.encode()) for t in texts)
        factor = (grown + size) / size  # the key text is kept too
        worst = max(worst, factor)
        each, kept_each = size // len(texts), (grown + size) // len(texts)
        print(f"avro  {shape:<40} {each:>9,} B in  {kept_each:>11,} B kept  x{factor:.1f}")
        del kept
    return worst


def proto_doc(salt: int, messages: int, fields: int) -> bytes:
    fdp = descriptor_pb2.FileDescriptorProto(name="big.proto", package=f"big{salt}", syntax="proto3")
    for m in range(messages):
        msg = fdp.message_type.add(name=f"M{m}")
        for f in range(fields):
            msg.field.add(name=f"field_{f}", number=f + 1, type=9, label=1)
    data = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    doc = {
        "fileDescriptorSet": base64.b64encode(data).decode(),
        "rootMessageTypeName": f"big{salt}.M0",
        "rootFileDescriptorName": "big.proto",
    }
    return json.dumps(doc).encode()


def measure_proto() -> tuple[float, float]:
    worst_parse = worst_model = 0.0
    for label, messages, fields in (("1 message of 2,000 fields", 1, 2000), ("200 messages of 10 fields", 200, 10)):
        docs = [proto_doc(salt, messages, fields) for salt in range(200)]
        size = sum(len(d) for d in docs)
        gc.collect()
        before = rss()
        parsed = [_parse_protobuf_native(d) for d in docs]
        gc.collect()
        mid = rss()
        models = [build_model(p.root) for p in parsed]
        gc.collect()
        after = rss()
        parse_factor = (mid - before + size) / size
        model_factor = (after - mid) / size
        worst_parse, worst_model = max(worst_parse, parse_factor), max(worst_model, model_factor)
        print(f"proto {label:<40} {size // len(docs):>9,} B in  parse x{parse_factor:.1f}  model x{model_factor:.1f}")
        del parsed, models
    return worst_parse, worst_model


def main() -> int:
    avro = measure_avro()
    parse, model = measure_proto()
    print(f"max factors: avro x{avro:.1f}, protobuf parse x{parse:.1f}, protobuf model x{model:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
