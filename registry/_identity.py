"""Who a name is: two spellings that a reader cannot tell apart are one person.

Names come from a tokens file (`serve --tokens`), a roles file and an identity proxy's header (`ui --roles`,
`--user-header`), and a proposal compares them: its author never approves it, an approval counts once per
person, reviewers are named. Compared as strings, `alice`, `Alice`, `аlice` (Cyrillic а) and `alicé` written
decomposed (NFD) were four people, and each of them approved alice's proposal. So names are compared by
`person_key`: NFKC (compatibility forms: fullwidth, ligatures, decomposed accents), case-folded, then the
look-alike skeleton of Unicode's UTS #39 (registry/_confusables.py: Cyrillic а → a, 0 → O, m → rn; invisible
characters dropped), folded and reduced once more (a prototype may be a capital). Case is folded first, so
`ALICE` is alice; the price is that a capital I, folded to i, no longer meets an l (`AIice` is not alice).
Names are kept and shown as written; only comparisons use the key.

`anonymous` is reserved: it is what a server without tokens calls everyone (server/_proposals.py), so no
token or roles file may name a person so (in any spelling of it).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable

from ._confusables import ENTRIES
from ._text import blank, ignorable

RESERVED = "anonymous"


@functools.cache
def _prototypes() -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in ENTRIES.split():
        source, target = entry.split("=")
        table[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split("."))
    return table


def skeleton(text: str) -> str:
    """UTS #39's skeleton: NFD, default-ignorable characters removed, each character replaced by its prototype,
    NFD again. Two strings with the same skeleton look alike."""
    table = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    mapped = "".join(table.get(char, char) for char in decomposed if not ignorable(char))
    return unicodedata.normalize("NFD", mapped)


@functools.lru_cache(maxsize=4096)
def person_key(name: str) -> str:
    """The key two names of one person share (see the module docstring); only for comparing, never shown."""
    once = skeleton(unicodedata.normalize("NFKC", name).casefold())
    return skeleton(once.casefold())


def same_person(first: str, second: str) -> bool:
    """Whether two names are one person: equal once NFKC-folded, case-folded and reduced to their skeletons."""
    return first == second or person_key(first) == person_key(second)


def among(name: str, names: Iterable[str]) -> bool:
    """Whether `name` is one of `names` as a person (a reviewer named `Alice` is alice)."""
    return any(same_person(name, other) for other in names)


def name_clash(names: Iterable[str]) -> str | None:
    """Why a list of people's names (a tokens or roles file) cannot be used, or None: a name that shows
    nothing (U+3164 alone is printable, and looks like no name at all), the reserved `anonymous`, or two names
    that are one person."""
    seen: dict[str, str] = {}
    for name in names:
        if blank(name):
            return f"the name {name!r} shows nothing: it holds only spaces, invisible or format characters"
        key = person_key(name)
        if key == person_key(RESERVED):
            return f"the name {name!r} is reserved ({RESERVED!r} is whoever a server without tokens serves)"
        if key in seen:
            return (
                f"the names {seen[key]!r} and {name!r} are one person once compared (Unicode NFKC, case and "
                "look-alike letters folded): give each person one name"
            )
        seen[key] = name
    return None
