"""Jupyter's rich display of core values: every text from a schema, a property or a client is escaped, the
HTML carries no script or style block, and plain reprs stay short."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from registry import (
    CompatibilityStrategy,
    Registry,
    SchemaInfo,
    SchemaType,
)
from registry.views.html import history_html, to_html

TOPIC = "persistent://acme/shop/orders"
MARKUP = "<script>alert('doc')</script>"
ESCAPED = "&lt;script&gt;alert(&#x27;doc&#x27;)&lt;/script&gt;"
IMG = '<img src=x onerror="alert(1)">'


def avro(*fields: dict[str, Any], doc: str = "") -> SchemaInfo:
    record: dict[str, Any] = {"type": "record", "name": "Order", "namespace": "acme", "fields": list(fields)}
    if doc:
        record["doc"] = doc
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(record), properties={"owner": IMG})


ID = {"name": "id", "type": "string"}
NOTE = {"name": "note", "type": "string", "default": "<b>none</b>", "doc": MARKUP}


@pytest.fixture(scope="module")
def reg() -> Registry:
    reg = Registry.in_memory()
    reg.set_namespace_policy("acme/shop", compatibility=CompatibilityStrategy.BACKWARD)
    reg.register(TOPIC, avro(ID, doc=MARKUP))
    reg.register(TOPIC, avro(ID, NOTE, doc=MARKUP))
    reg.connect_producer(TOPIC, avro(ID, doc=MARKUP), name="<b>producer</b>")
    reg.connect_consumer(TOPIC, avro(ID, doc=MARKUP), subscription="<i>subscription</i>", name="<i>consumer</i>")
    return reg


def candidate() -> SchemaInfo:
    changed = dict(NOTE, default="<script>evil()</script>")
    return avro(ID, changed, {"name": "qty", "type": "int", "doc": MARKUP}, doc=MARKUP)


VALUES: dict[str, Callable[[Registry], Any]] = {
    "schema version": lambda reg: reg.get(TOPIC),
    "history": lambda reg: reg.history(TOPIC),
    "compatibility result": lambda reg: reg.check(TOPIC, candidate()),
    "problem": lambda reg: reg.check(TOPIC, candidate()).problems[0],
    "effective policy": lambda reg: reg.effective_policy(TOPIC),
    "diff": lambda reg: reg.diff(TOPIC, 1, candidate()),
    "what-if": lambda reg: reg.what_if(TOPIC, candidate()),
    "upgrade plan": lambda reg: reg.upgrade_plan(TOPIC),
    "policy impact": lambda reg: reg.policy_impact("acme/shop", CompatibilityStrategy.FULL_TRANSITIVE),
}


def view(value: Any) -> str:
    """What Jupyter shows: a history is a list of versions (notebook.History wraps it), the rest the core's
    values, each through the HTML view registry.views registers with IPython."""
    return history_html(value) if isinstance(value, list) else to_html(value)


@pytest.mark.parametrize("make", VALUES.values(), ids=list(VALUES))
def test_the_html_has_no_markup_from_data_and_no_script_or_style(reg: Registry, make: Callable[..., Any]) -> None:
    page = view(make(reg))
    assert page.startswith("<div") and page.endswith("</div>")
    for raw in (MARKUP, IMG, "<b>none</b>", "<b>producer</b>", "<i>consumer</i>", "<script>evil()"):
        assert raw not in page
    assert not re.search(r"<(script|style|img|iframe)\b", page, re.IGNORECASE)
    for tag in re.findall(r"<[^>]*>", page):
        assert not re.search(r"\son\w+\s*=", tag), f"event-handler attribute in {tag}"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("schema version", [ESCAPED, "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;", "&lt;b&gt;none&lt;/b&gt;"]),
        ("diff", ["&lt;script&gt;evil()&lt;/script&gt;", "DEFAULT_CHANGED"]),
        ("what-if", [ESCAPED, "READER_FIELD_WITHOUT_DEFAULT", "ALWAYS_INCOMPATIBLE"]),
        ("upgrade plan", ["&lt;i&gt;consumer&lt;/i&gt;"]),
        ("history", ["version", ESCAPED]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_schema_text_shows_as_escaped_text(reg: Registry, name: str, expected: list[str]) -> None:
    page = view(VALUES[name](reg))
    for text in expected:
        assert text in page


def test_a_verdict_shows_rule_direction_version_and_fix(reg: Registry) -> None:
    page = view(reg.check(TOPIC, candidate()))
    assert "✗ incompatible" in page and "BACKWARD" in page
    assert "READER_FIELD_WITHOUT_DEFAULT" in page
    assert "cannot read data written with version 1" in page
    assert "/fields/2" in page and "fix:" in page


def test_a_compatible_verdict_says_so(reg: Registry) -> None:
    page = view(reg.check(TOPIC, avro(ID, NOTE, doc=MARKUP)))
    assert "✓ compatible" in page and "Problems" not in page


def test_a_tombstone_is_marked(reg: Registry) -> None:
    other = "persistent://acme/shop/gone"
    reg.register(other, avro(ID))
    reg.delete(other)
    history = reg.history(other, include_deleted=True)
    assert "tombstone" in view(history[-1])
    assert "1 live version, 1 tombstone" in history_html(history)


@pytest.mark.parametrize("make", VALUES.values(), ids=list(VALUES))
def test_plain_repr_is_one_short_line(reg: Registry, make: Callable[..., Any]) -> None:
    made = make(reg)
    for value in made if isinstance(made, list) else [made]:
        text = repr(value)
        assert "\n" not in text and len(text) <= 200, text
        assert text.startswith(type(value).__name__ + "(")
        assert "b'" not in text, "no raw schema bytes"


def test_reprs_name_what_matters(reg: Registry) -> None:
    assert (
        repr(reg.get(TOPIC)) == f"SchemaVersion('acme/shop/orders', version=1, AVRO, {len(reg.get(TOPIC).data)} bytes)"
    )
    assert repr(reg.check(TOPIC, candidate())) == (
        "CompatibilityResult(compatible=False, strategy=BACKWARD, problems=1 [READER_FIELD_WITHOUT_DEFAULT])"
    )
    assert "would_register=False" in repr(reg.what_if(TOPIC, candidate()))
    assert "compatibility=BACKWARD (namespace)" in repr(reg.effective_policy(TOPIC))


def test_inside_ipython_the_core_values_display_as_their_html_view(reg: Registry) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from registry.views import register_html_views

    shell = InteractiveShell.instance()
    try:
        assert register_html_views(shell)
        for name in ("compatibility result", "what-if", "diff", "schema version"):
            value = VALUES[name](reg)
            data, _ = shell.display_formatter.format(value)
            assert data["text/html"] == to_html(value), name
    finally:
        InteractiveShell.clear_instance()


def test_a_value_without_a_view_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="no HTML view for Registry"):
        to_html(Registry.in_memory())
