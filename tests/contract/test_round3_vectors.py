"""Issue 34 fidelity vectors (tests/vectors/round3.json): each case's Pulsar outcome on each Pulsar line it names,
through the embedded facade, over REST against a live `serve` made with that line, and through the remote
facade against the same server (which reads the line from GET /brokers/version)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import registry
from registry import (
    IncompatibleSchemaError,
    InvalidSchemaError,
    PoisonedHistoryError,
    Registry,
    RegistryError,
    SchemaInfo,
    SchemaType,
    to_json,
)

VECTORS = json.loads((Path(__file__).parent.parent / "vectors" / "round3.json").read_text(encoding="utf-8"))
LINES = ("3.0", "4.0", "master")


@pytest.fixture(scope="module")
def kind() -> str:
    """One kind of remote: the vectors are about Pulsar's rules, which both kinds answer alike."""
    return "serve"


@pytest.fixture(scope="module")
def servers(start_server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:  # noqa: ANN001
    """One `serve` per Pulsar line, each over a new file made with that line (tenant t, namespace t/n)."""
    urls = {}
    for line in LINES:
        db = tmp_path_factory.mktemp(f"round3-{line}") / "registry.db"
        with Registry.open(db, create=True, pulsar_version=line) as reg:
            reg.create_tenant("t")
            reg.create_namespace("t/n")
        urls[line] = start_server(db)
    return urls


@pytest.fixture(scope="module")
def remotes(servers: dict[str, str]) -> Iterator[dict[str, Registry]]:
    handles = {line: registry.open(url) for line, url in servers.items()}
    yield handles
    for handle in handles.values():
        handle.close()


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [str(case["id"]) for case in cases]


def _by_line(section: dict[str, Any]) -> list[Any]:
    """(line, case) for each case on each Pulsar line it names (its own `lines`, else the section's)."""
    return [
        pytest.param(line, case, id=f"{case['id']}-{line}")
        for case in section["cases"]
        for line in case.get("lines", section.get("lines", LINES))
    ]


# ----------------------------------------------------------------------------------- 1. Avro-equal copies


EQUAL = VECTORS["avro_equal_copies"]
OVER_HTTP = ("BACKWARD", "FORWARD_TRANSITIVE", "FULL")  # every strategy embedded; these three over HTTP too


def _avro(text: str) -> SchemaInfo:
    return SchemaInfo(type=SchemaType.AVRO, schema=text)


@pytest.mark.parametrize(("line", "case"), _by_line(EQUAL))
def test_an_avro_equal_copy_resolves_without_aliases(
    line: str, case: dict[str, Any], servers: dict[str, str], remotes: dict[str, Registry]
) -> None:
    """Schema.applyAliases returns the writer untouched when it equals the reader: a check of an equal copy
    applies no alias, under every strategy; registering it returns the stored version; a consumer with it is
    admitted. A copy that differs anywhere Schema.equals looks applies the aliases, and is refused."""
    embedded = Registry.in_memory(pulsar_version=line)
    embedded.create_tenant("t")
    embedded.create_namespace("t/n")
    url = servers[line]
    for strategy in EQUAL["strategies"]:
        topic = f"persistent://t/n/equal-{case['id']}-{strategy.lower()}"
        over_http = strategy in OVER_HTTP
        for where, reg in (("embedded", embedded), ("remote", remotes[line])):
            if where == "remote" and not over_http:
                continue
            name = f"{topic}-{where}"
            assert reg.register(name, _avro(case["stored"])).version == 0
            reg.set_topic_policy(name, compatibility=strategy)
            result = reg.check(name, _avro(case["candidate"]))
            assert result.compatible is case["compatible"], (where, strategy, result.problems, case["pulsar"])
            if not case["compatible"]:
                assert case["code"] in {p.code for p in result.problems}, (where, strategy, result.problems)
        if not over_http:
            continue
        rest = f"{topic}-rest"
        remotes[line].register(rest, _avro(case["stored"]))
        remotes[line].set_topic_policy(rest, compatibility=strategy)
        rest = rest.removeprefix("persistent://")
        body = {"type": "AVRO", "schema": case["candidate"], "properties": {}}
        answer = httpx.post(f"{url}/admin/v2/schemas/{rest}/compatibility", json=body, timeout=10.0)
        assert answer.status_code == (202 if case["compatible"] else 500), (strategy, answer.text)
        if case["compatible"]:
            assert answer.json() == {"compatibility": True, "schemaCompatibilityStrategy": strategy}

    # POST /schema under BACKWARD: an equal copy is a duplicate (the stored version); any other is refused.
    for where, reg in (("embedded", embedded), ("remote", remotes[line])):
        name = f"persistent://t/n/equal-{case['id']}-register-{where}"
        reg.register(name, _avro(case["stored"]))
        reg.set_topic_policy(name, compatibility="BACKWARD")
        if case["duplicate"]:
            assert reg.register(name, _avro(case["candidate"])).version == 0, where
        else:
            with pytest.raises(IncompatibleSchemaError):
                reg.register(name, _avro(case["candidate"]))
        assert [v.version for v in reg.history(name)] == [0], where

    # A consumer on the topic in use (embedded: Pulsar's admin API records no consumers).
    name = f"persistent://t/n/equal-{case['id']}-consumer"
    embedded.register(name, _avro(case["stored"]))
    embedded.set_topic_policy(name, compatibility="FULL")
    admission = embedded.connect_consumer(name, _avro(case["candidate"]), subscription="s")
    assert admission.accepted is case["compatible"], admission.reason


# ------------------------------------------------------------------------------ 2. PROTOBUF_NATIVE descriptors

NATIVE = VECTORS["protobuf_native"]
DOCUMENTS = VECTORS["protobuf_native_documents"]
BROKER_REASON = "deserialize ProtobufNative Schema failed"
NO_ROOT = "protobuf root message descriptor is null"  # 3.0/4.0, a root of one part not found


def native_document(case: dict[str, Any]) -> str:
    """The PROTOBUF_NATIVE schema text of a descriptor vector: its files, base64, and its root."""
    from google.protobuf import descriptor_pb2, json_format

    files = json_format.ParseDict({"file": case["files"]}, descriptor_pb2.FileDescriptorSet())
    return json.dumps(
        {
            "fileDescriptorSet": base64.b64encode(files.SerializeToString()).decode("ascii"),
            "rootMessageTypeName": case["root"],
            "rootFileDescriptorName": case["root_file"],
        }
    )


def _native_params() -> list[Any]:
    return [
        pytest.param(line, case, id=f"{case['id']}-{line}")
        for case in NATIVE["cases"]
        for line in LINES
        if line == "master" or case["java"]["3.25"] != case["java"]["4.x"] or line == "4.0"
    ]


def _accepts(line: str, text: str, url: str, remote: Registry, topic: str) -> tuple[dict[str, bool], dict[str, str]]:
    """Registering `text` embedded, through the remote facade and over REST: accepted or not, with the reason."""
    info = SchemaInfo(type=SchemaType.PROTOBUF_NATIVE, schema=text)
    accepted, reasons = {}, {}
    for where, reg in (("embedded", Registry.in_memory(pulsar_version=line)), ("remote", remote)):
        try:
            reg.register(f"{topic}-{where}", info)
            accepted[where] = True
        except InvalidSchemaError as exc:
            accepted[where], reasons[where] = False, str(exc)
    body = {"type": "PROTOBUF_NATIVE", "schema": text, "properties": {}}
    answer = httpx.post(f"{url}/admin/v2/schemas/{topic.removeprefix('persistent://')}-rest/schema", json=body)
    assert answer.status_code in (200, 422), answer.text
    accepted["rest"] = answer.status_code == 200
    if not accepted["rest"]:
        reasons["rest"] = answer.json()["reason"]
    return accepted, reasons


@pytest.mark.parametrize(("line", "case"), _native_params())
def test_protobuf_native_descriptors_build_as_protobuf_java_builds_them(
    line: str, case: dict[str, Any], servers: dict[str, str], remotes: dict[str, Registry]
) -> None:
    """Accepted where the line's protobuf-java builds the descriptor, refused (422) where it does not, with the
    broker's reason and protobuf-java's words. (3.0 and 4.0 share protobuf-java 3.25: 4.0 stands for both unless
    the two Java lines differ.)"""
    expected = case["java"][NATIVE["runtime_of_line"][line]]
    topic = f"persistent://t/n/pn-{case['id']}"
    accepted, reasons = _accepts(line, native_document(case), servers[line], remotes[line], topic)
    assert accepted == dict.fromkeys(accepted, expected), (reasons, case["what"])
    for where, reason in reasons.items():
        assert BROKER_REASON in reason, (where, reason)
        java = case.get("java_reason", {}).get(NATIVE["runtime_of_line"][line])
        if java and case.get("reason_here") != "upb":
            assert java in reason, (where, reason)


@pytest.mark.parametrize("case", DOCUMENTS["cases"], ids=_ids(DOCUMENTS["cases"]))
def test_the_protobuf_native_document_is_read_as_jackson_reads_it(
    case: dict[str, Any], servers: dict[str, str], remotes: dict[str, Registry]
) -> None:
    """Unknown keys ignored, content after the document ignored, a byte order mark skipped, numbers given for a
    name read as their text, byte arrays taken, NaN refused: on every line alike."""
    for line in LINES:
        accepted, reasons = _accepts(
            line, case["schema"], servers[line], remotes[line], f"persistent://t/n/doc-{case['id']}"
        )
        assert accepted == dict.fromkeys(accepted, case["accepted"]), (line, reasons)
        for reason in reasons.values():
            assert "PROTOBUF_NATIVE" in reason and (BROKER_REASON in reason or NO_ROOT in reason), reason


# ------------------------------------------------------------------ 3. a Jackson JSON-Schema on a topic in use

JACKSON = VECTORS["jackson_json_schema"]


def _info(side: dict[str, str]) -> SchemaInfo:
    return SchemaInfo(type=SchemaType(side["type"]), schema=side["schema"])


@pytest.mark.parametrize(("line", "case"), _by_line(JACKSON))
def test_a_jackson_json_schema_on_a_topic_with_a_schema(
    line: str, case: dict[str, Any], servers: dict[str, str], remotes: dict[str, Registry]
) -> None:
    """The duplicate check parses the candidate and every live AVRO/JSON/PROTOBUF version with Avro: a Jackson
    document on either side fails there (Pulsar: 500; here 422 for the candidate, 409 for a stored version),
    while POST /compatibility judges the pair by JsonSchemaCompatibilityCheck."""
    embedded = Registry.in_memory(pulsar_version=line)
    embedded.create_tenant("t")
    embedded.create_namespace("t/n")
    for where, reg in (("embedded", embedded), ("remote", remotes[line]), ("rest", None)):
        setter = reg or remotes[line]
        topic = f"persistent://t/n/jackson-{case['id']}-{where}"
        if case.get("refused_first"):
            with pytest.raises(InvalidSchemaError):
                setter.register(topic, _info(case["first"]))
            continue
        assert setter.register(topic, _info(case["first"])).version == 0
        if case.get("delete"):
            setter.delete(topic)
        setter.set_topic_policy(topic, compatibility=case["strategy"])
        live = len(setter.history(topic))
        if reg is None:
            body = {"type": case["second"]["type"], "schema": case["second"]["schema"], "properties": {}}
            path = f"{servers[line]}/admin/v2/schemas/{topic.removeprefix('persistent://')}/schema"
            answer = httpx.post(path, json=body, timeout=10.0)
            expected = 200 if case["register"] == "stored" else case["status"]
            assert answer.status_code == expected, (answer.text, case["pulsar"])
            if case["register"] != "stored":
                assert answer.headers["X-Registry-Error"] == case["error"]
        elif case["register"] == "stored":
            assert reg.register(topic, _info(case["second"])).version >= 1, where
        else:
            with pytest.raises(InvalidSchemaError if case["status"] == 422 else PoisonedHistoryError):
                reg.register(topic, _info(case["second"]))
        assert len(setter.history(topic)) == live + (case["register"] == "stored"), where
    if not case.get("refused_first") and not case.get("delete"):
        topic = f"persistent://t/n/jackson-{case['id']}-check"
        embedded.register(topic, _info(case["first"]))
        embedded.set_topic_policy(topic, compatibility=case["strategy"])
        assert embedded.check(topic, _info(case["second"])).compatible is case["compatible"]
        admission = embedded.connect_consumer(topic, _info(case["second"]), subscription="s")
        assert admission.accepted is case["compatible"], admission.reason


# ---------------------------------------------------------------------------------------- 4. one diff shape

DIFFS = VECTORS["diff_shape"]


@pytest.mark.parametrize("case", DIFFS["cases"], ids=_ids(DIFFS["cases"]))
def test_every_diff_names_what_it_compared(
    case: dict[str, Any], servers: dict[str, str], remotes: dict[str, Registry]
) -> None:
    """The same three keys, the same numbers, from the embedded facade, the remote facade (which asks the
    explorer API) and REST, new names in, and the older `from`/`to` still read."""
    remote, url = remotes["master"], servers["master"]
    embedded = Registry.in_memory()
    topic = f"persistent://t/n/diff-{case['id']}"
    for reg in (embedded, remote):
        for step in case["history"]:
            if step == "delete":
                reg.delete(topic)
            else:
                reg.register(topic, _avro(step))
    request = case["request"]
    old = request.get("old_version")
    new: int | SchemaInfo | None = _avro(request["candidate"]) if "candidate" in request else request.get("new_version")
    rest = f"{url}/explorer/v1/topics/{topic.removeprefix('persistent://')}/diff"
    if "candidate" in request:
        body = {"candidate": {"type": "AVRO", "schema": request["candidate"]}} | (
            {} if old is None else {"old_version": old}
        )
        answer = httpx.post(rest, json=body, timeout=10.0)
    else:
        params = {"old_version": old} | ({} if new is None else {"new_version": new})
        answer = httpx.get(rest, params=params, timeout=10.0)
        if "status" not in case:
            older = {"from": old} | ({} if new is None else {"to": new})
            assert httpx.get(rest, params=older, timeout=10.0).json() == answer.json(), "the older names"
    if "status" in case:
        assert answer.status_code == case["status"], answer.text
        for reg in (embedded, remote):
            with pytest.raises(RegistryError):
                reg.diff(topic, old, new)
        return
    expected = {"topic": topic, **case["answer"]}
    assert answer.status_code == 200, answer.text
    assert {k: answer.json()[k] for k in expected} == expected
    for reg in (embedded, remote):
        if old is None:
            old = reg.history(topic)[-1].version
        diff = to_json(reg.diff(topic, old, new))
        assert {k: diff[k] for k in expected} == expected
