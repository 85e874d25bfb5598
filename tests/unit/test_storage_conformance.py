"""Every storage backend passes the public conformance suite (registry/storage/conformance.py): memory, the
SQLite file, PostgreSQL on a throwaway server, and a storage of one's own that wraps a built-in one
(`ForwardingStorage`), which must forward every member of the protocol."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from registry import ForwardingStorage, MemoryStorage, PostgresStorage, SqliteStorage, StorageBackend
from registry.storage.conformance import CHECKS, ROLLBACK_CHECKS

Check = Callable[[Callable[[], StorageBackend]], None]


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

    check(lambda: PostgresStorage(postgres.fresh_database(postgres_server), create=True))


class Counting(ForwardingStorage):
    """A wrapper that sees every call, as a metrics wrapper does."""

    calls: dict[str, int]

    def around(self, operation, call):  # type: ignore[no-untyped-def]
        self.calls[operation] = self.calls.get(operation, 0) + 1
        return call()


@pytest.mark.parametrize("check", CHECKS + ROLLBACK_CHECKS, ids=lambda c: c.__name__)
def test_a_wrapped_sqlite_storage(check: Check, tmp_path: Path) -> None:
    made = iter(range(100))
    wrappers: list[Counting] = []

    def make() -> Counting:
        wrapper = Counting(SqliteStorage(tmp_path / f"r{next(made)}.db"))
        wrapper.calls = {}
        wrappers.append(wrapper)
        return wrapper

    check(make)
    assert sum(sum(w.calls.values()) for w in wrappers) > 0  # the calls went through the hook


def test_the_wrapper_forwards_every_member_of_the_protocol() -> None:
    """A member the protocol gains must be forwarded by hand: else a wrapper would miss it silently."""
    protocol = {name for base in StorageBackend.__mro__ for name in vars(base) if not name.startswith("_")}
    protocol -= {"register"}  # Protocol machinery, not a storage member
    assert protocol <= set(vars(ForwardingStorage)), protocol - set(vars(ForwardingStorage))
    assert all(
        callable(getattr(ForwardingStorage, n)) or isinstance(inspect.getattr_static(ForwardingStorage, n), property)
        for n in protocol
    )
