"""The shared line diff (registry/explain/text_diff.py): exact on small cases, complete on large similar schemas.

difflib.SequenceMatcher was roughly cubic on similar JSON lines (82 s for two 46 KiB schemas); the pair of
100 KiB schemas below would not finish within the test timeout with it. No assertion on time: the timeout
of the test is the guard, bench/bench_diff.py has the figures.
"""

from __future__ import annotations

import difflib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from registry.explain.text_diff import COARSE_NOTE, LineDiff, line_diff


def rebuilt(diff: LineDiff) -> tuple[list[str], list[str]]:
    """Both texts' lines, put back together from the opcodes alone (checking they tile both sides)."""
    old: list[str] = []
    new: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in diff.opcodes:
        assert (i1, j1) == (i, j), "opcodes must follow each other without gap or overlap"
        if tag == "equal":
            assert diff.old[i1:i2] == diff.new[j1:j2]
        old += diff.old[i1:i2]
        new += diff.new[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(diff.old), len(diff.new))
    return old, new


def changed_lines(diff: LineDiff) -> tuple[set[str], set[str]]:
    removed = {line for tag, i1, i2, *_ in diff.opcodes if tag != "equal" for line in diff.old[i1:i2]}
    added = {line for tag, _, _, j1, j2 in diff.opcodes if tag != "equal" for line in diff.new[j1:j2]}
    return removed, added


def test_identical_texts_have_no_change_and_no_hunk() -> None:
    diff = line_diff("a\nb\nc", "a\nb\nc")
    assert not diff.changed and diff.opcodes == (("equal", 0, 3, 0, 3),)
    assert list(diff.unified("old", "new")) == [] and diff.grouped() == []


def test_empty_texts() -> None:
    assert line_diff("", "").opcodes == ()
    assert line_diff("", "a\nb").opcodes == (("insert", 0, 0, 0, 2),)
    assert line_diff("a", "").opcodes == (("delete", 0, 1, 0, 0),)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\nd", "a\nx\nc\nd"),  # one line changed
        ("a\nb\nc", "a\nc"),  # one removed
        ("a\nc", "a\nb\nc"),  # one added
        ("\n".join(f"l{i}" for i in range(40)), "\n".join(f"l{i}" for i in range(40) if i not in (3, 30))),
        ("\n".join(f"l{i}" for i in range(40)), "\n".join("X" if i in (10, 11) else f"l{i}" for i in range(40))),
    ],
)
def test_unified_output_is_difflibs_where_the_diff_is_unique(old: str, new: str) -> None:
    expected = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "old", "new", lineterm=""))
    assert list(line_diff(old, new).unified("old", "new")) == expected


def test_changed_lines_are_marked_and_the_rest_is_equal() -> None:
    old = json.dumps({"fields": [{"name": f"f{i}", "type": "string"} for i in range(20)]}, indent=2)
    new = old.replace('"f7"', '"renamed"')
    diff = line_diff(old, new)
    assert changed_lines(diff) == ({'      "name": "f7",'}, {'      "name": "renamed",'})
    assert rebuilt(diff) == (old.splitlines(), new.splitlines())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["{", "}", '"a": 1,', '"b": 2', "[", "]", "x"]), max_size=40),
    st.lists(st.sampled_from(["{", "}", '"a": 1,', '"b": 2', "[", "]", "y"]), max_size=40),
)
def test_the_opcodes_reproduce_both_texts(a: list[str], b: list[str]) -> None:
    diff = line_diff("\n".join(a), "\n".join(b))
    assert rebuilt(diff) == ("\n".join(a).splitlines(), "\n".join(b).splitlines())
    # The hunks cover every change: applying them to the old text gives the new one.
    assert _apply(diff) == diff.new


def _apply(diff: LineDiff) -> tuple[str, ...]:
    out: list[str] = []
    at = 0
    for group in diff.grouped(3):
        out += diff.old[at : group[0][1]]
        for tag, i1, i2, j1, j2 in group:
            out += diff.old[i1:i2] if tag == "equal" else diff.new[j1:j2]
        at = group[-1][2]
    return tuple(out + list(diff.old[at:]))


def similar_pair(fields: int) -> tuple[str, str, set[str], set[str], int]:
    """Two pretty-printed records of `fields` near-identical fields (about 105 bytes each); the new one changes
    every 23rd field's type, drops every 31st and adds one after every 37th. Also the dropped and added names
    and how many fields changed type."""
    old_fields = [{"name": f"field_{n:05d}", "type": "string", "doc": "a field of the record"} for n in range(fields)]
    new_fields = []
    dropped, added, retyped = set(), set(), 0
    for n, field in enumerate(old_fields):
        if n % 31 == 30:
            dropped.add(field["name"])
            continue
        if n % 23 == 22:
            field = {**field, "type": "bytes"}
            retyped += 1
        new_fields.append(field)
        if n % 37 == 36:
            new_fields.append({"name": f"added_{n:05d}", "type": "long", "doc": "a field of the record"})
            added.add(f"added_{n:05d}")

    def text(fields: list[dict[str, str]]) -> str:
        return json.dumps({"type": "record", "name": "Wide", "fields": fields}, indent=2)

    return text(old_fields), text(new_fields), dropped, added, retyped


def test_two_100_kib_schemas_diff_completely_with_exactly_the_changed_lines() -> None:
    old, new, dropped, added, retyped = similar_pair(1000)
    assert len(old) > 100 * 1024
    diff = line_diff(old, new)
    assert not diff.coarse
    assert rebuilt(diff) == (old.splitlines(), new.splitlines())
    removed = [line for tag, i1, i2, *_ in diff.opcodes if tag != "equal" for line in diff.old[i1:i2]]
    inserted = [line for tag, _, _, j1, j2 in diff.opcodes if tag != "equal" for line in diff.new[j1:j2]]
    # A field is 5 lines, its name line unique: every dropped and added field is marked, each retyped field's
    # new type is, and no more lines than the edit needs (Myers' diff is minimal; where a drop and an add sit
    # side by side, rewriting a neighbour's name line in place is as short, so names alone cannot be exact).
    assert dropped <= {line.split('"')[3] for line in removed if '"name"' in line}
    assert added <= {line.split('"')[3] for line in inserted if '"name"' in line}
    assert sum('"bytes"' in line for line in inserted) == retyped
    assert len(removed) <= 5 * len(dropped) + retyped and len(inserted) <= 5 * len(added) + retyped
    hunks = list(diff.unified("old", "new"))
    assert sum(line.startswith("+") and '"bytes"' in line for line in hunks) == retyped


def test_no_more_lines_marked_than_difflib_marks() -> None:
    old, new, *_ = similar_pair(60)
    ours = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in line_diff(old, new).opcodes if tag != "equal")
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    theirs = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
    assert ours <= theirs


def test_the_time_cap_is_said_in_the_output() -> None:
    old, new, *_ = similar_pair(3000)
    diff = line_diff(old, new, time_cap_s=0.0001)
    assert diff.coarse
    assert rebuilt(diff) == (old.splitlines(), new.splitlines())  # coarse, never wrong
    assert list(diff.unified("old", "new"))[-1] == "# " + COARSE_NOTE
