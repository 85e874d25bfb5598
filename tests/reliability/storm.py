"""A write storm on one registry file, through the REST server and the embedded facade at once, and its audit.

Used by tests/reliability (small, bounded runs) and bench/bench_reliability.py (8 × 250, 20 kill rounds).

- `Server`: `schema-explorer serve` on loopback in a child process; `kill()` is SIGKILL.
- Workers are child processes (`python storm.py worker ...`): `rest` ones post to the server with httpx, `facade`
  ones call `Registry.open(db)` on the same SQLite file. Each does `ops` writes on a few shared topics, mixing
  compatible registrations (a new optional field), incompatible ones (a new required field), duplicates (the
  shared base schema, or one of its own earlier schemas) and soft deletes, and appends one JSON line per
  write to its results file, flushed as soon as the answer arrives: a line with status "ok" is an
  acknowledged write.
- `verify(db, results)` reads the file afterwards and counts what must be zero: acknowledged writes that are
  missing or differ (lost), version numbers taken twice or skipped, equal schemas stored twice in one live
  stretch (dedup failures), incompatible schemas accepted over a live version, acknowledged versions that do
  not read back (facade, and REST when a url is given), and acknowledged writes without an audit entry.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script (workers, bench/): tests/ holds `needs`
    sys.path.insert(0, str(HERE.parent))
import needs  # noqa: E402

PROJECT_ROOT = HERE.parents[1]
NAMESPACE = "storm/ns"
STRATEGY = "BACKWARD"
READY_TIMEOUT_S = 30.0
# The write mix, by weight: compatible, incompatible, duplicate (base), duplicate (own earlier), soft delete.
MIX = {"compatible": 50, "incompatible": 15, "dup-base": 10, "dup-own": 12, "delete": 8, "read": 5}


def topics(count: int) -> list[str]:
    return [f"persistent://{NAMESPACE}/t{i}" for i in range(count)]


def schema_text(extra: Iterable[tuple[str, bool]] = ()) -> str:
    """The storm's record: `id`, plus each (name, required) field; optional fields are nullable with a default."""
    fields: list[dict[str, Any]] = [{"name": "id", "type": "long"}]
    for name, required in extra:
        fields.append(
            {"name": name, "type": "int"} if required else {"name": name, "type": ["null", "string"], "default": None}
        )
    return json.dumps(
        {"type": "record", "name": "Storm", "namespace": "storm", "fields": fields}, separators=(",", ":")
    )


BASE = schema_text()


def digest(data: str | bytes) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:16]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


# --- the registry file and the server ---------------------------------------------------------------------------


def prepare(db: Path | str, topic_count: int) -> list[str]:
    """A fresh registry file with the storm namespace (strategy BACKWARD) and its topics."""
    from registry import Registry

    for suffix in ("", "-wal", "-shm") if isinstance(db, Path) else ():
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    names = topics(topic_count)
    with Registry.open(db, create=True) as reg:
        reg.create_namespace(NAMESPACE, user="storm-setup")
        reg.set_namespace_policy(NAMESPACE, compatibility=STRATEGY, user="storm-setup")
        for name in names:
            reg.create_topic(name, user="storm-setup")
    return names


class Server:
    """`schema-explorer serve --db DB` on a free loopback port, in a child process."""

    def __init__(
        self, db: Path | str, log: Path, env: Mapping[str, str] | None = None, *, access_log: bool = False
    ) -> None:
        self.db, self.log, self.env, self.access_log = db, log, env, access_log
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> Server:
        import httpx

        needs.require("server")
        port = free_port()
        script = Path(sys.executable).with_name("schema-explorer")
        head = [str(script)] if script.is_file() else [sys.executable, "-m", "cli.main"]
        command = [*head, "serve", "--db", str(self.db), "--host", "127.0.0.1", "--port", str(port)]
        command += [] if self.access_log else ["--no-access-log"]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=PROJECT_ROOT, env=child_env(self.env), stdout=log, stderr=subprocess.STDOUT
            )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited with {self.process.returncode}: {self.log.read_text()[-2000:]}")
            try:
                httpx.get(f"{self.url}/openapi.json", timeout=1.0)  # no token needed, no failure counted
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"serve did not answer on {self.url} within {READY_TIMEOUT_S:g} s")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no checkpoint, whatever transaction is in flight is cut."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


# --- workers --------------------------------------------------------------------------------------------------


def start_worker(
    *,
    number: int,
    mode: str,
    ops: int,
    topic_names: list[str],
    out: Path,
    db: Path | str,
    url: str = "",
    deadline_s: float,
) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, str(HERE / "storm.py"), "worker",
        "--number", str(number), "--mode", mode, "--ops", str(ops), "--topics", ",".join(topic_names),
        "--out", str(out), "--db", str(db), "--url", url, "--deadline", str(deadline_s),
    ]  # fmt: skip
    return subprocess.Popen(command, cwd=PROJECT_ROOT, env=child_env(), stderr=subprocess.PIPE)


def _plan(number: int, ops: int, topic_names: list[str]) -> list[tuple[str, str]]:
    rng = random.Random(number * 7919 + ops)
    kinds = rng.choices(list(MIX), weights=list(MIX.values()), k=ops)
    return [(kind, rng.choice(topic_names)) for kind in kinds]


def run_worker(args: argparse.Namespace) -> int:
    """One worker: its writes in order, one result line each (flushed at once)."""
    topic_names = args.topics.split(",")
    plan = _plan(args.number, args.ops, topic_names)
    own: dict[str, list[str]] = defaultdict(list)  # topic -> texts this worker registered
    user = f"{args.mode}-worker-{args.number}"
    deadline = time.monotonic() + args.deadline
    client: Any = None
    reg: Any = None
    failures = 0
    if args.mode == "rest":
        import httpx

        client = httpx.Client(base_url=args.url, timeout=30.0)
    else:
        from registry import Registry

        reg = Registry.open(args.db, create=True)
    with open(args.out, "a", encoding="utf-8") as out:
        for i, (kind, topic) in enumerate(plan):
            if time.monotonic() > deadline:
                break
            if kind == "compatible":
                text = schema_text([(f"w{args.number}_{i}", False)])
            elif kind == "incompatible":
                text = schema_text([(f"w{args.number}_{i}_req", True)])
            elif kind == "dup-base" or (kind == "dup-own" and not own[topic]):
                text = BASE
            elif kind == "dup-own":
                text = random.Random(i).choice(own[topic])
            else:
                text = ""
            started = time.time()
            if client is not None:
                status, version, detail = _rest_write(client, kind, topic, text)
            else:
                status, version, detail = _facade_write(reg, kind, topic, text, user)
            if status == "ok" and kind not in ("delete", "read"):
                own[topic].append(text)
            failures = failures + 1 if status == "error" else 0
            line = {
                "worker": args.number, "mode": args.mode, "user": user if reg is not None else "", "i": i,
                "kind": kind, "topic": topic, "digest": digest(text) if text else "", "status": status,
                "version": version, "detail": detail[:300], "t0": started, "t1": time.time(),
            }  # fmt: skip
            out.write(json.dumps(line) + "\n")
            out.flush()
            if failures >= 3:
                break  # the server is gone (a crash round): stop rather than spin
    if client is not None:
        client.close()
    if reg is not None:
        reg.close()
    return 0


def _rest_write(client: Any, kind: str, topic: str, text: str) -> tuple[str, int | None, str]:
    import httpx

    path = "/admin/v2/schemas/" + topic.split("://", 1)[1]
    try:
        if kind == "delete":
            response = client.delete(path + "/schema")
        elif kind == "read":
            response = client.get(path + "/schema")
        else:
            response = client.post(path + "/schema", json={"type": "AVRO", "schema": text, "properties": {}})
    except httpx.HTTPError as exc:
        return "error", None, f"{type(exc).__name__}: {exc}"
    if response.status_code == 200:
        body = response.json()
        version = body["version"]["version"] if kind not in ("delete", "read") else body["version"]
        return ("read" if kind == "read" else "ok"), int(version), ""
    if response.status_code in (404, 409):
        return "refused", None, f"{response.status_code} {response.text}"
    return "error", None, f"{response.status_code} {response.text}"


def _facade_write(reg: Any, kind: str, topic: str, text: str, user: str) -> tuple[str, int | None, str]:
    from registry import IncompatibleSchemaError, RegistryError, SchemaInfo, SchemaNotFoundError, SchemaType

    try:
        if kind == "delete":
            return "ok", reg.delete(topic, user=user), ""
        if kind == "read":
            return "read", reg.get(topic).version, ""
        return "ok", reg.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=text), user=user).version, ""
    except (IncompatibleSchemaError, SchemaNotFoundError) as exc:
        return "refused", None, str(exc)
    except RegistryError as exc:
        return "error", None, f"{type(exc).__name__}: {exc}"


# --- running a storm ----------------------------------------------------------------------------------------------


def storm(
    *,
    db: Path | str,
    url: str,
    workdir: Path,
    rest_workers: int,
    facade_workers: int,
    ops: int,
    topic_names: list[str],
    deadline_s: float,
    tag: str = "storm",
    urls: list[str] | None = None,
) -> tuple[list[Path], float, list[str]]:
    """Run the workers to completion (or their deadline); returns (result files, seconds, worker errors).
    With `urls` (several servers on one registry), REST worker k posts to urls[k % len(urls)]."""
    servers = urls or [url]
    files: list[Path] = []
    children: list[subprocess.Popen[bytes]] = []
    started = time.perf_counter()
    modes = ["rest"] * rest_workers + ["facade"] * facade_workers
    for number, mode in enumerate(modes):
        out = workdir / f"{tag}-{number}-{mode}.jsonl"
        out.unlink(missing_ok=True)
        files.append(out)
        children.append(
            start_worker(
                number=number,
                mode=mode,
                ops=ops,
                topic_names=topic_names,
                out=out,
                db=db,
                url=servers[number % len(servers)] if mode == "rest" else url,
                deadline_s=deadline_s,
            )  # fmt: skip
        )
    problems = []
    for child in children:
        try:
            _, err = child.communicate(timeout=deadline_s + 60)
        except subprocess.TimeoutExpired:
            child.kill()
            _, err = child.communicate()
        if child.returncode != 0:
            problems.append(err.decode(errors="replace")[-2000:])
    return files, time.perf_counter() - started, problems


def read_results(files: Iterable[Path]) -> list[dict[str, Any]]:
    lines = []
    for path in files:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a worker killed mid-line wrote no acknowledgement
    return lines


def acknowledged(files: Iterable[Path]) -> int:
    return sum(1 for r in read_results(files) if r["status"] == "ok")


def crash_round(
    *,
    db: Path | str,
    workdir: Path,
    number: int,
    topic_names: list[str],
    rest_workers: int = 2,
    facade_workers: int = 1,
    ops: int = 400,
    kill_after_acks: int = 20,
    seed: int = 0,
) -> tuple[list[Path], dict[str, Any]]:
    """Storm the server and embedded writers, SIGKILL the server and the embedded writers together once
    `kill_after_acks` writes of this round are acknowledged (plus a random few ms), then stop."""
    rng = random.Random(seed * 1000 + number)
    server = Server(db, workdir / "serve.log").start()
    files: list[Path] = []
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    modes = ["rest"] * rest_workers + ["facade"] * facade_workers
    for k, mode in enumerate(modes):
        out = workdir / f"crash{number}-{k}-{mode}.jsonl"
        out.unlink(missing_ok=True)
        files.append(out)
        worker = start_worker(
            number=number * 100 + k, mode=mode, ops=ops, topic_names=topic_names, out=out, db=db, url=server.url,
            deadline_s=60,
        )  # fmt: skip
        children.append((mode, worker))
    deadline = time.monotonic() + 60
    while acknowledged(files) < kill_after_acks and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.05))
    killed_at = time.time()
    server.kill()
    for mode, child in children:
        if mode == "facade" and child.poll() is None:
            child.send_signal(signal.SIGKILL)
    for _, child in children:
        try:
            child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
    results = read_results(files)
    figures = {
        "round": number,
        "acknowledged": sum(1 for r in results if r["status"] == "ok"),
        "in_flight_at_kill": sum(1 for r in results if r["status"] == "error" and r["t0"] <= killed_at),
        "writers_killed": 1 + sum(1 for m, c in children if m == "facade" and c.returncode == -signal.SIGKILL),
    }
    return files, figures


# --- verification -------------------------------------------------------------------------------------------------


@dataclass
class Report:
    writes: int = 0
    acknowledged: int = 0
    refused: int = 0
    errors: int = 0
    reads: int = 0
    stored_versions: int = 0
    tombstones: int = 0
    lost: int = 0
    duplicate_versions: int = 0
    skipped_versions: int = 0
    dedup_failures: int = 0
    incompatible_accepted: int = 0
    unreadable: int = 0
    unacknowledged_stored: int = 0
    audit_missing: int = 0
    integrity: str = ""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not any(
            (self.lost, self.duplicate_versions, self.skipped_versions, self.dedup_failures,
             self.incompatible_accepted, self.unreadable, self.audit_missing)
        ) and self.integrity == "ok"  # fmt: skip

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "clean": self.clean}


def integrity(db: Path | str) -> str:
    """SQLite's integrity check of the file; PostgreSQL keeps its own (a location other than a file: "ok")."""
    import sqlite3

    if not isinstance(db, Path):
        return "ok"

    con = sqlite3.connect(db)
    try:
        return "; ".join(str(row[0]) for row in con.execute("PRAGMA integrity_check"))
    finally:
        con.close()


def verify(
    db: Path | str, results: list[dict[str, Any]], *, url: str = "", texts: Mapping[str, str] | None = None
) -> Report:
    """Check the registry file against every acknowledged write (see the module docstring)."""
    import httpx

    from registry import Registry, SchemaInfo, SchemaType

    report = Report(integrity=integrity(db))
    writes = [r for r in results if r["kind"] != "read"]
    report.writes = len(writes)
    report.reads = sum(1 for r in results if r["kind"] == "read")
    report.refused = sum(1 for r in writes if r["status"] == "refused")
    report.errors = sum(1 for r in writes if r["status"] == "error")
    acked = [r for r in writes if r["status"] == "ok"]
    report.acknowledged = len(acked)
    client = httpx.Client(base_url=url, timeout=30.0) if url else None
    with Registry.open(db, create=True) as reg:
        histories = {t: reg.history(t, include_deleted=True) for t in {r["topic"] for r in results}}
        acked_versions: dict[tuple[str, int], set[str]] = defaultdict(set)
        for r in acked:
            by_version = {e.version: e for e in histories[r["topic"]]}
            found = by_version.get(r["version"])
            want_tombstone = r["kind"] == "delete"
            if (
                found is None
                or found.deleted != want_tombstone
                or (not want_tombstone and digest(found.data) != r["digest"])
            ):
                report.lost += 1
                report.problems.append(f"lost: {r}")
                continue
            acked_versions[(r["topic"], r["version"])].add(r["kind"])
        for topic, entries in histories.items():
            numbers = [e.version for e in entries]
            report.stored_versions += sum(1 for e in entries if not e.deleted)
            report.tombstones += sum(1 for e in entries if e.deleted)
            counts = Counter(numbers)
            report.duplicate_versions += sum(n - 1 for n in counts.values() if n > 1)
            if numbers:
                report.skipped_versions += len(set(range(numbers[-1] + 1)) - set(numbers))
            # dedup within each live stretch, and every accepted version compatible with its predecessor
            scratch = Registry.in_memory()
            scratch.set_namespace_policy(NAMESPACE, compatibility=STRATEGY)
            seen: set[bytes] = set()
            previous = None
            for entry in entries:
                if entry.deleted:
                    seen, previous = set(), None
                    continue
                if entry.data in seen:
                    report.dedup_failures += 1
                    report.problems.append(f"dedup: {topic} v{entry.version}")
                seen.add(entry.data)
                if previous is not None:
                    scratch.delete(topic, force=True)
                    scratch.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=previous.data.decode()))
                    verdict = scratch.check(topic, SchemaInfo(type=SchemaType.AVRO, schema=entry.data.decode()))
                    if not verdict.compatible:
                        report.incompatible_accepted += 1
                        report.problems.append(f"incompatible accepted: {topic} v{entry.version}: {verdict.message}")
                previous = entry
                if (topic, entry.version) not in acked_versions:
                    report.unacknowledged_stored += 1
            # read back: every acknowledged version, through the facade and (live ones) through REST
            last_tomb = max((e.version for e in entries if e.deleted), default=-1)
            for (t, version), _kinds in acked_versions.items():
                if t != topic or version <= last_tomb:
                    continue
                stored = next(e for e in entries if e.version == version)
                if reg.get(topic, version).data != stored.data:
                    report.unreadable += 1
                if client is not None:
                    answer = client.get(f"/admin/v2/schemas/{topic.split('://', 1)[1]}/schema/{version}")
                    if answer.status_code != 200 or answer.json()["data"].encode() != stored.data:
                        report.unreadable += 1
                        report.problems.append(f"unreadable over REST: {topic} v{version}: {answer.status_code}")
        # the audit trail: an entry for every acknowledged write, naming its version ("ok" when it stored one,
        # "unchanged" when a duplicate was answered with an existing version)
        noted: set[tuple[str, str]] = set()
        for line in reg.audit_trail(NAMESPACE, limit=10_000_000):
            if line.action in ("register", "delete") and line.outcome in ("ok", "unchanged"):
                words = line.detail.replace(":", " ").split()
                after = [words[k + 1] for k, w in enumerate(words[:-1]) if w == "version"]
                if after:
                    noted.add((line.target, after[0]))
        for r in acked:
            if (r["topic"], str(r["version"])) not in noted:
                report.audit_missing += 1
                report.problems.append(f"no audit entry: {r}")
    if client is not None:
        client.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker")
    worker.add_argument("--number", type=int, required=True)
    worker.add_argument("--mode", choices=("rest", "facade"), required=True)
    worker.add_argument("--ops", type=int, required=True)
    worker.add_argument("--topics", required=True)
    worker.add_argument("--out", required=True)
    worker.add_argument("--db", required=True)
    worker.add_argument("--url", default="")
    worker.add_argument("--deadline", type=float, default=120.0)
    args = parser.parse_args(argv)
    return run_worker(args)


if __name__ == "__main__":
    sys.exit(main())
