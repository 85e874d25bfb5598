"""Every storage backend passes the public conformance suite (registry/storage/conformance.py): memory, the
SQLite file, and PostgreSQL on a throwaway server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from registry.storage._base import LocalStorage, MemoryStorage
from registry.storage._sqlite import SqliteStorage
from registry.storage.conformance import CHECKS, ROLLBACK_CHECKS

Check = Callable[[Callable[[], LocalStorage]], None]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_memory(check: Check) -> None:
    check(MemoryStorage)


@pytest.mark.parametrize("check", CHECKS + ROLLBACK_CHECKS, ids=lambda c: c.__name__)
def test_sqlite(check: Check, tmp_path: Path) -> None:
    made = iter(range(100))
    check(lambda: SqliteStorage(tmp_path / f"r{next(made)}.db"))


@pytest.mark.postgres
@pytest.mark.parametrize("check", CHECKS + ROLLBACK_CHECKS, ids=lambda c: c.__name__)
def test_postgresql(check: Check, postgres_server: str) -> None:
    import postgres
    from registry.storage._postgres import PostgresStorage

    check(lambda: PostgresStorage(postgres.fresh_database(postgres_server), create=True))
