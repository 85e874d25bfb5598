"""Text the registry accepts and text it hands back: valid Unicode in, always encodable out.

A Python `str` can hold what no UTF-8 file, terminal or HTTP body can carry: a lone surrogate (U+D800-U+DFFF,
what `json.loads('"\\ud800"')` returns) and NUL, which C-string consumers cut at. Stored once, such a string
made every later read of its topic fail to encode (a traceback in `get`, a 500 over REST, an export that died
halfway). So every string that enters is checked here and refused with the field it came in, and strings read
back from files written before this check are escaped (`\\ud800` as six characters), never raised on.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime

from ._errors import RegistryError

_BAD = re.compile("[\x00\ud800-\udfff]")


def check_text(value: str, what: str, error: type[RegistryError]) -> str:
    """`value` if it is valid Unicode without NUL; else `error` naming `what`, the character and where."""
    bad = _BAD.search(value)
    if bad is None:
        return value
    char = bad.group()
    kind = "a NUL character" if char == "\x00" else f"a lone surrogate U+{ord(char):04X}"
    raise error(f"{what} contains {kind} at index {bad.start()}: only valid Unicode text is accepted")


# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt, 15.1): what renders as nothing beyond the
# format characters (Cf), e.g. the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the variation selectors
# and U+034F; with the braille blank U+2800, which renders as an empty cell.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_BLANK_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def invisible(char: str) -> bool:
    """Whether one character shows nothing: a space, a control, a format character (zero-width spaces and
    joiners, bidi controls, U+FEFF, tags) or another default-ignorable one (Hangul fillers, variation
    selectors)."""
    return char.isspace() or unicodedata.category(char) in _BLANK_CATEGORIES or _INVISIBLE.fullmatch(char) is not None


def ignorable(char: str) -> bool:
    """Whether one character is default-ignorable: a format character or one of `_INVISIBLE` (not a space,
    which shows as a gap). UTS #39's skeleton drops these, so `ali\u200bce` looks like, and is, `alice`."""
    return unicodedata.category(char) == "Cf" or _INVISIBLE.fullmatch(char) is not None


def blank(text: str) -> bool:
    """Whether `text` shows nothing at all: a title of U+200B or U+3164 alone looks empty on every screen, so
    a required text must hold at least one character that is not `invisible`."""
    return all(invisible(char) for char in text)


def check_mapping(values: Mapping[str, str], what: str, error: type[RegistryError]) -> None:
    """Each key and value of a text mapping (schema properties), named by key."""
    for key, value in values.items():
        check_text(key, f"{what} key {readable(key)!r}", error)
        check_text(value, f"{what} {key!r} value", error)


def readable(value: str) -> str:
    """`value` with each lone surrogate written as its `\\uXXXX` escape: safe to encode as UTF-8 anywhere."""
    if _BAD.search(value) is None:
        return value
    return "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in value)


def readable_mapping(values: Mapping[str, str]) -> dict[str, str]:
    return {readable(key): readable(value) for key, value in values.items()}


def preview(data: bytes, limit: int = 60) -> str:
    """The first `limit` bytes of `data` as text, for an error message that quotes what it refused."""
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("…" if len(data) > limit else "")


def iso_millis(millis: int) -> str:
    """A time in ms since the epoch as the broker's stats write it: ISO-8601 in UTC with milliseconds and Z."""
    moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
