"""AppTest of the Topic page: timeline, any version's schema, properties, policies with their source, clients,
deletions, read-only mode, unknown topics, and a `<script>` in a schema doc that stays text."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shell_helpers import TOPIC_PAGE, errors
from streamlit.testing.v1 import AppTest

from app.session import os_user
from registry import Registry, SchemaInfo, SchemaType

MakeApp = Callable[..., AppTest]
TOPIC = "persistent://acme/orders/order-created"
SCRIPT = "<script>alert('pwned')</script>"


def schema_code(at: AppTest) -> Any:
    """The schema's code block (the Copy link popover holds another, the page's link)."""
    return next(c for c in at.code if not c.value.startswith(("?", "http")))


def topic_app(make_app: MakeApp, db: Path, topic: str = TOPIC, **kwargs: object) -> AppTest:
    return make_app(db, topic=topic, page=TOPIC_PAGE, **kwargs).run()


def test_the_topic_page_shows_versions_schema_policies_and_clients(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db)
    assert errors(at) == []
    assert at.title[0].value.replace("\\", "") == "order-created"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Schema type"] == "AVRO" and int(metrics["Live versions"]) >= 2
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the version timeline
    schema = schema_code(at)
    assert schema.language == "json" and json.loads(schema.value)["type"] == "record"
    assert "\n  " in schema.value  # pretty-printed
    policies = next(d.value for d in at.dataframe if "from" in d.value.columns)
    assert set(policies["from"]) <= {"topic", "namespace", "broker default", "namespace auto-update strategy"}
    assert "compatibility (admin: register, check)" in list(policies["policy"])


def test_any_version_can_be_shown(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db)
    versions = at.selectbox(key="topic_version").options
    assert len(versions) >= 2 and versions[0].startswith("v")
    latest = schema_code(at).value
    at.selectbox(key="topic_version").select_index(len(versions) - 1).run()
    assert schema_code(at).value != latest and errors(at) == []


def test_a_script_in_a_schema_doc_stays_text(make_app: MakeApp, db: Path) -> None:
    topic = "persistent://acme/orders/xss-probe"
    doc = {"type": "record", "name": "Probe", "doc": SCRIPT, "fields": [{"name": "a", "type": "string", "doc": SCRIPT}]}
    with Registry.open(db, create=True) as reg:
        reg.register(topic, SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc), properties={"note": SCRIPT}))
    at = topic_app(make_app, db, topic)
    assert errors(at) == []
    assert SCRIPT in schema_code(at).value  # shown as code, exactly as stored
    properties = next(d.value for d in at.dataframe if "property" in d.value.columns)
    assert list(properties["value"]) == [SCRIPT]  # properties table: a cell, not HTML
    for element in [*at.markdown, *at.caption, *at.title]:
        assert "<script>" not in element.value  # markdown never carries it raw


def test_clients_are_listed_per_version(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db)
    frames = [d.value for d in at.dataframe]
    per_version = next(f for f in frames if "version" in f.columns and "name" not in f.columns)
    assert per_version["version"].notna().any()
    listed = next(f for f in frames if "subscription" in f.columns)
    assert set(listed["role"]) <= {"producer", "consumer"} and len(listed) > 0


def test_delete_writes_a_deletion_marker(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db)
    assert at.button(key="topic_delete").disabled
    at.checkbox(key="topic_delete_sure").check().run()
    at.button(key="topic_delete").click().run()
    assert errors(at) == []
    assert any("deleted" in i.value for i in at.info)
    assert at.metric[1].value == "0"
    with Registry.open(db, create=True) as reg:
        assert reg.history(TOPIC, include_deleted=True)[-1].deleted
        assert reg.audit_trail(TOPIC)[0].user == f"{os_user()} (os user)"


def test_read_only_mode_hides_writes(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db, read_only=True)
    assert errors(at) == []
    assert not [b for b in at.button if b.key == "topic_delete"]
    assert at.toggle(key="read_only").value is True


def test_an_unknown_topic_gets_a_short_message(make_app: MakeApp, db: Path) -> None:
    at = topic_app(make_app, db)
    at.text_input(key="topic_name").input("persistent://acme/orders/nope").run()
    [message] = errors(at)
    assert "does not exist" in message and "Browse" in message
    at.text_input(key="topic_name").input("not//a topic").run()
    [message] = errors(at)
    assert "Names are" in message or "invalid" in message.lower()


def test_without_a_selected_topic_the_page_says_how_to_pick_one(make_app: MakeApp, db: Path) -> None:
    at = make_app(db, page=TOPIC_PAGE).run()
    assert errors(at) == [] and "Browse" in at.info[0].value


def test_an_empty_topic_says_it_has_no_schema(make_app: MakeApp, db: Path) -> None:
    with Registry.open(db, create=True) as reg:
        reg.create_topic("persistent://acme/orders/empty")
    at = topic_app(make_app, db, "persistent://acme/orders/empty")
    assert errors(at) == [] and any("No schema registered" in i.value for i in at.info)


def test_a_protobuf_native_schema_reads_as_proto_source_not_base64(make_app: MakeApp, db: Path) -> None:
    """The stored form is a base64 descriptor set; the page rebuilds the .proto source from it (issue 19)."""
    at = topic_app(make_app, db, topic="persistent://acme/payments/ledger-entries")
    assert errors(at) == []
    schema = schema_code(at)
    assert schema.language == "protobuf"
    assert 'syntax = "proto3";' in schema.value and "message LedgerEntry {" in schema.value
    assert "fileDescriptorSet" not in schema.value


def test_a_link_opens_the_topic_at_its_version_and_a_reload_keeps_it(make_app: MakeApp, db: Path) -> None:
    at = make_app(db, page=TOPIC_PAGE)
    at.query_params.update({"topic": "acme/orders/order-created", "version": "2"})
    at.run()
    assert errors(at) == [] and not at.warning
    assert at.selectbox(key="topic_version").value == 2
    at.selectbox(key="topic_version").set_value(4).run()
    assert (at.query_params["topic"], at.query_params["version"]) == ("acme/orders/order-created", "4")
    reloaded = make_app(db, page=TOPIC_PAGE)  # a new session on the URL the page wrote
    reloaded.query_params.update(dict(at.query_params))
    reloaded.run()
    assert reloaded.selectbox(key="topic_version").value == 4


def test_a_link_with_a_version_the_topic_lacks_is_named(make_app: MakeApp, db: Path) -> None:
    at = make_app(db, page=TOPIC_PAGE)
    at.query_params.update({"topic": "acme/orders/order-created", "version": "77"})
    at.run()
    assert not at.exception
    assert "`77`" in " ".join(w.value for w in at.warning).replace("\\", "")
