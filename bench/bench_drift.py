"""`audit drift` on Spark (pipeline/drift.py): bench_compare.py's two registry files (20,000 topics, 40 changed)
compared on Spark, each side read by its executors in key ranges, against `compare_registries` on one
machine: the wall time of each and whether their answers are the same.

    .venv/bin/python bench/bench_drift.py [--topics 20000] [--versions 3] [--master local[2]] [--workdir DIR]

Spark's time is the whole job after the session is up (both sides read and shuffled by key, each batch of 500
keys rebuilt as two in-memory registries and compared by the core, the reported topics collected); the
session's start is printed apart. On one machine Spark costs more than `compare` (it moves every history
through a shuffle where `compare` reads fingerprints); it is for fleets whose registries one machine cannot
hold. The load average is printed: the figure moves with it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import registry  # noqa: E402
from bench.bench_compare import build  # noqa: E402
from registry.compare import compare_registries  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=20_000)
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)
    from pipeline._open import load_source
    from pipeline._spark import spark_session
    from pipeline.drift import run_drift

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        a_path, b_path, changed = build(Path(tmp), args.topics, args.versions)
        with registry.open(a_path, read_only=True) as a, registry.open(b_path, read_only=True) as b:
            started = time.perf_counter()
            expected = compare_registries(a, b)
            alone = time.perf_counter() - started
        started = time.perf_counter()
        spark = spark_session(args.master, app_name="bench drift", progress=False, quiet=True)
        up = time.perf_counter() - started
        try:
            started = time.perf_counter()
            found = run_drift(spark, load_source(db=str(a_path)), load_source(db=str(b_path))).comparison
            distributed = time.perf_counter() - started
        finally:
            spark.stop()
        got = {t.topic: t.state for t in found.drifted}
        same = {**found.as_json(), "from": "", "to": ""} == {**expected.as_json(), "from": "", "to": ""}
        if got != changed or not same:
            print(f"WRONG: {len(got)} drifted topics (expected {len(changed)}); same answers as compare: {same}")
            return 1
        print(
            f"audit drift {args.topics:,} + {args.topics:,} topics, 40 changed, found exactly, the same answers as "
            f"compare: {distributed:.1f} s on {args.master} (session start {up:.1f} s); compare_registries "
            f"{alone:.1f} s (load {os.getloadavg()[0]:.1f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
