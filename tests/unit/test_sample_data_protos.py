"""The shipped sample registry (sample_data/) is self-consistent.

Why: the app seeds from sample_data/manifest.toml, and PROTOBUF_NATIVE versions ship both the `.proto`
sources (for humans) and a compiled FileDescriptorSet (`.binpb`, what Pulsar stores, pulsar-semantics.md §6).
If someone edits a `.proto` and forgets to recompile, the two silently disagree; these tests catch that,
and catch manifest references to missing or unparsable schema files.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path

import pytest

protoc = pytest.importorskip("grpc_tools.protoc")
fastavro = pytest.importorskip("fastavro")
descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"
SCHEMAS = SAMPLE_DATA / "schemas"
MANIFEST = tomllib.loads((SAMPLE_DATA / "manifest.toml").read_text(encoding="utf-8"))

# Every registration step, with a readable id such as "acme/payments/ledger-entries step 2".
STEPS = [
    pytest.param(step, id=f"{topic['name'].split('://', 1)[1]} step {index}")
    for topic in MANIFEST["topics"]
    for index, step in enumerate(topic["steps"])
    if not step.get("delete")
]
PROTO_STEPS = [param for param in STEPS if param.values[0]["type"] == "PROTOBUF_NATIVE"]
REFERENCED_FILES = sorted(
    {
        step[key]
        for param in STEPS
        for step in param.values
        for key in ("register", "key", "value", "source")
        if key in step
    }
)
AVRO_JSON_FILES = [path for path in REFERENCED_FILES if path.endswith((".avsc", ".json"))]


def read_descriptor_set(data: bytes) -> descriptor_pb2.FileDescriptorSet:
    """Parse a FileDescriptorSet, dropping source_code_info (comments and spans are not part of the schema)."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    for file in fds.file:
        file.ClearField("source_code_info")
    return fds


def compile_proto(source: str, root_file: str, out: Path) -> bytes:
    """Compile like the shipped files were built: proto tree root = `source` minus `root_file`."""
    assert source.endswith("/" + root_file), f"source {source!r} must end with root_file {root_file!r}"
    tree = SCHEMAS / source[: -len(root_file)]
    well_known = resources.files("grpc_tools") / "_proto"  # google/protobuf/*.proto
    status = protoc.main(
        [
            "grpc_tools.protoc",
            f"--proto_path={tree}",
            f"--proto_path={well_known}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            str(tree / root_file),
        ]
    )
    assert status == 0, f"protoc failed on {source}"
    return out.read_bytes()


def test_manifest_has_protobuf_steps() -> None:
    assert PROTO_STEPS, "the sample registry is expected to contain PROTOBUF_NATIVE topics"


@pytest.mark.parametrize("step", PROTO_STEPS)
def test_shipped_descriptor_set_matches_its_proto_source(step: dict, tmp_path: Path) -> None:
    shipped = read_descriptor_set((SCHEMAS / step["register"]).read_bytes())
    rebuilt = read_descriptor_set(compile_proto(step["source"], step["root_file"], tmp_path / "rebuilt.binpb"))

    assert [f.name for f in rebuilt.file] == [f.name for f in shipped.file]
    assert rebuilt == shipped, f"{step['register']} is stale: recompile {step['source']}"


@pytest.mark.parametrize("step", PROTO_STEPS)
def test_root_message_is_declared_in_root_file(step: dict) -> None:
    files = {f.name: f for f in read_descriptor_set((SCHEMAS / step["register"]).read_bytes()).file}
    assert step["root_file"] in files, f"root_file {step['root_file']!r} not in {sorted(files)}"
    root_file = files[step["root_file"]]
    prefix = f"{root_file.package}." if root_file.package else ""
    assert step["root_message"].startswith(prefix)

    messages = root_file.message_type
    found = None
    for part in step["root_message"][len(prefix) :].split("."):
        found = next((m for m in messages if m.name == part), None)
        assert found is not None, f"{step['root_message']} not declared in {step['root_file']}"
        messages = found.nested_type


@pytest.mark.parametrize("path", REFERENCED_FILES)
def test_referenced_file_exists(path: str) -> None:
    assert (SCHEMAS / path).is_file(), f"manifest references missing file sample_data/schemas/{path}"


@pytest.mark.parametrize("path", AVRO_JSON_FILES)
def test_avro_and_json_schema_files_parse_with_fastavro(path: str) -> None:
    fastavro.parse_schema(json.loads((SCHEMAS / path).read_text(encoding="utf-8")))
