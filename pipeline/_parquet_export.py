"""`schema-explorer export --format parquet DIR`: the registry written as the Parquet tables of
pipeline/_parquet_format.py, on this machine, without Spark.

Histories are read the way the audits read them, so the writer never holds the registry: a SQLite file or a
PostgreSQL database by key range in one read transaction (`RangeReader`: the export is one committed state,
and the change token it names is that state's), any other registry namespace by namespace through the facade.
Bundles come in key order, so each partition folder (tenant, namespace) gets its files in one pass.

The tables are written into a temporary folder beside DIR and renamed to DIR when complete: a DIR is never a
half export. DIR must not exist, or be an empty folder.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from registry import RegistryError, SchemaRegistry
from registry._location import parse_location
from registry._snapshot import audit_records, snapshot_head
from registry.storage._ranges import KeyRange, RangeReader, TopicBundle, namespace_bundles

from ._parquet_format import write_export


class ExportError(ValueError):
    """DIR cannot take an export (a file, a folder with something in it, a parent that does not exist)."""


def check_target(folder: str) -> Path:
    target = Path(folder).expanduser().resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "a file" if not target.is_dir() else "a folder that is not empty"
        raise ExportError(f"{folder!r} is {what}; give a new folder for the Parquet tables")
    if not target.parent.is_dir():
        raise ExportError(f"{folder!r}: folder {target.parent} does not exist")
    return target


def export_parquet(reg: SchemaRegistry, location: str | None, folder: str, *, audit: bool = True) -> dict[str, int]:
    """Write `reg` as Parquet tables under `folder`, the rows per table; `location` is where `reg` was opened
    (None for an admin API)."""
    target = check_target(folder)
    header, namespaces = snapshot_head(reg)
    temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".exporting", dir=target.parent))
    try:
        with _bundles(reg, location, [str(n["name"]) for n in namespaces]) as (bundles, token):
            counts = write_export(
                temporary / "tables",
                header,
                namespaces,
                bundles,
                audit_records(reg) if audit else iter(()),
                tenants=reg.tenants(),
                change_token=token,
                source=str(getattr(reg, "location", location)),
            )
        if target.exists():
            target.rmdir()
        (temporary / "tables").replace(target)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return counts


@contextmanager
def _bundles(
    reg: SchemaRegistry, location: str | None, namespaces: list[str]
) -> Iterator[tuple[Iterator[TopicBundle], int | None]]:
    """Every bundle in key order and the change token of the state they come from (None where the registry
    has no single one: an admin API)."""
    if location is not None and parse_location(location).kind.sql:
        with RangeReader(location) as reader, reader.reading() as read:
            yield read.bundles(KeyRange()), read.token
        return

    def by_namespace() -> Iterator[TopicBundle]:
        for namespace in sorted(namespaces):
            yield from namespace_bundles(reg, namespace)

    try:
        token: int | None = reg.change_token()
    except RegistryError:
        token = None
    yield by_namespace(), token
