"""Our Avro compatibility check against the Python `avro` package's, parsing included on both sides.

    python bench/bench_compat.py [--quick] [--profile]

Ours: `resolve(parse_avro(reader), parse_avro(writer))`, with `parse_avro`'s cache cleared before every call
(so each call parses both texts). Theirs: `ReaderWriterCompatibilityChecker().get_compatibility(
reader=avro.schema.parse(reader), writer=avro.schema.parse(writer))` (a new checker per call: it memoises).
Reports which build of ours ran: mypyc-compiled (tools/build_speedups.py) or pure Python.
Two pairs: a 3-field record pair, and a record with 500 top-level / 1,900 fields nested 3 deep (reader =
writer + one optional field). Prints median and p90 per call, the split into parse and check, the stdlib
JSON decoding both sides start from, and the speed-up measured in this run. The rows of a pair are timed in
interleaved rounds (one call of each per round), so that load from other processes falls on all of them
alike. Target (architecture.md): ours >= 10x faster, parsing included.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "bench")]

import avro.schema  # noqa: E402
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType  # noqa: E402

import registry.avro._resolution  # noqa: E402
import registry.avro._schema  # noqa: E402
from registry.avro._resolution import resolve  # noqa: E402
from registry.avro._schema import clear_parse_cache, parse_avro  # noqa: E402
from schemas import count_fields, large_record, small_pair, with_added_field  # noqa: E402

TARGET_SPEEDUP = 10.0


def build() -> str:
    """Which build of our side is loaded: the mypyc-compiled modules (tools/build_speedups.py) or pure Python."""
    compiled = [m.__file__ or "" for m in (registry.avro._schema, registry.avro._resolution)]
    if all(path.endswith(".so") for path in compiled):
        return "compiled (mypyc)"
    return "pure Python" if not any(path.endswith(".so") for path in compiled) else "mixed: " + ", ".join(compiled)


def ours(reader: str, writer: str) -> bool:
    clear_parse_cache()
    return not resolve(parse_avro(reader), parse_avro(writer))


def theirs(reader: str, writer: str) -> bool:
    result = ReaderWriterCompatibilityChecker().get_compatibility(
        reader=avro.schema.parse(reader), writer=avro.schema.parse(writer)
    )
    return result.compatibility is SchemaCompatibilityType.compatible


def ours_parse(reader: str, writer: str) -> object:
    clear_parse_cache()
    return parse_avro(reader), parse_avro(writer)


def theirs_parse(reader: str, writer: str) -> object:
    return avro.schema.parse(reader), avro.schema.parse(writer)


def timings(calls: list[Callable[[], object]], repeat: int, warmup: int) -> list[list[float]]:
    """Seconds per call for each of `calls`, in `repeat` rounds of one call each, after `warmup` untimed
    rounds (GC left on, collected before the run)."""
    for _ in range(warmup):
        for call in calls:
            call()
    gc.collect()
    out: list[list[float]] = [[] for _ in calls]
    clock = time.perf_counter
    for _ in range(repeat):
        for call, times in zip(calls, out, strict=True):
            start = clock()
            call()
            times.append(clock() - start)
    return out


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--profile", action="store_true", help="cProfile our large-pair call; top functions")
    args = parser.parse_args()

    small_r, small_w = small_pair()
    large_w = large_record()
    large_r = with_added_field(large_w)
    top, total = count_fields(large_w)
    cases = [
        ("3-field record pair", small_r, small_w, 200 if args.quick else 3000, 50),
        (f"{top} top-level / {total} fields, 3 deep", large_r, large_w, 5 if args.quick else 40, 3),
    ]

    # Both tools must call both pairs compatible, or we are timing different work.
    for label, r, w, _, _ in cases:
        assert ours(r, w) and theirs(r, w), f"{label}: expected compatible on both sides"

    print(f"Python {sys.version.split()[0]}, avro {getattr(avro, '__version__', '?')}; per call, parsing included")
    print(f"ours: {build()} (python tools/build_speedups.py --clean | --force to switch)")
    header = f"{'pair':<40} {'checker':<34} {'median':>11} {'p90':>11}"
    print(header)
    print("-" * len(header))
    ok = True
    for label, r, w, repeat, warmup in cases:
        rows = [
            ("ours: parse + resolve", lambda r=r, w=w: ours(r, w)),
            ("avro: parse + get_compatibility", lambda r=r, w=w: theirs(r, w)),
            ("  ours: parse only", lambda r=r, w=w: ours_parse(r, w)),
            ("  avro: parse only", lambda r=r, w=w: theirs_parse(r, w)),
        ]
        pr, pw = parse_avro(r), parse_avro(w)
        ar, aw = avro.schema.parse(r), avro.schema.parse(w)
        rows += [
            ("  ours: resolve only (pre-parsed)", lambda pr=pr, pw=pw: resolve(pr, pw)),
            (
                "  avro: check only (pre-parsed)",
                lambda ar=ar, aw=aw: ReaderWriterCompatibilityChecker().get_compatibility(reader=ar, writer=aw),
            ),
            ("  json.loads of both texts", lambda r=r, w=w: (json.loads(r), json.loads(w))),
        ]
        medians = {}
        for (name, _), times in zip(rows, timings([call for _, call in rows], repeat, warmup), strict=True):
            medians[name] = statistics.median(times)
            print(f"{label:<40} {name:<34} {fmt(medians[name]):>11} {fmt(p90(times)):>11}")
        speedup = medians["avro: parse + get_compatibility"] / medians["ours: parse + resolve"]
        verdict = "meets" if speedup >= TARGET_SPEEDUP else "MISSES"
        ok &= speedup >= TARGET_SPEEDUP
        target = f"{verdict} >= {TARGET_SPEEDUP:g}x"
        print(f"{label:<40} {'speed-up (medians, parse included)':<34} {speedup:>10.1f}x  {target}")
        print()

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(10):
            ours(large_r, large_w)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print("cProfile, 10 calls of ours on the large pair, by own time:")
        print(out.getvalue())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
