"""The What-if page: a candidate under all 8 strategies, problems, advisories, admission, upgrade order, and
the Register button (the resulting version, or Pulsar's exact refusal)."""

from __future__ import annotations

import json
from pathlib import Path

from review_helpers import ROOT, page_test, texts

from registry import Registry

ORDER_CREATED = "persistent://acme/orders/order-created"
LEDGER = "persistent://acme/payments/ledger-entries"
CART = "persistent://acme/orders/cart-events"
NOTES = "persistent://acme/orders/order-notes"
SCHEMAS = ROOT / "sample_data" / "schemas"


def latest_with(db: Path, topic: str, field: dict) -> str:
    with Registry.open(db, create=True) as reg:
        doc = json.loads(reg.get(topic).schema)
    doc["fields"].append(field)
    return json.dumps(doc, indent=2)


def test_the_latest_version_is_prefilled_and_is_a_duplicate(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    assert not at.exception
    assert '"OrderCreated"' in at.text_area(key="whatif_cand_text").value
    assert any("Identical to live version 13" in i.value for i in at.info)
    matrix = at.dataframe[0].value
    assert len(matrix) == 8 and matrix["effective"].sum() == 1


def test_a_compatible_candidate_registers_as_the_next_version(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    optional = {"name": "giftNote", "type": ["null", "string"], "default": None}
    at.text_area(key="whatif_cand_text").set_value(latest_with(db, ORDER_CREATED, optional)).run()
    assert not at.exception
    assert any("store version 14" in s.value for s in at.success)
    assert "Upgrade order" in texts(at)
    at.button(key="whatif_register").click().run()
    assert not at.exception
    assert any("as version 14" in s.value for s in at.success)
    with Registry.open(db, create=True) as reg:
        assert reg.get(ORDER_CREATED).version == 14


def test_an_incompatible_candidate_shows_problems_and_the_exact_refusal(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    required = {"name": "loyaltyTier", "type": "string"}
    at.text_area(key="whatif_cand_text").set_value(latest_with(db, ORDER_CREATED, required)).run()
    assert not at.exception
    assert any("would be refused under BACKWARD" in e.value for e in at.error)
    problems = at.table[0].value  # a wrapping table: long hints are read whole, not cut at a column's width
    assert "READER_FIELD_WITHOUT_DEFAULT" in set(problems["code"])
    assert problems["hint"].str.len().gt(0).all()
    at.button(key="whatif_register").click().run()
    assert any("Pulsar refused the registration" in e.value for e in at.error)
    with Registry.open(db, create=True) as reg:
        assert reg.get(ORDER_CREATED).version == 13


def test_problems_can_be_shown_under_another_strategy(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    required = {"name": "loyaltyTier", "type": "string", "default": "NONE"}
    at.text_area(key="whatif_cand_text").set_value(latest_with(db, ORDER_CREATED, required)).run()
    at.selectbox(key="whatif_strategy").set_value("ALWAYS_INCOMPATIBLE").run()
    assert not at.exception
    assert any("Incompatible under ALWAYS_INCOMPATIBLE" in e.value for e in at.error)


def test_read_only_disables_register(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED, read_only=True).run()
    assert at.button(key="whatif_register").disabled


def test_key_value_parts_are_prefilled_from_the_latest_version(db: Path) -> None:
    at = page_test("whatif", db, topic=CART).run()
    assert not at.exception
    assert at.radio(key="whatif_cand_mode").value == "KEY_VALUE"
    assert at.selectbox(key="whatif_cand_key_type").value == "STRING"
    assert at.selectbox(key="whatif_cand_value_type").value == "AVRO"
    assert any("Identical to live version" in i.value for i in at.info)


def test_a_primitive_type_change_is_refused(db: Path) -> None:
    at = page_test("whatif", db, topic=NOTES).run()
    assert at.radio(key="whatif_cand_mode").value == "Primitive"
    at.selectbox(key="whatif_cand_primitive").set_value("INT64").run()
    assert not at.exception
    assert "SCHEMA_TYPE_CHANGED" in set(at.table[0].value["code"])


def test_uploaded_proto_files_compile_to_the_live_protobuf_native_version(db: Path) -> None:
    tree = SCHEMAS / "acme/payments/ledger-entries/v3"
    at = page_test("whatif", db, topic=LEDGER).run()
    assert at.radio(key="whatif_cand_mode").value == ".proto files"
    at.file_uploader(key="whatif_cand_protos").set_value(
        [
            ("ledger_entry.proto", (tree / "acme/payments/ledger_entry.proto").read_bytes(), "text/plain"),
            ("money.proto", (tree / "common/money.proto").read_bytes(), "text/plain"),
        ]
    ).run()
    at.text_input(key="whatif_cand_root_path").set_value("acme/payments/ledger_entry.proto").run()
    assert not at.exception
    assert at.selectbox(key="whatif_cand_root_message").value == "acme.payments.LedgerEntry"
    assert any("Identical to live version 3" in i.value for i in at.info)


def test_a_proto_that_does_not_compile_shows_protocs_message(db: Path) -> None:
    at = page_test("whatif", db, topic=LEDGER).run()
    at.text_area(key="whatif_cand_proto_text").set_value('syntax = "proto3";\nmessage A { strin x = 1; }').run()
    assert not at.exception
    assert any('"strin" is not defined' in i.value for i in at.info)


def test_an_uploaded_schema_file_fills_the_text_area(db: Path) -> None:
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    v2 = (SCHEMAS / "acme/orders/order-created/v2.avsc").read_bytes()
    at.file_uploader(key="whatif_cand_file").set_value(("v2.avsc", v2, "application/json")).run()
    assert not at.exception
    assert at.text_area(key="whatif_cand_text").value == v2.decode()
    assert any("Identical to live version 2" in i.value for i in at.info)


def test_the_uploaders_say_the_registry_limit_not_streamlits_default(db: Path) -> None:
    """Streamlit's default says "200MB per file"; the registry refuses schemas over 1 MiB (issue 19)."""
    at = page_test("whatif", db, topic=ORDER_CREATED).run()
    uploader = at.get("file_uploader")[0]
    assert uploader.proto.max_upload_size_mb == 1
    assert "at most 1 MiB" in uploader.proto.label


def test_the_sidebar_answers_as_another_pulsar_line_for_the_session(db: Path, make_app) -> None:  # noqa: ANN001
    """Toggle then try: the same candidate (a `$` in a record name) is valid as master and invalid as Pulsar 4.0
    (Avro 1.11), and the sidebar says which line answers; the registry's stored line is untouched."""
    at = make_app(db, topic=ORDER_CREATED, page="app_pages/whatif.py").run()
    assert not at.exception
    assert any("Answers as **Pulsar master" in c.value for c in at.sidebar.caption)
    dollar = latest_with(db, ORDER_CREATED, {"name": "note", "type": ["null", "string"], "default": None})
    dollar = dollar.replace('"OrderCreated"', '"Order$Created"')
    at.text_area(key="whatif_cand_text").set_value(dollar).run()
    assert not at.exception
    assert "Illegal character" not in texts(at)
    at.sidebar.selectbox(key="pulsar_version").set_value("4.0").run()
    assert not at.exception
    assert any(
        "Answers as **Pulsar 4.0 LTS** (Avro 1.11.4): chosen for this session" in c.value for c in at.sidebar.caption
    )
    assert r"Illegal character in\: Order\$Created" in texts(at)  # markdown-escaped
    assert at.query_params["pulsar"] == "4.0"  # a link copied now carries the line
    with Registry.open(db) as reg:
        assert reg.pulsar_version == "master"


def test_a_link_answers_as_the_pulsar_line_it_names(db: Path, make_app) -> None:  # noqa: ANN001
    """A teammate's link with pulsar=4.0 opens answering as 4.0 (the sidebar says so and shows the choice);
    a line the app does not know is a warning naming the parameter, and the registry's own line answers."""
    at = make_app(db, topic=ORDER_CREATED, page="app_pages/whatif.py")
    at.query_params.update({"topic": "acme/orders/order-created", "pulsar": "4.0"})
    at.run()
    assert not at.exception
    assert any(
        "Answers as **Pulsar 4.0 LTS**" in c.value and "chosen for this session" in c.value for c in at.sidebar.caption
    )
    assert at.sidebar.selectbox(key="pulsar_version").value == "4.0"
    assert at.query_params["pulsar"] == "4.0"
    at.sidebar.selectbox(key="pulsar_version").set_value("the registry's own").run()
    assert any("Answers as **Pulsar master" in c.value for c in at.sidebar.caption)
    assert "pulsar" not in at.query_params

    bad = make_app(db, topic=ORDER_CREATED, page="app_pages/whatif.py")
    bad.query_params.update({"pulsar": "9.9"})
    bad.run()
    assert not bad.exception
    assert any("pulsar" in w.value and "9.9" in w.value for w in bad.warning)
    assert any("Answers as **Pulsar master" in c.value for c in bad.sidebar.caption)
