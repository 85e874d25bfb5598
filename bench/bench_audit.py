"""Throughput of the Spark audits, against this machine's limit measured in the same run.

    python bench/bench_audit.py [--topics 2000 --versions 20 --messages 200000] [--master local[*]]
    python bench/bench_audit.py --full        # 10,000 topics x 20 versions, 2,000,000 messages

1. Generates (bench/gen_registry.py) a synthetic registry snapshot and a Parquet archive of Avro messages.
2. Limit: fastavro's single-process decode-and-resolve rate (schemaless_reader(writer, reader) with schemas
   parsed once by `fastavro.parse_schema`, on up to 200,000 of the archive's payloads, in this process) times
   the cores Spark runs on. (Schemas parsed with `_write_hint=False` carry no "parsed" mark, and
   schemaless_reader then re-parses both on every message: a slower, wrong limit.)
3. data audit: `run_data_audit` end to end (read the archive, decode and resolve every message, field
   statistics, four Parquet tables), messages per second; target >= 60% of the limit.
4. compat-matrix: `run_compat_matrix` end to end over every topic (all pairs of 20 versions), topics/s.

The machine may be shared: with `--repeat N` the limit and the data audit are measured N times, each limit
right before its audit, and the table shows every run, the spread and the load average. The SparkSession
starts before the timings (JVM start-up is not counted). Exits 1 when the median ratio misses the target.

Memory and task size, for each job: a thread samples the RSS of every process under this one (psutil, every
0.2 s) and reports the peaks of the driver (this Python process, and the driver JVM, which on local[...]
also runs the executor) and of the executors (each executor JVM on local-cluster or a real cluster, and
Spark's Python workers, summed). The largest serialized task is read from Spark's own log line for each
task it starts ("Starting task ... N bytes)", TaskSetManager at INFO, sent to a file through a log4j2
configuration in SPARK_CONF_DIR).

    python bench/bench_audit.py --topics 100000 --skip-data --master 'local-cluster[2,1,1024]'
    python bench/bench_audit.py --messages 20000000 --skip-matrix --master 'local[2]'

The audits read the source the way the CLI does (pipeline/_open.py: the driver plans, every task reads its own
part): `--source snapshot` (the generated JSON lines file, default), `sqlite` (the generated registry
bulk-loaded into WORKDIR/registry.db) or `postgresql` with `--db postgresql://...` (an empty database is
bulk-loaded first; the load's rate is printed). The driver's peak RSS is the figure that must not grow
with the fleet.

    python bench/bench_audit.py --topics 1000000 --versions 3 --skip-data --source sqlite --master 'local[2]'
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import fastavro  # noqa: E402
import gen_registry  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

TARGET = 0.60


def fastavro_rate(snapshot: Path, archive: Path, limit: int = 200_000) -> tuple[float, int, float]:
    """Messages/s of fastavro's decode-and-resolve (writer -> latest version) in one process: per second of
    wall-clock time, how many it decoded, and per CPU-second (the same unless the machine is shared)."""
    from registry._snapshot import read_snapshot_records

    schemas: dict[str, dict[int, str]] = {}
    for record in read_snapshot_records(snapshot):
        if record["kind"] == "version":
            schemas.setdefault(record["topic"], {})[record["version"]] = record["schema"]
    rows: list[tuple[str, int, bytes]] = []
    for part in sorted(archive.glob("*.parquet")):
        table = pq.read_table(part, columns=["topic", "version", "payload"])
        for topic, version, payload in zip(
            table.column("topic").to_pylist(),
            table.column("version").to_pylist(),
            table.column("payload").to_pylist(),
            strict=True,
        ):
            rows.append((topic.split("://")[1], version, payload))
            if len(rows) >= limit:
                break
        if len(rows) >= limit:
            break
    parsed: dict[tuple[str, int], tuple[object, object]] = {}
    for topic, version, _ in rows:
        if (topic, version) not in parsed:
            history = schemas[topic]
            reader = fastavro.parse_schema(json.loads(history[max(history)]))
            parsed[(topic, version)] = (fastavro.parse_schema(json.loads(history[version])), reader)
    ok = 0
    started, cpu = time.perf_counter(), time.process_time()
    for topic, version, payload in rows:
        writer, reader = parsed[(topic, version)]
        try:
            fastavro.schemaless_reader(io.BytesIO(payload), writer, reader)
            ok += 1
        except Exception:  # noqa: BLE001 - the enum-removal topics fail some messages, as in the audit
            pass
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return len(rows) / wall, len(rows), len(rows) / max(cpu, 1e-9)


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and all its descendants (the JVM, Spark's Python daemon and workers),
    reaped children included (Linux /proc); 0 where /proc is missing."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
    tree, frontier = {os.getpid()}, [os.getpid()]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(times.get(pid, 0.0) for pid in tree)


class TreeMemory:
    """Peak RSS of this process's tree while a job runs, by role (see the module docstring)."""

    def __init__(self) -> None:
        import psutil

        self._me = psutil.Process()
        self.peaks = {"driver python": 0, "driver JVM": 0, "executor JVM (largest)": 0, "python workers (sum)": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            now = {"driver python": self._me.memory_info().rss, "driver JVM": 0, "executor JVM (largest)": 0,
                   "python workers (sum)": 0}  # fmt: skip
            for child in self._me.children(recursive=True):
                try:
                    # a short-lived child (Spark runs chmod while writing) may be gone between two calls: read
                    # everything of it here, or the sampler dies and the peaks stop (a 1M-topic run lost them so)
                    line, rss, name = " ".join(child.cmdline()), child.memory_info().rss, child.name()
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                if "CoarseGrainedExecutorBackend" in line:
                    now["executor JVM (largest)"] = max(now["executor JVM (largest)"], rss)
                elif "java" in name and "SparkSubmit" in line:
                    now["driver JVM"] += rss
                elif "pyspark" in line or "python" in name:
                    now["python workers (sum)"] += rss
            for key, value in now.items():
                self.peaks[key] = max(self.peaks[key], value)
            self._stop.wait(0.2)

    def text(self) -> str:
        return ", ".join(f"{k} {v / 2**20:,.0f} MiB" for k, v in self.peaks.items() if v)


TASK_LOG = re.compile(r"Starting task .*?, (\d+) bytes\)")


def task_log_config(folder: Path) -> Path:
    """A SPARK_CONF_DIR whose log4j2 configuration keeps the console at WARN and writes TaskSetManager's
    INFO lines (one per task started, with its serialized size) to folder/tasks.log."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "tasks.log"
    (folder / "log4j2.properties").write_text(
        "rootLogger.level = warn\n"
        "rootLogger.appenderRef.console.ref = console\n"
        "appender.console.type = Console\n"
        "appender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
        "appender.tasks.type = File\n"
        "appender.tasks.name = tasks\n"
        f"appender.tasks.fileName = {log}\n"
        "appender.tasks.layout.type = PatternLayout\n"
        "appender.tasks.layout.pattern = %m%n\n"
        "logger.tasks.name = org.apache.spark.scheduler.TaskSetManager\n"
        "logger.tasks.level = info\n"
        "logger.tasks.additivity = false\n"
        "logger.tasks.appenderRef.tasks.ref = tasks\n",
        encoding="utf-8",
    )
    return log


def largest_task(log: Path, since: int) -> tuple[int, int]:
    """(largest serialized task in bytes, tasks started) in the task log after byte offset `since`."""
    if not log.exists():
        return 0, 0
    with log.open("rb") as handle:
        handle.seek(since)
        sizes = [int(m.group(1)) for m in TASK_LOG.finditer(handle.read().decode("utf-8", "replace"))]
    return max(sizes, default=0), len(sizes)


def load_once(location: str, topics: int, versions: int) -> None:
    """Bulk-load the synthetic registry into `location` unless it holds one already; prints the load's rate."""
    import registry

    try:
        with registry.open(location, read_only=True) as reg:
            if reg.tenants():
                return
    except registry.RegistryError:
        pass  # no registry there yet
    started = time.perf_counter()
    gen_registry.load_registry(location, topics, versions, tenants=5)
    seconds = time.perf_counter() - started
    print(f"loaded {topics:,} topics x {versions} versions into {location} in {seconds:.1f} s "
          f"({topics / seconds:,.0f} topics/s)", flush=True)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=2_000)
    parser.add_argument("--versions", type=int, default=20)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--archive-topics", type=int, default=100)
    parser.add_argument("--full", action="store_true", help="10,000 topics and 2,000,000 messages")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument(
        "--code",
        choices=("ship", "installed"),
        default="ship",
        help="on a cluster master: ship the project as a zip (pure-Python core on executors: zipimport cannot "
        "load the compiled Avro modules), or use the copy installed on the workers (this checkout's, compiled)",
    )
    parser.add_argument("--workdir", type=Path, help="keep generated data here (default: a temporary folder)")
    parser.add_argument("--skip-matrix", action="store_true")
    parser.add_argument("--skip-data", action="store_true", help="only the compat-matrix")
    parser.add_argument("--repeat", type=int, default=1, help="measure limit and data audit N times (median)")
    parser.add_argument("--source", choices=("snapshot", "sqlite", "postgresql"), default="snapshot")
    parser.add_argument("--db", help="with --source postgresql: the database (bulk-loaded when empty)")
    args = parser.parse_args(argv)
    if args.full:
        args.topics, args.messages = 10_000, 2_000_000
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-audit-"))
    work.mkdir(parents=True, exist_ok=True)
    snapshot, archive, out = work / "registry.jsonl", work / "archive", work / "out"
    started = time.perf_counter()
    if not snapshot.exists() and (args.source == "snapshot" or not args.skip_data):
        gen_registry.write_registry(snapshot, args.topics, args.versions, tenants=5)
    location = {"snapshot": None, "sqlite": str(work / "registry.db"), "postgresql": args.db}[args.source]
    if location is not None:
        load_once(location, args.topics, args.versions)
    if not args.skip_data and not archive.exists():
        gen_registry.write_archive(snapshot, archive, args.messages, args.archive_topics, seed=1)
    messages = "" if args.skip_data else f", {args.messages} messages"
    print(f"data: {args.topics} topics x {args.versions} versions{messages} under {work} "
          f"(generated in {time.perf_counter() - started:.0f} s)")  # fmt: skip

    from pipeline._archive import find_archive
    from pipeline._open import load_source
    from pipeline._spark import spark_session
    from pipeline.jobs import run_compat_matrix, run_data_audit, spark_cores

    task_log = task_log_config(work / "spark-conf")
    os.environ["SPARK_CONF_DIR"] = str(task_log.parent)
    spark = spark_session(args.master, app_name="bench audit", ui=False, progress=False, ship_code=args.code == "ship")
    cores = spark_cores(spark)
    source = load_source(snapshot=str(snapshot)) if location is None else load_source(db=location)
    # (limit, data audit rate, seconds, 1-min load average, fastavro msgs per CPU-s, audit msgs per CPU-s)
    runs: list[tuple[float, float, float, float, float, float]] = []
    rows: list[tuple[str, str, str]] = []
    ratio = 1.0
    for run in range(0 if args.skip_data else args.repeat):
        rate, sampled, cpu_rate = fastavro_rate(snapshot, archive)
        load = os.getloadavg()[0]
        cpu = tree_cpu_seconds()
        logged = task_log.stat().st_size if task_log.exists() else 0
        started = time.perf_counter()
        with TreeMemory() as memory:
            report = run_data_audit(spark, source, out / "data", find_archive(str(archive)))
        seconds = time.perf_counter() - started
        cpu = tree_cpu_seconds() - cpu
        biggest, tasks = largest_task(task_log, logged)
        print(f"  data audit peaks: {memory.text()}; largest task {biggest / 1024:,.1f} KiB of {tasks} tasks")
        runs.append((rate * cores, args.messages / seconds, seconds, load, cpu_rate, args.messages / max(cpu, 1e-9)))
        if run == 0:
            print(report)
        limit, data_rate = runs[-1][:2]
        print(
            f"run {run + 1}: limit {limit:,.0f} msg/s ({sampled:,} messages), data audit {data_rate:,.0f} msg/s "
            f"in {seconds:.1f} s = {data_rate / limit:.0%}, load {load:.2f}; per CPU-second: fastavro "
            f"{cpu_rate:,.0f}, audit {runs[-1][5]:,.0f} ({cpu:.0f} CPU-s over JVM, driver and workers)",
            flush=True,
        )
    if runs:
        by_ratio = sorted(runs, key=lambda r: r[1] / r[0])
        limit, data_rate, data_seconds, _, cpu_rate, audit_cpu_rate = by_ratio[len(by_ratio) // 2]  # median run
        ratio = data_rate / limit
        rows += [
            ("fastavro decode+resolve, 1 process", f"{limit / cores:,.0f} msg/s", "parsed schemas, same run"),
            (f"limit = that x {cores} cores", f"{limit:,.0f} msg/s", ""),
            (
                "Spark data audit, end to end",
                f"{data_rate:,.0f} msg/s",
                f"{args.messages:,} msgs in {data_seconds:.1f} s",
            ),
            ("ratio (target >= 60%)", f"{ratio:.0%}", "PASS" if ratio >= TARGET else "MISS"),
            (
                "msgs per CPU-second: audit / fastavro",
                f"{audit_cpu_rate / cpu_rate:.0%}",
                f"{audit_cpu_rate:,.0f} / {cpu_rate:,.0f} (all of Spark's processes / the decode loop)",
            ),
        ]
        if len(runs) > 1:
            low, high = by_ratio[0][1] / by_ratio[0][0], by_ratio[-1][1] / by_ratio[-1][0]
            rows.append(("ratio over the runs", f"{low:.0%}..{high:.0%}", f"{len(runs)} runs; the median run above"))
            rows.append(("limit over the runs", f"{min(r[0] for r in runs):,.0f}..{max(r[0] for r in runs):,.0f}", ""))
        loads = [r[3] for r in runs]
        rows.append(("load average (1 min) at each run", f"{min(loads):.2f}..{max(loads):.2f}", ""))
        rows.append(("  last run's peak memory", "", memory.text()))
        rows.append(("  its largest serialized task", f"{biggest / 1024:,.1f} KiB", f"of {tasks} tasks"))
    if not args.skip_matrix:
        load = os.getloadavg()
        logged = task_log.stat().st_size if task_log.exists() else 0
        started = time.perf_counter()
        with TreeMemory() as memory:
            matrix = run_compat_matrix(spark, source, out / "matrix", max_versions=args.versions)
        seconds = time.perf_counter() - started
        biggest, tasks = largest_task(task_log, logged)
        pairs = args.topics * args.versions * (args.versions - 1)
        rows.append(
            (
                "Spark compat-matrix, end to end",
                f"{args.topics / seconds:,.0f} topics/s",
                f"{args.topics:,} topics, {pairs:,} pairs in {seconds:.1f} s ({pairs / seconds:,.0f} pairs/s), "
                f"load {load[0]:.2f}",
            )
        )
        rows.append(("  its peak memory", "", memory.text()))
        rows.append(("  its largest serialized task", f"{biggest / 1024:,.1f} KiB", f"of {tasks} tasks"))
        print(matrix)
    spark.stop()
    print(f"\nmaster {args.master} ({cores} cores, code {args.code}), {os.cpu_count()} CPUs on this machine")
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>16}  {note}")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
