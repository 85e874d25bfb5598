"""Compile uploaded `.proto` files into the FileDescriptorSet a PROTOBUF_NATIVE schema carries.

Uses grpcio-tools' bundled protoc in a child process (its errors go to the process's stderr, which a child
lets us capture and show). Uploads arrive without folders, so each file is also written at every import
path that ends with its name: `import "common/money.proto"` finds an uploaded `money.proto`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath

from google.protobuf import descriptor_pb2

_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;', re.MULTILINE)
_TIMEOUT_SECONDS = 30


class ProtoCompileError(Exception):
    """protoc refused the files; the message is protoc's own, with temporary paths removed."""


@dataclass(frozen=True, slots=True)
class CompiledProto:
    file_set: descriptor_pb2.FileDescriptorSet
    root_file: str

    @property
    def messages(self) -> list[str]:
        """Full names of the root file's messages (nested ones too), in declaration order."""
        root = next(f for f in self.file_set.file if f.name == self.root_file)
        prefix = f"{root.package}." if root.package else ""
        names: list[str] = []

        def walk(messages: object, parent: str) -> None:
            for message in messages:  # type: ignore[attr-defined]
                name = f"{parent}{message.name}"
                names.append(name)
                walk(message.nested_type, f"{name}.")

        walk(root.message_type, prefix)
        return names


def import_paths(sources: Mapping[str, bytes]) -> list[str]:
    """Every import named by the sources (well-known google/protobuf imports included)."""
    found: list[str] = []
    for data in sources.values():
        for path in _IMPORT.findall(data.decode("utf-8", errors="replace")):
            if path not in found:
                found.append(path)
    return found


def compile_protos(sources: Mapping[str, bytes], root_file: str) -> CompiledProto:
    """Compile `sources` (file name → bytes) with `root_file` (its path in the proto tree) as the root."""
    root_file = root_file.strip().lstrip("/")
    if not root_file.endswith(".proto") or ".." in PurePosixPath(root_file).parts:
        raise ProtoCompileError(f"the root file path {root_file!r} must be a relative path ending in .proto")
    root_name = PurePosixPath(root_file).name
    if root_name not in {PurePosixPath(name).name for name in sources}:
        raise ProtoCompileError(f"no uploaded file is named {root_name!r}; upload it or correct the root file path")
    with tempfile.TemporaryDirectory(prefix="proto-") as tmp:
        tree = Path(tmp) / "tree"
        placements = {root_file, *import_paths(sources)}
        for name, data in sources.items():
            base = PurePosixPath(name).name
            for place in placements | {base}:
                if PurePosixPath(place).name == base:
                    target = tree / place
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
        out = Path(tmp) / "set.binpb"
        well_known = resources.files("grpc_tools") / "_proto"
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={tree}",
            f"--proto_path={well_known}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            str(tree / root_file),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False)
        except subprocess.TimeoutExpired:
            raise ProtoCompileError(f"protoc did not finish within {_TIMEOUT_SECONDS} seconds") from None
        if done.returncode != 0 or not out.is_file():
            message = (done.stderr or done.stdout or "protoc failed without a message").strip()
            raise ProtoCompileError(message.replace(f"{tree}/", "").replace(str(tree), "."))
        file_set = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    return CompiledProto(file_set=file_set, root_file=root_file)
