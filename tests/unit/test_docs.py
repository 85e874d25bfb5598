"""Every design-note reference in the code points inside the repository (docs/README.md, "Citation convention").

Code comments cite the project's docs: a bare `§3.3` is a section of docs/pulsar-semantics.md, `users.md §4` a
section of docs/users.md, and a path such as `registry/storage/README.md` is relative to the repository root.
These tests scan every Python file of the project for such references and fail, listing each broken one with
file and line, when the file does not exist or has no heading for the cited section number. A page of the
user guide cited with a name in quotes (`docs/guide/spark.md "On a cluster"`) must have a heading, or a
paragraph that opens in bold (`**Who did it.**`), of that name. A `§` that belongs
to an outside standard (`RFC 9110 §7.6.1`) is not ours to check.

They also keep docs/ in the project's own words: where the private design notes sit beside the repository
(`../shared/design/`, present on the build machines, absent from a user's clone), no docs/ file may share a run
of 12 or more consecutive words with them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SCANNED = ("registry", "app", "cli", "server", "pipeline", "tests", "bench", "tools")
DEFAULT_DOC = "pulsar-semantics.md"  # what a `§` with no file name before it cites
SHARED_NOTES = ROOT.parent / "shared" / "design"
RUN = 12  # words in a row that docs/ may not share with the design notes
_SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache",
                 ".pytest_cache", ".hypothesis", "build", "dist"}  # fmt: skip

_SECTION = r"§\s?\d+(?:\.\d+)*"
# One citation of sections: an optional file name right before the first `§`, then `§`s joined by commas,
# "and", "or", slashes or dashes (`pulsar-semantics.md §3.4, §4`, `§3.1–§3.5`); the file applies to all of them.
CITATION = re.compile(
    rf"(?:(?P<file>[\w./-]*\w\.md)\s*)?(?P<sections>{_SECTION}(?:\s*(?:,|and|or|/|-|–|—)\s*{_SECTION})*)"
)
SECTION_NUMBER = re.compile(r"§\s?(\d+(?:\.\d+)*)")
MENTION = re.compile(r"(?<![\w./-])(?P<file>[\w./-]*\w\.md)\b")
OUTSIDE_STANDARD = re.compile(r"\bRFC\s*\d+\s*$")  # text right before a `§` of someone else's standard
HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)(?:\.|\s|$)", re.MULTILINE)
QUOTED_NAME = re.compile(r'(?:\s+|\s*[(,:]\s*)"(?P<name>[^"]+)"')  # `docs/guide/app.md "Who did it"`: a part by name
GUIDE = DOCS / "guide"
NAMED_PART = re.compile(r"^#{1,6}\s+(?P<heading>.+?)\s*$|^\*\*(?P<lead>[^*]+?)\.?\*\*", re.MULTILINE)
MARKDOWN_LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?:#[^)]*)?\)")
CODE = re.compile(r"```.*?```|`[^`]*`", re.DOTALL)


@dataclass(frozen=True)
class Reference:
    """One cited file, and the section numbers cited in it (none for a bare mention)."""

    where: str  # path:line
    text: str  # as written
    file: str
    sections: tuple[str, ...]
    name: str | None = None  # a part named in quotes after the file (checked for the user guide's pages)


def references(text: str, where: str) -> Iterator[Reference]:
    """The references in `text` (one file's source), each with `where` and its line number."""
    for number, line in enumerate(text.splitlines(), start=1):
        spans: list[tuple[int, int]] = []
        for match in CITATION.finditer(line):
            if match["file"] is None and OUTSIDE_STANDARD.search(line[: match.start()]):
                continue
            spans.append(match.span())
            yield Reference(
                f"{where}:{number}",
                match[0],
                match["file"] or DEFAULT_DOC,
                tuple(SECTION_NUMBER.findall(match["sections"])),
            )
        for match in MENTION.finditer(line):
            if not any(start <= match.start() < end for start, end in spans):
                named = QUOTED_NAME.match(line, match.end())
                yield Reference(f"{where}:{number}", match[0], match["file"], (), named["name"] if named else None)


def _repository_files(name: str) -> list[Path]:
    """Files called `name` anywhere in the repository, outside environments and caches."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        if name in files:
            found.append(Path(folder) / name)
    return found


@cache
def resolve(file: str) -> Path | str:
    """The repository file a reference names, or why there is none. A path with a folder is relative to the
    root; a bare name is docs/<name>, else <root>/<name>, else the one file of that name in the repository."""
    if "/" in file:
        path = ROOT / file
        return path if path.is_file() else f"no file {file} in the repository (paths are relative to its root)"
    for path in (DOCS / file, ROOT / file):
        if path.is_file():
            return path
    found = _repository_files(file)
    if len(found) == 1:
        return found[0]
    if not found:
        return f"no file {file} in docs/ or anywhere in the repository"
    places = ", ".join(str(p.relative_to(ROOT)) for p in found)
    return f"{file} is ambiguous ({places}): name it by its path from the repository root"


@cache
def headings(path: Path) -> frozenset[str]:
    """The section numbers a Markdown file has headings for (`## 3. …` → "3", `### 3.3 …` → "3.3")."""
    return frozenset(HEADING.findall(path.read_text(encoding="utf-8")))


@cache
def named_parts(path: Path) -> frozenset[str]:
    """The names a part of a Markdown file goes by: its headings, and the bold words a paragraph opens with."""
    found = NAMED_PART.finditer(path.read_text(encoding="utf-8"))
    return frozenset((m["heading"] or m["lead"]).strip() for m in found)


def broken(refs: Iterable[Reference]) -> list[str]:
    """One line per reference whose file or section does not exist."""
    out = []
    for ref in refs:
        target = resolve(ref.file)
        if isinstance(target, str):
            out.append(f"{ref.where}: {ref.text!r}: {target}")
            continue
        missing = [s for s in ref.sections if s not in headings(target)]
        if missing:
            shown = ", ".join(f"§{s}" for s in missing)
            out.append(f"{ref.where}: {ref.text!r}: {target.relative_to(ROOT)} has no heading for {shown}")
        if ref.name is not None and target.parent == GUIDE and ref.name not in named_parts(target):
            out.append(f"{ref.where}: {ref.text!r}: {target.relative_to(ROOT)} has no part named {ref.name!r}")
    return out


def python_files() -> list[Path]:
    return sorted(p for part in SCANNED for p in (ROOT / part).rglob("*.py") if "__pycache__" not in p.parts)


@cache  # read once for the tests that scan the code, which only read it
def code_references() -> list[Reference]:
    return [
        ref
        for path in python_files()
        for ref in references(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]


# --- the references in code -------------------------------------------------------------------------------


def test_the_scan_reads_each_form_of_citation() -> None:
    text = (
        "x = 1  # Pulsar §3.3 dedup; pulsar-semantics.md §3.4, §4; §3.1–§3.5\n"
        '"""users.md #2, avro-resolution.md ("Writer union"), registry/storage/README.md, RFC 9110 §7.6.1"""\n'
    )
    found = [(r.file, r.sections) for r in references(text, "t.py")]
    assert found == [
        (DEFAULT_DOC, ("3.3",)),
        ("pulsar-semantics.md", ("3.4", "4")),
        (DEFAULT_DOC, ("3.1", "3.5")),
        ("users.md", ()),
        ("avro-resolution.md", ()),
        ("registry/storage/README.md", ()),
    ]


def test_the_scan_reports_each_broken_reference_with_its_place() -> None:
    # Spelt in pieces, so that this file's own scan does not find these broken references in its source.
    section, other, missing_file, missing_path = (
        "99" + ".1",
        "4" + "2",
        "nowhere-at-all" + ".md",
        "registry/no/README" + ".md",
    )
    text = f"# §{section} and architecture.md §{other}\n# see {missing_file} and {missing_path}\n"
    report = broken(references(text, "registry/x.py"))
    assert len(report) == 4, report
    assert report[0].startswith("registry/x.py:1: ") and report[0].endswith(f"no heading for §{section}")
    assert report[1].endswith(f"docs/architecture.md has no heading for §{other}")
    assert report[2].startswith("registry/x.py:2: ") and missing_file in report[2]
    assert missing_path in report[3]


def test_the_code_cites_something() -> None:
    """A guard on the scan itself: the code cites sections of the docs in over 250 places."""
    refs = code_references()
    assert sum(len(r.sections) for r in refs) > 200
    assert {r.file for r in refs} >= {DEFAULT_DOC, "avro-resolution.md", "architecture.md", "users.md"}


def test_every_reference_in_code_points_inside_the_repository() -> None:
    report = broken(code_references())
    assert report == [], "broken references (docs/README.md explains the forms):\n" + "\n".join(report)


# --- docs/ itself -----------------------------------------------------------------------------------------


def markdown_files() -> list[Path]:
    """docs/ with the user guide, and every other Markdown file of the repository (the READMEs)."""
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
        found += [Path(folder) / name for name in files if name.endswith(".md")]
    return sorted(found)


def test_the_docs_links_point_inside_the_repository() -> None:
    """Relative links in docs/, the guide and the READMEs (to each other, to code) name files that exist."""
    bad = []
    for doc in markdown_files():
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            for match in MARKDOWN_LINK.finditer(line):
                target = match["target"]
                if "://" in target or target.startswith("mailto:"):
                    continue
                if not (doc.parent / target).exists():
                    bad.append(f"{doc.relative_to(ROOT)}:{number}: {target}")
    assert bad == [], "links to nothing:\n" + "\n".join(bad)


def test_the_docs_index_lists_every_document() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    unlisted = [p.name for p in sorted(DOCS.glob("*.md")) if p.name != "README.md" and f"]({p.name})" not in index]
    assert unlisted == [], f"docs/README.md does not list {unlisted}"


def test_the_guide_is_listed_by_its_index_the_docs_index_and_the_readme() -> None:
    pages = [p.name for p in sorted(GUIDE.glob("*.md")) if p.name != "README.md"]
    assert len(pages) >= 10
    indexes = {
        GUIDE / "README.md": "]({})",
        DOCS / "README.md": "](guide/{})",
        ROOT / "README.md": "](docs/guide/{})",
    }
    unlisted = [
        f"{index.relative_to(ROOT)} does not link {page}"
        for index, link in indexes.items()
        for page in pages
        if link.format(page) not in index.read_text(encoding="utf-8")
    ]
    assert unlisted == []


def test_a_guide_page_cited_by_name_has_a_part_of_that_name() -> None:
    # Spelt in pieces, so that this file's own scan does not find these references in its source.
    page = "docs/guide/" + "app.md"
    text = f'# {page} "Who did it" and {page}, "No such part"\n'
    refs = list(references(text, "app/x.py"))
    assert [r.name for r in refs] == ["Who did it", "No such part"]
    report = broken(refs)
    assert len(report) == 1 and report[0].endswith("has no part named 'No such part'")


def _words(text: str) -> list[str]:
    out = []
    for token in text.split():
        token = token.strip("`*_()[]{},.;:\"'|!?<>#").lower()
        if token and re.search(r"\w", token):
            out.append(token)
    return out


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def prose_runs(text: str) -> set[tuple[str, ...]]:
    """Runs of RUN words of a document's prose. Code spans and blocks hold identifiers, file paths and upstream
    messages quoted as facts: they are left out, and a run never reaches across one."""
    return {run for part in CODE.split(text) for run in _runs(_words(part))}


def test_prose_runs_stop_at_code_and_ignore_case_and_punctuation() -> None:
    text = "One, two three four five six seven eight nine ten eleven TWELVE. `x y` thirteen"
    assert prose_runs(text) == {tuple("one two three four five six seven eight nine ten eleven twelve".split())}


@pytest.mark.skipif(not SHARED_NOTES.is_dir(), reason="the private design notes are not beside this repository")
def test_the_docs_are_written_in_the_projects_own_words() -> None:
    shared: set[tuple[str, ...]] = set()
    for note in sorted(SHARED_NOTES.glob("*.md")):
        shared |= _runs(_words(note.read_text(encoding="utf-8")))
    copied = [
        f"docs/{doc.name}: {' '.join(run)}"
        for doc in sorted(DOCS.glob("*.md"))
        for run in sorted(prose_runs(doc.read_text(encoding="utf-8")) & shared)
    ]
    assert copied == [], f"runs of {RUN}+ words found in {SHARED_NOTES}:\n" + "\n".join(copied)
