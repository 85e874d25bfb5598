"""Who may do what in the app: a roles file mapping people to viewer, producer or admin (`ui --roles FILE`,
or SCHEMA_EXPLORER_ROLES), read here without Streamlit so that `schema-explorer ui` can check it before it
starts the server and stop with one line naming the bad entry.

A roles file is a JSON object, or a TOML file (by its `.toml` suffix) of `name = "role"` lines; names are
matched against the name the app records writes under (app/session.py's `user()`: the signed-in e-mail, the
`--user-header` value, or `NAME (os user)`) as the core compares people (registry/_identity.py: Unicode NFKC,
case and look-alike letters folded, so a header `Alice@example.com` is the file's `alice@example.com`). Two
names in the file that are one person so compared are refused, and so is `anonymous`:

    {"alice@example.com": "admin", "bob@example.com": "producer", "carol@example.com": "viewer"}

    "alice@example.com" = "admin"
    "bob@example.com" = "producer"

A person the file does not name is a viewer (fail closed: a typo in a name takes rights away, never gives
them). Without a roles file, everyone who may write is a producer, except the operating-system user of a
local app (nobody else can reach it), who is an admin.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from registry import Role
from registry._identity import name_clash, person_key

ROLES_ENV = "SCHEMA_EXPLORER_ROLES"  # the roles file's path (`ui --roles FILE` sets it for the server)
MAX_BYTES = 1_048_576  # a roles file larger than this is refused: it names people, not data
ROLE_NAMES = ", ".join(role.value for role in Role)


class RolesFileError(ValueError):
    """The roles file cannot be used; the message names the file and, where there is one, the bad entry."""


@dataclass(frozen=True, slots=True)
class Roles:
    """The roles a file gives, by person (`entries` as written). `role_of` a person it does not name is VIEWER."""

    path: Path
    entries: Mapping[str, Role] = field(default_factory=lambda: MappingProxyType({}))
    _by_person: Mapping[str, Role] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_person = {person_key(name): role for name, role in self.entries.items()}
        object.__setattr__(self, "_by_person", MappingProxyType(by_person))

    def role_of(self, name: str) -> Role:
        return self._by_person.get(person_key(name), Role.VIEWER)


def default_role(*, os_user: bool) -> Role:
    """The role without a roles file: the operating-system user of a local app is its admin (nobody but them
    reaches it, and they could edit the registry file anyway); everyone else who may write is a producer."""
    return Role.ADMIN if os_user else Role.PRODUCER


def load_roles(path: str | Path) -> Roles:
    """The roles file at `path`, checked whole; RolesFileError naming the file and the first bad entry."""
    where = Path(path).expanduser()
    try:
        raw = where.read_bytes()[: MAX_BYTES + 1]
    except OSError as exc:
        raise RolesFileError(f"roles file {where}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > MAX_BYTES:
        raise RolesFileError(f"roles file {where}: larger than {MAX_BYTES:,} bytes; it should only name people")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RolesFileError(f"roles file {where}: not UTF-8 text (byte {exc.start})") from None
    document = _parse_toml(where, text) if where.suffix.lower() == ".toml" else _parse_json(where, text)
    return Roles(path=where, entries=MappingProxyType(_entries(where, document)))


def _parse_json(where: Path, text: str) -> dict[str, Any]:
    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise RolesFileError(f"roles file {where}: entry {json.dumps(key)} is given twice")
            seen[key] = value
        return seen

    try:
        document = json.loads(text, object_pairs_hook=no_repeats)
    except json.JSONDecodeError as exc:
        raise RolesFileError(
            f"roles file {where}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg} "
            "(a TOML file needs the .toml suffix)"
        ) from None
    if not isinstance(document, dict):
        found = type(document).__name__
        raise RolesFileError(
            f"roles file {where}: expected an object of name to role ({ROLE_NAMES}), found a JSON {found}"
        )
    return document


def _parse_toml(where: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RolesFileError(f"roles file {where}: not valid TOML: {exc}") from None


def _entries(where: Path, document: dict[str, Any]) -> dict[str, Role]:
    entries: dict[str, Role] = {}
    for name, value in document.items():
        entry = f"roles file {where}: entry {json.dumps(name)}"
        if not name.strip():
            raise RolesFileError(f"{entry}: a name must not be empty")
        if name != name.strip():
            raise RolesFileError(f"{entry}: a name has no spaces around it (it would never match anyone)")
        if not isinstance(value, str):
            raise RolesFileError(f"{entry}: the role must be one of {ROLE_NAMES}, as text, not {_kind(value)}")
        try:
            entries[name] = Role(value.strip().lower())
        except ValueError:
            raise RolesFileError(f"{entry}: {json.dumps(value)} is not a role; use {ROLE_NAMES}") from None
    clash = name_clash(entries)
    if clash is not None:
        raise RolesFileError(f"roles file {where}: {clash}")
    return entries


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true/false"
    return "a number" if isinstance(value, int | float) else type(value).__name__
