"""Where a registry lives, named by one string, told apart here once, as Pulsar names its schema storage by a
class name (`schemaRegistryStorageClassName`, a `SchemaStorageFactory`).

- a path, or `sqlite:///path` (relative) / `sqlite:////abs/path` (SQLAlchemy's spelling): the SQLite file;
- `memory:`: a registry in memory, gone with the process;
- `postgresql://user@host:port/db?sslmode=...` (or `postgres://`): PostgreSQL (storage/_postgres.py);
- `http://` / `https://`: a remote admin endpoint, a broker's or `schema-explorer serve`'s (registry/remote/);
- `package.module:factory`: a storage of the user's own, `factory(location, create=...)`;
- `name://...` where `name` is an entry point of the group `pulsar_schema_explorer.storage`: a storage a
  third-party package registers; its factory is called the same way with the whole location.

Every shell and core module that must know which kind a location is asks here (`locate`, `parse_location`,
`remote_url`, `names_remote`) and compares `LocationKind` members, never prefixes of its own. Opening a storage
of the user's own is storage/_locations.py's.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from importlib.metadata import entry_points
from urllib.parse import urlsplit, urlunsplit

from ._errors import StorageError

ENTRY_POINT_GROUP = "pulsar_schema_explorer.storage"
REMOTE_SCHEMES = ("http", "https")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_FACTORY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):([A-Za-z_][A-Za-z0-9_]*)$")


class LocationKind(enum.StrEnum):
    """What a location names (module docstring). The values are the labels /metrics and /ready show."""

    SQLITE = "sqlite"
    MEMORY = "memory"
    POSTGRESQL = "postgresql"
    FACTORY = "factory"
    PLUGIN = "plugin"
    REMOTE = "remote"

    @property
    def sql(self) -> bool:
        """A SQLite file or a PostgreSQL database: what another process (a Spark executor, a range reader) can
        read directly, by key range (storage/_ranges.py)."""
        return self in (LocationKind.SQLITE, LocationKind.POSTGRESQL)


@dataclass(frozen=True, slots=True)
class Location:
    """A parsed registry location: `target` is the file path, the connection string, `module:factory`, the
    whole location for a plugin, or the URL of a remote registry (scheme lower-cased)."""

    kind: LocationKind
    target: str
    scheme: str = ""

    @property
    def shown(self) -> str:
        """The location as messages show it: a PostgreSQL or plugin password is never printed."""
        if self.kind is LocationKind.POSTGRESQL:
            return postgres_shown(self.target)
        if self.kind is LocationKind.MEMORY:
            return "memory:"
        if self.kind is LocationKind.PLUGIN:
            parts = urlsplit(self.target)
            if parts.password is not None:  # scheme://user:secret@host/... shows as scheme://user@host/...
                host = parts.netloc.rsplit("@", 1)[1]
                return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}"))
        return self.target


def _plugin_schemes() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def _is_storage_scheme(scheme: str) -> bool:
    """Does `scheme://` name a storage (built in, or a registered entry point)?"""
    return scheme in ("sqlite", "postgresql", "postgres") or scheme in _plugin_schemes()


def remote_url(location: str) -> str | None:
    """The admin endpoint URL `location` names (http or https, scheme in any case, surrounding whitespace
    dropped), or None when it names a storage (a file, or a storage scheme). Any other `scheme://` is refused
    rather than taken for a file name: `ftp://x` or a mistyped `htp://host` must never become an empty registry
    file called `ftp:/x`."""
    match = _SCHEME.match(location.strip())
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in REMOTE_SCHEMES:
        if _is_storage_scheme(scheme):
            return None  # sqlite://, postgresql:// or a registered storage: a storage location
        raise StorageError(
            f"unsupported registry location {location.strip()!r}: only http:// and https:// URLs name a remote "
            "registry (storages: a path, sqlite:///path, postgresql://..., memory:, package.module:factory, or a "
            "scheme registered as a pulsar_schema_explorer.storage entry point)"
        )
    return f"{scheme}{location.strip()[len(match.group(1)) :]}"  # the rest is checked by the remote registry


def names_remote(location: str) -> bool:
    """Is `location` an http(s) URL (scheme in any case, whitespace around dropped)? Never raises: for a form
    or a link that decides which way to go before anything is opened (opening refuses a bad location)."""
    match = _SCHEME.match(location.strip())
    return match is not None and match.group(1).lower() in REMOTE_SCHEMES


def locate(location: str) -> Location:
    """Which registry `location` names, remote included; StorageError for an empty location, a `sqlite://`
    spelling that names no file, or a scheme that names neither a remote registry nor a storage."""
    url = remote_url(location)
    if url is not None:
        return Location(LocationKind.REMOTE, url, url.partition(":")[0])
    return parse_location(location)


def parse_location(text: str) -> Location:
    """Which storage `text` names (module docstring); StorageError for an empty location, an unknown scheme
    or an http(s) URL, which names a remote registry, not a storage (`locate` takes both)."""
    location = text.strip()
    if not location:
        raise StorageError("no registry location given (an empty path)")
    if location in ("memory:", "memory://"):
        return Location(LocationKind.MEMORY, "")
    match = _SCHEME.match(location)
    if match is not None:
        scheme = match.group(1).lower()
        rest = location[match.end() :]
        if scheme == "sqlite":
            if not rest.startswith("/") or rest == "/":
                raise StorageError(
                    f"registry location {location!r}: write sqlite:///relative/path or sqlite:////absolute/path"
                )
            return Location(LocationKind.SQLITE, rest[1:], scheme)
        if scheme in ("postgresql", "postgres"):
            return Location(LocationKind.POSTGRESQL, location, scheme)
        if scheme in REMOTE_SCHEMES:
            raise StorageError(f"{location!r} is a remote registry, not a storage (Registry.open opens it)")
        plugins = _plugin_schemes()
        if scheme in plugins:
            return Location(LocationKind.PLUGIN, location, scheme)
        known = ", ".join([f"{s}://" for s in ("sqlite", "postgresql", *REMOTE_SCHEMES)] + plugins)
        raise StorageError(
            f"unsupported registry location {location!r}: no storage is registered for {scheme}:// "
            f"(known: memory:, {known}; a storage of your own: package.module:factory, or an entry point in "
            f"the group {ENTRY_POINT_GROUP})"
        )
    if _FACTORY.match(location):
        return Location(LocationKind.FACTORY, location)
    return Location(LocationKind.SQLITE, location)


def postgres_shown(dsn: str) -> str:
    """A PostgreSQL location without its password, for messages (`postgresql://user@host:port/db`)."""
    from psycopg.conninfo import conninfo_to_dict  # psycopg is only imported for a postgresql:// location

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - a DSN libpq cannot parse: show only its scheme
        return "postgresql://(unparseable location)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    db = parts.get("dbname") or ""
    return f"postgresql://{user}{host}{port}/{db}"
