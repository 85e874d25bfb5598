"""A topic's schema history as Pulsar keeps it (pulsar-semantics.md §3.1, §3.2): versions numbered from 0,
tombstones included, and only the versions after the last tombstone alive for any purpose."""

from __future__ import annotations

from collections.abc import Sequence

from ._compatibility import Versioned
from ._errors import InvalidVersionError
from ._model import SchemaVersion
from ._types import SchemaData, SchemaType


def trim(entries: Sequence[SchemaVersion]) -> list[SchemaVersion]:
    """Entries strictly after the last tombstone (§3.2): the only ones that exist for any purpose."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].deleted:
            return list(entries[i + 1 :])
    return list(entries)


def next_version(entries: Sequence[SchemaVersion]) -> int:
    """Versions start at 0 and each stored entry, tombstones included, takes the next number (§3.1)."""
    return entries[-1].version + 1 if entries else 0


def stored_type(kind: SchemaType) -> SchemaType:
    """The broker stores every negative Java type (BYTES; AUTO* never get this far) as NONE (§1)."""
    return SchemaType.NONE if kind.java_value < 0 else kind


def data_of(entry: SchemaVersion) -> SchemaData:
    """A stored version as the checks compare it."""
    return SchemaData(entry.type, entry.data, entry.properties)


def versioned(entries: Sequence[SchemaVersion]) -> list[Versioned]:
    """Stored versions as the compatibility checks take them."""
    return [Versioned(e.version, data_of(e)) for e in entries]


_LONG = range(-(2**63), 2**63)  # a version is a Java long (`Long.parseLong` in SchemasResourceBase)


def version_number(version: object, *, negative: bool = False) -> int:
    """A version number from an int or text; `negative` lets a negative long through (a GET of version -1
    finds nothing in Pulsar: 404). A number that is no long is a 400 here (Pulsar: 500 from parseLong)."""
    if isinstance(version, bool):
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0")
    try:
        number = int(str(version).strip()) if not isinstance(version, int) else version
    except ValueError:
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0") from None
    if number not in _LONG:
        raise InvalidVersionError(f"invalid schema version {version!r}: it does not fit a 64-bit version number")
    if number < 0 and not negative:
        raise InvalidVersionError(f"invalid schema version {version!r}: expected a whole number >= 0")
    return number
