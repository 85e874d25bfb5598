"""Every repository path the Markdown files name exists (docs/README.md, "Paths in the documents").

A newcomer follows the paths in docs/, the user guide and the READMEs to the code; a file renamed or removed
left them pointing at nothing (issue 41 found 11 such paths). The rule, as docs/README.md states it: in every
Markdown file of the repository, each word of an inline code span (fenced blocks are examples and are not
read) is a repository path when

- its first part, before a `/`, names a top-level file or folder of the repository (`registry/_handle.py`,
  `tests/unit/`, `.ci/run`), or one of the Markdown file's own folder (`storage/_sql.py` in
  registry/README.md): it must exist, relative to that folder; or
- it is a bare file name ending in `.py`, `.md` or `.ipynb` (`_facade.py`): some file of the repository must
  bear that name (except the few PLACEHOLDERS below, patterns such as `_name.py`).

Words that are clearly not repository paths are left alone: URLs, absolute and home paths
(`/usr/bin/chromium`, `~/.config/pulsar/config`), globs and placeholders (`*`, `?`, `[`, `{`, `<`, `$`, `…`),
options (`--db`) and assignments (`a=b`). Text after `:` or `#` (`server/_errors.py: STATUS`,
`tests/x.py::test_y`, `docs/guide/app.md#the-app`) is not part of the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache",
                 ".pytest_cache", ".hypothesis", "build", "dist"}  # fmt: skip
BARE_SUFFIXES = (".py", ".md", ".ipynb")  # a bare name with one of these must be some file of the repository
# Names written as a pattern or as what must not exist, never as a file: a docs page "name" in the citation
# rules, a private module "_name", "no utils" in the house style (spelt in pieces: test_docs.py scans this file).
PLACEHOLDERS = frozenset({"name" + ".md", "_name" + ".py", "utils" + ".py"})
_FENCE = re.compile(r"^\s*```")
_SPAN = re.compile(r"(`+)(?P<code>.+?)\1")
_NOT_A_PATH = re.compile(r"://|^[~/$-]|[*?\[\]{}<>$=…]|\.\.\.")


def markdown_files() -> list[Path]:
    """Every Markdown file of the repository, outside environments and caches."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        found += [Path(folder) / name for name in files if name.endswith(".md")]
    return sorted(found)


@cache
def _file_names() -> frozenset[str]:
    names: set[str] = set()
    for _folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        names.update(files)
    return frozenset(names)


def code_words(text: str) -> Iterator[tuple[int, str]]:
    """(line number, word) for each word of each inline code span outside fenced blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for span in _SPAN.finditer(line):
            for word in span["code"].split():
                yield number, word


def path_of(word: str) -> str | None:
    """The path a code word names, or None when it is no repository path by its form."""
    word = word.strip("\"'(),;.")
    if not word or _NOT_A_PATH.search(word):
        return None
    word = word.split("#")[0].split(":")[0].rstrip(".,")
    if not word or word in {".", ".."} or word in PLACEHOLDERS:
        return None
    return word


def problem(word: str, doc: Path) -> str | None:
    """Why `word`, written in `doc`, names a repository path that does not exist; None when it is fine or
    no repository path."""
    path = path_of(word)
    if path is None:
        return None
    if "/" not in path:
        if path.endswith(BARE_SUFFIXES) and path not in _file_names():
            return f"no file named {path} anywhere in the repository"
        return None
    first = path.split("/")[0]
    for base in (ROOT, doc.parent):
        if first and (base / first).exists():
            target = base / path
            if not target.exists() or (path.endswith("/") and not target.is_dir()):
                return f"no {path}" + ("" if base == ROOT else f" (relative to {base.relative_to(ROOT).as_posix()}/)")
            return None
    return None


def dead_paths(text: str, doc: Path) -> list[str]:
    where = doc.relative_to(ROOT).as_posix()
    return [
        f"{where}:{number}: `{word}`: {why}"
        for number, word in code_words(text)
        if (why := problem(word, doc)) is not None
    ]


def test_the_rule_checks_paths_and_leaves_other_words_alone() -> None:
    doc = ROOT / "registry" / "README.md"
    text = (
        "`registry/_handle.py`, `storage/_sql.py`, `registry/remote/`, `server/_errors.py: STATUS`,\n"
        "`~/.config/pulsar/config`, `/usr/bin/chromium`, `http://host:8080/x`, `DIR/topics/**/*.parquet`,\n"
        "`acme/orders/order-created`, `--db PATH`, `order.avsc`, `_handle.py`, `docs/guide/app.md#the-app`\n"
        "```sh\nschema-explorer check -f registry/nothing_here.py\n```\n"
    )
    assert dead_paths(text, doc) == []
    # Spelt in pieces, so that this file's own words are not taken for paths by a scan of its source.
    gone, gone_dir, gone_bare, gone_local = (
        "registry/_" + "view.py",
        "registry/" + "nowhere/",
        "_" + "view.py",
        "storage/_" + "gone.py",
    )
    text = f"`{gone}` and `python {gone_dir}`\nplaces it in `{gone_bare}` beside `{gone_local}`\n"
    report = dead_paths(text, doc)
    assert [line.split(": ")[0] for line in report] == ["registry/README.md:1"] * 2 + ["registry/README.md:2"] * 2
    assert gone in report[0] and gone_dir in report[1] and gone_bare in report[2] and gone_local in report[3]


def test_the_scan_reads_the_docs_the_guide_and_every_readme() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "registry/README.md", "docs/architecture.md", "docs/guide/README.md"} <= names
    words = sum(1 for p in markdown_files() for _ in code_words(p.read_text(encoding="utf-8")))
    assert words > 1000  # a guard on the scan itself: the documents name code everywhere


def test_every_path_in_the_markdown_files_exists() -> None:
    report = [line for doc in markdown_files() for line in dead_paths(doc.read_text(encoding="utf-8"), doc)]
    assert report == [], "paths to nothing (docs/README.md, 'Paths in the documents'):\n" + "\n".join(report)
