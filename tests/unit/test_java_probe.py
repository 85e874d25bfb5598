"""The Java libraries a Pulsar broker runs, asked again: every round-3 vector (tests/vectors/round3.json) is
put to `tests/java/PulsarProbe.java`, compiled here with `javac` against the jars PySpark ships, and the
answer must be the one the vector records and the one this project gives.

Which Java answers for which Pulsar line:
- Avro: avro-1.12.x from PySpark (master ships 1.12; 3.0 and 4.0 ship 1.11.x, whose `Schema.applyAliases`
  and `SchemaValidatorBuilder` read the same in the source).
- protobuf-java 3.25 (the copy ORC shades as `org.apache.orc.protobuf`) for 3.0 and 4.0, which ship 3.25.5;
  protobuf-java 4.x (the copy Spark shades as `org.sparkproject.spark_core.protobuf`) for master, which ships
  4.35.
- Jackson: jackson-databind 2.x from PySpark, configured as Pulsar's ObjectMapperFactory configures it.

On a later Pulsar, protobuf or Avro release, point these jars at the new versions (or replace the jar files)
and run `pytest -m java tests/unit/test_java_probe.py`: a vector whose answer changed fails here, naming it.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import needs
from registry import InvalidSchemaError, Registry, SchemaInfo, SchemaType

pytestmark = pytest.mark.java

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "tests" / "java" / "PulsarProbe.java"
VECTORS = json.loads((ROOT / "tests" / "vectors" / "round3.json").read_text(encoding="utf-8"))
# The protobuf runtime each Pulsar line's broker builds descriptors with, as the copy found in PySpark's jars.
RUNTIMES = {
    "3.25": ("orc-core-*-shaded-protobuf.jar", "org.apache.orc.protobuf"),
    "4.x": ("spark-core_*.jar", "org.sparkproject.spark_core.protobuf"),
}
LINES = ("3.0", "4.0", "master")

Ask = Callable[[str, dict[str, Any]], dict[str, Any]]


def _jar(folder: Path, pattern: str) -> Path:
    found = sorted(p for p in folder.glob(pattern) if "ipc" not in p.name and "mapred" not in p.name)
    if not found:
        raise AssertionError(f"no {pattern} in {folder}: the Java probe needs PySpark's jars")
    return found[-1]


def _jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


@pytest.fixture(scope="module")
def ask(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ask]:
    """`ask(runtime, request)`: one probe process per protobuf runtime, compiled from the one source with the
    protobuf package rewritten to the shaded copy, answering one JSON line per request."""
    needs.require("java")
    javac, java = shutil.which("javac"), shutil.which("java")
    assert javac and java, "the Java probe needs a JDK (javac and java on PATH)"
    jars = _jars()
    common = [
        _jar(jars, "avro-1.*.jar"),
        _jar(jars, "jackson-core-*.jar"),
        _jar(jars, "jackson-databind-*.jar"),
        _jar(jars, "jackson-annotations-*.jar"),
        _jar(jars, "slf4j-api-*.jar"),
    ]
    processes: dict[str, subprocess.Popen[str]] = {}
    try:
        for runtime, (pattern, package) in RUNTIMES.items():
            folder = tmp_path_factory.mktemp(f"probe-{runtime}")
            source = folder / "PulsarProbe.java"
            source.write_text(PROBE.read_text(encoding="utf-8").replace("com.google.protobuf.", package + "."))
            classpath = ":".join(str(p) for p in [*common, _jar(jars, pattern)])
            subprocess.run(
                [javac, "-nowarn", "-cp", classpath, "-d", str(folder), str(source)],
                check=True,
                capture_output=True,
                text=True,
                timeout=300,
            )
            processes[runtime] = subprocess.Popen(
                [java, "-cp", f"{folder}:{classpath}", "PulsarProbe"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
            )

        def asking(runtime: str, request: dict[str, Any]) -> dict[str, Any]:
            process = processes[runtime]
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
            assert line, f"the {runtime} probe ended (exit {process.poll()})"
            answer: dict[str, Any] = json.loads(line)
            return answer

        yield asking
    finally:
        for process in processes.values():
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def test_the_probe_runs_the_runtimes_it_is_meant_to(ask: Ask) -> None:
    """protobuf-java 3.x for 3.0/4.0 and 4.x for master; Avro 1.12: else the findings below mean nothing."""
    old, new = ask("3.25", {"probe": "versions"}), ask("4.x", {"probe": "versions"})
    print(f"probe runtimes: {old} / {new}", file=sys.stderr)
    assert old["protobuf"] == "3.x" and new["protobuf"].startswith("4.")
    assert old["avro"].startswith("1.12")


# ----------------------------------------------------------------------------------- 1. Avro-equal copies

EQUAL = VECTORS["avro_equal_copies"]


@pytest.mark.parametrize("case", EQUAL["cases"], ids=[c["id"] for c in EQUAL["cases"]])
def test_avro_equal_copies_as_avro_judges_them(ask: Ask, case: dict[str, Any]) -> None:
    """Avro's SchemaValidatorBuilder, as AvroSchemaBasedCompatibilityCheck builds it, under each strategy: the
    vector's verdict, and this project's."""
    reg = Registry.in_memory()
    topic = "persistent://t/n/probe"
    reg.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=case["stored"]))
    for strategy in EQUAL["strategies"]:
        request = {"probe": "avro", "existing": [case["stored"]], "candidate": case["candidate"], "strategy": strategy}
        answer = ask("3.25", request)
        assert (answer["verdict"] == "compatible") is case["compatible"], (strategy, answer)
        ours = reg.check(topic, SchemaInfo(type=SchemaType.AVRO, schema=case["candidate"]), strategy=strategy)
        assert ours.compatible is case["compatible"], (strategy, ours.problems)
        if case.get("code") == "DUPLICATE_FIELD":
            assert answer["verdict"] == "internal error" and "Duplicate field" in answer["error"], answer


# ------------------------------------------------------------------- 2. PROTOBUF_NATIVE descriptors and documents

NATIVE = VECTORS["protobuf_native"]
DOCUMENTS = VECTORS["protobuf_native_documents"]
EXACT = {"3.25": False, "4.x": True}  # the lines' root lookup: 3.0/4.0 strip leniently, master looks up exactly


def native_document(case: dict[str, Any]) -> str:
    from google.protobuf import descriptor_pb2, json_format

    files = json_format.ParseDict({"file": case["files"]}, descriptor_pb2.FileDescriptorSet())
    document = {
        "fileDescriptorSet": base64.b64encode(files.SerializeToString()).decode("ascii"),
        "rootMessageTypeName": case["root"],
        "rootFileDescriptorName": case["root_file"],
    }
    return json.dumps(document)


def ours(line: str, text: str) -> bool:
    try:
        Registry.in_memory(pulsar_version=line).register(
            "persistent://t/n/probe", SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=text)
        )
    except InvalidSchemaError:
        return False
    return True


@pytest.mark.parametrize("case", NATIVE["cases"], ids=[c["id"] for c in NATIVE["cases"]])
def test_protobuf_native_descriptors_as_protobuf_java_builds_them(ask: Ask, case: dict[str, Any]) -> None:
    """`Descriptors.FileDescriptor.buildFrom` on each protobuf-java line: the vector's verdict and reason; and
    this project, answering as each Pulsar line, agrees with that line's protobuf-java."""
    text = native_document(case)
    for runtime, exact in EXACT.items():
        answer = ask(runtime, {"probe": "protobuf_native", "data": text, "exact": exact})
        assert answer["accepted"] is case["java"][runtime], (runtime, answer)
        if not answer["accepted"]:
            assert case["java_reason"][runtime] in answer["cause"], (runtime, answer)
    for line, runtime in NATIVE["runtime_of_line"].items():
        assert ours(line, text) is case["java"][runtime], (line, case["what"])


@pytest.mark.parametrize("case", DOCUMENTS["cases"], ids=[c["id"] for c in DOCUMENTS["cases"]])
def test_protobuf_native_documents_as_jackson_reads_them(ask: Ask, case: dict[str, Any]) -> None:
    """ObjectMapperFactory's mapper reading ProtobufNativeSchemaData, then deserialize: every line alike."""
    for runtime, exact in EXACT.items():
        answer = ask(runtime, {"probe": "protobuf_native", "data": case["schema"], "exact": exact})
        assert answer["accepted"] is case["accepted"], (runtime, answer)
    for line in LINES:
        assert ours(line, case["schema"]) is case["accepted"], line


# ------------------------------------------------------------------ 3. a Jackson JSON-Schema on a topic in use

JACKSON = VECTORS["jackson_json_schema"]


@pytest.mark.parametrize("case", JACKSON["cases"], ids=[c["id"] for c in JACKSON["cases"]])
def test_the_duplicate_checks_avro_parse_fails_on_a_jackson_document(ask: Ask, case: dict[str, Any]) -> None:
    """getSchemaVersionBySchemaData parses with `new Schema.Parser()`: a Jackson document throws a
    RuntimeException no layer above converts (the broker's 500; Avro 1.11 throws SchemaParseException "Undefined
    name", 1.12.1 a NullPointerException on the unresolved name `object`); an Avro one parses."""
    for side in (case["first"], case.get("second")):
        if side is None or side["type"] not in ("AVRO", "JSON"):
            continue
        answer = ask("3.25", {"probe": "avro_parse", "schema": side["schema"]})
        is_jackson = '"id"' in side["schema"]
        assert answer["parsed"] is not is_jackson, answer
        if is_jackson:
            assert answer["runtime_exception"], answer
