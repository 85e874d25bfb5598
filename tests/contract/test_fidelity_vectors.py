"""Issue 21 fidelity vectors (tests/vectors/fidelity.json): each case's Pulsar outcome, through the embedded
facade, over REST against a live `serve`, and through the remote facade against the same server."""

from __future__ import annotations

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
    NamespaceNotFoundError,
    Registry,
    SchemaInfo,
    SchemaType,
)

VECTORS = json.loads((Path(__file__).parent.parent / "vectors" / "fidelity.json").read_text(encoding="utf-8"))
AVRO_TEXT = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'


def _ids(cases: list[dict[str, Any]], key: str) -> list[str]:
    return [str(case[key]) for case in cases]


@pytest.fixture(scope="module")
def kind() -> str:
    """The vectors run against `serve` (explorer API) only: the contract suite compares both kinds of remote."""
    return "serve"


@pytest.fixture(scope="module")
def strict(embedded: Registry) -> Iterator[Registry]:
    """The embedded twin opened as `serve` opens it: namespaces are never created on the fly."""
    assert embedded.location is not None
    reg = Registry.open(embedded.location, auto_create=False)
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def http(server_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server_url, timeout=10.0) as client:
        yield client


@pytest.mark.parametrize("case", VECTORS["system_topics"], ids=_ids(VECTORS["system_topics"], "topic"))
def test_system_topics(case: dict[str, Any], embedded: Registry, remote: Registry) -> None:
    for reg in (embedded, remote):
        assert reg.effective_policy(case["topic"]).is_system_topic is case["system"], case["source"]


@pytest.mark.parametrize("case", VECTORS["rest_type_names"], ids=_ids(VECTORS["rest_type_names"], "type"))
@pytest.mark.parametrize("endpoint", ["compatibility", "version", "schema"])
def test_rest_type_names(case: dict[str, Any], endpoint: str, http: httpx.Client) -> None:
    schema = AVRO_TEXT if case["type"].strip().upper() == "AVRO" else ""
    if case["type"] == "KEY_VALUE":
        schema = json.dumps({"key": "", "value": ""})
    body = {"type": case["type"], "schema": schema, "properties": {}}
    topic = "fidelity-type-" + "".join(c for c in case["type"] if c.isalnum()).lower()
    response = http.post(f"/admin/v2/schemas/acme/orders/{topic}/{endpoint}", json=body)
    if case["accepted"]:
        assert response.status_code < 300, (response.status_code, response.text)
    else:
        assert response.status_code == case["status"], response.text
        assert repr(case["type"]) in response.json()["reason"]


@pytest.mark.parametrize(
    "case", VECTORS["unknown_namespace_checks"], ids=_ids(VECTORS["unknown_namespace_checks"], "endpoint")
)
def test_checks_on_an_unknown_namespace(
    case: dict[str, Any], http: httpx.Client, strict: Registry, remote: Registry
) -> None:
    topic = case["topic"].removeprefix("persistent://")
    body = {"type": "AVRO", "schema": AVRO_TEXT, "properties": {}}
    response = http.post(f"/admin/v2/schemas/{topic}/{case['endpoint']}", json=body)
    assert (response.status_code, response.json()) == (case["status"], {"reason": case["reason"]})
    info = SchemaInfo(type=SchemaType.AVRO, schema=AVRO_TEXT)
    for reg in (strict, remote):
        with pytest.raises(NamespaceNotFoundError, match=case["reason"]):
            if case["endpoint"] == "compatibility":
                reg.check(case["topic"], info)
            else:
                reg.find_version(case["topic"], info)


@pytest.mark.parametrize(
    "case", VECTORS["consumers_on_a_topic_in_use"], ids=_ids(VECTORS["consumers_on_a_topic_in_use"], "strategy")
)
def test_consumers_on_a_topic_in_use(case: dict[str, Any]) -> None:
    # The remote facade records no clients (Pulsar's admin API has none), so consumers run embedded only.
    reg = Registry.in_memory()
    topic = "persistent://acme/fidelity/consumed"
    reg.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=AVRO_TEXT))
    reg.set_topic_policy(topic, compatibility=case["strategy"])
    admission = reg.connect_consumer(topic, SchemaInfo(type=SchemaType.AVRO, schema=case["schema"]), subscription="s")
    assert admission.accepted is case["accepted"], case["source"]
    assert len(reg.history(topic)) == 1


@pytest.mark.parametrize("case", VECTORS["dedup_is_schema_equals"], ids=_ids(VECTORS["dedup_is_schema_equals"], "id"))
def test_dedup_is_schema_equals(case: dict[str, Any], http: httpx.Client, embedded: Registry, remote: Registry) -> None:
    """Under ALWAYS_INCOMPATIBLE an Avro-equal schema returns the live version; any other is a 409."""
    for where, reg in (("embedded", embedded), ("remote", remote)):
        topic = f"persistent://acme/orders/fidelity-dedup-{case['id']}-{where}"
        assert reg.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=case["first"])).version == 0
        reg.set_topic_policy(topic, compatibility="ALWAYS_INCOMPATIBLE")
        second = SchemaInfo(type=SchemaType.AVRO, schema=case["second"])
        if case["duplicate"]:
            assert reg.register(topic, second).version == 0, case["source"]
        else:
            with pytest.raises(IncompatibleSchemaError):
                reg.register(topic, second)
    path = f"/admin/v2/schemas/acme/orders/fidelity-dedup-{case['id']}-remote/schema"
    response = http.post(path, json={"type": "AVRO", "schema": case["second"], "properties": {}})
    if case["duplicate"]:
        assert response.status_code < 300, response.text
        assert response.json()["version"]["version"] == 0
    else:
        assert response.status_code == 409, response.text


@pytest.fixture(scope="module")
def line_servers(start_server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:  # noqa: ANN001
    """One `serve` per Pulsar version line, each over a new file made with that line (tenant t, namespace
    t/n)."""
    urls = {}
    for line in ("3.0", "4.0", "master"):
        db = tmp_path_factory.mktemp(f"line-{line}") / "registry.db"
        with Registry.open(db, create=True, pulsar_version=line) as reg:
            reg.create_tenant("t")
            reg.create_namespace("t/n")
        urls[line] = start_server(db)
    return urls


@pytest.mark.parametrize("case", VECTORS["lines"], ids=_ids(VECTORS["lines"], "id"))
def test_lines(case: dict[str, Any], line_servers: dict[str, str]) -> None:
    """The same schema, accepted or refused as the case's Pulsar line does: embedded, over REST (422 when
    refused), and through the remote facade, which reads the line from GET /brokers/version."""
    info = SchemaInfo(type=SchemaType(case["type"]), schema=case["schema"])
    topic = f"persistent://t/n/{case['id']}"
    embedded = Registry.in_memory(pulsar_version=case["line"])
    url = line_servers[case["line"]]
    with registry.open(url) as remote:
        assert remote.pulsar_version == case["line"]
        for reg, suffix in ((embedded, ""), (remote, "-remote")):
            try:
                reg.register(topic + suffix, info)
                accepted = True
            except InvalidSchemaError:
                accepted = False
            assert accepted is case["accepted"], (suffix or "embedded", case["source"])
    body = {"type": case["type"], "schema": case["schema"], "properties": {}}
    answer = httpx.post(f"{url}/admin/v2/schemas/t/n/{case['id']}-rest/schema", json=body, timeout=10.0)
    assert answer.status_code == (200 if case["accepted"] else 422), answer.text


@pytest.mark.parametrize("case", VECTORS["key_value"], ids=_ids(VECTORS["key_value"], "id"))
def test_key_value(case: dict[str, Any], http: httpx.Client, embedded: Registry, remote: Registry) -> None:
    """KEY_VALUE as the broker reads it: part types by their exact Java names (a 500 in Pulsar is a 422 here),
    kv.encoding.type stored as given, and a primitive part rendered as "" by GET."""
    text = json.dumps(case["schema"], separators=(",", ":"))
    info = SchemaInfo(type=SchemaType.KEY_VALUE, schema=text, properties=case["properties"])
    for where, reg in (("embedded", embedded), ("remote", remote)):
        topic = f"persistent://acme/orders/fidelity-kv-{case['id']}-{where}"
        if not case["accepted"]:
            with pytest.raises(InvalidSchemaError):
                reg.register(topic, info)
            assert reg.history(topic) == [], "nothing stored"
            continue
        assert reg.register(topic, info).version == 0
        stored = reg.get(topic)
        assert json.loads(stored.schema) == case["data"], case["source"]
        assert dict(stored.properties) == case["properties"]
    path = f"/admin/v2/schemas/acme/orders/fidelity-kv-{case['id']}-rest/schema"
    response = http.post(path, json={"type": "KEY_VALUE", "schema": text, "properties": case["properties"]})
    if not case["accepted"]:
        assert response.status_code == 422, response.text
        return
    assert response.status_code == 200, response.text
    got = http.get(path).json()
    assert (json.loads(got["data"]), got["properties"]) == (case["data"], case["properties"])


@pytest.mark.parametrize("case", VECTORS["sequences"], ids=_ids(VECTORS["sequences"], "id"))
def test_sequences(case: dict[str, Any], http: httpx.Client, embedded: Registry, remote: Registry) -> None:
    """A first registration, a strategy, then a second: accepted (a new version) or refused (409), nothing else
    stored; embedded, through the remote facade, and over REST."""
    first, second = (
        SchemaInfo(type=SchemaType(case[k]["type"]), schema=case[k]["schema"]) for k in ("first", "second")
    )
    for where, reg in (("embedded", embedded), ("remote", remote), ("rest", None)):
        topic = f"persistent://acme/orders/fidelity-seq-{case['id']}-{where}"
        setter = reg or remote
        assert setter.register(topic, first).version == 0
        setter.set_topic_policy(topic, compatibility=case["strategy"])
        if reg is None:
            body = {"type": case["second"]["type"], "schema": case["second"]["schema"], "properties": {}}
            response = http.post(f"/admin/v2/schemas/{topic.removeprefix('persistent://')}/schema", json=body)
            assert response.status_code == (200 if case["accepted"] else 409), (response.text, case["source"])
        elif case["accepted"]:
            assert reg.register(topic, second).version == 1, case["source"]
        else:
            with pytest.raises(IncompatibleSchemaError):
                reg.register(topic, second)
        assert len(setter.history(topic)) == (2 if case["accepted"] else 1)
