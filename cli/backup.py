"""`export` / `import`: a whole registry as a snapshot (JSON lines, registry/_snapshot.py) and back;
`export --format parquet DIR` writes it as Parquet tables for analysis (pipeline/_parquet_export.py).

A snapshot holds every version with its tombstones, timestamps, users and properties, the policies, the
recorded clients and the audit trail; `import` of an `export` answers every question as the original does,
and exporting it again gives the same file byte for byte.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._common import (
    EXIT_OK,
    EXIT_REFUSED,
    PROG,
    UserError,
    add_source_arguments,
    close_registry,
    open_source,
    resolve_db,
    shown,
)


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    export = commands.add_parser(
        "export",
        help="write the whole registry to a snapshot file (JSON lines)",
        description="Write the whole registry as JSON lines: tenants, namespaces and their policies, topics and "
        "their policies, every schema version with tombstones, timestamps, users and properties, the recorded "
        "clients and the audit trail. The file is written to a temporary name and renamed when complete.",
    )
    add_source_arguments(export)
    export.add_argument(
        "output",
        metavar="FILE|DIR",
        help='snapshot file to write ("-" for stdout), or a new folder for --format parquet',
    )
    export.add_argument("--no-audit", action="store_true", help="leave out the audit trail")
    export.add_argument(
        "--format",
        choices=("jsonl", "parquet"),
        default="jsonl",
        help="jsonl: the snapshot (a backup, what `import` reads; default); parquet: tables partitioned by tenant "
        "and namespace for Spark SQL, DuckDB, pandas and the audits' --parquet "
        "(docs/guide/spark.md, A columnar export)",
    )
    export.set_defaults(handler=run_export)

    restore = commands.add_parser(
        "import",
        help="load a snapshot file into a new (or empty) registry file",
        description="Load a snapshot written by `export` into a registry file that does not exist yet or is empty. "
        "The whole snapshot is checked first, so a bad line changes nothing; a new file appears only once "
        "complete.",
    )
    add_source_arguments(restore, remote=False)
    restore.add_argument("input", metavar="FILE", help='snapshot file to read ("-" for stdin)')
    restore.set_defaults(handler=run_import)


def run_export(args: argparse.Namespace) -> int:
    from registry import export_snapshot

    if args.format == "parquet":
        return _export_parquet(args)
    reg = open_source(args)
    audit = not args.no_audit
    try:
        if args.output == "-":
            lines = export_snapshot(reg, sys.stdout, audit=audit)
            sys.stdout.flush()
            print(f"{PROG}: exported {lines} lines from {reg.location}", file=sys.stderr)
            return EXIT_OK
        target = Path(args.output).expanduser()
        if target.is_dir():
            raise UserError(f"{args.output!r} is a directory; give a snapshot file name such as {target / 'x.jsonl'}")
        if not target.parent.is_dir():
            raise UserError(f"{args.output!r}: folder {target.parent} does not exist")
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
                lines = export_snapshot(reg, out, audit=audit)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        finally:
            Path(temp).unlink(missing_ok=True)
    finally:
        close_registry(reg)
    print(f"Exported {lines} lines from {reg.location} to {target}")
    return EXIT_OK


def _export_parquet(args: argparse.Namespace) -> int:
    from pipeline._parquet_export import ExportError, check_target, export_parquet

    if args.output == "-":
        raise UserError("--format parquet writes a folder of tables, not stdout; give a new folder")
    try:
        check_target(args.output)  # before the registry is opened: a bad target is the first thing said
    except ExportError as exc:
        raise UserError(str(exc)) from None
    reg = open_source(args)
    location = None if getattr(args, "url", None) is not None else str(resolve_db(getattr(args, "db", None)))
    try:
        counts = export_parquet(reg, location, args.output, audit=not args.no_audit)
    except ExportError as exc:
        raise UserError(str(exc)) from None
    finally:
        close_registry(reg)
    written = ", ".join(f"{name} {rows}" for name, rows in counts.items())
    print(f"Exported {reg.location} as Parquet tables to {Path(args.output).expanduser().resolve()}: {written}")
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from registry import Registry
    from registry._snapshot import iter_snapshot_records, registry_from_records
    from registry.storage._snapshot_values import SnapshotError

    source = "stdin" if args.input == "-" else args.input
    if args.input != "-" and not Path(args.input).expanduser().exists():
        raise UserError(f"snapshot file {args.input!r} does not exist")
    counts: dict[str, int] = {}

    def records() -> Iterator[dict[str, Any]]:
        """The snapshot streamed into the load (never held whole), counted by kind on the way."""
        for record in iter_snapshot_records(sys.stdin if args.input == "-" else Path(args.input).expanduser()):
            counts[record["kind"]] = counts.get(record["kind"], 0) + 1
            yield record

    target = resolve_db(getattr(args, "db", None))
    try:
        # One transaction: a snapshot that is cut short or holds a bad record (found at its line, or at the end
        # for a cut file) is refused whole (exit 1), the target left as it was.
        if not isinstance(target, Path) or target.exists():
            reg = Registry.open(str(target), create=True)  # a file: exists; a database: made if needed
            try:
                tenants = reg.tenants()
                if tenants:
                    registry_from_records(records())  # a bad snapshot is named first, as the refusal it is
                    raise UserError(
                        f"registry {shown(target)} is not empty ({len(tenants)} tenant(s)); import into a new file "
                        "with --db NEW.db (a snapshot never merges into existing histories)"
                    )
                registry_from_records(records(), into=reg)
            finally:
                close_registry(reg)
        else:
            _import_new_file(records(), target)
    except SnapshotError as exc:
        print(f"{PROG}: import refused: {exc}; nothing was imported", file=sys.stderr)
        return EXIT_REFUSED
    print(f"Imported {source} into {shown(target)}: {_counts(counts)}")
    return EXIT_OK


def _import_new_file(records: Iterator[dict[str, Any]], target: Path) -> None:
    """A new file appears under its name only when complete, and never over a file that appeared meanwhile:
    load it in a private directory beside the target (no other process can take its name there), then link it
    in, which fails where `os.replace` would silently overwrite a registry another command created."""
    import shutil

    from registry import Registry
    from registry._snapshot import registry_from_records

    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".importing", dir=target.parent))
    try:
        temp = folder / target.name
        reg = Registry.open(str(temp), create=True)
        try:
            registry_from_records(records, into=reg)
        finally:
            close_registry(reg)
        _settle(temp)
        try:
            os.link(temp, target)
        except FileExistsError:
            raise UserError(
                f"{shown(target)} appeared while the snapshot was imported (another command made it); "
                "nothing was imported into it: import again into a new file"
            ) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _settle(path: Path) -> None:
    """Fold the WAL into the file and leave rollback-journal mode, so the one file holds everything and can be
    renamed alone (the registry turns WAL back on at its first write)."""
    import sqlite3

    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode = DELETE")
    finally:
        db.close()
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def _counts(kinds: dict[str, int]) -> str:
    names = {"tenant": "tenants", "namespace": "namespaces", "topic": "topics", "version": "versions",
             "client": "clients", "audit": "audit entries"}  # fmt: skip
    return ", ".join(f"{kinds.get(kind, 0)} {plural}" for kind, plural in names.items())
