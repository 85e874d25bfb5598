"""Audits run from the app: the same Spark job as `schema-explorer audit JOB`, as that very command in a
subprocess (its own JVM, so a run never blocks or bloats the app's server, and Cancel can stop it whole).

The subprocess reports Spark's status tracker as JSON lines (`--progress json`, pipeline/progress.py); a
reader thread keeps the last one and the tail of the log. Runs live in one table for the whole server
(`runs()`, an st.cache_resource), keyed by output folder and job: every session sees a run in progress, and
the same job is never started twice into one folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st


@dataclass
class AuditRun:
    """One run of `schema-explorer audit`: its process, the last progress line and the log's last lines."""

    job: str
    out: Path
    command: list[str]
    process: subprocess.Popen[str]
    started: float = field(default_factory=time.time)
    progress: tuple[int, int] = (0, 0)  # tasks done, tasks
    log: deque[str] = field(default_factory=lambda: deque(maxlen=20))
    cancelled: bool = False
    ended: float = 0.0  # when its output closed (the process ended)

    @property
    def running(self) -> bool:
        """Until its output is read to the end and the process has exited."""
        return self.ended == 0.0

    @property
    def fraction(self) -> float:
        done, total = self.progress
        return min(1.0, done / total) if total else 0.0

    @property
    def outcome(self) -> str:
        """'running', 'done', 'cancelled', or 'failed' (the log's tail says why)."""
        if self.running:
            return "running"
        code = self.process.returncode
        if self.cancelled:
            return "cancelled"
        return "done" if code == 0 else "failed"

    def cancel(self) -> None:
        """Stop the CLI and its JVM (one process group)."""
        self.cancelled = True
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.killpg(self.process.pid, signal.SIGTERM)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            text = line.rstrip("\n")
            try:
                message = json.loads(text) if text.startswith("{") else None
            except ValueError:
                message = None
            if isinstance(message, dict) and isinstance(message.get("progress"), dict):
                self.progress = (int(message["progress"]["tasks_done"]), int(message["progress"]["tasks"]))
            elif text.strip():
                self.log.append(text)
        self.process.wait()
        self.ended = time.time()


@st.cache_resource(show_spinner=False)
def runs() -> dict[tuple[str, str], AuditRun]:
    """Every run this server started, by (output folder, job)."""
    return {}


def start(job: str, out: Path, source: list[str], extra: list[str], token: str | None = None) -> AuditRun:
    """Start `schema-explorer audit JOB SOURCE --out OUT EXTRA` (SOURCE: `--db PATH` or `--url URL`; a token
    goes through the environment, never the command line), unless that job is already running into that
    folder (then that run is returned)."""
    key = (str(out), job)
    current = runs().get(key)
    if current is not None and current.running:
        return current
    command = [sys.executable, "-m", "cli.main", "audit", job, *source, "--out", str(out)]
    command += ["--master", "local[2]", "--progress", "json", *extra]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "SCHEMA_EXPLORER_TOKEN": token} if token else None,
        start_new_session=True,  # its own process group: Cancel stops the JVM with it
    )
    run = AuditRun(job=job, out=out, command=command, process=process)
    threading.Thread(target=run._read, name=f"audit-{job}", daemon=True).start()
    runs()[key] = run
    return run


def latest(job: str, out: Path) -> AuditRun | None:
    return runs().get((str(out), job))
