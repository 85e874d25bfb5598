"""Reliability tests: small but real storms, crash rounds, a bad-input catalogue, limits, security, audit and
backups. The long variants (8 × 250 writes, 20 kill rounds) are bench/bench_reliability.py."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

# Registry files live in RAM when the machine has /dev/shm (every write is fsynced); a process crash tests
# SQLite's recovery the same way on any file system.
_RAM = Path("/dev/shm")


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    if not _RAM.is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=_RAM, prefix="schema-explorer-reliability-") as folder:
        yield Path(folder)
