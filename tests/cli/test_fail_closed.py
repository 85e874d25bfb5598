"""The CLI as a CI gate fails closed: a bad `--url` or a missing `--db` is a usage error (exit 2) that names the
value and leaves nothing on disk, never a "compatible" verdict checked against a registry made on the spot.

Only commands that write (`upload`, `policy set`, `seed`, `import`, `serve`) make a new registry, and say so.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from cli.main import main

TOPIC = "acme/orders/created"
AVSC = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]})


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty working folder: the CLI runs there, so any file it wrongly makes shows up in it."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "order.avsc").write_text(AVSC)
    return folder


@pytest.fixture
def run(tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The CLI in this process (what a subprocess would add, the console script, is tested in test_cli.py), run
    in `work` with its own empty data folder and home, so any file it wrongly makes shows up."""
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCHEMA_EXPLORER_DB", raising=False)

    def _run(*args: str) -> subprocess.CompletedProcess[str]:
        try:
            code = main(list(args))
        except SystemExit as exit_:  # argparse's own usage errors
            code = int(exit_.code or 0)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)

    return _run


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "url",
    ["ftp://x", "host:8080", "HTTP:/host:8080", "localhost", "", "htp://host:8080"],
    ids=["ftp scheme", "host and port", "one slash", "bare host", "empty", "misspelt scheme"],
)
def test_check_with_a_url_that_is_not_http_is_a_usage_error(run, work: Path, url: str) -> None:
    done = run("check", "--url", url, "-t", TOPIC, "--file", "order.avsc")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "compatible" not in done.stdout
    assert repr(url) in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert _files(work) == ["order.avsc"]


@pytest.mark.parametrize("url", ["HTTP://127.0.0.1:9", " http://127.0.0.1:9 ", "Https://127.0.0.1:9"])
def test_an_http_url_in_any_case_or_with_spaces_is_used_as_a_url(run, work: Path, url: str) -> None:
    done = run("check", "--url", url, "-t", TOPIC, "--file", "order.avsc")
    assert done.returncode == 2
    assert "cannot reach the Pulsar admin endpoint" in done.stderr  # it tried the network, not a file
    assert _files(work) == ["order.avsc"]


READS = {
    "check": ["check", "-t", TOPIC, "--file", "order.avsc"],
    "diff": ["diff", "-t", TOPIC, "--file", "order.avsc"],
    "get": ["get", "-t", TOPIC],
    "policy get": ["policy", "get", "-n", "acme/orders"],
    "export": ["export", "out.jsonl"],
    "delete": ["delete", "-t", TOPIC],
}


@pytest.mark.parametrize("command", list(READS), ids=list(READS))
def test_a_command_that_reads_refuses_a_registry_that_does_not_exist(run, work: Path, command: str) -> None:
    done = run(*READS[command], "--db", "missing.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"no registry at {work / 'missing.db'}" in done.stderr
    assert _files(work) == ["order.avsc"]


def test_check_without_db_refuses_when_the_default_registry_does_not_exist(run, tmp_path: Path) -> None:
    done = run(*READS["check"])
    assert done.returncode == 2
    assert "no registry at" in done.stderr
    assert not list((tmp_path / "xdg-data").rglob("*.db"))


def test_audit_refuses_a_registry_that_does_not_exist(run, work: Path) -> None:
    done = run("audit", "compat-matrix", "--db", "missing.db", "--out", "out")
    assert done.returncode == 2
    assert "missing.db" in done.stderr
    assert _files(work) == ["order.avsc"]


def test_upload_makes_a_new_registry_and_says_so_then_check_reads_it(run, work: Path) -> None:
    done = run("upload", "-t", TOPIC, "--file", "order.avsc", "--db", "new.db")
    assert done.returncode == 0, done.stderr
    assert f"created new registry {work / 'new.db'}" in done.stderr
    done = run("check", "-t", TOPIC, "--file", "order.avsc", "--db", "new.db")
    assert done.returncode == 0, done.stderr
    assert "checked against" in done.stdout or "v0" in done.stdout or "compatible" in done.stdout
    assert "created" not in done.stderr


def test_policy_set_makes_a_new_registry_and_says_so(run, work: Path) -> None:
    done = run("policy", "set", "-n", "acme/orders", "--compatibility", "FULL", "--db", "p.db")
    assert done.returncode == 0, done.stderr
    assert "created new registry" in done.stderr
    assert (work / "p.db").is_file()


# --- a registry file that is not what it says it is -------------------------------------------------------------

OLD_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "registry-format-3.db"  # tests/fixtures/README.md
OLD_TOPIC = "persistent://acme/orders/order-created"


@pytest.mark.parametrize("marker", ["abc", "4.5", "", "-1", "0"])
def test_a_stored_format_that_is_not_a_whole_number_is_one_line_and_exit_2(run, work: Path, marker: str) -> None:
    """A format marker no release writes (edited, damaged): refused naming the file and the value, for a read
    and for a write, and nothing migrated (`-1` and `0` used to be taken for old formats)."""
    path = work / "registry.db"
    shutil.copy(OLD_FILE, path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode = WAL")  # as this project's files are on disk
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (marker,))
    db.close()
    before = path.read_bytes()
    for command in (["get", "-t", OLD_TOPIC], ["upload", "-t", OLD_TOPIC, "--file", "order.avsc"]):
        done = run(*command, "--db", "registry.db")
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("schema-explorer: error: ") and repr(str(path)) in line
        assert f"storage format {marker!r}, which is not a whole number >= 1" in line
    assert path.read_bytes() == before
    assert _files(work) == ["order.avsc", "registry.db"]


def test_a_symlink_planted_where_the_migration_copies_the_file_is_refused(run, work: Path, tmp_path: Path) -> None:
    """The first write to an older file copies it aside under a name anyone can predict: a symlink planted there
    would have had the copy overwrite its target. One line, exit 2, the target and the registry untouched."""
    path = work / "registry.db"
    shutil.copy(OLD_FILE, path)
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    (work / "registry.db.format-3.backup").symlink_to(target)
    before = path.read_bytes()
    done = run("upload", "-t", OLD_TOPIC, "--file", "order.avsc", "--db", "registry.db")
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    (line,) = done.stderr.splitlines()
    assert f"{str(work / 'registry.db.format-3.backup')!r} is in the way" in line
    assert target.read_text() == "keep me" and path.read_bytes() == before
