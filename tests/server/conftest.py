"""Fixtures for the REST shell: the real app over a real SQLite file, opened strictly like `serve` does."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry import Registry, seed_sample_data
from server import create_app, parse_tokens
from serving import LOCAL

# Registry files live in RAM when the machine has /dev/shm: every write is fsynced (synchronous=FULL), and a
# slow disk would make these tests slow without testing anything more.
_RAM = Path("/dev/shm")


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "seeded.db"
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
    return path


@pytest.fixture
def db_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder for registry files, in RAM if possible."""
    if not _RAM.is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=_RAM, prefix="schema-explorer-test-") as folder:
        yield Path(folder)


@pytest.fixture
def open_app(db_dir: Path) -> Iterator[Callable[..., TestClient]]:
    """`open_app(seeded=True, tokens=None)` → a TestClient over a fresh registry file in tmp_path."""
    made: list[tuple[Registry, TestClient]] = []

    def factory(*, source: Path | None = None, tokens: str | None = None) -> TestClient:
        path = db_dir / f"r{len(made)}.db"
        if source is not None:
            shutil.copyfile(source, path)
        else:
            with Registry.open(path, create=True) as reg:
                reg.create_namespace("t/ns")
        reg = Registry.open(path, auto_create=False)
        app = create_app(reg, tokens=parse_tokens(tokens, "test") if tokens else None)
        client = TestClient(app, base_url=LOCAL)
        made.append((reg, client))
        return client

    yield factory
    for reg, client in made:
        client.close()
        reg.close()


@pytest.fixture
def client(open_app: Callable[..., TestClient]) -> TestClient:
    """An open (no tokens) app over a registry with one tenant `t` and namespace `t/ns`, no topics."""
    return open_app()


@pytest.fixture
def seeded(open_app: Callable[..., TestClient], seeded_file: Path) -> TestClient:
    """An open app over a copy of the sample registry."""
    return open_app(source=seeded_file)
