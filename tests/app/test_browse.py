"""AppTest of the shell and the Browse page: counts, search, filters, paging, connection errors, broken rows."""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from shell_helpers import TOPIC_PAGE, errors
from streamlit.testing.v1 import AppTest

from app import connection, launch
from registry import Registry, RegistryError, SchemaInfo, SchemaType

MakeApp = Callable[..., AppTest]


def counts(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "match" in m.value)


def table_topics(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["topic"])


def test_browse_is_the_first_page_and_lists_every_topic(make_app: MakeApp, db: Path) -> None:
    at = make_app(db).run()
    assert errors(at) == []
    assert at.title[0].value == "Browse"
    assert counts(at).startswith("**47** topics match")
    assert "AVRO" in counts(at) and "Compatibility:" in counts(at)
    assert len(table_topics(at)) == 47
    sidebar = " ".join(m.value for m in at.sidebar.markdown)
    assert str(db) in sidebar and "compatibility: `FULL`" in sidebar


def test_search_by_name_field_and_type(make_app: MakeApp, db: Path) -> None:
    at = make_app(db).run()
    at.text_input(key="browse_search").input("payment").run()
    found = table_topics(at)
    assert found and all("payment" in t for t in found)
    at.text_input(key="browse_search").input("field:orderId").run()
    assert 0 < len(table_topics(at)) < 47
    at.text_input(key="browse_search").input("type:KEY_VALUE").run()
    assert set(at.dataframe[0].value["schema_type"]) == {"KEY_VALUE"}
    at.text_input(key="browse_search").input("no-such-thing-anywhere").run()
    assert not at.dataframe and "No topic matches" in at.info[0].value


def test_filters_narrow_the_list(make_app: MakeApp, db: Path) -> None:
    at = make_app(db).run()
    at.multiselect(key="browse_types").select(SchemaType.AVRO).run()
    assert set(at.dataframe[0].value["schema_type"]) == {"AVRO"}
    at.selectbox(key="browse_clients").select("With clients").run()
    frame = at.dataframe[0].value
    assert ((frame["producers"] + frame["consumers"]) > 0).all()
    at.number_input(key="browse_min_versions").set_value(3).run()
    assert (at.dataframe[0].value["versions"] >= 3).all()
    assert errors(at) == []


def test_tenant_then_namespace(make_app: MakeApp, db: Path) -> None:
    at = make_app(db).run()
    tenants = at.selectbox(key="browse_tenant").options
    assert tenants[0] == "All" and len(tenants) == 4
    at.selectbox(key="browse_tenant").select(tenants[1]).run()
    namespaces = at.selectbox(key="browse_namespace").options
    assert len(namespaces) > 1
    at.selectbox(key="browse_namespace").select(namespaces[1]).run()
    assert set(at.dataframe[0].value["namespace"]) == {namespaces[1]}


def test_pages_of_fifty(make_app: MakeApp, tmp_path: Path) -> None:
    path = tmp_path / "many.db"
    with Registry.open(path, create=True) as reg:
        for i in range(60):
            reg.create_topic(f"persistent://big/ns/t{i:02}")
    at = make_app(path).run()
    assert len(table_topics(at)) == 50 and "showing 1–50" in counts(at)
    at.number_input(key="browse_page").set_value(2).run()
    assert table_topics(at)[0] == "persistent://big/ns/t50" and "showing 51–60" in counts(at)
    at.text_input(key="browse_search").input("t0").run()  # a new search starts on its first page
    assert at.number_input(key="browse_page").value == 1 and len(table_topics(at)) == 10


def test_browse_opens_from_its_link_and_writes_its_state_back(make_app: MakeApp, db: Path) -> None:
    """`/browse?q=...&type=...&strategy=...&page=N` seeds the search; the URL then follows the widgets. A click
    on a row (Chromium only: AppTest cannot click a grid) is tests/e2e/test_links_e2e.py."""
    at = make_app(db)
    at.query_params.update({"q": "amount", "type": "AVRO,JSON", "tenant": "acme", "clients": "yes"})
    at.run()
    assert errors(at) == [] and not at.warning
    assert at.text_input(key="browse_search").value == "amount"
    assert [str(t) for t in at.multiselect(key="browse_types").value] == ["AVRO", "JSON"]
    assert (at.selectbox(key="browse_tenant").value, at.selectbox(key="browse_clients").value) == (
        "acme",
        "With clients",
    )
    at.text_input(key="browse_search").set_value("customer").run()
    assert at.query_params["q"] == "customer" and at.query_params["type"] == "AVRO,JSON"


def test_bad_values_in_a_browse_link_are_named_not_raised(make_app: MakeApp, db: Path) -> None:
    at = make_app(db)
    at.query_params.update({"type": "AVRO,NOPE", "tenant": "nobody", "page": "x", "min_versions": "-2"})
    at.run()
    assert errors(at) == [] and not at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    for value in ("NOPE", "nobody", "x", "-2"):
        assert f"`{value}`" in shown, value
    assert [str(t) for t in at.multiselect(key="browse_types").value] == ["AVRO"]


def test_a_broken_schema_shows_in_its_row(make_app: MakeApp, db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schemas SET data = x'7b7b', fields = NULL WHERE schema_id = 'acme/orders/order-created'")
        conn.execute("UPDATE heads SET fields = NULL WHERE schema_id = 'acme/orders/order-created'")
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'changes'")
    at = make_app(db).run()
    frame = at.dataframe[0].value
    assert len(frame) == 47
    assert "not valid JSON" in frame.set_index("name").loc["order-created", "error"]
    at = make_app(db, topic="persistent://acme/orders/order-created", page=TOPIC_PAGE).run()
    assert errors(at) != [] or at.warning  # the page explains instead of failing
    assert not at.exception


@pytest.mark.parametrize(
    "target",
    ["http://127.0.0.1:9/admin", "/proc/no/such/dir/registry.db"],
    ids=["an unreachable remote admin URL", "an unwritable file"],
)
def test_a_connection_that_fails_says_what_to_do(make_app: MakeApp, target: str) -> None:
    at = make_app(target).run()
    messages = errors(at)
    assert messages, "the failure must be shown"
    assert any("Connection" in m for m in messages)
    assert all("Traceback" not in m for m in messages)


def test_switching_the_connection_in_the_sidebar(make_app: MakeApp, db: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with Registry.open(other, create=True) as reg:
        reg.register("persistent://solo/ns/only", SchemaInfo(type=SchemaType.STRING, schema=""))
    at = make_app(db).run()
    at.text_input(key="conn_target").input(str(other))
    at.button(key="conn_apply").click().run()
    assert errors(at) == []
    assert table_topics(at) == ["persistent://solo/ns/only"]


def test_the_run_that_switches_registry_hides_the_previous_page(make_app: MakeApp, db: Path, tmp_path: Path) -> None:
    """Streamlit keeps the previous run's elements on screen (faded) until they are replaced: the run that
    switches registry hides them, so the previous registry's data is never shown beside "Connecting…"."""
    other = tmp_path / "other.db"
    Registry.open(other, create=True).close()
    at = make_app(db).run()
    assert not [h for h in at.get("html") if "data-stale" in h.proto.body]
    at.text_input(key="conn_target").input(str(other))
    at.button(key="conn_apply").click().run()
    assert [h for h in at.get("html") if 'data-stale="true"' in h.proto.body and "display: none" in h.proto.body]
    at.run()  # the next run draws over the new registry's own page: nothing to hide
    assert not [h for h in at.get("html") if "data-stale" in h.proto.body]


def test_a_failed_open_is_not_waited_for_again_until_connect_is_clicked(make_app: MakeApp, db: Path) -> None:
    """A hanging endpoint takes 30 s to give up: the sidebar and the page must not each wait that long, and a
    rerun soon after says the same at once; Connect tries again."""
    at = make_app("http://127.0.0.1:9").run()
    failed = at.session_state[connection.OPEN_FAILED]
    assert failed[0][0] == "http://127.0.0.1:9" and isinstance(failed[2], RegistryError)
    at.run()
    assert at.session_state[connection.OPEN_FAILED][1] == failed[1]  # answered from the last failure, not asked again
    assert any("Connection" in m for m in errors(at))
    at.radio(key="conn_kind").set_value("Embedded file")
    at.text_input(key="conn_target").input(str(db))
    at.button(key="conn_apply").click().run()
    assert errors(at) == [] and connection.OPEN_FAILED not in at.session_state


def test_warm_up_opens_the_shared_handle_and_never_raises(make_app: MakeApp, db: Path) -> None:
    gc.unfreeze()  # what the run froze (tests/conftest.py), so that the count below is warm_up's own
    try:
        launch.warm_up(connection.Connection(target="/proc/no/such/dir/registry.db"))  # the first visit will say why
        launch.warm_up(connection.Connection(target=str(db)))
        assert gc.get_freeze_count() > 0
        at = make_app(db).run()  # the session gets the handle the warm-up opened
        assert errors(at) == [] and counts(at).startswith("**47** topics match")
    finally:
        gc.freeze()  # frozen again, as the rest of the run expects
