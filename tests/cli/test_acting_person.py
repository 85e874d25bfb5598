"""`--as NAME` on every command that writes, with the rules `proposals` has: on a registry file the OS user
acts (`USER (os user)`, as the app names them) unless `--as` names someone else; the audit trail and the
stored version name that person; an empty name, or `--as` with `--url` (where the token names you), is a usage
error and nothing is written."""

from __future__ import annotations

import getpass

import pytest

from cli.main import build_parser
from registry import Registry

ORDERS = "persistent://acme/orders/order-created"
NOTES = "persistent://acme/orders/notes"
ME = f"{getpass.getuser()} (os user)"

# Every command that writes to the registry for a person (seed and import load a whole registry instead).
WRITES = [
    ("upload",),
    ("delete",),
    ("policy", "set"),
    ("propose",),
    *(("proposals", verb) for verb in ("comment", "approve", "reject", "withdraw", "revise", "rebase", "apply")),
    ("proposals", "rules"),
]


def newest(db: str, target: str) -> tuple[str, str]:
    with Registry.open(db) as reg:
        entry = reg.audit_trail(target, limit=1)[0]
    return str(entry.action), entry.user


@pytest.mark.parametrize("command", WRITES, ids=" ".join)
def test_every_command_that_writes_takes_as(command):
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command[0]]  # type: ignore[union-attr]
    if len(command) > 1:
        sub = sub._subparsers._group_actions[0].choices[command[1]]  # type: ignore[union-attr]
    assert "--as" in sub.format_help()


@pytest.mark.parametrize("who", [None, "bob"], ids=["os user", "as bob"])
def test_direct_writes_name_the_person_in_the_audit_trail(cli, db, who):
    name = ME if who is None else who
    as_ = [] if who is None else ["--as", f" {who} "]
    code, out, err = cli("upload", "--db", db, "-t", NOTES, "--type", "STRING", *as_)
    assert (code, err) == (0, "") and "registered as version 0" in out
    assert newest(db, NOTES)[1] == name
    with Registry.open(db) as reg:
        assert reg.get(NOTES).user == name

    code, _, err = cli("policy", "set", "--db", db, "-n", "acme/orders", "--compatibility", "FULL", *as_)
    assert (code, err) == (0, "")
    assert newest(db, "acme/orders")[1] == name

    code, _, err = cli("policy", "set", "--db", db, "-t", ORDERS, "--compatibility", "FORWARD", *as_)
    assert (code, err) == (0, "")
    assert newest(db, ORDERS)[1] == name

    code, _, err = cli("delete", "--db", db, "-t", NOTES, *as_)
    assert (code, err) == (0, "")
    assert newest(db, NOTES) == ("delete", name)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["upload", "-t", NOTES, "--type", "STRING", "--as", " "], "--as must name someone"),
        (["delete", "-t", ORDERS, "--as", ""], "--as must name someone"),
        (["policy", "set", "-n", "acme/orders", "--compatibility", "FULL", "--as", ""], "--as must name someone"),
    ],
    ids=["upload empty", "delete empty", "policy empty"],
)
def test_a_bad_as_is_a_usage_error_and_writes_nothing(cli, db, args, message):
    with Registry.open(db) as reg:
        before = reg.audit_trail(limit=1)
    argv = [*args, *([] if "--url" in args else ["--db", db])]
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    assert err.startswith("schema-explorer: error: ") and message in err
    with Registry.open(db) as reg:
        assert reg.audit_trail(limit=1) == before
