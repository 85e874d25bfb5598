"""pulsar-client Record classes (issue "Check schemas where Python users write them"), against the real client.

Verified with pulsar-client 3.13.0: the pitfalls below are what that version generates; each test checks the
generated schema first, so a client that changes its output fails here rather than passing silently.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pulsar_schema = pytest.importorskip("pulsar.schema", reason="pulsar-client is in the test extra")
from pulsar.schema import (  # noqa: E402
    Array,
    AvroSchema,
    Boolean,
    Double,
    Integer,
    JsonSchema,
    Map,
    ProtobufNativeSchema,
    Record,
    String,
)

from registry import (  # noqa: E402
    AdvisoryCode,
    CompatibilityStrategy,
    InvalidSchemaError,
    Registry,
    RuleCode,
    SchemaInfo,
    SchemaType,
)
from registry._record_pitfalls import _walk, record_advisories  # noqa: E402
from registry._records import RecordError, client_version  # noqa: E402

TOPIC = "persistent://acme/orders/records"


class Color(__import__("enum").Enum):
    RED = 1
    GREEN = 2


class Address(Record):
    _avro_namespace = "common"
    street = String(required=True)
    zip = String(required_default=True)


class OrderV1(Record):
    _avro_namespace = "acme"
    id = String(required=True)
    qty = Integer(required=True)


class OrderV2(Record):
    """OrderV1 plus an optional field declared the usual way: no default reaches the schema."""

    _avro_namespace = "acme"
    id = String(required=True)
    qty = Integer(required=True)
    note = String()


class OrderV2Fixed(Record):
    _avro_namespace = "acme"
    id = String(required=True)
    qty = Integer(required=True)
    note = String(required_default=True)


class Everything(Record):
    _avro_namespace = "acme"
    id = String(required=True)
    address = Address(required=True)
    previous = Address()
    color = Color
    tags = Array(String())
    counts = Map(Integer())
    active = Boolean(required=True)
    price = Double(default=1.5, required=True, required_default=True)


class DroppedDefault(Record):
    qty = Integer(default=5)


class InvalidDefault(Record):
    qty = Integer(default=5, required_default=True)


def generated(cls: type, kind: SchemaType = SchemaType.AVRO) -> str:
    build = AvroSchema if kind is SchemaType.AVRO else JsonSchema
    return str(build(cls).schema_info().schema())


def codes(cls: type) -> list[AdvisoryCode]:
    return [a.code for a in record_advisories(cls)]


def test_the_client_version_is_known() -> None:
    assert client_version()[:1].isdigit()


@pytest.mark.parametrize("cls", [OrderV1, OrderV2, Everything, Address, DroppedDefault], ids=lambda c: c.__name__)
@pytest.mark.parametrize("kind", [SchemaType.AVRO, SchemaType.JSON])
def test_the_schema_is_exactly_what_pulsar_client_sends(cls: type, kind: SchemaType) -> None:
    info = SchemaInfo.from_record(cls, kind)
    assert (info.type, info.schema) == (kind, generated(cls, kind))


def test_a_class_can_be_named_as_module_and_class() -> None:
    assert SchemaInfo.from_record(f"{__name__}:OrderV1") == SchemaInfo.from_record(OrderV1)


def test_a_generated_protobuf_class_gives_its_protobuf_native_schema() -> None:
    from google.protobuf import timestamp_pb2

    info = SchemaInfo.from_record(timestamp_pb2.Timestamp)
    assert info.type is SchemaType.PROTOBUF_NATIVE
    assert info.schema == str(ProtobufNativeSchema(timestamp_pb2.Timestamp).schema_info().schema())
    with pytest.raises(RecordError, match="PROTOBUF_NATIVE"):
        SchemaInfo.from_record(timestamp_pb2.Timestamp, "AVRO")


def test_adding_an_optional_field_is_refused_and_the_pitfall_names_its_fix() -> None:
    note = next(f for f in json.loads(generated(OrderV2))["fields"] if f["name"] == "note")
    assert note == {"name": "note", "type": ["null", "string"]}, "pulsar-client writes no default for it"
    reg = Registry.in_memory()
    reg.set_namespace_policy("acme/orders", compatibility=CompatibilityStrategy.BACKWARD)
    reg.register(TOPIC, SchemaInfo.from_record(OrderV1))
    refused = reg.check(TOPIC, SchemaInfo.from_record(OrderV2))
    assert not refused.compatible and refused.problems[0].code is RuleCode.READER_FIELD_WITHOUT_DEFAULT
    (pitfall,) = record_advisories(OrderV2)
    assert pitfall.code is AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT and pitfall.path == "/fields/2"
    assert pitfall.hint.startswith("declare it String(required_default=True)")
    assert pitfall.source == f"pulsar-client {client_version()}"
    assert reg.check(TOPIC, SchemaInfo.from_record(OrderV2Fixed)).compatible, "the fix is accepted"
    assert record_advisories(OrderV2Fixed) == ()


def test_a_declared_default_that_does_not_reach_the_schema() -> None:
    assert json.loads(generated(DroppedDefault))["fields"] == [{"name": "qty", "type": ["null", "int"]}]
    assert codes(DroppedDefault) == [AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT, AdvisoryCode.RECORD_DEFAULT_DROPPED]
    dropped = record_advisories(DroppedDefault)[1]
    assert "Integer(default=5, required=True, required_default=True)" in dropped.hint


def test_a_default_on_an_optional_field_makes_an_invalid_schema_pulsar_fails_with_500() -> None:
    assert json.loads(generated(InvalidDefault))["fields"] == [{"name": "qty", "default": 5, "type": ["null", "int"]}]
    (pitfall,) = record_advisories(InvalidDefault)
    assert pitfall.code is AdvisoryCode.RECORD_DEFAULT_INVALID and "HTTP 500" in pitfall.message
    assert "required=True" in pitfall.hint
    reg = Registry.in_memory()
    reg.register(TOPIC, SchemaInfo.from_record(OrderV1))
    with pytest.raises(InvalidSchemaError, match="HTTP 500"):
        reg.register(TOPIC, SchemaInfo.from_record(InvalidDefault))


def test_nested_records_enums_arrays_and_maps_are_walked() -> None:
    found = record_advisories(Everything)
    paths = {a.path: a.code for a in found}
    # The optional nested record, enum, array and map have no default; the nested record's own optional
    # field with required_default=True has one, and so does the required price.
    assert paths == {
        "/fields/2": AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT,
        "/fields/3": AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT,
        "/fields/4": AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT,
        "/fields/5": AdvisoryCode.RECORD_OPTIONAL_WITHOUT_DEFAULT,
    }


def test_a_nested_namespace_reaches_the_schema_in_this_client() -> None:
    nested = json.loads(generated(Everything))["fields"][1]["type"]
    assert nested["namespace"] == "common"
    assert AdvisoryCode.RECORD_NAMESPACE_LOST not in codes(Everything)


def test_a_nested_namespace_that_does_not_reach_the_schema_is_named() -> None:
    """What older clients generate (the nested record without its own namespace), walked as such."""
    doc = json.loads(generated(Everything))
    del doc["fields"][1]["type"]["namespace"]
    found: list[Any] = []
    _walk(Everything, doc, "", "pulsar-client (older)", found)
    lost = [a for a in found if a.code is AdvisoryCode.RECORD_NAMESPACE_LOST]
    assert len(lost) == 1 and lost[0].path == "/fields/1/type" and "'common'" in lost[0].message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "expected package.module:ClassName"),
        ("no_such_module_here:Order", "cannot import no_such_module_here: ModuleNotFoundError"),
        (f"{__name__}:Missing", "has no Missing"),
        (f"{__name__}:TOPIC", "is str, not a pulsar-client Record class"),
        (f"{__name__}:Color", "the class Color, not a pulsar-client Record class"),
    ],
)
def test_a_record_that_cannot_be_loaded_is_one_clear_error(spec: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        SchemaInfo.from_record(spec)


def test_without_pulsar_client_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pulsar.schema", None)
    with pytest.raises(RecordError, match=r"needs pulsar-client: pip install 'pulsar-schema-explorer\[pulsar\]'"):
        SchemaInfo.from_record(f"{__name__}:OrderV1")


V1 = textwrap.dedent(
    """
    from pulsar.schema import Integer, Record, String

    class Order(Record):
        _avro_namespace = "acme"
        id = String(required=True)
        qty = Integer(required=True)
    """
)
V2 = V1 + "    note = String()\n"


def test_the_cli_checks_a_record_class_and_shows_the_pitfall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli.main import main

    (tmp_path / "shop_v1.py").write_text(V1)
    (tmp_path / "shop_v2.py").write_text(V2)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    db = str(tmp_path / "r.db")
    assert main(["upload", "--db", db, "-t", TOPIC, "--record", "shop_v1:Order"]) == 0
    capsys.readouterr()
    assert main(["check", "--db", db, "-t", TOPIC, "--record", "shop_v2:Order"]) == 1
    out = capsys.readouterr().out
    assert "READER_FIELD_WITHOUT_DEFAULT" in out and "RECORD_OPTIONAL_WITHOUT_DEFAULT" in out
    assert "String(required_default=True)" in out
    assert main(["check", "--db", db, "-t", TOPIC, "--record", "shop_v2:Order", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [a["code"] for a in doc["advisories"]] == ["RECORD_OPTIONAL_WITHOUT_DEFAULT"]
    assert main(["diff", "--db", db, "-t", TOPIC, "--record", "shop_v2:Order"]) == 0
    out = capsys.readouterr().out
    assert "v0 → record shop_v2:Order" in out and "FIELD_ADDED" in out and "RECORD_OPTIONAL_WITHOUT_DEFAULT" in out
    assert main(["check", "--db", db, "-t", TOPIC, "--record", "shop_v2:Nope"]) == 2
    assert "shop_v2 has no Nope" in capsys.readouterr().err
    assert main(["check", "--db", db, "-t", TOPIC, "--record", "shop_v1:Order", "-f", "x.avsc"]) == 2
    assert "not both" in capsys.readouterr().err
