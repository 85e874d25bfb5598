"""Reliability figures: the long variants of tests/reliability.

1. Storm: `--rest` + `--facade` writer processes (default 4 + 4) × `--ops` writes (default 250) on `--topics`
   shared topics of one SQLite file, half through `schema-explorer serve`, half through the embedded facade,
   mixing compatible, incompatible, duplicate and deleting writes. Counts lost acknowledged writes, duplicate
   and skipped version numbers, dedup failures, incompatible schemas accepted, unreadable acknowledged
   versions (facade and REST) and acknowledged writes missing from the audit trail: all must be 0.
2. Crashes: `--rounds` (default 20) rounds of a storm on one file in which the server and the embedded writers
   are SIGKILLed mid-storm; after each restart `PRAGMA integrity_check` must be ok and every write acknowledged
   in any round so far must be present and read back.
3. Limits: how fast hostile inputs are refused by a live server (10 MB body, 2 MB schema, 10,000-deep schema,
   20 kB headers) next to a legitimate 1 MB schema.

    python bench/bench_reliability.py [--quick] [--dir /dev/shm] [--json out.json]

Exits 1 if any count that must be 0 is not. `--dir` picks where the registry file lives (default: a
temporary folder on disk, so every commit is a real fsync).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests", ROOT / "tests" / "reliability"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import storm  # noqa: E402
from catalogue import big_avro, deep_avro  # noqa: E402

MUST_BE_ZERO = (
    "lost",
    "duplicate_versions",
    "skipped_versions",
    "dedup_failures",
    "incompatible_accepted",
    "unreadable",
    "audit_missing",
)


def run_storm(work: Path, rest: int, facade: int, ops: int, topics: int) -> dict[str, Any]:
    db = work / "storm.db"
    names = storm.prepare(db, topics)
    server = storm.Server(db, work / "serve.log").start()
    try:
        files, seconds, problems = storm.storm(
            db=db, url=server.url, workdir=work, rest_workers=rest, facade_workers=facade, ops=ops,
            topic_names=names, deadline_s=600,
        )  # fmt: skip
        results = storm.read_results(files)
        report = storm.verify(db, results, url=server.url)
    finally:
        server.stop()
    report.seconds = round(seconds, 2)
    latencies = sorted((r["t1"] - r["t0"]) * 1000 for r in results)
    figures = report.as_dict()
    figures.update(
        processes=f"{rest} REST + {facade} embedded",
        ops_per_process=ops,
        topics=topics,
        worker_failures=len(problems),
        writes_per_s=round(report.writes / seconds, 1),
        p50_ms=round(statistics.median(latencies), 1),
        p99_ms=round(latencies[int(len(latencies) * 0.99) - 1], 1),
        by_mode={
            mode: sum(1 for r in results if r["mode"] == mode and r["status"] == "ok") for mode in ("rest", "facade")
        },
    )
    return figures


def run_crashes(work: Path, rounds: int) -> dict[str, Any]:
    db = work / "crash.db"
    names = storm.prepare(db, 2)
    files: list[Path] = []
    per_round = []
    started = time.perf_counter()
    for number in range(rounds):
        round_files, figures = storm.crash_round(
            db=db, workdir=work, number=number, topic_names=names, kill_after_acks=10 + (number * 7) % 40, seed=7
        )
        files += round_files
        check = storm.integrity(db)
        server = storm.Server(db, work / "serve.log").start()
        try:
            report = storm.verify(db, storm.read_results(files), url=server.url)
        finally:
            server.stop()
        per_round.append({**figures, "integrity": check, **{k: getattr(report, k) for k in MUST_BE_ZERO}})
        print(f"  round {number + 1:2}/{rounds}: {per_round[-1]}", file=sys.stderr, flush=True)
    final = storm.verify(db, storm.read_results(files))
    return {
        "rounds": rounds,
        "integrity_ok": sum(1 for r in per_round if r["integrity"] == "ok"),
        "acknowledged_total": final.acknowledged,
        "in_flight_at_kills": sum(r["in_flight_at_kill"] for r in per_round),
        "processes_killed": sum(r["writers_killed"] for r in per_round),
        "unacknowledged_but_stored": final.unacknowledged_stored,
        "seconds": round(time.perf_counter() - started, 1),
        **{k: sum(r[k] for r in per_round) for k in MUST_BE_ZERO},
    }


def run_limits(work: Path) -> list[dict[str, Any]]:
    import httpx

    from registry import Registry

    db = work / "limits.db"
    with Registry.open(db, create=True) as reg:
        reg.create_namespace("t/ns")
    server = storm.Server(db, work / "serve.log").start()
    legit = json.dumps(
        {
            "type": "record",
            "name": "R",
            "fields": [{"name": f"f{i}", "type": "string", "doc": "d" * 60} for i in range(9_000)],
        }
    )
    cases = [
        ("10 MB body", {"type": "AVRO", "schema": big_avro(10 * 1024 * 1024)}, {}),
        ("2 MB schema", {"type": "AVRO", "schema": big_avro(2 * 1024 * 1024)}, {}),
        ("10,000-deep schema", {"type": "AVRO", "schema": deep_avro(10_000)}, {}),
        ("20 kB headers", {"type": "AVRO", "schema": "{}"}, {"x-pad": "a" * 20_000}),
        (f"legitimate {len(legit) / 1e6:.2f} MB schema", {"type": "AVRO", "schema": legit}, {}),
    ]
    rows = []
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for name, body, headers in cases:
                times = []
                for _ in range(5):
                    started = time.perf_counter()
                    answer = client.post("/admin/v2/schemas/t/ns/x/schema", json=body, headers=headers)
                    times.append((time.perf_counter() - started) * 1000)
                reason = answer.json().get("reason", "") if answer.status_code >= 400 else ""
                rows.append(
                    {"input": name, "status": answer.status_code, "median_ms": round(statistics.median(times), 1),
                     "reason": reason[:90]}
                )  # fmt: skip
        rows.append({"input": "server still up", "status": httpx.get(f"{server.url}/admin/v2/tenants").status_code})
    finally:
        server.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rest", type=int, default=4)
    parser.add_argument("--facade", type=int, default=4)
    parser.add_argument("--ops", type=int, default=250)
    parser.add_argument("--topics", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2 + 2 writers × 40, 3 kill rounds")
    parser.add_argument("--dir", help="where the registry files live (default: a temporary folder)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.rest, args.facade, args.ops, args.rounds = 2, 2, 40, 3
    work = Path(tempfile.mkdtemp(prefix="bench-reliability-", dir=args.dir))
    try:
        print(f"storm: {args.rest} REST + {args.facade} embedded × {args.ops} in {work}", file=sys.stderr)
        storm_figures = run_storm(work, args.rest, args.facade, args.ops, args.topics)
        storm_figures.pop("problems")
        print(json.dumps(storm_figures, indent=1), file=sys.stderr)
        print(f"crashes: {args.rounds} rounds", file=sys.stderr)
        crash_figures = run_crashes(work, args.rounds)
        limits = run_limits(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {"storm": storm_figures, "crashes": crash_figures, "limits": limits}
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
    bad = [k for k in MUST_BE_ZERO if storm_figures[k] or crash_figures[k]]
    bad += [] if storm_figures["integrity"] == "ok" else ["integrity"]
    bad += [] if crash_figures["integrity_ok"] == crash_figures["rounds"] else ["crash integrity"]
    bad += [row["input"] for row in limits if row["status"] >= 500]
    if bad:
        print(f"FAILED: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
