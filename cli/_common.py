"""What every `schema-explorer` command shares: exit codes, user errors, and opening the registry named by
`--db PATH` or `--url URL [--token T]`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from registry import Registry

PROG = "schema-explorer"
DIST = "pulsar-schema-explorer"
PROJECT_ROOT = Path(__file__).resolve().parent.parent

EXIT_OK = 0
EXIT_REFUSED = 1  # the command understood the request and declined it (e.g. an incompatible schema)
EXIT_USAGE = 2  # a user error: bad arguments, bad path, or a RegistryError

DB_HELP = "registry database file (default: a per-user data file, seeded from sample_data/ on first use)"


class UserError(Exception):
    """A problem the user can fix; reported as one line, exit code 2."""


def add_source_arguments(parser: argparse.ArgumentParser, *, remote: bool = True) -> None:
    """`--db PATH`, and unless `remote=False`, `--url URL` and `--token T` (or $SCHEMA_EXPLORER_TOKEN)."""
    if not remote:
        parser.add_argument("--db", metavar="PATH", help=DB_HELP)
        return
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--db", metavar="PATH", help=DB_HELP)
    source.add_argument("--url", metavar="URL", help="a Pulsar admin v2 endpoint (a broker's web service, or serve)")
    parser.add_argument(
        "--token", metavar="T", help="bearer token for --url (default: $SCHEMA_EXPLORER_TOKEN when set)"
    )


def open_source(args: argparse.Namespace) -> Registry:
    """The registry named by `--url` (remote) or `--db` (embedded, the default file when absent)."""
    from registry import Registry

    url = getattr(args, "url", None)
    token = getattr(args, "token", None)
    if url:
        return Registry.open(url, token=token or os.environ.get("SCHEMA_EXPLORER_TOKEN") or None)
    if token:
        raise UserError("--token only applies with --url")
    return open_registry(resolve_db_path(getattr(args, "db", None)))


def resolve_db_path(raw: str | None) -> Path:
    """The absolute database path to use; the default per-user file's folder is created if needed."""
    if raw is None:
        from registry import default_db_path

        path = Path(default_db_path()).expanduser().resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    if not raw.strip():
        raise UserError("--db must not be empty")
    path = Path(raw).expanduser().resolve()
    if path.is_dir():
        raise UserError(f"--db {raw!r} is a directory; give a database file path such as {path / 'registry.db'}")
    if not path.parent.is_dir():
        raise UserError(f"--db {raw!r}: folder {path.parent} does not exist")
    return path


def open_registry(path: Path) -> Registry:
    from registry import Registry

    return Registry.open(str(path))


def close_registry(reg: Registry) -> None:
    close = getattr(reg, "close", None)
    if callable(close):
        close()


def port_number(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be between 1 and 65535, got {port}")
    return port


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST)
    except PackageNotFoundError:
        return "0+unknown (not installed)"


def describe_os_error(exc: OSError) -> str:
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}"


def report_error(error: BaseException | str) -> int:
    message = str(error) or type(error).__name__
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_USAGE
