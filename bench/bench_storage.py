"""The storages side by side on this machine: the SQLite file and PostgreSQL (a throwaway server from Debian's
postgresql package, as the tests start it), and several servers on one PostgreSQL database.

    python bench/bench_storage.py [--registrations 400] [--reads 4000] [--quick]

1. Register rate: `--registrations` new versions (a new optional field each, BACKWARD) spread over 20 topics,
   one at a time through the facade; each is a full registration (check, dedup, append, audit line, commit).
2. Read rate: `get(topic)` of the latest version, cached by the registry and kept exact by the change token
   (one token read per call: the cost a shared database adds), and `history(topic)` uncached after each write
   of another handle (a second registry handle writes between reads, so every read misses).
3. Two-server storm: two `schema-explorer serve` processes on one PostgreSQL database and two embedded
   writers (tests/reliability/storm.py), acknowledged writes per second and the counts that must be 0.

Both storages fsync every commit (SQLite synchronous=FULL; PostgreSQL's default synchronous_commit). The
SQLite file lives in a temporary folder on disk; the PostgreSQL data folder too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests", ROOT / "tests" / "reliability"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import storm  # noqa: E402

import postgres  # noqa: E402
from registry import Registry, SchemaInfo, SchemaType  # noqa: E402

NAMESPACE = "bench/storage"


def schema(fields: int) -> SchemaInfo:
    extra = [{"name": f"f{i}", "type": ["null", "string"], "default": None} for i in range(fields)]
    doc = {"type": "record", "name": "E", "fields": [{"name": "id", "type": "string"}, *extra]}
    return SchemaInfo(SchemaType.AVRO, json.dumps(doc))


def rates(location: str, registrations: int, reads: int) -> dict[str, float]:
    reg = Registry.open(location, create=True)
    other = Registry.open(location)
    try:
        reg.set_namespace_policy(NAMESPACE, compatibility="BACKWARD")
        topics = [f"persistent://{NAMESPACE}/t{i}" for i in range(20)]
        started = time.perf_counter()
        for n in range(registrations):
            reg.register(topics[n % 20], schema(n // 20))
        register_s = time.perf_counter() - started
        started = time.perf_counter()
        for n in range(reads):
            reg.get(topics[n % 20])
        cached_s = time.perf_counter() - started
        misses = max(reads // 20, 50)
        spent = 0.0
        for n in range(misses):
            other.create_topic(f"persistent://{NAMESPACE}/x{n}")  # a write elsewhere: the next read misses
            started = time.perf_counter()
            reg.history(topics[n % 20])
            spent += time.perf_counter() - started
        return {
            "register/s": registrations / register_s,
            "cached get/s": reads / cached_s,
            "uncached history/s": misses / spent,
        }
    finally:
        reg.close()
        other.close()


def two_server_storm(admin: str, work: Path, ops: int) -> dict[str, float]:
    location = postgres.fresh_database(admin)
    names = storm.prepare(location, 4)
    servers = [storm.Server(location, work / f"serve{i}.log").start() for i in range(2)]
    try:
        files, seconds, problems = storm.storm(
            db=location, url=servers[0].url, urls=[s.url for s in servers], workdir=work, rest_workers=4,
            facade_workers=2, ops=ops, topic_names=names, deadline_s=600,
        )  # fmt: skip
        report = storm.verify(location, storm.read_results(files), url=servers[1].url)
    finally:
        for server in servers:
            server.stop()
    assert not problems, problems
    figures = report.as_dict()
    return {
        "writes": report.writes,
        "acknowledged/s": report.acknowledged / seconds,
        **{k: figures[k] for k in ("lost", "duplicate_versions", "skipped_versions", "unreadable", "audit_missing")},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registrations", type=int, default=400)
    parser.add_argument("--reads", type=int, default=4000)
    parser.add_argument("--storm-ops", type=int, default=100)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=2, help="alternate SQLite and PostgreSQL this many times")
    args = parser.parse_args(argv)
    if args.quick:
        args.registrations, args.reads, args.storm_ops, args.rounds = 100, 1000, 20, 1
    reason = postgres.missing_reason()
    if reason:
        print(f"PostgreSQL unavailable: {reason}")
        return 1
    results: dict[str, list[dict[str, float]]] = {"sqlite": [], "postgresql": []}
    with tempfile.TemporaryDirectory(prefix="bench-storage-") as folder, postgres.server() as admin:
        work = Path(folder)
        for round_ in range(args.rounds):
            results["sqlite"].append(rates(str(work / f"r{round_}.db"), args.registrations, args.reads))
            results["postgresql"].append(rates(postgres.fresh_database(admin), args.registrations, args.reads))
        stormed = two_server_storm(admin, work, args.storm_ops)
    print(f"{args.rounds} round(s), alternating; medians")
    for metric in ("register/s", "cached get/s", "uncached history/s"):
        sqlite = statistics.median(r[metric] for r in results["sqlite"])
        pg = statistics.median(r[metric] for r in results["postgresql"])
        print(f"  {metric:<20} SQLite {sqlite:>10,.0f}   PostgreSQL {pg:>10,.0f}   ({pg / sqlite:.0%})")
    print("two servers + two embedded writers on one PostgreSQL database:")
    for key, value in stormed.items():
        print(f"  {key:<20} {value:,.1f}" if isinstance(value, float) else f"  {key:<20} {value}")
    zeros = ("lost", "duplicate_versions", "skipped_versions", "unreadable", "audit_missing")
    return 0 if all(stormed[k] == 0 for k in zeros) else 1


if __name__ == "__main__":
    sys.exit(main())
