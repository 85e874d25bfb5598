"""Opening the registry an audit names, on the driver: which reader plans it (pipeline/_source.py explains the
plan), and every check that can fail made before Spark starts."""

from __future__ import annotations

from pathlib import Path

from registry import RegistryError
from registry._location import LocationKind, parse_location
from registry._pulsar_version import pulsar_line

from ._source import Source, SourceError


def load_source(
    *,
    db: str | None = None,
    url: str | None = None,
    snapshot: str | None = None,
    parquet: str | None = None,
    token: str | None = None,
    client_conf: str | None = None,
    context: str | None = None,
    pulsar_version: str | None = None,
) -> Source:
    """Plan reading exactly one of a registry location (a SQLite file, PostgreSQL, a storage of one's own), a
    remote admin URL (or the cluster a client.conf or pulsarctl context names), a snapshot file or a Parquet
    export folder. SourceError (one line) when it cannot be read: a missing file, not a registry, a malformed
    snapshot header, a foreign Parquet table, an unreachable endpoint. Nothing of the registry's topics is read.
    The audits judge as the source's Pulsar line, or as `pulsar_version` when given."""
    given = [x for x in (db, url, client_conf, context, snapshot, parquet) if x]
    if len(given) != 1:
        raise SourceError(
            "give exactly one source: --db LOCATION, --url URL, --client-conf FILE, --context NAME, --snapshot FILE "
            "or --parquet DIR"
        )
    try:
        line = pulsar_line(pulsar_version).name if pulsar_version else None
        source: Source
        if snapshot:
            from ._snapshot_source import SnapshotSource

            source = SnapshotSource.open(Path(snapshot))
        elif parquet:
            from ._parquet_source import ParquetSource

            source = ParquetSource.open(Path(parquet))
        elif url:
            from ._registry_source import Reach, RegistrySource

            source = RegistrySource.open(Reach(url, pulsar_version=line), token=token)
        elif client_conf or context:
            from ._registry_source import Reach, RegistrySource

            source = RegistrySource.open(Reach.by_file(client_conf=client_conf, context=context, pulsar_version=line))
        else:
            assert db is not None
            location = parse_location(db)
            if location.kind is LocationKind.MEMORY:
                raise SourceError(f"--db {db!r}: a memory: registry lives in one process; executors cannot read it")
            if location.kind.sql:
                from ._sql_source import SqlSource

                source = SqlSource.open(db, pulsar_version=line)
            else:
                from ._registry_source import Reach, RegistrySource

                source = RegistrySource.open(Reach(db, pulsar_version=line))
        if line:
            source.header["pulsar_version"] = line
        return source
    except RegistryError as exc:
        raise SourceError(str(exc)) from None
