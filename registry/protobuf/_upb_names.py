"""Package names protobuf-java takes and upb refuses (`p-q`, `a..b`, `1p`): the name upb's copy of a file
gives such a package, and the way between a full name as the schema declares it and as the copy spells it.

Its own module because both halves need it: Java's checks after the build (`_java.py`) look fields up in upb's
built pool, and the copy (`_upb_copy.py`) renames the packages and the references into them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from google.protobuf import descriptor_pb2

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def package_renames(files: Iterator[descriptor_pb2.FileDescriptorProto]) -> dict[str, str]:
    """Packages upb refuses and protobuf-java never checks (`p-q`, `a..b`, `1p`), each mapped to a name upb
    takes, part by part so that nested packages stay nested: original -> copy."""
    renames: dict[str, str] = {}
    for proto in files:
        parts = proto.package.split(".") if proto.package else []
        if any(not _IDENTIFIER.fullmatch(part) for part in parts):
            renames[proto.package] = ".".join(
                part if _IDENTIFIER.fullmatch(part) else f"pkg_{part.encode('utf-8').hex()}_schema_explorer"
                for part in parts
            )
    return renames


def to_copy(renames: Mapping[str, str], name: str) -> str:
    """A full name as upb's copy spells it (its package renamed, `package_renames`)."""
    return _rename(renames, name)


def to_original(renames: Mapping[str, str], name: str) -> str:
    """A full name of upb's copy as the schema declares it."""
    return _rename({new: old for old, new in renames.items()}, name) if renames else name


def _rename(renames: Mapping[str, str], name: str) -> str:
    for old in sorted(renames, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return renames[old] + name[len(old) :]
    return name
