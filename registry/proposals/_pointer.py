"""Where a comment points: an RFC 6901 JSON pointer into the proposal's current candidate, or "" for the whole
proposal.

A comment's path was free text, and a shell that showed it as markdown rendered a path holding a newline and
`![x](https://…)` as an image and a link. So a path is now checked as what the diff, the problems and the
app's picker name: a pointer (`/fields/3/type`) that resolves in the candidate, without control or format
characters, within `PATH_MAX` characters.

The document a pointer walks is the one the diff's pointers walk (registry/_changes.py): the JSON of an
Avro-based schema (AVRO, JSON, PROTOBUF); for PROTOBUF_NATIVE its JSON document plus `/messages/<full name>/
fields/<number>` and `/enums/<full name>/values/<number>` (registry/protobuf/_diff.py); for KEY_VALUE `/key…`
and `/value…`, each its part's document; for a policy proposal the policy change (`/compatibility`). A
primitive schema has no inside: only the whole proposal.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from .._errors import InvalidArgumentError, RegistryError
from .._key_value import decode_key_value
from .._model import Direction
from .._schema_data import to_schema_data
from .._text import check_text
from .._types import AVRO_PARSED_TYPES, SchemaData, SchemaType
from ..protobuf._descriptor import model_of
from ..protobuf._native import parse_protobuf_native
from ._model import Proposal, ProposalReview, Revision

PATH_MAX = 1_000
_INDEX = re.compile(r"0|[1-9][0-9]*")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})  # line breaks, tabs, bidi controls, zero-width


def checked_path(proposal: Proposal, path: object) -> str:
    """`path` as a comment keeps it: "" (the whole proposal) or a JSON pointer that resolves in the current
    revision's candidate; InvalidArgumentError naming what is wrong otherwise, so nothing is stored."""
    what = "the comment's path"
    if path is None:
        return ""
    if not isinstance(path, str):
        raise InvalidArgumentError(f"{what} must be text (a JSON pointer such as /fields/0), not {type(path).__name__}")
    check_text(path, what, InvalidArgumentError)
    if not path.strip():
        return ""
    problem = _malformed(path) or _unresolved(_document(proposal.revision), path)
    if problem is not None:
        number = proposal.revision.number
        raise InvalidArgumentError(f"{what} {problem} (revision {number} of proposal #{proposal.id})")
    return path


def comment_paths(proposal: Proposal, review: ProposalReview | None) -> dict[str, str]:
    """The pointers a comment may name, offered by a shell's picker: each candidate-side pointer of the diff's
    changes, the problems and the advisories that resolves in the candidate, mapped to what it is about (the
    change's field path, or the rule's code); for a policy proposal, each policy field it sets."""
    document = _document(proposal.revision)  # read once: a diff may name a thousand places
    found: dict[str, str] = {}
    policy = proposal.revision.policy or {}
    candidates = [("/" + key.replace("~", "~0").replace("/", "~1"), key) for key in policy]
    changed = {key for _, key in candidates} | _change_paths(review)  # labels that already name the place
    for pointer, label in [*candidates, *_review_pointers(review)]:
        if pointer and pointer not in found and (_malformed(pointer) or _unresolved(document, pointer)) is None:
            found[pointer] = label if label in changed else (_field_names(document, pointer) or label)
    return found


def _malformed(path: str) -> str | None:
    """Why `path` cannot be a comment's path whatever the candidate (its length, a control character)."""
    if len(path) > PATH_MAX:
        return f"is {len(path):,} characters long; at most {PATH_MAX:,} are kept"
    bad = next((i for i, c in enumerate(path) if unicodedata.category(c) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        return (
            f"holds the control or format character U+{ord(path[bad]):04X} at index {bad}: a path is a JSON "
            "pointer such as /fields/0/type"
        )
    return None


def _change_paths(review: ProposalReview | None) -> set[str]:
    return {change.path for change in review.diff.changes} if review is not None and review.diff is not None else set()


def _field_names(document: Any, pointer: str) -> str:
    """The field path a pointer walks into, by name (`address.street` for /fields/2/type/fields/0): what a
    problem or an advisory found no change to name it by is then shown by name, not by its rule code; "" when
    the pointer passes no named field."""
    names: list[str] = []
    node, parent = document, ""
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and _INDEX.fullmatch(token) and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            break
        if parent == "fields" and isinstance(node, dict) and isinstance(node.get("name"), str):
            names.append(node["name"])
        parent = token
    return ".".join(names)


def _review_pointers(review: ProposalReview | None) -> Iterator[tuple[str, str]]:
    if review is None:
        return
    if review.diff is not None:
        for change in review.diff.changes:
            yield change.new_pointer, change.path
    for item in review.problems:
        problem = item.problem
        # BACKWARD: the candidate reads, so its side is the reader's; FORWARD: the writer's.
        if problem.direction is not Direction.FORWARD:
            yield problem.reader_path, str(problem.code)
        if problem.direction is not Direction.BACKWARD:
            yield problem.writer_path, str(problem.code)
    if review.what_if is not None:
        for advisory in review.what_if.advisories:
            yield advisory.path, str(advisory.code)


def _unresolved(document: Any, pointer: str) -> str | None:
    """Why `pointer` does not resolve in `document` (RFC 6901), or None when it does."""
    if not pointer.startswith("/"):
        return f"{pointer!r} is not a JSON pointer (RFC 6901: it starts with '/', like /fields/0/type)"
    node, walked = document, ""
    for raw in pointer[1:].split("/"):
        where = walked or "/"
        if re.search("~[^01]|~$", raw):
            return f"{pointer!r} has '~' not followed by 0 or 1 after {where} (RFC 6901: '~' is ~0, '/' is ~1)"
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            if token not in node:
                return f"{pointer!r} does not resolve: nothing named {token!r} at {where}"
            node = node[token]
        elif isinstance(node, list):
            if not _INDEX.fullmatch(token) or int(token) >= len(node):
                return f"{pointer!r} does not resolve: {where} is a list of {len(node)}, without index {token!r}"
            node = node[int(token)]
        else:
            return f"{pointer!r} does not resolve: {where} is a value, with nothing inside"
        walked += "/" + raw
    return None


def _document(revision: Revision) -> Any:
    """The candidate as the document its pointers walk (see the module docstring)."""
    if revision.policy is not None:
        return dict(revision.policy)
    if revision.schema is None:
        return {}
    try:
        return _schema_document(to_schema_data(revision.schema, validate=False))
    except (RegistryError, ValueError):  # a candidate that no longer parses has no inside to point into
        return {}


def _schema_document(schema: SchemaData) -> Any:
    if schema.type in AVRO_PARSED_TYPES:
        return json.loads(schema.data.decode("utf-8"))
    if schema.type is SchemaType.KEY_VALUE:
        parts = decode_key_value(schema)
        return {"key": _schema_document(parts.key), "value": _schema_document(parts.value)}
    if schema.type is SchemaType.PROTOBUF_NATIVE:
        document = json.loads(schema.data.decode("utf-8"))
        model = model_of(parse_protobuf_native(schema.data))
        messages = {
            name: {"fields": {str(number): {"name": f.name} for number, f in message.fields.items()}}
            for name, message in model.messages.items()
        }
        enums = {
            name: {"values": {str(number): {"name": value} for value, number in enum.values}}
            for name, enum in model.enums.items()
        }
        return {**(document if isinstance(document, dict) else {}), "messages": messages, "enums": enums}
    return {}
