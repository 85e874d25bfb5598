"""Which Pulsar broker the registry answers as: one `PulsarLine` per release line whose schema rules differ.

Pulsar's verdicts are not the same on every line: Pulsar 3.0 and 4.0 ship Avro 1.11 (no `$` in names,
namespaces not validated, a repeated definition of a named type refused, JSON schemas in the old Jackson
JSON-Schema form accepted, no EXTERNAL type), while current master ships Avro 1.12 with Pulsar's own name
validator (`$` allowed, every namespace part validated, an identical repeat of an enum or fixed accepted),
PIP-464's strict JSON, and EXTERNAL schemas. A registry answers as one line, stored with it
(`Registry.pulsar_version`); a remote one reads its broker's version (`GET /admin/v2/brokers/version`).

The rules in force during a facade call are a context variable (`using`), so that the parsing and checking
code deep below reads them without every signature carrying them, and two registries of different lines
in one process (a server, a test) never see each other's.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ._errors import InvalidArgumentError


@dataclass(frozen=True, slots=True)
class PulsarLine:
    """The schema rules of one Pulsar release line (docs/guide/fidelity.md "Which Pulsar", pulsar-semantics.md §0)."""

    name: str
    title: str
    avro: str
    dollar_in_names: bool  # Avro 1.12 + Pulsar's validator: `$` is a name character; Avro 1.11: it is not
    namespaces_validated: bool  # Avro 1.12 `ParseContext.requireValidFullName`: every namespace part is a name
    repeated_definitions: bool  # Avro 1.12 `ParseContext.put`: an identical enum/fixed may be defined twice
    legacy_json: bool  # before PIP-464: a JSON schema may be a Jackson JSON-Schema document, not Avro
    external: bool  # the EXTERNAL schema type (its checker and validator exist)
    protobuf_root_exact: bool  # ProtobufNativeSchemaUtils.deserialize's rewrite: the root named exactly
    protobuf_java: str  # the protobuf-java line whose FileDescriptor.buildFrom builds PROTOBUF_NATIVE schemas


@dataclass(frozen=True, slots=True)
class PulsarChoice:
    """The line a registry handle answers as, and where that choice comes from (`SchemaRegistry.pulsar`)."""

    line: PulsarLine
    source: str  # asked when opened, stored with the registry, the default, or (remote) what the broker reports


# The 4.0 LTS line ships Avro 1.11.4; 3.0 has the same schema rules on an older Avro 1.11.
_LTS_4_0 = PulsarLine(
    name="4.0",
    title="Pulsar 4.0 LTS",
    avro="1.11.4",
    dollar_in_names=False,
    namespaces_validated=False,
    repeated_definitions=False,
    legacy_json=True,
    external=False,
    protobuf_root_exact=False,
    protobuf_java="3.25",  # protobuf3.version 3.25.5 in pom.xml (3.0 since 3.0.7, 4.0)
)
PULSAR_LINES: dict[str, PulsarLine] = {
    p.name: p
    for p in (
        replace(_LTS_4_0, name="3.0", title="Pulsar 3.0 LTS", avro="1.11"),
        _LTS_4_0,
        PulsarLine(
            name="master",
            title="Pulsar master (4.2 and later lines)",
            avro="1.12",
            dollar_in_names=True,
            namespaces_validated=True,
            repeated_definitions=True,
            legacy_json=False,
            external=True,
            protobuf_root_exact=True,
            protobuf_java="4.x",  # protobuf 4.35.1 in gradle/libs.versions.toml
        ),
    )
}
DEFAULT_LINE = "master"
PULSAR_VERSION_SETTING = "pulsar_version"  # the storage setting that names the line stored with a registry
_VERSION = re.compile(r"\s*v?(\d+)\.(\d+)(?:[.\-+].*)?\s*")


def pulsar_line(name: str | PulsarLine | None) -> PulsarLine:
    """The line called `name` ("3.0", "4.0", "master"; None: the default), or InvalidArgumentError."""
    if isinstance(name, PulsarLine):
        return name
    if name is None:
        return PULSAR_LINES[DEFAULT_LINE]
    found = PULSAR_LINES.get(str(name).strip().lower())
    if found is None:
        known = ", ".join(PULSAR_LINES)
        raise InvalidArgumentError(f"unknown Pulsar line {name!r}: choose one of {known}")
    return found


def line_for_broker(version: str) -> PulsarLine:
    """The line nearest to a broker's reported version (`4.0.7`, `3.0.12`, `4.2.0-SNAPSHOT`, or a line
    name): 2.x and 3.x answer as 3.0, 4.0.x as 4.0, anything newer as master; InvalidArgumentError for text that
    is no version."""
    if version.strip().lower() in PULSAR_LINES:  # `schema-explorer serve` reports the line it answers as
        return PULSAR_LINES[version.strip().lower()]
    match = _VERSION.fullmatch(version)
    if match is None:
        raise InvalidArgumentError(f"the broker reported the version {version!r}, which is not a Pulsar version")
    major, minor = int(match[1]), int(match[2])
    if major <= 3:
        return PULSAR_LINES["3.0"]
    if (major, minor) == (4, 0):
        return PULSAR_LINES["4.0"]
    return PULSAR_LINES["master"]


_ANSWERING_AS: contextvars.ContextVar[PulsarLine] = contextvars.ContextVar(
    "pulsar_line", default=PULSAR_LINES[DEFAULT_LINE]
)


def current_line() -> PulsarLine:
    """The line the facade call running in this context answers as (the default line outside any)."""
    return _ANSWERING_AS.get()


@contextlib.contextmanager
def answering_as(line: str | PulsarLine | None) -> Iterator[PulsarLine]:
    """Answer as `line` inside the block: the facade runs each call so, and code that calls the core's checkers
    directly (the Spark audits) does the same; None is the default line."""
    token = _ANSWERING_AS.set(pulsar_line(line))
    try:
        yield _ANSWERING_AS.get()
    finally:
        _ANSWERING_AS.reset(token)


def avro_111_name_problem(name: str) -> str | None:
    """Why Avro 1.11's `Schema.validateName` refuses `name` (first a letter or `_`, then letters, digits or
    `_`: Java's `Character.isLetter`/`isLetterOrDigit`), or None."""
    if not name:
        return "Empty name"
    first = name[0]
    if not (first.isalpha() or first == "_"):
        return f"Illegal initial character: {name}"
    for c in name[1:]:
        if not (c.isalpha() or c == "_" or unicodedata.category(c) == "Nd"):
            return f"Illegal character in: {name}"
    return None
