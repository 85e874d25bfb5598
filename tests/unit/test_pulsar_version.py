"""Pulsar version lines (issue 21): the rules that differ between Pulsar 3.0/4.0 (Avro 1.11, legacy JSON, no
EXTERNAL) and master (Avro 1.12 with Pulsar's name validator, PIP-464 strict JSON, EXTERNAL); the line stored
with a registry file; and the Jackson/Java reading of schema text that every line shares."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from registry import (
    AuditAction,
    CompatibilityStrategy,
    InvalidArgumentError,
    InvalidSchemaError,
    PoisonedHistoryError,
    Registry,
    RuleCode,
    SchemaInfo,
    SchemaType,
    TopicName,
)
from registry._pulsar_version import line_for_broker, pulsar_line

TOPIC = "persistent://t/n/orders"
LINES = ("3.0", "4.0", "master")


def record(name: str = "Order", namespace: str | None = None, fields: list[dict[str, object]] | None = None) -> str:
    doc: dict[str, object] = {"type": "record", "name": name, "fields": fields or [{"name": "id", "type": "long"}]}
    if namespace is not None:
        doc["namespace"] = namespace
    return json.dumps(doc)


def avro(text: str) -> SchemaInfo:
    return SchemaInfo(type=SchemaType.AVRO, schema=text)


def accepted(line: str, info: SchemaInfo) -> bool:
    reg = Registry.in_memory(pulsar_version=line)
    try:
        reg.register(TOPIC, info)
    except InvalidSchemaError:
        return False
    return True


def test_lines_and_broker_versions() -> None:
    assert [pulsar_line(n).name for n in ("3.0", "4.0", "MASTER", None)] == ["3.0", "4.0", "master", "master"]
    with pytest.raises(InvalidArgumentError, match="unknown Pulsar line '3.1'.*3.0, 4.0, master"):
        pulsar_line("3.1")
    reported = {"2.11.4": "3.0", "3.0.12": "3.0", "3.3.1": "3.0", "4.0.7": "4.0", "4.1.0": "master"}
    reported |= {"4.2.0-SNAPSHOT": "master", "5.0.0": "master", "master": "master", "4.0": "4.0"}
    assert {v: line_for_broker(v).name for v in reported} == reported
    with pytest.raises(InvalidArgumentError, match="not a Pulsar version"):
        line_for_broker("[]")


def test_dollar_in_names_is_an_avro_1_12_name() -> None:
    """Avro 1.11 `Schema.validateName` takes letters, digits and `_`; master's validator also `$`."""
    for info in (
        avro(record("Order$Line")),
        avro(record(fields=[{"name": "a$b", "type": "int"}])),
        avro(record(fields=[{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A$"]}}])),
    ):
        assert [accepted(line, info) for line in LINES] == [False, False, True]
    with pytest.raises(InvalidSchemaError, match=r"Illegal character in: Order\$Line .*Avro 1.11.4"):
        Registry.in_memory(pulsar_version="4.0").register(TOPIC, avro(record("Order$Line")))


def test_namespaces_are_validated_on_master_only() -> None:
    """Avro 1.12 `requireValidFullName` checks every namespace part; 1.11 never looks at the namespace."""
    info = avro(record(namespace="com.my-company.orders"))
    assert [accepted(line, info) for line in LINES] == [True, True, False]
    with pytest.raises(InvalidSchemaError, match='illegal namespace "com.my-company.orders" of Order'):
        Registry.in_memory(pulsar_version="master").register(TOPIC, info)
    assert all(accepted(line, avro(record(namespace="com.acme.v2"))) for line in LINES)


def test_an_identical_repeated_enum_or_fixed_is_master_only() -> None:
    enum = {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}
    fixed = {"type": "fixed", "name": "Hash", "size": 16}
    for kind in (enum, fixed):
        # docs and (for an enum) the default are outside Java's Schema.equals: still the same definition
        again = {**kind, "doc": "the same type again"}
        info = avro(record(fields=[{"name": "a", "type": kind}, {"name": "b", "type": again}]))
        assert [accepted(line, info) for line in LINES] == [False, False, True]
    different = {**enum, "symbols": ["NEW"]}
    info = avro(record(fields=[{"name": "a", "type": enum}, {"name": "b", "type": different}]))
    assert not any(accepted(line, info) for line in LINES)
    again_record = record(
        fields=[{"name": "a", "type": json.loads(record("Inner"))}, {"name": "b", "type": json.loads(record("Inner"))}]
    )
    assert not any(accepted(line, avro(again_record)) for line in LINES)  # records: refused on every line


def test_external_schemas_exist_on_master_only() -> None:
    info = SchemaInfo(type=SchemaType.EXTERNAL, schema="")
    assert [accepted(line, info) for line in LINES] == [False, False, True]
    with pytest.raises(InvalidSchemaError, match="EXTERNAL is not supported by Pulsar 4.0 LTS"):
        Registry.in_memory(pulsar_version="4.0").register(TOPIC, info)


JACKSON = {"type": "object", "id": "urn:jsonschema:com:acme:Order", "properties": {"id": {"type": "integer"}}}


def test_legacy_jackson_json_schemas_before_pip_464() -> None:
    info = SchemaInfo(type=SchemaType.JSON, schema=json.dumps(JACKSON))
    assert [accepted(line, info) for line in LINES] == [True, True, False]
    not_a_schema = SchemaInfo(type=SchemaType.JSON, schema=json.dumps({"type": "thing"}))
    assert not any(accepted(line, not_a_schema) for line in LINES)


def test_legacy_json_compatibility_follows_jsonschemacompatibilitycheck() -> None:
    reg = Registry.in_memory(pulsar_version="4.0")
    jackson = SchemaInfo(type=SchemaType.JSON, schema=json.dumps(JACKSON))
    as_avro = SchemaInfo(type=SchemaType.JSON, schema=record())
    assert reg.register(TOPIC, jackson).version == 0
    # Jackson then Avro: accepted (the Avro form overwrites), under FULL
    assert reg.check(TOPIC, as_avro, CompatibilityStrategy.FULL).compatible
    renamed = SchemaInfo(type=SchemaType.JSON, schema=json.dumps({**JACKSON, "id": "urn:other"}))
    verdict = reg.check(TOPIC, renamed, CompatibilityStrategy.FULL)
    assert not verdict.compatible and [p.code for p in verdict.problems] == [RuleCode.JSON_SCHEMA_ID_CHANGED]
    same_id = SchemaInfo(type=SchemaType.JSON, schema=json.dumps({**JACKSON, "properties": {}}))
    assert reg.check(TOPIC, same_id, CompatibilityStrategy.BACKWARD).compatible
    assert not reg.check(TOPIC, same_id, CompatibilityStrategy.ALWAYS_INCOMPATIBLE).compatible
    # the duplicate check parses a new JSON schema as Avro once the topic has one (§3.3): a 4xx, not Pulsar's 500
    with pytest.raises(InvalidSchemaError, match="register the Avro form instead"):
        reg.register(TOPIC, same_id)
    # ... and every live AVRO/JSON/PROTOBUF version too (getSchemaVersionBySchemaData, branch-3.0 and 4.0): the
    # stored Jackson document fails that parse, so registering the Avro form fails (Pulsar: 500; here 409)
    with pytest.raises(PoisonedHistoryError, match="version 0 .* is a Jackson JSON-Schema document"):
        reg.register(TOPIC, as_avro)
    assert [v.version for v in reg.history(TOPIC)] == [0]
    # Avro then Jackson, on a topic whose history is Avro: accepted too
    other = "persistent://t/n/other"
    reg.register(other, as_avro)
    assert reg.check(other, jackson, CompatibilityStrategy.FULL_TRANSITIVE).compatible


def mixed_history(topic: str, schemas: list[str]) -> Registry:
    """A 4.0 registry whose `topic` holds these JSON schemas as versions 0, 1, ..., loaded as a backup is."""
    from registry import import_snapshot

    records: list[dict[str, object]] = [
        {"kind": "snapshot", "format": 2, "pulsar_version": "4.0"},
        {"kind": "tenant", "name": "t"},
        {"kind": "namespace", "name": "t/n", "policy": {"compatibility": "UNDEFINED"}},
        {"kind": "topic", "name": topic, "namespace": "t/n", "policy": None},
    ]
    for version, schema in enumerate(schemas):
        records.append(
            {"kind": "version", "topic": topic.removeprefix("persistent://"), "version": version, "type": "JSON"}
            | {"deleted": False, "timestamp": 1, "user": "", "properties": {}, "schema": schema}
        )
    records.append({"kind": "end", "records": len(records)})
    return import_snapshot(io.StringIO("".join(json.dumps(r) + "\n" for r in records)))


@pytest.mark.parametrize("line", LINES)
def test_schema_text_is_read_as_jackson_reads_it(line: str) -> None:
    """Every line: comments allowed (Avro's parser enables ALLOW_COMMENTS), bare NaN refused, a text default
    of a float/double read with Java's Double.valueOf (a number, a hex float; other text fails the parse)."""
    commented = '{"type": "record", /* a block */ "name": "C", // a line\n "fields": [{"name": "a", "type": "int"}]}'
    assert accepted(line, avro(commented))
    assert not accepted(line, avro('{"type": "record", "name": "C", "fields": [], "x": NaN}'))
    assert not accepted(line, avro('{"type": "record", "name": "C", /* open "fields": []}'))
    double = [{"name": "d", "type": "double", "default": "0x1p3"}]
    assert accepted(line, avro(record(fields=double)))
    bad = [{"name": "d", "type": "double", "default": "ten"}]
    with pytest.raises(InvalidSchemaError, match="text that is not a number"):
        Registry.in_memory(pulsar_version=line).register(TOPIC, avro(record(fields=bad)))
    slash_in_text = record(fields=[{"name": "a", "type": "string", "doc": "a // not a comment /* either */"}])
    assert accepted(line, avro(slash_in_text))


def test_the_profile_is_stored_with_a_new_file_and_changed_only_on_purpose(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with Registry.open(db, create=True, pulsar_version="4.0") as reg:
        assert (reg.pulsar_version, reg.stored_pulsar_version()) == ("4.0", "4.0")
    with Registry.open(db) as reg:
        assert reg.pulsar_version == "4.0" and reg.pulsar_version_source == "stored with the registry"
    with Registry.open(db, pulsar_version="master") as reg:  # this handle only: a read never stores
        assert (reg.pulsar_version, reg.stored_pulsar_version()) == ("master", "4.0")
        assert reg.pulsar_version_source == "asked when opened"
        assert not hasattr(reg.read_only(), "set_pulsar_version")  # an embedded registry's own write
        assert reg.set_pulsar_version("3.0", user="ops") == "3.0"
        assert reg.audit_trail()[0].action is AuditAction.SET_PULSAR_VERSION
        with pytest.raises(InvalidArgumentError):
            reg.set_pulsar_version("9.9")
    with Registry.open(db) as reg:
        assert reg.pulsar_version == "3.0"
    with pytest.raises(InvalidArgumentError), Registry.open(tmp_path / "new.db", create=True, pulsar_version="x"):
        pass
    assert not (tmp_path / "new.db").exists()  # a bad line name makes no file
    with Registry.open(tmp_path / "plain.db", create=True) as reg:
        assert reg.pulsar_version == "master" and reg.pulsar_version_source == "the default (none stored)"


def test_a_reader_alias_that_lands_on_an_existing_writer_field_is_a_duplicate_field() -> None:
    """Avro's `Schema.applyAliases` renames writer field `a` to `b` (the reader's alias), the writer has a `b`
    too, and `setFields` throws "Duplicate field": refused where the new schema reads (BACKWARD, FULL and their
    transitive forms; Pulsar answers 500 or 409), accepted where it does not. A reformatted copy of such a
    stored schema is a duplicate (equality ignores aliases) and returns its version without any resolution."""
    old = record(fields=[{"name": "a", "type": "int", "default": 0}, {"name": "b", "type": "int"}])
    new = record(fields=[{"name": "b", "type": "int", "aliases": ["a"]}])
    for strategy in ("BACKWARD", "BACKWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "FORWARD", "ALWAYS_COMPATIBLE"):
        reg = Registry.in_memory()
        reg.register(TOPIC, avro(old))
        verdict = reg.check(TOPIC, avro(new), strategy)
        refused = strategy.startswith(("BACKWARD", "FULL"))
        assert verdict.compatible is not refused, strategy
        if refused:
            assert verdict.problems[0].code is RuleCode.DUPLICATE_FIELD  # FULL also finds `a` missing, forward
            assert "Duplicate field b in record Order" in verdict.problems[0].message
    reg = Registry.in_memory()
    reg.register(TOPIC, avro(old))
    reg.set_namespace_policy("t/n", compatibility="FORWARD")
    assert reg.register(TOPIC, avro(new)).version == 1
    reg.set_namespace_policy("t/n", compatibility="FULL")
    assert reg.register(TOPIC, avro(json.dumps(json.loads(new), indent=4))).version == 1  # dedup, no resolution


def test_a_dollar_spelled_as_a_json_escape_is_still_a_dollar() -> None:
    escaped = '{"type": "record", "name": "A\\u0024B", "fields": []}'
    assert [accepted(line, avro(escaped)) for line in LINES] == [False, False, True]


def test_legacy_json_judges_each_version_by_its_own_form() -> None:
    """JsonSchemaCompatibilityCheck branches per existing version: a new JSON schema in neither form is an
    "Unknown schema format" (a consumer never validated as a new schema is refused, not admitted), and in a
    mixed history an Avro candidate is still resolved against the Avro versions a transitive strategy reaches."""
    reg = Registry.in_memory(pulsar_version="4.0")
    reg.register(TOPIC, SchemaInfo(type=SchemaType.JSON, schema=record()))
    unknown = SchemaInfo(type=SchemaType.JSON, schema=json.dumps({"type": "thing"}))
    admission = reg.connect_consumer(TOPIC, unknown, subscription="s")
    assert not admission.accepted and "Unknown schema format" in admission.reason
    # No registration makes a live history of both forms (the duplicate check fails on the Jackson version),
    # but a restored backup, or a broker that once took both, may hold one.
    mixed = "persistent://t/n/mixed"
    reg = mixed_history(mixed, [json.dumps(JACKSON), record()])
    required = SchemaInfo(type=SchemaType.JSON, schema=record(fields=[{"name": "x", "type": "string"}]))
    verdict = reg.check(mixed, required, CompatibilityStrategy.BACKWARD_TRANSITIVE)
    assert not verdict.compatible and [p.version for p in verdict.problems] == [1]


# --- snapshots and audits carry the line (a restore, a Spark audit answer as the registry does) ----------------


def test_a_snapshot_carries_the_line_and_a_restore_answers_as_it(tmp_path: Path) -> None:
    from registry import export_snapshot, import_snapshot

    with Registry.open(tmp_path / "r.db", create=True, pulsar_version="4.0") as reg:
        reg.register(TOPIC, avro(record()))
        export_snapshot(reg, tmp_path / "s.jsonl")
    restored = import_snapshot(tmp_path / "s.jsonl")
    assert (restored.pulsar_version, restored.pulsar_version_source) == ("4.0", "stored with the registry")
    with Registry.open(tmp_path / "into.db", create=True) as into:
        assert into.pulsar_version == "master"
        import_snapshot(tmp_path / "s.jsonl", into=into)
        assert into.pulsar_version == into.stored_pulsar_version() == "4.0"
    with pytest.raises(InvalidSchemaError, match="Illegal character"):
        restored.register(TOPIC, avro(record("Order$V2")))


def test_a_snapshot_without_a_line_or_with_an_unknown_one(tmp_path: Path) -> None:
    from registry import export_snapshot, import_snapshot
    from registry.storage._snapshot_values import SnapshotError

    with Registry.open(tmp_path / "r.db", create=True, pulsar_version="4.0") as reg:
        export_snapshot(reg, tmp_path / "s.jsonl")
    header, *rest = (tmp_path / "s.jsonl").read_text().splitlines()
    old = {k: v for k, v in json.loads(header).items() if k != "pulsar_version"}
    (tmp_path / "old.jsonl").write_text("\n".join([json.dumps(old), *rest]) + "\n")
    assert import_snapshot(tmp_path / "old.jsonl").pulsar_version == "master"  # written before lines
    (tmp_path / "bad.jsonl").write_text("\n".join([json.dumps({**old, "pulsar_version": "9.9"}), *rest]) + "\n")
    with pytest.raises(SnapshotError, match="9.9"):
        import_snapshot(tmp_path / "bad.jsonl")


def test_the_compat_matrix_audit_answers_as_the_registrys_line() -> None:
    """The Spark job (called here on one batch of topic bundles, no Spark) judges with the line in the source's
    header: a `$` in a record name is read on master and does not parse on 4.0."""
    from pipeline import compat_matrix
    from pipeline._source import records_source

    reg = Registry.in_memory()
    reg.create_tenant("t")
    reg.create_namespace("t/n")
    reg.register(TOPIC, avro(record()))
    reg.register(TOPIC, avro(record("Order$V2")))
    source = records_source(reg, "test")
    bundles = source.key_bundles([TopicName.parse(TOPIC).schema_id])

    def pairs(line: str) -> list[dict[str, object]]:
        header = {**source.header, "pulsar_version": line}
        return [row for row in compat_matrix.make_job(header, 5)(bundles) if row["kind"] == "pair"]

    master, lts = pairs("master"), pairs("4.0")
    assert len(master) == len(lts) == 2
    assert not any("Illegal character" in (row["message"] or "") for row in master)
    assert any("Illegal character" in (row["message"] or "") for row in lts)


def test_an_audit_source_answers_as_the_line_asked(tmp_path: Path) -> None:
    """`audit --pulsar-version` reaches the Spark jobs through the source's header (file and snapshot)."""
    from pipeline._open import load_source
    from pipeline._source import SourceError
    from registry import export_snapshot

    with Registry.open(tmp_path / "r.db", create=True) as reg:
        export_snapshot(reg, tmp_path / "s.jsonl")
    assert load_source(db=str(tmp_path / "r.db")).header["pulsar_version"] == "master"
    assert load_source(db=str(tmp_path / "r.db"), pulsar_version="3.0").header["pulsar_version"] == "3.0"
    assert load_source(snapshot=str(tmp_path / "s.jsonl"), pulsar_version="4.0").header["pulsar_version"] == "4.0"
    with pytest.raises(SourceError, match="9.9"):
        load_source(snapshot=str(tmp_path / "s.jsonl"), pulsar_version="9.9")


def test_the_notebook_compat_matrix_answers_as_the_registrys_line(tmp_path: Path) -> None:
    from registry.views.tables import compatibility_matrix

    with Registry.open(tmp_path / "r.db", create=True) as reg:
        reg.register(TOPIC, avro(record()))
        reg.set_topic_policy(TOPIC, compatibility="ALWAYS_COMPATIBLE")
        reg.register(TOPIC, avro(record("Order$V2")))
        assert not compatibility_matrix(reg, TOPIC)["message"].fillna("").str.contains("Illegal character").any()
    with Registry.open(tmp_path / "r.db", pulsar_version="4.0") as lts:
        assert compatibility_matrix(lts, TOPIC)["message"].fillna("").str.contains("Illegal character").any()
