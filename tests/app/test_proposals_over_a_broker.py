"""The proposal pages against a plain broker's API (`serve --admin-only` on loopback) with a workspace beside it
(registry/remote/_workspace.py): a reviewer approves and the author applies from the page, as over a file, and
the broker stores exactly the approved schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from proposal_helpers import ALICE, BOB, TOPIC, actor, as_person, button_labels, said, use_roles, with_field
from streamlit.testing.v1 import AppTest

import registry
from app.connection import CONNECTION, Connection
from serving import served

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def roles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_roles(monkeypatch, tmp_path)


@pytest.fixture
def broker(db: Path, tmp_path: Path) -> Iterator[str]:
    with served(db, log_dir=tmp_path, admin_only=True) as url:
        yield url


def page(url: str, workspace: Path, proposal_id: int, who: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=60)
    at.session_state[CONNECTION] = Connection(target=url, workspace=str(workspace))
    at.switch_page("app_pages/proposal.py")
    at.query_params["id"] = str(proposal_id)
    return as_person(at, who).run()


def test_reviewed_and_applied_from_the_page_over_a_broker(db: Path, broker: str, tmp_path: Path) -> None:
    workspace = tmp_path / "ws.db"
    info = with_field(db, "giftNote")
    with registry.open(broker, workspace=workspace) as reg:
        pid = reg.proposals.propose_schema(TOPIC, info, title="Add a gift note", actor=actor(ALICE)).id
    author = page(broker, workspace, pid, ALICE)
    assert not author.exception and "Approve" not in button_labels(author)
    reviewer = page(broker, workspace, pid, BOB)
    reviewer.button(key="prop_approve").click().run()
    assert not reviewer.exception and "You approved revision 1" in said(reviewer)
    author = page(broker, workspace, pid, ALICE)
    author.button(key="prop_apply").click().run()
    assert not author.exception and not author.error
    assert "now has version 14" in said(author)
    with registry.open(broker, workspace="memory:") as plain:
        assert plain.get(TOPIC).version == 14 and plain.get(TOPIC).data.decode() == info.schema
