"""pulsar-semantics.md §9.3: the multi-step upstream scenarios, each run against both storages.

Upstream paths are relative to apache/pulsar's `pulsar-broker/src/test/java/org/apache/pulsar/`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from registry import (
    AutoUpdateStrategy,
    CompatibilityStrategy,
    PolicySource,
    Registry,
    SchemaNotFoundError,
    SchemaType,
)
from schemas import BAR, FOO, NAMESPACE, P1, P3, S1, S2, S3, TOPIC, avro_info, json_info, kv, primitive, record

CS = CompatibilityStrategy
AUTO_UPDATE_DISABLED = "Schema not found and schema auto updating is disabled."


# 1. broker/service/schema/SchemaServiceTest#deleteSchemaAndAddSchema
def test_delete_then_add_continues_numbering_after_tombstone(reg: Registry) -> None:
    assert reg.register(TOPIC, avro_info(S1), user="alice").version == 0
    assert reg.delete(TOPIC, user="alice") == 1
    with pytest.raises(SchemaNotFoundError):
        reg.get(TOPIC)
    assert reg.register(TOPIC, avro_info(S1)).version == 2
    assert reg.get(TOPIC).version == 2
    assert [v.version for v in reg.history(TOPIC)] == [2]


# 2. SchemaServiceTest#addLotsOfEntriesThenDelete
def test_lots_of_entries_then_delete_hides_every_version(reg: Registry) -> None:
    assert [reg.register(TOPIC, avro_info(s)).version for s in (S1, S2, S3)] == [0, 1, 2]
    assert reg.delete(TOPIC) == 3
    for version in (0, 1, 2, 3):
        with pytest.raises(SchemaNotFoundError):
            reg.get(TOPIC, version=version)
    with pytest.raises(SchemaNotFoundError):
        reg.get(TOPIC)
    assert reg.history(TOPIC) == []
    everything = reg.history(TOPIC, include_deleted=True)
    assert [(v.version, v.deleted) for v in everything] == [(0, False), (1, False), (2, False), (3, True)]
    tombstone = everything[-1]
    assert tombstone.type is SchemaType.NONE and tombstone.data == b""


# 3. SchemaServiceTest#getAllVersionSchema
def test_get_all_versions_in_order(reg: Registry) -> None:
    texts = (S1, S2, S3)
    for text in texts:
        reg.register(TOPIC, avro_info(text))
    history = reg.history(TOPIC)
    assert [v.version for v in history] == [0, 1, 2]
    assert [v.data for v in history] == [t.encode() for t in texts]
    assert [v.schema for v in history] == list(texts)
    assert all(v.topic == "acme/tests/topic" for v in history)
    assert all(not v.deleted and v.type is SchemaType.AVRO for v in history)
    for version, text in enumerate(texts):
        assert reg.get(TOPIC, version=version).data == text.encode()
    assert [v.timestamp for v in history] == sorted(v.timestamp for v in history)


# 4. client/api/SchemaTest#testProducerMultipleSchemaMessages (AUTO_PRODUCE with per-message schemas)
def test_producer_multiple_schema_messages_store_five_versions(reg: Registry) -> None:
    # (register once and force-delete, only so that the namespace exists for the policy)
    reg.register(TOPIC, primitive(SchemaType.STRING))
    reg.set_namespace_policy(NAMESPACE, compatibility=CS.ALWAYS_COMPATIBLE)
    reg.delete(TOPIC, force=True)
    # The native Avro schema of P3 is the same Avro schema in another layout.
    native_p3 = json.dumps(json.loads(P3), indent=2)
    sent = [
        (primitive(SchemaType.STRING), 0),
        (json_info(P3), 1),
        (avro_info(P3), 2),
        (avro_info(P1), 3),
        (json_info(P3), 1),
        (primitive(SchemaType.BYTES), None),
        (primitive(SchemaType.BYTES), None),
        (primitive(SchemaType.BOOLEAN), 4),
        (avro_info(native_p3), 2),
    ]
    for i, (info, version) in enumerate(sent):
        adm = reg.connect_producer(TOPIC, info, name=f"p{i}")
        assert adm.accepted, (i, adm.reason)
        assert adm.version == version, i
    history = reg.history(TOPIC)
    assert [v.type for v in history] == [
        SchemaType.STRING,
        SchemaType.JSON,
        SchemaType.AVRO,
        SchemaType.AVRO,
        SchemaType.BOOLEAN,
    ]
    assert [v.version for v in history] == [0, 1, 2, 3, 4]


# 5. SchemaDeleteTest#schemaForceDeleteTest
def test_force_delete_removes_history_and_restarts_at_zero(reg: Registry) -> None:
    reg.register(TOPIC, avro_info(S1))
    assert reg.delete(TOPIC) == 1
    assert len(reg.history(TOPIC, include_deleted=True)) == 2, "soft delete keeps the history"
    assert reg.delete(TOPIC, force=True) is None
    assert reg.history(TOPIC, include_deleted=True) == []
    with pytest.raises(SchemaNotFoundError):
        reg.get(TOPIC)
    assert reg.register(TOPIC, avro_info(S2)).version == 0
    assert reg.delete(TOPIC, force=True) is None
    assert reg.delete(TOPIC, force=True) is None, "forcing on an empty history also answers -1/None"


# 6. client/impl/SchemaDeleteTest#createTopicDeleteTopicCreateTopic
def test_topic_delete_then_schema_delete_then_readers(reg: Registry) -> None:
    ns = NAMESPACE
    producer = reg.connect_producer(TOPIC, primitive(SchemaType.STRING), name="producer")
    assert producer.accepted and producer.version == 0
    reg.disconnect(TOPIC, name="producer")

    reg.delete(TOPIC, force=True)  # admin.topics().delete drops the history
    assert reg.delete(TOPIC) == 0, "a soft delete on an empty history writes a tombstone at v0"
    reader = reg.connect_consumer(TOPIC, primitive(SchemaType.STRING), subscription="reader-1", name="reader-1")
    assert reader.accepted, reader.reason
    assert reader.version == 1 and reader.registered
    reg.disconnect(TOPIC, name="reader-1")

    reg.set_namespace_policy(ns, auto_update_strategy=AutoUpdateStrategy.BackwardTransitive)
    assert reg.effective_policy(TOPIC).compatibility.value is CS.BACKWARD_TRANSITIVE
    reg.delete(TOPIC, force=True)
    assert reg.delete(TOPIC) == 0
    dummy = avro_info(record("DummyPojo", [{"name": "foobar", "type": "int"}], "org.apache.pulsar.client.impl"))
    reader = reg.connect_consumer(TOPIC, dummy, subscription="reader-2", name="reader-2")
    assert reader.accepted, reader.reason
    assert reader.version == 1
    assert [v.type for v in reg.history(TOPIC)] == [SchemaType.AVRO]


# 7. service/schema/SchemaCompatibilityCheckTest#testSchemaComparison
def test_schema_comparison_dedups_compact_text_without_auto_update(reg: Registry) -> None:
    stored_text = S1 + "   \n"
    assert reg.register(TOPIC, avro_info(stored_text)).version == 0
    reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
    adm = reg.connect_producer(TOPIC, avro_info(S1), name="p1")
    assert adm.accepted, adm.reason
    assert adm.version == 0 and not adm.registered
    assert reg.get(TOPIC).data == stored_text.encode(), "stored bytes are unchanged"
    other = reg.connect_producer(TOPIC, avro_info(S2), name="p2")
    assert not other.accepted
    assert AUTO_UPDATE_DISABLED in other.reason
    assert len(reg.history(TOPIC)) == 1


# 8. admin/AdminApiSchemaTest#createKeyValueSchema
def test_reposting_identical_key_value_schema_keeps_version_and_timestamp(reg: Registry) -> None:
    schema = kv(FOO, BAR)
    assert reg.register(TOPIC, schema).version == 0
    first = reg.get(TOPIC)
    assert reg.register(TOPIC, kv(FOO, BAR)).version == 0
    again = reg.get(TOPIC)
    assert again.version == 0 and again.timestamp == first.timestamp
    assert len(reg.history(TOPIC)) == 1
    rendered = json.loads(again.schema)
    assert rendered == {"key": json.loads(FOO), "value": json.loads(BAR)}
    assert again.properties["key.schema.type"] == "AVRO"
    assert again.properties["value.schema.type"] == "AVRO"


# 9. admin/AdminApiSchemaValidationEnforcedTest
class TestValidationEnforced:
    def test_enforced_with_schema_rejects_producer_without_schema(self, reg: Registry) -> None:
        reg.register(TOPIC, primitive(SchemaType.STRING))
        reg.set_namespace_policy(NAMESPACE, validation_enforced=True)
        adm = reg.connect_producer(TOPIC, None, name="p1")
        assert not adm.accepted
        assert "Producers cannot connect or send message without a schema to topics with a schema" in adm.reason

    def test_enforced_without_schema_accepts_producer_without_schema(self, reg: Registry) -> None:
        reg.register(TOPIC, primitive(SchemaType.STRING))
        reg.delete(TOPIC)
        reg.set_namespace_policy(NAMESPACE, validation_enforced=True)
        adm = reg.connect_producer(TOPIC, None, name="p1")
        assert adm.accepted, adm.reason
        assert adm.version is None

    def test_not_enforced_accepts_producer_without_schema(self, reg: Registry) -> None:
        reg.register(TOPIC, primitive(SchemaType.STRING))
        adm = reg.connect_producer(TOPIC, None, name="p1")
        assert adm.accepted, adm.reason
        assert adm.version is None

    def test_broker_flag_enforces_even_when_namespace_flag_is_false(self, make_reg: Callable[..., Registry]) -> None:
        reg = make_reg(validation_enforced=True)
        reg.register(TOPIC, primitive(SchemaType.STRING))
        assert reg.namespace_policy(NAMESPACE).validation_enforced is False
        adm = reg.connect_producer(TOPIC, None, name="p1")
        assert not adm.accepted


# 10. SchemaCompatibilityCheckTest#testIsAutoUpdateSchema / testBrokerAllowAutoUpdateSchemaDisabled
@pytest.mark.parametrize("where", ["namespace", "broker"])
def test_auto_update_off_then_registered_schema_connects(make_reg: Callable[..., Registry], where: str) -> None:
    reg = make_reg(allow_auto_update=where != "broker")
    reg.register(TOPIC, avro_info(S1))
    if where == "namespace":
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=False)
    assert reg.effective_policy(TOPIC).allow_auto_update.value is False

    adm = reg.connect_producer(TOPIC, avro_info(S2), name="p1")
    assert not adm.accepted
    assert AUTO_UPDATE_DISABLED in adm.reason
    assert len(reg.history(TOPIC)) == 1

    # Registered through the admin API (which ignores the flag), the same schema now connects.
    assert reg.register(TOPIC, avro_info(S2)).version == 1
    adm = reg.connect_producer(TOPIC, avro_info(S2), name="p1")
    assert adm.accepted and adm.version == 1 and not adm.registered
    consumer = reg.connect_consumer(TOPIC, avro_info(S2), subscription="sub", name="c1")
    assert consumer.accepted, consumer.reason

    if where == "namespace":
        reg.set_namespace_policy(NAMESPACE, allow_auto_update=True)
        adm = reg.connect_producer(TOPIC, avro_info(S2.replace('"default":"foo"', '"default":"bar"')), name="p2")
        assert adm.accepted and adm.version == 2 and adm.registered


# 11. SchemaTypeCompatibilityCheckOnTopicLevelTest#testUpdateSchemaCompatibilityStrategyRepeatedly
def test_update_schema_compatibility_strategy_repeatedly(reg: Registry) -> None:
    reg.register(TOPIC, avro_info(S1))
    reg.set_namespace_policy(
        NAMESPACE, compatibility=CS.UNDEFINED, auto_update_strategy=AutoUpdateStrategy.AutoUpdateDisabled
    )
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.ALWAYS_INCOMPATIBLE, PolicySource.AUTO_UPDATE_MAPPING)

    reg.set_namespace_policy(NAMESPACE, compatibility=CS.ALWAYS_COMPATIBLE)
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.ALWAYS_COMPATIBLE, PolicySource.NAMESPACE)

    reg.set_topic_policy(TOPIC, compatibility=CS.ALWAYS_INCOMPATIBLE)
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.ALWAYS_INCOMPATIBLE, PolicySource.TOPIC)
    assert reg.topic_policy(TOPIC).compatibility is CS.ALWAYS_INCOMPATIBLE

    reg.set_topic_policy(TOPIC, compatibility=None)
    assert reg.topic_policy(TOPIC).compatibility is None
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.ALWAYS_COMPATIBLE, PolicySource.NAMESPACE)

    reg.set_topic_policy(TOPIC, compatibility=CS.ALWAYS_INCOMPATIBLE)
    reg.set_topic_policy(TOPIC, compatibility=CS.UNDEFINED)
    assert reg.topic_policy(TOPIC).compatibility is None, "UNDEFINED is stored as unset"

    reg.set_namespace_policy(NAMESPACE, compatibility=CS.UNDEFINED)
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.ALWAYS_INCOMPATIBLE, PolicySource.AUTO_UPDATE_MAPPING)

    reg.set_namespace_policy(NAMESPACE, auto_update_strategy=None)
    eff = reg.effective_policy(TOPIC).compatibility
    assert (eff.value, eff.source) == (CS.FULL, PolicySource.BROKER_DEFAULT)
    assert reg.namespace_policy(NAMESPACE).auto_update_strategy is None
