"""The input limits' scan (registry/_limits.py) on a schema just under the size limit, against parsing it.

    python bench/bench_limits.py [--repeat 20]

Every schema a registry is handed is first measured: its size, and for JSON-like types its nesting depth, in one
pass over its brackets outside strings, before anything parses it. The scan must stay a small fraction of the
parse it protects, however large the text: the schema here is a ~1 MiB Avro record of 12,000 optional map fields
(the shape a generator writes), timed against `json.loads` of the same text, which every parse of it includes.

Target: the scan takes at most twice as long as `json.loads` (C) of the same text (ratio <= 2.0). A unit test used to
assert "under 0.5 s" instead; wall-clock limits in tests fail on a loaded machine, ratios measured in one run do not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT)]

from registry import SchemaType  # noqa: E402
from registry._limits import check_schema_input, current_limits  # noqa: E402

TARGET_RATIO = 2.0


def schema_text() -> str:
    fields = [{"name": f"f{i}", "type": ["null", {"type": "map", "values": "string"}]} for i in range(12_000)]
    return json.dumps({"type": "record", "name": "R", "fields": fields})


def best_of(repeat: int, call: object) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    text = schema_text()
    assert len(text) < current_limits().max_schema_bytes
    scan = best_of(args.repeat, lambda: check_schema_input(SchemaType.AVRO, text))
    parse = best_of(args.repeat, lambda: json.loads(text))
    ratio = scan / parse
    print(f"schema: {len(text):,} bytes, {args.repeat} runs each, medians")
    print(f"limits scan   {scan * 1000:8.2f} ms")
    print(f"json.loads    {parse * 1000:8.2f} ms")
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"target: scan <= {TARGET_RATIO:g} x json.loads: {verdict} ({ratio:.2f} x)")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
