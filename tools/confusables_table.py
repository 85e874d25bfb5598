"""Write registry/_confusables.py, the look-alike table person names are compared by, from Unicode's
confusables.txt (UTS #39, https://www.unicode.org/Public/security/<version>/confusables.txt):

    python tools/confusables_table.py PATH/TO/confusables.txt

Only the mappings a name can still meet are kept: registry/_identity.py folds a name with NFKC first and the
skeleton decomposes (NFD), so a source that NFKC or NFD changes (fullwidth and mathematical letters, accented
letters) never reaches the table. Each entry is `SOURCE=TARGET[.TARGET…]` in hex, the entries separated by
spaces, in the order of the file.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "registry" / "_confusables.py"
WIDTH = 110


def entries(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source_hex, target_hex, *_ = (part.strip() for part in data.split(";"))
        source = "".join(chr(int(code, 16)) for code in source_hex.split())
        if len(source) != 1 or unicodedata.normalize("NFKC", source) != source:
            continue
        if unicodedata.normalize("NFD", source) != source:
            continue
        target = ".".join(f"{int(code, 16):X}" for code in target_hex.split())
        found.append(f"{ord(source):X}={target}")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    text = Path(argv[0]).read_text(encoding="utf-8-sig")
    version = re.search(r"^# Version: (\S+)", text, re.MULTILINE)
    if version is None:
        print(f"{argv[0]}: no '# Version:' line; is it confusables.txt?", file=sys.stderr)
        return 2
    items = entries(text)
    lines, line = [], ""
    for item in items:
        if line and len(line) + 1 + len(item) > WIDTH:
            lines.append(line)
            line = ""
        line = f"{line} {item}" if line else item
    lines.append(line)
    body = "\n".join(f'    "{chunk} "' for chunk in lines)
    OUT.write_text(
        f'''"""Unicode's look-alike prototypes (confusables.txt {version.group(1)}, UTS #39), the mappings a name
folded with NFKC can still hold: written by tools/confusables_table.py, not by hand.

Source: https://www.unicode.org/Public/security/{version.group(1)}/confusables.txt, © Unicode, Inc., used under the
Unicode License (https://www.unicode.org/license.txt). Each entry is SOURCE=TARGET[.TARGET…] in hex.
"""

VERSION = "{version.group(1)}"
ENTRIES = (
{body}
)
''',
        encoding="utf-8",
    )
    print(f"{OUT}: {len(items)} mappings of confusables.txt {version.group(1)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
