"""What the in-process CLI tests share: a seeded registry file per module, a private copy per test for the
commands that write, and `cli(*args)`, which runs `cli.main.main(argv)` and captures what it printed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import main
from serving import seeded


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seeded(tmp_path_factory.mktemp("sample") / "registry.db")


@pytest.fixture
def db(sample_db: Path, tmp_path: Path) -> str:
    """A private copy of the seeded registry, for commands that write."""
    copy = tmp_path / "registry.db"
    shutil.copy(sample_db, copy)
    return str(copy)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """`cli(*args) -> (exit code, stdout, stderr)`."""

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
