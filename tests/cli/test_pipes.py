"""A reader that stops early (`schema-explorer get ... | head -1`): the command stays quiet and exits 0, as
Python's documentation recommends for SIGPIPE, whatever the command; a write it made before printing stays
made. Real child processes writing into real pipes whose reading end is closed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import stdout_closed
from registry import Registry
from serving import PROJECT_ROOT

ORDERS = "persistent://acme/orders/order-created"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def closed_reader(env: dict[str, str], *args: str) -> tuple[int, str]:
    """Run the command with its standard output a pipe whose only reader is closed before the command
    writes a byte: every write it makes meets a broken pipe. (exit code, stderr)."""
    child = subprocess.Popen(
        [sys.executable, "-m", "cli.main", *args],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read()
    return child.wait(timeout=120), err


@pytest.mark.parametrize(
    "args",
    [
        ("get", "-t", ORDERS),
        ("get", "-t", ORDERS, "--all", "--json"),
        ("search", "order"),
        ("export", "-"),
        ("proposals", "list"),
        ("--help",),
    ],
    ids=["get", "get-all-json", "search", "export", "proposals-list", "help"],
)
def test_a_closed_reader_is_no_error(env, sample_db, args):
    code, err = closed_reader(env, *args, *(("--db", str(sample_db)) if args != ("--help",) else ()))
    assert (code, err) == (0, "")


def test_a_write_whose_answer_nobody_reads_is_still_made(env, db):
    made = subprocess.run(
        [sys.executable, "-m", "cli.main", "propose", "--db", db, "-n", "acme/orders", "--compatibility", "FULL",
         "--title", "Full"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert made.stdout.startswith("proposal #1 created")
    code, err = closed_reader(env, "proposals", "revise", "1", "--db", db, "--compatibility", "FORWARD")
    assert (code, err) == (0, "")
    with Registry.open(db) as reg:
        assert reg.proposals.get(1).revision.policy == {"compatibility": "FORWARD"}
    code, err = closed_reader(env, "upload", "--db", db, "-t", "acme/orders/notes", "--type", "STRING")
    assert (code, err) == (0, "")
    with Registry.open(db) as reg:
        assert reg.get("acme/orders/notes").version == 0


@pytest.mark.skipif(shutil.which("head") is None, reason="needs head(1)")
def test_piped_into_head_prints_one_line_and_nothing_on_stderr(env, sample_db):
    # Every version of a topic is far more than one line: head exits while the command still writes.
    shell = subprocess.run(
        f"set -o pipefail; {sys.executable} -m cli.main get --db {sample_db} -t {ORDERS} --all | head -1",
        shell=True,
        executable="/bin/bash",
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (shell.returncode, shell.stderr) == (0, "")
    assert shell.stdout.startswith(f"{ORDERS} version 0 ") and shell.stdout.count("\n") == 1


def test_only_our_own_reader_gone_is_quiet(monkeypatch):
    """A broken pipe is answered quietly only when standard output's reader has gone; one from elsewhere (a
    connection) is an error: the pipe itself is asked."""
    read, write = os.pipe()
    with open(write, "w") as out:
        monkeypatch.setattr(sys, "stdout", out)
        assert not stdout_closed()
        os.close(read)
        assert stdout_closed()
