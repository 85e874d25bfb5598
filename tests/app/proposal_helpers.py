"""Helpers for the proposal pages' AppTests: people (signed in through `st.user`, as Streamlit authentication
names them), a roles file, proposals made through the core on the test's registry file, and the proposal page
opened from its link."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from review_helpers import ROOT, TIMEOUT
from streamlit.testing.v1 import AppTest

from app.roles import ROLES_ENV
from registry import Actor, Registry, Role, SchemaInfo, SchemaType

NS = "acme/orders"
TOPIC = "persistent://acme/orders/order-created"
ALICE, BOB, CAROL, VICTOR, OPS = "alice@acme.io", "bob@acme.io", "carol@acme.io", "victor@acme.io", "ops@acme.io"
ROLES = {ALICE: "producer", BOB: "producer", CAROL: "producer", VICTOR: "viewer", OPS: "admin"}


def actor(name: str) -> Actor:
    return Actor(name, Role(ROLES[name]))


def use_roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The test's roles file (ROLES), in force for every AppTest of the test."""
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(ROLES), encoding="utf-8")
    monkeypatch.setenv(ROLES_ENV, str(path))
    return path


def with_field(db: Path, name: str, *, required: bool = False, topic: str = TOPIC) -> SchemaInfo:
    """The topic's latest schema with one more field: optional (compatible), or required (refused)."""
    with Registry.open(db) as reg:
        doc = json.loads(reg.get(topic).schema)
    doc["fields"].append(
        {"name": name, "type": "string"} if required else {"name": name, "type": ["null", "string"], "default": None}
    )
    return SchemaInfo(type=SchemaType.AVRO, schema=json.dumps(doc, indent=2))


def propose(db: Path, *, title: str = "Add a gift note", description: str = "", field: str = "giftNote") -> int:
    with Registry.open(db) as reg:
        made = reg.proposals.propose_schema(
            TOPIC, with_field(db, field), title=title, description=description, actor=actor(ALICE)
        )
    return made.id


def as_person(at: AppTest, name: str | None) -> AppTest:
    """The AppTest as `name`, signed in (None: nobody signed in, the local OS user)."""
    at.user = {"is_logged_in": True, "email": name} if name else {}
    return at


def app_page(page: str, db: Path, who: str | None, *, read_only: bool = False, **params: str) -> AppTest:
    """The whole app (its navigation: pages link to each other) on `db`, on app_pages/<page>.py, as `who`,
    opened from a link with `params`. Not yet run."""
    from app.connection import CONNECTION, Connection

    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=TIMEOUT)
    at.session_state[CONNECTION] = Connection(target=str(db), read_only=read_only)
    at.switch_page(f"app_pages/{page}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return as_person(at, who)


def proposal_page(db: Path, proposal_id: int | str | None, who: str | None, *, read_only: bool = False) -> AppTest:
    """The proposal page opened from `/proposal?id=...` as `who`, run once."""
    params = {} if proposal_id is None else {"id": str(proposal_id)}
    return app_page("proposal", db, who, read_only=read_only, **params).run()


def button_labels(at: AppTest) -> list[str]:
    return [b.label for b in at.main.button]


def said(at: AppTest) -> str:
    """Every message, markdown, caption, badge and title of the last run as a person reads it: markdown escapes
    removed, and e-mail addresses without the code spans that keep them from being mailto links."""
    from review_helpers import texts

    return re.sub(r"`([^`\s]+@[^`\s]+)`", r"\1", texts(at).replace("\\", ""))
