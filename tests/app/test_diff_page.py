"""The Diff page: any two versions, or a version and a candidate; badges, change table, side-by-side text.

(Named test_diff_page.py: tests/unit/test_diff.py already owns the module name test_diff.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_helpers import page_test, texts

ORDER_CREATED = "persistent://acme/orders/order-created"
CATALOG = "persistent://acme/inventory/product-catalog"


def test_without_a_topic_the_page_asks_for_one(db: Path) -> None:
    at = page_test("diff", db).run()
    assert not at.exception
    assert any("Pick a topic" in i.value for i in at.info)


def test_two_versions_show_badges_changes_and_side_by_side_text(db: Path) -> None:
    at = page_test("diff", db, topic=ORDER_CREATED).run()
    assert not at.exception
    at.selectbox(key="diff_old").set_value(3)
    at.selectbox(key="diff_new").set_value(5)
    at.run()
    assert not at.exception
    assert "v3 → v5" in texts(at)
    changes = at.dataframe[0].value
    assert {"kind", "path", "backward", "forward"} <= set(changes.columns)
    assert "FIELD_ADDED" in set(changes["kind"])
    side_by_side = at.html[0].value
    assert "side-by-side-diff" in side_by_side and "couponCodes" in side_by_side


def test_a_breaking_candidate_is_marked_breaks(db: Path) -> None:
    at = page_test("diff", db, topic=ORDER_CREATED).run()
    at.selectbox(key="diff_new").set_value("candidate").run()
    assert at.radio(key="diff_cand_mode").value == "Avro / JSON text"
    candidate = json.dumps(
        {
            "type": "record",
            "name": "OrderCreated",
            "namespace": "com.acme.orders.events",
            "fields": [{"name": "x", "type": "int"}],
        }
    )
    at.text_area(key="diff_cand_text").set_value(candidate).run()
    assert not at.exception
    changes = at.dataframe[0].value
    assert "breaks" in set(changes["backward"]) | set(changes["forward"])
    assert "candidate" in texts(at)


def test_an_invalid_candidate_is_a_short_message_not_a_traceback(db: Path) -> None:
    at = page_test("diff", db, topic=ORDER_CREATED).run()
    at.selectbox(key="diff_new").set_value("candidate").run()
    at.text_area(key="diff_cand_text").set_value("{not json").run()
    assert not at.exception
    assert at.error and "Fix the schema" in at.error[0].value


def test_a_script_in_a_schema_doc_stays_escaped_text(db: Path) -> None:
    at = page_test("diff", db, topic=CATALOG).run()
    at.toggle(key="diff_whole").set_value(True).run()
    assert not at.exception
    html = at.html[0].value
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_whole_schemas_toggle_shows_every_line(db: Path) -> None:
    at = page_test("diff", db, topic=ORDER_CREATED).run()
    context_rows = at.html[0].value.count("<tr>")
    at.toggle(key="diff_whole").set_value(True).run()
    assert at.html[0].value.count("<tr>") > context_rows


def _wide(fields: list[dict[str, str]]) -> str:
    return json.dumps({"type": "record", "name": "Wide", "fields": fields}, indent=2)


@pytest.mark.timeout(20)  # a guard, not a measure: milliseconds now, 30 s and more with difflib
def test_side_by_side_of_two_100_kib_schemas_shades_the_changed_lines() -> None:
    """Every field renamed (and some retyped or dropped): difflib's matcher is cubic on that, 31 s for such a
    pair (issue 18 item 10, bench/bench_diff.py); the shared line diff takes milliseconds."""
    from app.review import side_by_side

    old_fields = [{"name": f"field_{n:05d}", "type": "string", "doc": "a field"} for n in range(1200)]
    new_fields = [
        {**f, "name": f"renamed_{n:05d}", "type": "bytes" if n % 50 == 49 else "string"}
        for n, f in enumerate(old_fields)
        if n % 77 != 76
    ]
    old, new = _wide(old_fields), _wide(new_fields)
    assert len(old) > 100 * 1024
    page = side_by_side(old, new, old_label="v1", new_label="candidate")
    added = "background:rgba(46,160,67,0.22);"
    assert page.count(f'{added}">      &quot;name&quot;: &quot;renamed_') == len(new_fields)
    assert page.count(f'{added}">      &quot;type&quot;: &quot;bytes&quot;') == sum(
        n % 50 == 49 and n % 77 != 76 for n in range(1200)
    )
    assert "more rows not shown" not in page and "cut short" not in page


def test_side_by_side_says_how_many_rows_it_left_out() -> None:
    from app.review import side_by_side

    old = "\n".join(f"line {n}" for n in range(100))
    new = "\n".join(f"line {n}" for n in range(100) if n != 50)
    page = side_by_side(old, new, old_label="a", new_label="b", whole=True, max_rows=40)
    assert "60 more rows not shown: only the first 40 rows are drawn" in page
    assert page.count("<tr>") == 1 + 40 + 1  # the header, 40 drawn rows, the note


def test_the_page_opens_from_a_link_and_keeps_its_sides_in_the_url(db: Path) -> None:
    at = page_test("diff", db)
    at.query_params.update({"topic": "acme/orders/order-created", "old_version": "3", "new_version": "5"})
    at.run()
    assert not at.exception and not at.warning
    assert (at.selectbox(key="diff_old").value, at.selectbox(key="diff_new").value) == (3, 5)
    assert "v3 → v5" in texts(at)
    at.selectbox(key="diff_new").set_value(6).run()
    assert (at.query_params["old_version"], at.query_params["new_version"]) == ("3", "6")
    assert "from" not in at.query_params and "to" not in at.query_params
    assert at.query_params["topic"] == "acme/orders/order-created"


def test_a_link_with_the_older_names_from_and_to_still_opens(db: Path) -> None:
    """Links shared before issue 34 said `from=` and `to=`; the page opens them and writes the new names."""
    at = page_test("diff", db)
    at.query_params.update({"topic": "acme/orders/order-created", "from": "3", "to": "5"})
    at.run()
    assert not at.exception and not at.warning
    assert (at.selectbox(key="diff_old").value, at.selectbox(key="diff_new").value) == (3, 5)
    assert (at.query_params["old_version"], at.query_params["new_version"]) == ("3", "5")
    at = page_test("diff", db)
    at.query_params.update({"topic": "acme/orders/order-created", "from": "3", "old_version": "4"})
    at.run()
    assert not at.exception and at.selectbox(key="diff_old").value == 4
    assert "not both" in " ".join(w.value for w in at.warning)


def test_a_link_to_versions_that_do_not_exist_says_so(db: Path) -> None:
    at = page_test("diff", db)
    at.query_params.update(
        {"topic": "persistent://acme/orders/order-created", "old_version": "99", "new_version": "two"}
    )
    at.run()
    assert not at.exception
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "`99`" in shown and "`two`" in shown
    at = page_test("diff", db)
    at.query_params["topic"] = "acme/orders/never-was"
    at.run()
    assert not at.exception and "never-was" in " ".join(w.value for w in at.warning).replace("\\", "")
