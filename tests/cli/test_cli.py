"""The `schema-explorer` command as users run it: a real child process against a temporary registry file.

`ui` is left to the app's browser tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from registry import Registry, seed_sample_data

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(tmp_path: Path):
    """Run `python -m cli.main ARGS...` from the project root with a private per-user data folder."""
    env = dict(os.environ)
    # The default registry lives in the per-user data folder; keep the real one out of reach.
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)

    def _run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cli.main", *args],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    return _run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "registry.db"


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry file `seed` filled, seeded once for the module (test_seed_fills_an_empty_registry runs the
    command itself)."""
    path = tmp_path_factory.mktemp("seeded") / "registry.db"
    with Registry.open(path, create=True) as reg:
        seed_sample_data(reg)
    return path


@pytest.fixture
def seeded_db(sample_file: Path, db: Path) -> Path:
    """`db`, already seeded: a copy of the module's sample file."""
    shutil.copy(sample_file, db)
    return db


def test_help_lists_the_commands(run):
    done = run("--help")
    assert done.returncode == 0, done.stderr
    assert "schema-explorer" in done.stdout
    for command in ("ui", "seed"):
        assert command in done.stdout


@pytest.mark.parametrize("command", ["ui", "seed"], ids=["ui help", "seed help"])
def test_command_help_mentions_db_option(run, command):
    done = run(command, "--help")
    assert done.returncode == 0, done.stderr
    assert "--db" in done.stdout


def test_version_prints_program_name(run):
    done = run("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("schema-explorer ")


def test_no_command_prints_usage_and_exits_2(run):
    done = run()
    assert done.returncode == 2
    assert "usage:" in done.stderr


def test_seed_fills_an_empty_registry(run, db):
    done = run("seed", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert db.exists()
    assert "Seeded" in done.stdout
    assert str(db) in done.stdout


def test_seed_twice_refuses_without_force(run, seeded_db):
    db = seeded_db
    again = run("seed", "--db", str(db))
    assert again.returncode == 1
    assert "not empty" in again.stderr
    assert "--force" in again.stderr
    assert "Traceback" not in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1


def test_seed_with_force_seeds_a_non_empty_registry(run, seeded_db):
    db = seeded_db
    forced = run("seed", "--db", str(db), "--force")
    assert forced.returncode == 0, forced.stderr
    assert "Seeded" in forced.stdout


@pytest.mark.parametrize(
    ("make_path", "expected"),
    [
        (lambda tmp: tmp, "is a directory"),
        (lambda tmp: tmp / "missing" / "registry.db", "does not exist"),
    ],
    ids=["db path that is a directory", "db path in a missing folder"],
)
def test_bad_db_path_is_one_clear_line_and_exit_2(run, tmp_path, make_path, expected):
    done = run("seed", "--db", str(make_path(tmp_path)))
    assert done.returncode == 2
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("port", ["0", "70000", "http"], ids=["port zero", "port too large", "port not a number"])
def test_ui_rejects_a_bad_port_before_starting_anything(run, db, port):
    done = run("ui", "--db", str(db), "--port", port)
    assert done.returncode == 2
    assert "--port" in done.stderr
    assert not db.exists()


def test_ui_read_only_neither_creates_nor_seeds_a_registry(run, db):
    """A read-only app writes nothing, not even the sample data into a new file: a missing registry is exit 2."""
    done = run("ui", "--db", str(db), "--read-only", "--port", "1")
    assert done.returncode == 2
    assert "no registry at" in done.stderr
    assert not db.exists()
