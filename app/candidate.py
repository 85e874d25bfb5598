"""The candidate-schema widget shared by the Diff and What-if pages: widgets in, a `SchemaInfo` out.

Four ways in, as Pulsar clients send schemas: Avro/JSON text (typed, pasted or uploaded), `.proto` files
compiled with grpcio-tools' protoc into a PROTOBUF_NATIVE schema, a KEY_VALUE schema from its key and value
parts, or a primitive type. The widget only builds the SchemaInfo; the registry validates and judges it.
Every widget key starts with the caller's `key`, so tests drive it by key (e.g. "whatif_cand_text").
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

import streamlit as st
from google.protobuf import descriptor_pb2

from registry import RegistryError, SchemaInfo, SchemaType, SchemaVersion
from registry._key_value import KEY_VALUE_ENCODINGS, KEY_VALUE_PART_TYPES
from registry._limits import current_limits
from registry._schema_data import key_value_parts, key_value_schema_info
from registry.protobuf._native import to_protobuf_native_data
from registry.protobuf._protoc import ProtoCompileError, compile_uploads, declared_messages

TEXT, PROTO, KEY_VALUE, PRIMITIVE = "Avro / JSON text", ".proto files", "KEY_VALUE", "Primitive"
MODES = (TEXT, PROTO, KEY_VALUE, PRIMITIVE)
TEXT_TYPES = (SchemaType.AVRO, SchemaType.JSON, SchemaType.PROTOBUF, SchemaType.PROTOBUF_NATIVE)
PRIMITIVES = tuple(t for t in SchemaType if t.is_primitive)
# Which input a stored type is edited with (presentation only; the registry decides what a type means).
_MODE_OF = {SchemaType.KEY_VALUE: KEY_VALUE, SchemaType.PROTOBUF_NATIVE: PROTO} | {t: PRIMITIVE for t in PRIMITIVES}


class CandidateError(Exception):
    """The widgets do not make a schema yet; the message says what to fix."""


def candidate_input(
    key: str, start: SchemaVersion | SchemaInfo | None = None, *, origin: object = None
) -> SchemaInfo | None:
    """Render the candidate widgets, prefilled from `start` (e.g. the latest version, to edit it; or a
    proposal's candidate, named by `origin` so that another one seeds them again).

    Returns None while the input is incomplete (a message says what is missing)."""
    if isinstance(start, SchemaVersion):
        _prefill(key, (start.topic, start.version), start.info)
    else:
        _prefill(key, None if start is None else ("candidate", origin), start)
    mode = st.radio("Candidate", MODES, key=f"{key}_mode", horizontal=True)
    try:
        if mode == PROTO:
            return _proto_input(key)
        if mode == KEY_VALUE:
            return _key_value_input(key)
        if mode == PRIMITIVE:
            kind = st.selectbox("Primitive type", PRIMITIVES, key=f"{key}_primitive")
            return SchemaInfo(type=kind, schema="")
        return _text_input(key)
    except CandidateError as exc:
        st.info(str(exc))
        return None


def _prefill(key: str, ident: object, start: SchemaInfo | None) -> None:
    """Seed the widgets from `start` once per starting schema, `ident` (a new topic or version re-seeds them)."""
    marker = f"{key}_start"
    if st.session_state.get(marker, "unset") == ident:
        return
    st.session_state[marker] = ident
    for suffix in ("text", "key_text", "value_text"):
        st.session_state[f"{key}_{suffix}"] = ""
    if start is None:
        st.session_state[f"{key}_mode"] = TEXT
        return
    st.session_state[f"{key}_mode"] = _MODE_OF.get(start.type, TEXT)
    if start.type in TEXT_TYPES:
        st.session_state[f"{key}_type"] = start.type
        st.session_state[f"{key}_text"] = _pretty(start.text)
    elif start.type in PRIMITIVES:
        st.session_state[f"{key}_primitive"] = start.type
    elif start.type is SchemaType.KEY_VALUE:
        _prefill_key_value(key, start)


def _prefill_key_value(key: str, start: SchemaInfo) -> None:
    """Seed the key and value widgets from a stored KEY_VALUE schema's parts (the core splits them)."""
    try:
        key_part, value_part, encoding = key_value_parts(start)
    except RegistryError:
        return
    st.session_state[f"{key}_encoding"] = encoding if encoding in KEY_VALUE_ENCODINGS else KEY_VALUE_ENCODINGS[0]
    for part, info in (("key", key_part), ("value", value_part)):
        st.session_state[f"{key}_{part}_type"] = info.type if info.type in KEY_VALUE_PART_TYPES else SchemaType.BYTES
        st.session_state[f"{key}_{part}_text"] = _pretty(str(info.schema)) if info.schema else ""


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _load_upload(file_key: str, text_key: str) -> None:
    """on_change of an upload: its content replaces the text area's, which stays editable."""
    upload = st.session_state.get(file_key)
    if upload is not None:
        st.session_state[text_key] = upload.getvalue().decode("utf-8", errors="replace")


def upload_limit_mb() -> int:
    """The uploaders' limit (Streamlit counts whole MiB) from the registry's own schema size limit, so the
    uploader's "… per file" says what the registry will take rather than Streamlit's 200 MB default."""
    return max(1, -(-current_limits().max_schema_bytes // 1_048_576))


def _limit_text() -> str:
    size = current_limits().max_schema_bytes
    return f"{size // 1_048_576} MiB" if size % 1_048_576 == 0 else f"{size:,} bytes"


def _text_input(key: str) -> SchemaInfo:
    kind = st.selectbox("Schema type", TEXT_TYPES, key=f"{key}_type")
    st.file_uploader(
        f"…or upload a schema file (.avsc, .json; the registry takes at most {_limit_text()})",
        type=["avsc", "json"],
        max_upload_size=upload_limit_mb(),
        key=f"{key}_file",
        on_change=_load_upload,
        args=(f"{key}_file", f"{key}_text"),
    )
    text = st.text_area("Schema text", key=f"{key}_text", height=320)
    if not text.strip():
        raise CandidateError("Paste or upload a schema to continue.")
    return SchemaInfo(type=kind, schema=text)


def _key_value_input(key: str) -> SchemaInfo:
    encoding = st.selectbox("Encoding", KEY_VALUE_ENCODINGS, key=f"{key}_encoding")
    columns = st.columns(2)
    parts: dict[str, SchemaInfo] = {}
    for column, part in zip(columns, ("key", "value"), strict=True):
        with column:
            kind = st.selectbox(f"{part.capitalize()} type", KEY_VALUE_PART_TYPES, key=f"{key}_{part}_type")
            if kind.is_primitive:
                parts[part] = SchemaInfo(type=kind, schema="")
                continue
            text = st.text_area(f"{part.capitalize()} schema", key=f"{key}_{part}_text", height=240)
            if not text.strip():
                raise CandidateError(f"Paste the {part} part's {kind} schema, or choose a primitive {part} type.")
            parts[part] = SchemaInfo(type=kind, schema=text)
    try:
        return key_value_schema_info(parts["key"], parts["value"], encoding=encoding)
    except RegistryError as exc:  # a part that is not JSON, named by the core
        raise CandidateError(f"{exc}; fix it to continue.") from None


@st.cache_data(max_entries=32, show_spinner="Compiling with protoc…")
def _compile(sources: tuple[tuple[str, bytes], ...], root_file: str) -> tuple[bytes, str, list[str]] | str:
    """Cached protoc run: (serialized descriptor set, root file, messages), or protoc's error text."""
    try:
        file_set = compile_uploads(dict(sources), root_file)
    except ProtoCompileError as exc:
        return str(exc)
    root = root_file.strip().lstrip("/")
    messages = declared_messages(next(f for f in file_set.file if f.name == root))
    return file_set.SerializeToString(), root, messages


def _proto_input(key: str) -> SchemaInfo:
    uploads = st.file_uploader(
        "Upload the .proto file and the files it imports (google/protobuf imports are built in)",
        type=["proto"],
        accept_multiple_files=True,
        max_upload_size=upload_limit_mb(),
        key=f"{key}_protos",
    )
    pasted = st.text_area(
        "…or paste one .proto file (no imports besides google/protobuf)", key=f"{key}_proto_text", height=200
    )
    sources: dict[str, bytes] = {f.name: f.getvalue() for f in uploads or []}
    if pasted.strip():
        sources.setdefault("candidate.proto", pasted.encode("utf-8"))
    if not sources:
        raise CandidateError("Upload or paste a .proto file to continue.")
    root_key = f"{key}_root_path"
    if PurePosixPath(st.session_state.get(root_key, "")).name not in sources:
        st.session_state[root_key] = next(iter(sources))
    root_file = st.text_input(
        "Root file's path in the proto tree, as other files would import it (e.g. acme/payments/ledger_entry.proto)",
        key=root_key,
    )
    outcome = _compile(tuple(sorted(sources.items())), root_file)
    if isinstance(outcome, str):
        raise CandidateError(f"protoc could not compile the files: {outcome}")
    raw, compiled_root, messages = outcome
    if not messages:
        raise CandidateError(f"{compiled_root} declares no message; choose the file that declares the root message.")
    root_message = st.selectbox("Root message", messages, key=f"{key}_root_message")
    file_set = descriptor_pb2.FileDescriptorSet.FromString(raw)
    text = to_protobuf_native_data(file_set, root_message, compiled_root)
    return SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=text)
