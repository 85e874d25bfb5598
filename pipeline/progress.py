"""Progress of a running audit, from Spark's own status tracker, and the record of where its tables came from.

`SparkProgress` polls `SparkContext.statusTracker()` in a thread while a job runs: the stages Spark has
started and their tasks done of total. The CLI prints it (`--progress text`, a line rewritten in place on a
terminal) or writes one JSON object per line to stderr (`--progress json`) for the app, which runs the CLI as
a subprocess and draws a progress bar from those lines.

`write_run_record` leaves `_runs/<job>.json` beside the tables: what they were computed from (registry
location and its change token, or a snapshot file) and when, so a reader can tell tables of another registry,
or older than the registry's last write, from current ones.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RUNS = "_runs"


@dataclass(frozen=True, slots=True)
class Progress:
    """Tasks done of the tasks of every stage started so far (the total grows as Spark plans new stages)."""

    tasks_done: int
    tasks: int
    stages_done: int
    stages: int

    @property
    def fraction(self) -> float:
        return self.tasks_done / self.tasks if self.tasks else 0.0


class SparkProgress:
    """A thread reporting `Progress` every `interval` seconds while the `with` block runs.

    The block's jobs run under a job group of their own, and each poll reads every stage of every job of that
    group (`getJobIdsForGroup`, `getJobInfo`, `getStageInfo`: the status store keeps finished stages), so a stage
    that starts and ends between two polls is still counted; polling only the active stages missed those and a
    quick job ended at "0 of 0 tasks". A stage of a finished job that ran no task was skipped (its output was
    reused) and is left out."""

    def __init__(self, spark: SparkSession, mode: str, *, stream: IO[str] | None = None, interval: float = 0.5):
        self._context = spark.sparkContext
        self._tracker = self._context.statusTracker()
        self._mode = mode
        self._stream = stream or sys.stderr
        self._interval = interval
        self._group = f"schema-explorer-audit-{uuid.uuid4().hex}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="spark-progress", daemon=True)

    def __enter__(self) -> SparkProgress:
        if self._mode != "none":
            # Job groups are per thread (PySpark pins Python threads to JVM threads): the jobs started by this
            # thread inside the block carry it.
            self._context.setJobGroup(self._group, "schema-explorer audit")
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._mode == "none":
            return
        self._stop.set()
        self._thread.join()
        self._report(final=True)
        self._context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        self._context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]

    def current(self) -> Progress:
        stages: dict[int, tuple[int, int]] = {}  # stage id -> (tasks done, tasks)
        for job_id in self._tracker.getJobIdsForGroup(self._group):
            job = self._tracker.getJobInfo(job_id)
            if job is None:
                continue
            finished = job.status in ("SUCCEEDED", "FAILED")
            for stage_id in job.stageIds:
                stage = self._tracker.getStageInfo(stage_id)
                if stage is None or (finished and stage.numCompletedTasks == 0 and stage.numTasks > 0):
                    continue  # no longer known, or skipped
                stages[stage_id] = (min(stage.numCompletedTasks, stage.numTasks), stage.numTasks)
        done = sum(d for d, _ in stages.values())
        total = sum(t for _, t in stages.values())
        finished_stages = sum(1 for d, t in stages.values() if d == t)
        return Progress(tasks_done=done, tasks=total, stages_done=finished_stages, stages=len(stages))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self._report(final=False)

    def _report(self, *, final: bool) -> None:
        progress = self.current()
        if self._mode == "json":
            print(json.dumps({"progress": asdict(progress)}), file=self._stream, flush=True)
            return
        line = (
            f"stages {progress.stages_done}/{progress.stages} · tasks {progress.tasks_done}/{progress.tasks} "
            f"({progress.fraction:.0%})"
        )
        if self._stream.isatty():
            print("\r" + line, end="\n" if final else "", file=self._stream, flush=True)
        elif final:
            print(line, file=self._stream, flush=True)


def write_run_record(out: Path, job: str, *, location: str, change_token: int | None, seconds: float) -> Path:
    """`<out>/_runs/<job>.json`: the source, its change token (None for a snapshot) and the time of the run."""
    folder = out / RUNS
    folder.mkdir(exist_ok=True)
    record = {
        "job": job,
        "location": location,
        "change_token": change_token,
        "computed_at": int(time.time() * 1000),
        "seconds": round(seconds, 1),
    }
    path = folder / f"{job}.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(record), encoding="utf-8")
    temporary.replace(path)
    return path


def read_run_record(out: Path, job: str) -> dict[str, Any] | None:
    """The record of the last run of `job` under `out`, or None (never run there, or written by an older
    version that kept none)."""
    try:
        record = json.loads((out / RUNS / f"{job}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None
