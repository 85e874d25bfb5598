"""The line diff of two schema texts, shared by every text diff we show (the app, notebooks, the CLI).

difflib.SequenceMatcher (autojunk off) is roughly cubic on what schema texts are made of, many similar JSON
lines: 11 s for two 23 KiB schemas, 82 s for 46 KiB. This uses Google's diff-match-patch, in its C++ build
(the `fast-diff-match-patch` package: the pure-Python port took 0.5 s where many lines change), in line mode:
each distinct line becomes one character, and Myers' O(ND) diff runs on those strings, so the cost follows
the size times the number of changed lines, not the cube of the size.
Its time limit caps the work: past it, the part still undecided is given as removed and added whole
(a correct but coarse diff) and `LineDiff.coarse` says so, for the caller to tell the reader.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import fast_diff_match_patch  # type: ignore[import-not-found]

Tag = Literal["equal", "replace", "delete", "insert"]
Opcode = tuple[Tag, int, int, int, int]

TIME_CAP_S = 0.5  # diff-match-patch's time limit: the 1 s budget of a shown diff leaves half for rendering
# Each distinct line maps to one character (code points 1 and up), so at most this many distinct lines; past
# it (far beyond a schema within the size limit) only the common first and last lines are matched.
_MAX_DISTINCT_LINES = 0x10FFFF


@dataclass(frozen=True, slots=True)
class LineDiff:
    """`opcodes` turn `old` into `new` (difflib's (tag, i1, i2, j1, j2) form, covering both texts wholly)."""

    old: tuple[str, ...]
    new: tuple[str, ...]
    opcodes: tuple[Opcode, ...]
    coarse: bool  # the time cap was hit: some changed region may be shown as replaced whole

    @property
    def changed(self) -> bool:
        return any(tag != "equal" for tag, *_ in self.opcodes)

    def grouped(self, context: int = 3) -> list[list[Opcode]]:
        """The changes with up to `context` equal lines around each: difflib's get_grouped_opcodes, on these
        opcodes (same algorithm, so the same hunks as difflib.unified_diff would cut)."""
        if not self.changed:
            return []
        codes = list(self.opcodes)
        if codes[0][0] == "equal":
            tag, i1, i2, j1, j2 = codes[0]
            codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
        if codes[-1][0] == "equal":
            tag, i1, i2, j1, j2 = codes[-1]
            codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
        groups: list[list[Opcode]] = []
        group: list[Opcode] = []
        for tag, i1, i2, j1, j2 in codes:
            if tag == "equal" and i2 - i1 > 2 * context:
                group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
                groups.append(group)
                group = []
                i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
            group.append((tag, i1, i2, j1, j2))
        if group and not (len(group) == 1 and group[0][0] == "equal"):
            groups.append(group)
        return groups

    def unified(self, old_label: str, new_label: str, context: int = 3) -> Iterator[str]:
        """difflib.unified_diff's lines (lineterm=""), plus a note when the time cap made the diff coarse."""
        groups = self.grouped(context)
        if not groups:
            return
        yield f"--- {old_label}"
        yield f"+++ {new_label}"
        for group in groups:
            first, last = group[0], group[-1]
            yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    yield from (" " + line for line in self.old[i1:i2])
                    continue
                yield from ("-" + line for line in self.old[i1:i2])
                yield from ("+" + line for line in self.new[j1:j2])
        if self.coarse:
            yield "# " + COARSE_NOTE


COARSE_NOTE = (
    f"the diff was cut short (over {TIME_CAP_S} s of work, or too many distinct lines): some changed blocks are "
    "shown as removed and added whole, though parts of them may be equal"
)


def _range(start: int, stop: int) -> str:
    """A unified diff's range: 1-based start, then the length unless it is 1 (difflib's format)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    if not length:
        start -= 1  # an empty range names the line before it
    return f"{start + 1},{length}"


def line_diff(old: str, new: str, *, time_cap_s: float = TIME_CAP_S) -> LineDiff:
    """The line diff of `old` and `new` (split with str.splitlines), within `time_cap_s` of diff work."""
    a, b = tuple(old.splitlines()), tuple(new.splitlines())
    codes: dict[str, str] = {}
    try:
        chars_a, chars_b = _encode(a, codes), _encode(b, codes)
    except OverflowError:
        return _ends_only(a, b)
    start = time.perf_counter()
    runs = fast_diff_match_patch.diff(chars_a, chars_b, timelimit=time_cap_s, checklines=False, cleanup="No")
    coarse = time.perf_counter() - start >= time_cap_s  # it does not say whether it stopped early: assume so
    return LineDiff(a, b, tuple(_opcodes(runs)), coarse)


def _encode(lines: Sequence[str], codes: dict[str, str]) -> str:
    out = []
    for line in lines:
        code = codes.get(line)
        if code is None:
            if len(codes) >= _MAX_DISTINCT_LINES:
                raise OverflowError("more distinct lines than characters")
            code = codes[line] = chr(len(codes) + 1)
        out.append(code)
    return "".join(out)


def _ends_only(a: tuple[str, ...], b: tuple[str, ...]) -> LineDiff:
    """The common first and last lines equal, everything between replaced whole (marked coarse)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    runs = [("=", head), ("-", len(a) - head - tail), ("+", len(b) - head - tail), ("=", tail)]
    return LineDiff(a, b, tuple(_opcodes([run for run in runs if run[1]])), True)


def _opcodes(runs: Sequence[tuple[str, int]]) -> Iterator[Opcode]:
    """diff-match-patch's runs ("=" equal, "-" removed, "+" added; lengths in lines) as difflib opcodes."""
    i = j = 0
    removed = added = 0
    for op, length in runs:
        if op == "=":
            yield from _change(i, removed, j, added)
            i, j = i + removed, j + added
            removed = added = 0
            yield ("equal", i, i + length, j, j + length)
            i, j = i + length, j + length
        elif op == "-":
            removed += length
        else:
            added += length
    yield from _change(i, removed, j, added)


def _change(i: int, removed: int, j: int, added: int) -> Iterator[Opcode]:
    if removed and added:
        yield ("replace", i, i + removed, j, j + added)
    elif removed:
        yield ("delete", i, i + removed, j, j)
    elif added:
        yield ("insert", i, i, j, j + added)
