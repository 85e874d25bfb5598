"""Shared fixtures: a registry over each storage (in-memory and SQLite), and helpers to seed histories."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# The checkout on sys.path (like `make test`'s editable install), and tests/ so `import schemas` works.
_TESTS = Path(__file__).resolve().parent
for _p in (str(_TESTS.parent), str(_TESTS)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from registry import BrokerConfig, Registry  # noqa: E402
from schemas import TOPIC  # noqa: E402

STORAGES = ("memory", "sqlite")


def _close(reg: Registry) -> None:
    close = getattr(reg, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


@pytest.fixture(params=STORAGES)
def make_reg(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Registry]]:
    """A factory `make_reg(**broker_settings)` over the fixture's storage; every registry is fresh."""
    made: list[Registry] = []

    def factory(**broker: object) -> Registry:
        config = BrokerConfig(**broker)  # type: ignore[arg-type]
        if request.param == "memory":
            reg = Registry.in_memory(broker=config)
        else:
            reg = Registry.open(tmp_path / f"r{len(made)}.db", broker=config, create=True)
        made.append(reg)
        return reg

    yield factory
    for reg in made:
        _close(reg)


@pytest.fixture
def reg(make_reg: Callable[..., Registry]) -> Registry:
    """A fresh registry with Pulsar's default broker settings, parametrized over both storages."""
    return make_reg()


@pytest.fixture
def topic() -> str:
    return TOPIC
