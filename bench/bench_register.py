"""Registering version 101 under FULL_TRANSITIVE against 100 live versions of a 200-field schema.

    python bench/bench_register.py [--trials 30] [--quick] [--profile]

History: version k (0-based) is a 200-field record plus k optional fields with a default; the candidate adds
one more, so it is compatible both ways with every version and FULL_TRANSITIVE resolves it 200 times (each
of the 100 versions as reader and as writer). Every timed call is a real registration of a NEW version
(the registry answers version 100) against 100 live versions: each trial gets its own pre-built registry,
built under ALWAYS_COMPATIBLE and then switched to FULL_TRANSITIVE, outside the timing.

Parsed schemas are cached (warm): every history text and the candidate were parsed before timing, as in a
long-running registry. A second row re-times with a candidate text that is new in every trial (only its doc
differs), so the candidate's one parse is included. `check` (POST /compatibility: the same verdict, no dedup,
no write) is timed on the same registries just before the registration.

Target (architecture.md): median <= 25 ms for the in-memory registration.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "bench")]

from registry import Registry, SchemaInfo, SchemaType  # noqa: E402
from registry.avro._schema import parse_avro  # noqa: E402
from schemas import evolving_history  # noqa: E402

NAMESPACE = "bench/history"
TOPIC = f"persistent://{NAMESPACE}/events"
VERSIONS = 100
FIELDS = 200
TARGET_MS = 25.0


def avro_info(text: str) -> SchemaInfo:
    return SchemaInfo(type=SchemaType.AVRO, schema=text)


def fill(reg: Registry, history: list[str]) -> Registry:
    """Register the history (ALWAYS_COMPATIBLE: no checks), then make the namespace FULL_TRANSITIVE."""
    reg.set_namespace_policy(NAMESPACE, compatibility="ALWAYS_COMPATIBLE")
    for version, text in enumerate(history):
        assert reg.register(TOPIC, avro_info(text)).version == version
    reg.set_namespace_policy(NAMESPACE, compatibility="FULL_TRANSITIVE")
    return reg


def salted(text: str, trial: int) -> str:
    """The same schema with a different doc: a text the parse cache has not seen, an equal schema otherwise."""
    doc = json.loads(text)
    doc["doc"] = f"candidate, trial {trial}"
    return json.dumps(doc, separators=(",", ":"))


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def run(
    label: str, registries: Callable[[int], Registry], candidate: Callable[[int], str], trials: int
) -> list[tuple[str, list[float]]]:
    check_ms, register_ms = [], []
    for trial in range(trials):
        reg = registries(trial)
        try:
            reg.get(TOPIC)  # open the connection and read once, outside the timing
            info = avro_info(candidate(trial))
            start = time.perf_counter()
            result = reg.check(TOPIC, info)
            check_ms.append((time.perf_counter() - start) * 1e3)
            assert result.compatible and len(result.checked_versions) == VERSIONS, result
            start = time.perf_counter()
            version = reg.register(TOPIC, info).version
            register_ms.append((time.perf_counter() - start) * 1e3)
            assert version == VERSIONS, version
        finally:
            reg.close()
    return [(f"{label}: register v{VERSIONS + 1}", register_ms), (f"{label}: check (no write)", check_ms)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="5 trials (a smoke run)")
    parser.add_argument("--profile", action="store_true", help="cProfile one in-memory registration; top functions")
    args = parser.parse_args()
    trials = 5 if args.quick else args.trials

    history, candidate = evolving_history(VERSIONS, FIELDS)
    for text in [*history, candidate]:
        parse_avro(text)  # warm: a long-running registry has parsed its history
    fill(Registry.in_memory(), history).register(TOPIC, avro_info(candidate))  # warm-up, untimed

    rows: list[tuple[str, list[float]]] = []
    print(f"building {trials} in-memory registries of {VERSIONS} versions …", file=sys.stderr)
    memory = [fill(Registry.in_memory(), history) for _ in range(trials)]
    rows += run("memory, warm", memory.__getitem__, lambda _: candidate, trials)

    memory = [fill(Registry.in_memory(), history) for _ in range(trials)]
    rows += run("memory, new candidate text", memory.__getitem__, lambda t: salted(candidate, t), trials)[:1]

    with tempfile.TemporaryDirectory(prefix="bench-register-") as tmp:
        template = Path(tmp) / "template.db"
        with Registry.open(template, create=True) as reg:
            fill(reg, history)
        print(f"copying the SQLite registry {trials} times …", file=sys.stderr)
        files = []
        for trial in range(trials):
            path = Path(tmp) / f"trial{trial}.db"
            shutil.copyfile(template, path)
            files.append(path)
        rows += run("sqlite, warm", lambda t: Registry.open(files[t], create=True), lambda _: candidate, trials)

    print(f"register version {VERSIONS + 1} (FULL_TRANSITIVE, {VERSIONS} live versions of a {FIELDS}-field record)")
    header = f"{'case':<48} {'median':>10} {'p90':>10} {'trials':>7}"
    print(header)
    print("-" * len(header))
    for label, values in rows:
        print(f"{label:<48} {statistics.median(values):>7.2f} ms {p90(values):>7.2f} ms {len(values):>7}")
    median = statistics.median(rows[0][1])
    verdict = "meets" if median <= TARGET_MS else "MISSES"
    print(f"target: in-memory registration median <= {TARGET_MS:g} ms: {verdict} ({median:.2f} ms)")

    if args.profile:
        reg = fill(Registry.in_memory(), history)
        profiler = cProfile.Profile()
        profiler.enable()
        reg.register(TOPIC, avro_info(candidate))
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(15)
        print("\ncProfile, one in-memory registration, by own time:")
        print(out.getvalue())
    return 0 if median <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
