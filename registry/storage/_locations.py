"""Where a registry lives, named by one string, as Pulsar names its schema storage by a class name
(`schemaRegistryStorageClassName`, a `SchemaStorageFactory`).

- a path, or `sqlite:///path` (relative) / `sqlite:////abs/path` (SQLAlchemy's spelling): the SQLite file;
- `memory:`: a registry in memory, gone with the process;
- `postgresql://user@host:port/db?sslmode=...` (or `postgres://`): PostgreSQL (storage/_postgres.py);
- `http://` / `https://`: a remote admin endpoint (not a storage: Registry.open handles it first);
- `package.module:factory`: a storage of the user's own, `factory(location, create=...)`;
- `name://...` where `name` is an entry point of the group `pulsar_schema_explorer.storage`: a storage a
  third-party package registers; its factory is called the same way with the whole location.

A factory returns an object with every method of the public storage protocol (`StorageBackend`,
registry/storage/README.md); one that lacks any is refused by name. A location that names nothing known, a
module that does not import, a missing factory or a factory that fails is one StorageError naming it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

from .._catalog import CatalogStorage
from .._errors import RegistryError, StorageError
from ._base import AuditLog, ChangeTracking, IndexedHistory, LocalStorage, Storage, Transactional

ENTRY_POINT_GROUP = "pulsar_schema_explorer.storage"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_FACTORY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):([A-Za-z_][A-Za-z0-9_]*)$")
REQUIRED_METHODS = tuple(
    name
    for protocol in (Storage, IndexedHistory, Transactional, AuditLog, ChangeTracking, CatalogStorage)
    for name, member in vars(protocol).items()
    if callable(member) and not name.startswith("_")
)
"""What every storage must offer (StorageBackend, read off its protocols): a factory's result is checked
against it."""


@dataclass(frozen=True, slots=True)
class StorageLocation:
    """A parsed registry location: `kind` is sqlite, memory, postgresql, factory or plugin; `target` the file
    path, the connection string, `module:factory`, or the whole location for a plugin."""

    kind: str
    target: str
    scheme: str = ""

    @property
    def shown(self) -> str:
        """The location as messages show it: a PostgreSQL password is never printed."""
        if self.kind == "postgresql":
            from ._postgres import shown_location

            return shown_location(self.target)
        if self.kind == "memory":
            return "memory:"
        if self.kind == "plugin":
            parts = urlsplit(self.target)
            if parts.password is not None:  # scheme://user:secret@host/... shows as scheme://user@host/...
                host = parts.netloc.rsplit("@", 1)[1]
                return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}"))
        return self.target


def is_storage_scheme(scheme: str) -> bool:
    """Does `scheme://` name a storage (built in, or a registered entry point)?"""
    if scheme in ("sqlite", "postgresql", "postgres"):
        return True
    return any(ep.name == scheme for ep in entry_points(group=ENTRY_POINT_GROUP))


def parse_location(text: str) -> StorageLocation:
    """Which storage `text` names (module docstring); StorageError for an empty location or an unknown
    scheme. http(s) URLs are not storages: Registry.open takes them before asking here."""
    location = text.strip()
    if not location:
        raise StorageError("no registry location given (an empty path)")
    if location in ("memory:", "memory://"):
        return StorageLocation("memory", "")
    match = _SCHEME.match(location)
    if match is not None:
        scheme = match.group(1).lower()
        rest = location[match.end() :]
        if scheme == "sqlite":
            if not rest.startswith("/") or rest == "/":
                raise StorageError(
                    f"registry location {location!r}: write sqlite:///relative/path or sqlite:////absolute/path"
                )
            return StorageLocation("sqlite", rest[1:], scheme)
        if scheme in ("postgresql", "postgres"):
            return StorageLocation("postgresql", location, scheme)
        if scheme in ("http", "https"):
            raise StorageError(f"{location!r} is a remote registry, not a storage (Registry.open opens it)")
        plugins = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        if scheme in plugins:
            return StorageLocation("plugin", location, scheme)
        known = ", ".join([f"{s}://" for s in ("sqlite", "postgresql", "http", "https")] + sorted(plugins))
        raise StorageError(
            f"unsupported registry location {location!r}: no storage is registered for {scheme}:// "
            f"(known: memory:, {known}; a storage of your own: package.module:factory, or an entry point in "
            f"the group {ENTRY_POINT_GROUP})"
        )
    if _FACTORY.match(location):
        return StorageLocation("factory", location)
    return StorageLocation("sqlite", location)


def open_plugin(location: StorageLocation, *, create: bool) -> LocalStorage:
    """The storage a `module:factory` location or a registered entry point makes, checked against the
    protocol; StorageError naming what failed."""
    if location.kind == "factory":
        module_name, _, attribute = location.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # noqa: BLE001 - any import failure is the user's module's, named as such
            raise StorageError(
                f"registry location {location.target!r}: cannot import module {module_name!r} "
                f"({type(exc).__name__}: {exc}); for a file with this name write ./{location.target}"
            ) from None
        factory = getattr(module, attribute, None)
        if not callable(factory):
            raise StorageError(
                f"registry location {location.target!r}: module {module_name!r} has no callable {attribute!r}"
            )
        name = location.target
    else:
        (entry,) = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == location.scheme]
        try:
            factory = entry.load()
        except Exception as exc:  # noqa: BLE001
            raise StorageError(
                f"registry location {location.target!r}: the storage entry point {entry.name!r} ({entry.value}) "
                f"does not load: {type(exc).__name__}: {exc}"
            ) from None
        name = f"entry point {entry.name!r} ({entry.value})"
    try:
        storage = cast(Callable[..., Any], factory)(location.target, create=create)
    except RegistryError:  # RegistryNotFoundError (no registry there, create=False), StorageError...: as raised
        raise
    except Exception as exc:  # noqa: BLE001 - a third party's factory: its failure is reported, never a crash
        raise StorageError(f"storage factory {name} failed: {type(exc).__name__}: {exc}") from None
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(storage, m, None))]
    if missing:
        raise StorageError(
            f"storage factory {name} returned a {type(storage).__name__}, which lacks {', '.join(missing)} "
            "(see StorageBackend in registry/storage/README.md)"
        )
    return cast(LocalStorage, storage)
