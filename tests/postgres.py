"""A throwaway PostgreSQL server for tests, from Debian's `postgresql` package: `initdb` in a temporary folder
and `pg_ctl` on a free loopback port (as the `postgres` user when the tests run as root, since initdb and
pg_ctl refuse root). Trust authentication on loopback only; stopped and deleted when the test run ends.

`server()` gives the admin DSN; `fresh_database(admin)` a new empty database on it, for one test."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import needs

_COUNTER = itertools.count()


def binary(name: str) -> str | None:
    """initdb / pg_ctl from PATH, or from Debian's versioned folder (not on PATH by default)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def missing_reason() -> str | None:
    """Why no throwaway PostgreSQL can start here, or None."""
    if binary("initdb") is None or binary("pg_ctl") is None:
        return "PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install -y postgresql"
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg 3 and psycopg-pool are not installed: pip install -e '.[test]'"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: initdb refuses root"
    return None


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server() -> Iterator[str]:
    """Start a PostgreSQL server; yield its admin DSN (user postgres, database postgres)."""
    needs.require("postgres")
    initdb, pg_ctl = binary("initdb"), binary("pg_ctl")
    assert initdb and pg_ctl
    folder = Path(tempfile.mkdtemp(prefix="pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", _free_port()
    try:
        init = [initdb, "-D", str(data), "--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-instructions"]
        subprocess.run(
            _as_postgres(init),
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c max_connections=200"
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "stop"]), capture_output=True, timeout=60
        )
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(admin: str) -> str:
    """A new, empty database on the server; its DSN."""
    import psycopg

    name = f"t{os.getpid()}_{next(_COUNTER)}"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    return admin.rsplit("/", 1)[0] + f"/{name}"
