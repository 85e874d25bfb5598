"""How every page shows errors, user text and schemas: one place, so each page stays short and safe.

- `show_error(exc)`: a short message that says what went wrong and what to do, never a traceback.
- User text (schema docs, names, properties) is inert: it reaches the page through `st.code`, `st.text`,
  `st.dataframe`, or markdown escaped with `escape_markdown`; never `unsafe_allow_html`.
- `show_schema(entry)`: the schema of a version pretty-printed and syntax-highlighted (st.code); PROTOBUF_NATIVE
  as `.proto` source rebuilt from its descriptor, never base64.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import streamlit as st

from registry import (
    ApprovalsMissingError,
    AuthError,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    NamespaceNotFoundError,
    NotSupportedError,
    PermissionDeniedError,
    PoisonedHistoryError,
    PolicyError,
    ProposalError,
    ProposalNotFoundError,
    RegistryError,
    RegistryNotFoundError,
    SchemaNotFoundError,
    SchemaType,
    SchemaVersion,
    StaleProposalError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
)
from registry.explain._diff import schema_text

# What to do next, by error class; the first match in this order wins (subclasses before their bases).
WHAT_TO_DO: tuple[tuple[type[BaseException], str], ...] = (
    (
        RegistryNotFoundError,
        "Check the registry file in the sidebar's Connection (the app never makes an empty one: create it with "
        "`schema-explorer seed --db PATH`).",
    ),
    (ProposalNotFoundError, "Check the proposal's number, or pick one on the Proposals page."),
    (StaleProposalError, "The proposal now shows what was stored since its base."),
    (ApprovalsMissingError, "Wait for the approvals the namespace's review rules ask for."),
    (ProposalError, "Reload the proposal to see where it stands now."),
    (PermissionDeniedError, "Ask an admin for the needed role (the app's roles file, `ui --roles`)."),
    (NotSupportedError, "Connect to an embedded registry or `schema-explorer serve` for this."),
    (TopicNotFoundError, "Check the topic's full name (persistent://tenant/namespace/topic) or pick it on Browse."),
    (SchemaNotFoundError, "This topic has no live schema at that version: pick another version or topic."),
    (NamespaceNotFoundError, "Check the namespace (tenant/namespace) or create it first."),
    (TenantNotFoundError, "Check the tenant's name or create it first."),
    (IncompatibleSchemaError, "Open What-if to see which field breaks it and in which direction."),
    (PoisonedHistoryError, "Delete the topic's schema to start a new history."),
    (InvalidSchemaError, "Fix the schema text and try again."),
    (InvalidNameError, "Names are tenant/namespace/topic, with letters, digits, '-', '_', '.', ':' or '='."),
    (InvalidVersionError, "Enter a version as a whole number, 0 or more."),
    (InvalidArgumentError, "Change the value and try again."),
    (PolicyError, "Choose another policy value."),
    (AuthError, "Check the token in the sidebar's Connection, or ask an admin for the needed role."),
    (StorageError, "Check the registry file or URL in the sidebar's Connection, then reload the page."),
    (RegistryError, "Check the input and try again."),
)
_UNEXPECTED = "This is a bug in Schema Explorer: reload the page, and report it if it happens again."
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")
# What GitHub-flavoured markdown turns into a mailto link even when escaped (it links the text after parsing).
_EMAIL = re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+")


def error_message(exc: BaseException) -> str:
    """One or two sentences: what went wrong (the core's message names the value) and what to do."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > 600:
        text = text[:600] + "…"
    if not isinstance(exc, RegistryError):
        return f"Unexpected error ({type(exc).__name__}): {text}. {_UNEXPECTED}"
    todo = next(hint for kind, hint in WHAT_TO_DO if isinstance(exc, kind))
    return f"{text}. {todo}" if not text.endswith((".", "!", "?")) else f"{text} {todo}"


def show_error(exc: BaseException) -> None:
    """Render `exc` as a short error box; user text inside it stays inert."""
    st.error(escape_markdown(error_message(exc)), icon=":material/error:")


def escape_markdown(text: str) -> str:
    """Backslash-escape markdown and Streamlit directives (`:red[...]`, `$...$`), so text shows as typed. An
    e-mail address (how people are named behind an identity proxy) becomes a code span: an escape does not keep
    the markdown renderer from making it a mailto link, a code span does."""
    parts, last = [], 0
    for found in _EMAIL.finditer(text):
        parts += [_MARKDOWN_SPECIAL.sub(r"\\\1", text[last : found.start()]), code_span(found.group())]
        last = found.end()
    return "".join(parts) + _MARKDOWN_SPECIAL.sub(r"\\\1", text[last:])


def code_span(text: str) -> str:
    """`text` as an inline code span: markdown does not apply inside, so only backticks need care."""
    return "`" + text.replace("`", "'") + "`"


def when(millis: int | None) -> str:
    """A registry timestamp (ms since the epoch) as UTC text."""
    if millis is None:
        return "—"
    return datetime.fromtimestamp(millis / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# --- schemas ------------------------------------------------------------------------------------------


def pretty_schema(kind: SchemaType, text: str) -> tuple[str, str]:
    """(text, language) for st.code: JSON documents indented, other text as is."""
    if not text.strip():
        return "", "text"
    try:
        tree = json.loads(text)
    except ValueError:
        return text, "text"
    return json.dumps(tree, indent=2, ensure_ascii=False), "json"


def show_schema(entry: SchemaVersion) -> None:
    """A version's schema pretty-printed and highlighted; tombstones and primitive types say so instead."""
    if entry.deleted:
        st.info(f"Version {entry.version} is a deletion marker (tombstone): it has no schema.")
        return
    try:
        raw = entry.schema
    except RegistryError as exc:
        show_error(exc)
        return
    if entry.type is SchemaType.PROTOBUF_NATIVE:
        # Its stored form is a base64 descriptor set: show the .proto source rebuilt from it instead.
        st.code(schema_text(entry), language="protobuf", line_numbers=True, wrap_lines=True)
        return
    text, language = pretty_schema(entry.type, raw)
    if not text:
        st.info(f"{entry.type} is a primitive type: Pulsar stores no schema definition for it.")
        return
    st.code(text, language=language, line_numbers=True, wrap_lines=True)
