"""Who is who in the app (app/roles.py, app/session.py's `actor()`): the roles file in JSON or TOML, the defaults
without one, and a bad file stopping `schema-explorer ui` with one line naming the entry, before anything starts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.roles import ROLES_ENV, RolesFileError, default_role, load_roles
from app.session import os_user
from cli.main import main as cli_main
from registry import Role


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_json_roles_file_gives_each_named_person_their_role_and_anyone_else_viewer(tmp_path: Path) -> None:
    path = write(tmp_path, "roles.json", json.dumps({"alice@x.io": "admin", "bob@x.io": "Producer", "carol": "viewer"}))
    roles = load_roles(path)
    assert roles.role_of("alice@x.io") is Role.ADMIN
    assert roles.role_of("bob@x.io") is Role.PRODUCER  # a role's case does not matter
    assert roles.role_of("carol") is Role.VIEWER
    assert roles.role_of("mallory") is Role.VIEWER  # not named: a viewer (fail closed)
    # Names match as the core compares people (registry/_identity.py): case, NFKC and look-alikes folded.
    assert roles.role_of("ALICE@x.io") is roles.role_of("\u0430lice@x.io") is Role.ADMIN
    assert roles.role_of("alice@x.io.") is Role.VIEWER


def test_a_toml_roles_file_reads_the_same(tmp_path: Path) -> None:
    path = write(tmp_path, "roles.toml", '"alice@x.io" = "admin"\nbob = "producer"\n')
    roles = load_roles(path)
    assert dict(roles.entries) == {"alice@x.io": Role.ADMIN, "bob": Role.PRODUCER}


def test_without_a_roles_file_the_local_os_user_is_admin_and_everyone_else_a_producer() -> None:
    assert default_role(os_user=True) is Role.ADMIN
    assert default_role(os_user=False) is Role.PRODUCER


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("r.json", '{"bob": "superuser"}', 'entry "bob": "superuser" is not a role; use viewer, producer, admin'),
        ("r.json", '{"bob": "producer", "bob": "admin"}', 'entry "bob" is given twice'),
        ("r.json", '{"": "admin"}', 'entry "": a name must not be empty'),
        ("r.json", '{" bob": "admin"}', 'entry " bob": a name has no spaces around it'),
        ("r.json", '{"bob": 3}', 'entry "bob": the role must be one of viewer, producer, admin, as text, not a number'),
        ("r.json", '["bob"]', "expected an object of name to role"),
        ("r.json", '{"bob": "admin",}', "not valid JSON at line 1"),
        ("r.toml", "[bob]\nrole = 'admin'\n", 'entry "bob": the role must be one of viewer, producer, admin, as text'),
        ("r.toml", "bob = \n", "not valid TOML"),
        ("r.json", '{"alice": "viewer", "Alice": "admin"}', "the names 'alice' and 'Alice' are one person"),
        ("r.toml", '"alic\\u00e9" = "viewer"\n"alice\\u0301" = "admin"\n', "'alic\u00e9' and 'alice\u0301' are one"),
        ("r.json", '{"anonymous": "admin"}', "the name 'anonymous' is reserved"),
    ],
)
def test_a_bad_roles_file_is_refused_naming_the_entry(tmp_path: Path, name: str, text: str, says: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(RolesFileError) as caught:
        load_roles(path)
    assert says in str(caught.value) and str(path) in str(caught.value)


def test_a_missing_roles_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RolesFileError, match="cannot read it"):
        load_roles(tmp_path / "nowhere.json")


def test_ui_with_a_bad_roles_file_stops_with_one_line_naming_the_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "roles.json", '{"alice": "admin", "bob": "root"}')
    db = tmp_path / "never-created.db"
    assert cli_main(["ui", "--roles", str(path), "--db", str(db), "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'entry "bob": "root" is not a role' in err
    assert not db.exists()  # stopped before the registry was opened or seeded


def test_ui_with_two_names_of_one_person_stops_with_one_line_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "roles.json", '{"alice@x.io": "viewer", "\\u0430lice@x.io": "admin"}')
    assert cli_main(["ui", "--roles", str(path), "--db", str(tmp_path / "r.db"), "--port", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'alice@x.io' and '\u0430lice@x.io' are one person" in err


def test_ui_reads_the_roles_file_from_the_environment_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ROLES_ENV, str(write(tmp_path, "roles.toml", "bob = 'boss'\n")))
    assert cli_main(["ui", "--db", str(tmp_path / "r.db"), "--port", "1"]) == 2
    assert 'entry "bob": "boss" is not a role' in capsys.readouterr().err


SIDEBAR_APP = """
import streamlit as st
from app.session import actor
who = actor()
st.write("nobody" if who is None else f"{who.name}|{who.role}")
"""


def whoami(monkeypatch: pytest.MonkeyPatch, user: dict[str, object], roles: Path | None) -> str:
    if roles is None:
        monkeypatch.delenv(ROLES_ENV, raising=False)
    else:
        monkeypatch.setenv(ROLES_ENV, str(roles))
    monkeypatch.delenv("SCHEMA_EXPLORER_USER_HEADER", raising=False)
    at = AppTest.from_string(SIDEBAR_APP, default_timeout=30)
    at.user = user
    at.run()
    assert not at.exception
    return str(at.markdown[0].value)


def test_a_sessions_actor_is_its_user_with_the_role_the_file_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = write(tmp_path, "roles.json", json.dumps({"alice@x.io": "admin", f"{os_user()} (os user)": "producer"}))
    signed_in = {"is_logged_in": True, "email": "alice@x.io"}
    assert whoami(monkeypatch, signed_in, roles) == "alice@x.io|admin"
    assert whoami(monkeypatch, {"is_logged_in": True, "email": "eve@x.io"}, roles) == "eve@x.io|viewer"
    shouted = {"is_logged_in": True, "email": "ALICE@X.IO"}  # one person: kept as given, with alice's role
    assert whoami(monkeypatch, shouted, roles) == "ALICE@X.IO|admin"
    assert whoami(monkeypatch, {}, roles) == f"{os_user()} (os user)|producer"
    # Without a roles file: the local OS user is the admin, a signed-in person a producer.
    assert whoami(monkeypatch, {}, None) == f"{os_user()} (os user)|admin"
    assert whoami(monkeypatch, signed_in, None) == "alice@x.io|producer"


def test_a_roles_file_broken_while_the_app_runs_makes_everyone_a_viewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = write(tmp_path, "roles.json", json.dumps({"alice@x.io": "admin"}))
    signed_in = {"is_logged_in": True, "email": "alice@x.io"}
    assert whoami(monkeypatch, signed_in, roles) == "alice@x.io|admin"
    roles.write_text('{"alice@x.io": "admin", "bob": "owner"}', encoding="utf-8")  # edited: now bad
    assert whoami(monkeypatch, signed_in, roles) == "alice@x.io|viewer"
