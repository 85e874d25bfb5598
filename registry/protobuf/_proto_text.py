"""A `.proto` source rebuilt from a PROTOBUF_NATIVE descriptor, normalised for reading and for text diffs (the
app shows it instead of base64).
"""

from __future__ import annotations

from ._descriptor import (
    MAX_ENUM_NUMBER,
    MAX_FIELD_NUMBER,
    REQUIRED,
    SINGULAR,
    DescriptorModel,
    EnumModel,
    F,
    FieldModel,
    FileModel,
    model_of,
    reserved_lines,
    span_text,
)
from ._native import ProtobufNativeSchema

# Normalised text ------------------------------------------------------------------------------------------------


def proto_text(schema: ProtobufNativeSchema) -> str:
    """A `.proto`-like rendering of the root file and the types reachable from the root, for a side-by-side diff.

    Normalised so that only meaningful edits show: the root's top-level message first, then the other top-level
    types by name, then other files by name; fields in declaration order, as the schema reads (oneof members
    grouped at their first member); enum values in declaration order (the first is the proto2 default);
    json_name only where it is not protoc's.
    """
    model = model_of(schema)
    shown = {_top_level(model, name) for name in model.reachable}
    root_top = _top_level(model, model.root)
    lines: list[str] = []
    files = [model.root_file, *sorted(f for f in model.files if f != model.root_file)]
    for file_name in files:
        file = model.files[file_name]
        types = [t for t in file.types if t in shown]
        if file_name == model.root_file:
            types.sort(key=lambda t: (t != root_top, t))
            lines.append(f'edition = "{file.edition}";' if file.syntax == "editions" else f'syntax = "{file.syntax}";')
            if file.package:
                lines.append(f"package {file.package};")
            if file.imports:
                lines.append("")
                lines += [f'import "{name}";' for name in file.imports]
            lines += ["", f"// root message: {model.root}"]
        elif types:
            types.sort()
            lines += ["", f"// ---- {file.name}" + (f" (package {file.package})" if file.package else "") + " ----"]
        else:
            continue
        for name in types:
            lines.append("")
            lines += _render_type(model, name, file, "")
    return "\n".join(lines) + "\n"


def _top_level(model: DescriptorModel, name: str) -> str:
    item = model.messages.get(name) or model.enums.get(name)
    assert item is not None
    package = model.files[item.file].package
    local = name[len(package) + 1 :] if package else name
    return (package + "." if package else "") + local.split(".")[0]


def _render_type(model: DescriptorModel, name: str, file: FileModel, indent: str) -> list[str]:
    if name in model.enums:
        return _render_enum(model.enums[name], indent)
    message = model.messages[name]
    inner = indent + "  "
    body: list[str] = []
    done_oneofs: set[str] = set()
    for f in message.fields.values():
        if not f.oneof:
            body.append(inner + _render_field(f, file, model))
        elif f.oneof not in done_oneofs:
            done_oneofs.add(f.oneof)
            body.append(f"{inner}oneof {f.oneof} {{")
            body += [
                inner + "  " + _render_field(m, file, model) for m in message.fields.values() if m.oneof == f.oneof
            ]
            body.append(inner + "}")
    body += [inner + line for line in reserved_lines(message.reserved, message.reserved_names, MAX_FIELD_NUMBER)]
    if message.extension_ranges:
        spans = ", ".join(span_text(a, b, MAX_FIELD_NUMBER) for a, b in message.extension_ranges)
        body.append(f"{inner}extensions {spans};")
    for nested in sorted(message.nested):
        body.append("")
        body += _render_type(model, nested, file, inner)
    return [f"{indent}message {message.name} {{", *body, f"{indent}}}"]


def _render_field(f: FieldModel, file: FileModel, model: DescriptorModel) -> str:
    in_features = file.syntax == "editions" and f.label == REQUIRED  # editions spell `required` as a feature
    label = f.label + " " if f.label and not in_features else ""
    options: list[str] = []
    if file.syntax == "editions" and f.cardinality in (SINGULAR, REQUIRED):
        presence = "IMPLICIT" if f.cardinality == SINGULAR else "LEGACY_REQUIRED"
        options.append(f"features.field_presence = {presence}")
    if f.explicit_default is not None:
        shown = f'"{f.explicit_default}"' if f.type.kind in (F.TYPE_STRING, F.TYPE_BYTES) else f.explicit_default
        options.append(f"default = {shown}")
    if not f.json_name_is_default:
        options.append(f'json_name = "{f.json_name}"')
    suffix = f" [{', '.join(options)}]" if options else ""
    return f"{label}{f.type_text(file.package)} {f.name} = {f.number}{suffix};"


def _render_enum(enum: EnumModel, indent: str) -> list[str]:
    inner = indent + "  "
    body: list[str] = []
    if len({number for _, number in enum.values}) < len(enum.values):
        body.append(f"{inner}option allow_alias = true;")
    body += [f"{inner}{name} = {number};" for name, number in enum.values]
    body += [inner + line for line in reserved_lines(enum.reserved, enum.reserved_names, MAX_ENUM_NUMBER)]
    return [f"{indent}enum {enum.name} {{", *body, f"{indent}}}"]
