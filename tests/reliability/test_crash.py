"""Crashes: SIGKILL the server (and the embedded writers) mid-storm, restart, and check the file: SQLite's
integrity check passes and every write acknowledged before any kill is still there and reads back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import storm

pytestmark = [pytest.mark.timeout(150), pytest.mark.server, pytest.mark.slow]
ROUNDS = 3


def test_kill_9_mid_storm_loses_no_acknowledged_write(workdir: Path) -> None:
    db = workdir / "crash.db"
    names = storm.prepare(db, 2)
    files: list[Path] = []
    in_flight = 0
    for number in range(ROUNDS):
        round_files, figures = storm.crash_round(
            db=db, workdir=workdir, number=number, topic_names=names, kill_after_acks=15 + 10 * number
        )
        files += round_files
        in_flight += figures["in_flight_at_kill"]
        assert storm.integrity(db) == "ok"
        server = storm.Server(db, workdir / "serve.log").start()  # restart on the crashed file
        try:
            report = storm.verify(db, storm.read_results(files), url=server.url)
        finally:
            server.stop()
        print(json.dumps({**figures, **{k: v for k, v in report.as_dict().items() if k != "problems"}}))
        assert report.clean, (number, report.problems[:10])
        assert figures["acknowledged"] >= 15 + 10 * number
    assert in_flight >= 1, "at least one request must have been cut by a kill"
