"""Compiling `.proto` sources into the FileDescriptorSet a PROTOBUF_NATIVE schema carries, with grpcio-tools'
bundled protoc: the one place the CLI (files on disk) and the app (uploaded files) compile protobuf.

protoc runs in a child process: its errors go to the process's stderr, which a child lets us capture and show,
and a pathological input cannot hang the caller (a timeout ends it). grpcio-tools is imported only here and
only when something is compiled; without it, compiling is refused with the command that installs it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from importlib.util import find_spec
from pathlib import Path, PurePosixPath
from typing import Any

from google.protobuf import descriptor_pb2

from .._errors import InvalidSchemaError

PROTOC_TIMEOUT_SECONDS = 60
_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;', re.MULTILINE)


class ProtoCompileError(InvalidSchemaError):
    """protoc refused the sources (its own message, temporary paths removed), or could not run."""


def compile_proto(source: Path, proto_paths: Sequence[Path]) -> descriptor_pb2.FileDescriptorSet:
    """`source` compiled with its imports (`--include_imports`), found under `proto_paths` (protoc's -I, in
    order) and among the well-known google/protobuf files. `source` must lie under one of `proto_paths`."""
    if find_spec("grpc_tools") is None:
        raise ProtoCompileError("compiling .proto files needs grpcio-tools (pip install grpcio-tools)")
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="schema-explorer-protoc-") as tmp:
        out = Path(tmp) / "set.binpb"
        command = [sys.executable, "-m", "grpc_tools.protoc"]
        command += [f"--proto_path={p}" for p in proto_paths] + [f"--proto_path={well_known}"]
        command += ["--include_imports", f"--descriptor_set_out={out}", str(source)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=PROTOC_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise ProtoCompileError(f"protoc did not finish within {PROTOC_TIMEOUT_SECONDS} seconds") from None
        if done.returncode != 0 or not out.is_file():
            message = (done.stderr or done.stdout or "protoc failed without a message").strip()
            for path in proto_paths:
                message = message.replace(f"{path}/", "").replace(str(path), ".")
            raise ProtoCompileError(message)
        return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def compile_uploads(sources: Mapping[str, bytes], root_file: str) -> descriptor_pb2.FileDescriptorSet:
    """Compile uploaded files (name → bytes, without folders) with `root_file` (its path in the proto tree,
    as other files import it) as the root. Each file is also placed at every import path that ends with its
    name, so `import "common/money.proto"` finds an uploaded `money.proto`."""
    root_file = root_file.strip().lstrip("/")
    if not root_file.endswith(".proto") or ".." in PurePosixPath(root_file).parts:
        raise ProtoCompileError(f"the root file path {root_file!r} must be a relative path ending in .proto")
    root_name = PurePosixPath(root_file).name
    if root_name not in {PurePosixPath(name).name for name in sources}:
        raise ProtoCompileError(f"no uploaded file is named {root_name!r}; upload it or correct the root file path")
    with tempfile.TemporaryDirectory(prefix="schema-explorer-uploads-") as tmp:
        tree = Path(tmp)
        placements = {root_file, *_imports(sources.values())}
        for name, data in sources.items():
            base = PurePosixPath(name).name
            for place in placements | {base}:
                if PurePosixPath(place).name == base:
                    target = tree / place
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
        return compile_proto(tree / root_file, [tree])


def declared_messages(file: Any) -> list[str]:
    """Full names of a FileDescriptorProto's messages (nested ones too), in declaration order."""
    prefix = f"{file.package}." if file.package else ""
    names: list[str] = []

    def walk(messages: Iterable[Any], parent: str) -> None:
        for message in messages:
            name = f"{parent}{message.name}"
            names.append(name)
            walk(message.nested_type, f"{name}.")

    walk(file.message_type, prefix)
    return names


def _imports(sources: Iterable[bytes]) -> list[str]:
    """Every import the sources name (well-known google/protobuf imports included)."""
    found: list[str] = []
    for data in sources:
        for path in _IMPORT.findall(data.decode("utf-8", errors="replace")):
            if path not in found:
                found.append(path)
    return found
