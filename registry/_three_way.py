"""Three-way merges: the change from a base to "ours" replayed on "theirs" (a proposal's rebase replays the change
from its base version to its candidate on the latest version, so what others stored meanwhile stays).

The rules, per value: a side that kept the base's value takes the other side's; equal changes on both sides are
one change; different changes on both sides are a conflict, named by where it is (`Merger.conflicts`), and the
caller refuses the whole merge. Values are plain JSON-like data (dicts, lists, strings, numbers), compared by
equality; `MISSING` stands for a value a side does not have (a field removed or not yet added).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

K = TypeVar("K")


class _Missing:
    """The value a side does not have."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()


@dataclass
class Merger:
    """One merge's conflicts, collected as it goes so that every conflict is named at once, not the first."""

    conflicts: list[str] = field(default_factory=list)

    def value(self, where: str, base: Any, ours: Any, theirs: Any) -> Any:
        """The merged value of one thing, taken as a whole; a conflict (theirs kept) when both changed it
        differently."""
        if _same(ours, theirs) or _same(ours, base):
            return theirs
        if _same(theirs, base):
            return ours
        self.conflicts.append(where)
        return theirs

    def keyed(
        self,
        where: Callable[[K], str],
        base: Mapping[K, Any],
        ours: Mapping[K, Any],
        theirs: Mapping[K, Any],
        item: Callable[[str, Any, Any, Any], Any],
    ) -> dict[K, Any]:
        """Items by key (fields by name, messages by name, union branches by type): an item all three have is
        merged by `item`; one added or removed on a side is taken as a whole (removed on one side and changed on
        the other is a conflict). The order is `merged_order`'s."""
        merged: dict[K, Any] = {}
        for key in merged_order(list(base), list(ours), list(theirs)):
            b, o, t = base.get(key, MISSING), ours.get(key, MISSING), theirs.get(key, MISSING)
            if any(v is MISSING for v in (b, o, t)):
                value = self.value(where(key), b, o, t)
            else:
                value = item(where(key), b, o, t)
            if value is not MISSING:
                merged[key] = value
        return merged

    def members(self, base: Sequence[K], ours: Sequence[K], theirs: Sequence[K]) -> list[K]:
        """A set kept in order (enum symbols, reserved names): what either side added, without what either
        side removed. Never a conflict."""
        b, o, t = set(base), set(ours), set(theirs)
        return [
            k for k in merged_order(base, ours, theirs) if (k in o and k in t) or (k not in b and (k in o or k in t))
        ]


def merged_order(base: Sequence[K], ours: Sequence[K], theirs: Sequence[K]) -> list[K]:
    """Every key of ours and theirs once, in the order of the side that reordered what all three share (theirs
    when neither or both did), each key only the other side has placed after its nearest predecessor there."""
    shared = set(base) & set(ours) & set(theirs)
    base_order = [k for k in base if k in shared]
    ours_reordered = [k for k in ours if k in shared] != base_order
    theirs_reordered = [k for k in theirs if k in shared] != base_order
    primary, secondary = (ours, theirs) if ours_reordered and not theirs_reordered else (theirs, ours)
    result = list(primary)
    placed = set(result)
    for i, key in enumerate(secondary):
        if key in placed:
            continue
        at = next((result.index(prev) + 1 for prev in reversed(secondary[:i]) if prev in placed), 0)
        result.insert(at, key)
        placed.add(key)
    return result


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: True and 1 are different values here, as are 1 and 1.0."""
    if a is MISSING or b is MISSING:
        return a is b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
