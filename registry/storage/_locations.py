"""Opening a storage of the user's own by location: a `package.module:factory` or a scheme a package registers
as an entry point of the group `pulsar_schema_explorer.storage`, as Pulsar plugs in a `SchemaStorageFactory`
(`schemaRegistryStorageClassName`). Which kind a location is, is registry/_location.py's.

A factory returns an object with every method of the public storage protocol (`StorageBackend`,
registry/storage/README.md); one that lacks any is refused by name. A module that does not import, a missing
factory or a factory that fails is one StorageError naming it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, cast

from .._catalog import CatalogStorage
from .._errors import RegistryError, StorageError
from .._location import ENTRY_POINT_GROUP, Location, LocationKind
from ._base import AuditLog, ChangeTracking, IndexedHistory, LocalStorage, Storage, Transactional

REQUIRED_METHODS = tuple(
    name
    for protocol in (Storage, IndexedHistory, Transactional, AuditLog, ChangeTracking, CatalogStorage)
    for name, member in vars(protocol).items()
    if callable(member) and not name.startswith("_")
)
"""What every storage must offer (StorageBackend, read off its protocols): a factory's result is checked
against it."""


def open_plugin(location: Location, *, create: bool) -> LocalStorage:
    """The storage a `module:factory` location or a registered entry point makes, checked against the
    protocol; StorageError naming what failed."""
    if location.kind is LocationKind.FACTORY:
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
