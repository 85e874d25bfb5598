"""`check --format markdown`: a verdict as a pull-request comment, for a CI step to post.

A comment is read by people who never ran the command, on a page that renders Markdown and some HTML, so:
- everything that comes from a schema or a person (field names, docs quoted in messages, titles, paths) goes
  through `text()` or `code()`: Markdown and HTML in it show as typed and cannot add links, images, headings
  or tags (`<script>`, `<img onerror>`), nor break out of the list item it sits in;
- the comment starts with `MARKER`, a fixed HTML comment, so a CI step can find its previous comment and update
  it instead of adding one per push;
- long lists are cut (GitHub refuses a comment over 65,536 characters) with a line saying how many were left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from registry import (
    Advisory,
    CompatibilityResult,
    Direction,
    PolicyPreview,
    Problem,
    ProposalReview,
    SchemaDiff,
    WhatIf,
)
from registry._pulsar_version import PulsarLine
from registry.proposals._words import refusal_word, refusals_text

from ._common import for_terminal

MARKER = "<!-- schema-explorer check -->"
MAX_ITEMS = 40  # problems, advisories, changes, topics: each list is cut after this many
MAX_TEXT = 600  # characters of one message kept in a comment
MAX_CLIENTS = 10  # clients named where no upgrade order is safe
SUMMARY_CHANGES = 5  # changes named in the summary line
# The reasons an upgrade plan is stuck, one per client, as registry/explain/_upgrade.py joins them.
_BLOCKERS = re.compile(r"; (?=consumer '|version \S+ cannot read producer ')")

# Every ASCII punctuation character Markdown or GitHub gives a meaning to (CommonMark lets each be escaped
# with a backslash): emphasis, code, links and images (`[`, `]`, `!`), headings and setext underlines (`#`,
# `=`, `-`), list markers (`-`, `+`, `*`, `1.`, `1)`), tables, HTML and entities (`<`, `&`), math (`$`),
# strikethrough, directives, @mentions. Quotes mean something only inside a link, which `[` cannot open.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&@=])")


def text(value: object, limit: int = MAX_TEXT) -> str:
    """User text as inert Markdown: control characters shown as escapes (`\\x1b`), every line break and run of
    spaces made one space (a newline could start a heading or end the list item), cut at `limit` characters,
    and each Markdown or HTML character backslash-escaped so it shows as typed."""
    return _SPECIAL.sub(r"\\\1", _cut_text(" ".join(for_terminal(str(value)).split()), limit))


def _cut_text(flat: str, limit: int) -> str:
    """`flat` cut to at most `limit` characters at a space, never inside a word (a single word longer than
    half the limit is cut where it must be), with "…" where it was cut."""
    if len(flat) <= limit:
        return flat
    cut = flat[: limit + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else flat[:limit]).rstrip(" ,;:") + " …"


def code(value: object, limit: int = 200) -> str:
    """User text as an inline code span, where Markdown and HTML do not apply: only a backtick could end it
    (it becomes '), and a line break (it becomes a space)."""
    flat = " ".join(for_terminal(str(value)).replace("`", "'").split())
    if len(flat) > limit:
        flat = flat[:limit] + "…"
    return f"`{flat}`" if flat else "` `"


def link(label: str, url: str) -> str:
    """A link whose destination is an app URL checked by `app_url()` (no spaces, `<`, `>` or controls), in
    the `<...>` form so parentheses in it cannot end it."""
    return f"[{label}](<{url}>)"


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkedProblem:
    """A problem of the verdict and, for a proposal, whether the proposal introduces it (None: a plain check,
    where every problem is the candidate's)."""

    problem: Problem
    introduced: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProposalRef:
    """The proposal a comment is about, or links to."""

    id: int
    title: str
    state: str
    revision: int
    base: str  # "version 13", "a topic without a live schema", "the policy as stored"
    url: str | None  # the app's page for it; None: the comment says "#N"
    note: str = ""  # e.g. "the file checked differs from revision 2": plain text, escaped here


def check_comment(
    *,
    topic: str,
    result: CompatibilityResult,
    line: PulsarLine,
    problems: Sequence[MarkedProblem],
    advisories: Sequence[Advisory],
    what_if: WhatIf | None,
    proposal: ProposalRef | None = None,
    stale_since: tuple[int, ...] | None = None,
    refusals: ProposalReview | None = None,
    diff: SchemaDiff | None = None,
) -> str:
    """The comment for a schema verdict: the verdict (strategy, versions, Pulsar line), the proposal it is
    about, its problems (introduced ones first), advisories, the upgrade order, and the changes (`diff`, a
    proposal's against its base; default: the what-if's, against the latest version)."""
    compatible = bool(result.compatible)
    verdict = "compatible" if compatible else "incompatible"
    icon = "✅" if compatible else "❌"
    out = [MARKER, f"### {icon} Schema check: {verdict}", ""]
    versions = result.checked_versions
    against = (
        f"checked against version{'s' * (len(versions) != 1)} {versions_text(versions)}"
        if versions
        else "no live version to check against"
    )
    out.append(
        f"**Topic** {code(topic)} · **strategy** `{result.strategy}` · {against} · answered as "
        f"{line.title}, Avro {line.avro}"
    )
    out.append("")
    grouped = group_problems(problems)
    changes = diff if diff is not None else (what_if.diff if what_if is not None else None)
    out += [_summary(grouped, len(problems), changes, what_if), ""]
    if proposal is not None:
        out += _proposal_lines(proposal)
    if stale_since is not None:
        since = ", ".join(map(str, stale_since)) or "a delete"
        out += [
            f"> ⚠️ **Stale**: stored on the topic since the proposal's base: {text(since)}. This is how Pulsar "
            "judges it now, but "
            f"it cannot be applied until it is rebased (`schema-explorer proposals rebase {_id(proposal)}`) and "
            "approved again.",
            "",
        ]
    out += _problem_lines(grouped, len(problems))
    if what_if is not None:
        out += _upgrade_lines(what_if)
    if refusals is not None and refusals.blocking is not None:
        out += _blocking_lines(refusals)
    out += _advisory_lines(advisories)
    out += _change_lines(changes)
    return "\n".join(out).rstrip() + "\n"


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupedProblem:
    """One distinct problem and every version it fails against: a transitive check finds the same problem
    once per version, and a comment names it once."""

    first: MarkedProblem
    versions: tuple[int | None, ...]


def group_problems(problems: Sequence[MarkedProblem]) -> list[GroupedProblem]:
    """The problems as distinct ones (same rule, direction, message and hint, and marked alike), introduced
    (or unmarked) first, each in the order first found, with the versions it fails against."""
    groups: dict[tuple[object, ...], list[MarkedProblem]] = {}
    for marked in problems:
        p = marked.problem
        groups.setdefault((marked.introduced, p.code, p.direction, p.message, p.hint), []).append(marked)
    found = [
        GroupedProblem(first=items[0], versions=tuple(dict.fromkeys(m.problem.version for m in items)))
        for items in groups.values()
    ]
    return sorted(found, key=lambda g: g.first.introduced is False)  # stable: first found first


def versions_text(versions: Sequence[int | None]) -> str:
    """Versions as runs: "0–13", "2, 5–7, 9"; None is "the latest"."""
    numbers = sorted({v for v in versions if v is not None})
    runs: list[str] = []
    start = prev = None
    for v in [*numbers, None]:
        if v is not None and prev is not None and v == prev + 1:
            prev = v
            continue
        if start is not None:
            runs.append(str(start) if start == prev else f"{start}–{prev}")
        start = prev = v
    if None in versions:
        runs.append("the latest")
    return ", ".join(runs)


def _against(versions: Sequence[int | None]) -> str:
    if list(versions) == [None]:
        return "the latest version"
    named = [v for v in versions if v is not None]
    return f"version{'s' * (len(named) != 1 or None in versions)} {versions_text(versions)}"


def _direction_text(group: GroupedProblem) -> str:
    """`Problem.direction_text`, for every version the problem fails against."""
    against = _against(group.versions)
    direction = group.first.problem.direction
    if direction is Direction.BACKWARD:
        return f"the new schema, as a reader, cannot read data written with {against}"
    if direction is Direction.FORWARD:
        return f"{against}, as a reader, cannot read data written with the new schema"
    return f"the new schema cannot follow {against}"


def _summary(grouped: Sequence[GroupedProblem], found: int, diff: SchemaDiff | None, what_if: WhatIf | None) -> str:
    """One line a reviewer reads first: how many distinct problems, what changed, the order to upgrade in."""
    parts = []
    if grouped:
        versions = {v for g in grouped for v in g.versions}
        each = f" ({found} failed checks against {len(versions)} versions)" if found > len(grouped) else ""
        parts.append(f"**{len(grouped)} problem{'s' * (len(grouped) != 1)}**{each}")
    else:
        parts.append("**no problems**")
    if diff is not None:
        shown = [f"{'❗ ' if c.is_breaking else ''}{c.kind} {code(c.path, 80)}" for c in diff.changes[:SUMMARY_CHANGES]]
        more = len(diff.changes) - len(shown)
        listed = ", ".join(shown) + (f" and {more} more" if more > 0 else "") if shown else "none"
        parts.append(f"**changes against version {diff.old_version}**: {listed}")
    if what_if is not None and what_if.change_order is not None:
        parts.append(f"**upgrade order**: {what_if.change_order.order}")
    return " · ".join(parts)


def policy_comment(*, preview: PolicyPreview, stale: bool, proposal: ProposalRef, line: PulsarLine) -> str:
    """The comment for a policy proposal: what would change, which topics' latest registration the new
    policy would refuse, which clients could no longer connect, which topics it does not reach."""
    refused = preview.refused_topics
    icon = "⚠️" if (refused or preview.refused_clients) else "✅"
    out = [MARKER, f"### {icon} Policy proposal for {code(preview.target)}", ""]
    out.append(f"**Scope** {preview.scope} · answered as {line.title}, Avro {line.avro}")
    out.append("")
    out += _proposal_lines(proposal)
    if stale:
        out += [
            "> ⚠️ **Stale**: the policy was changed since the proposal was made; rebase it "
            f"(`schema-explorer proposals rebase {proposal.id}`) and have it approved again.",
            "",
        ]
    out.append("#### Changes")
    out += [f"- {text(change)}" for change in preview.changes] or ["- nothing would change"]
    out.append("")
    out.append(f"#### Topics whose latest registration it would refuse ({len(refused)})")
    items = [
        f"- {code(t.topic)}: version(s) {text(', '.join(map(str, t.refused_versions)))}"
        + (f": {text(t.first_problem.message)}" if t.first_problem is not None else "")
        for t in refused
    ]
    out += _cut(items, "topics") or ["- none"]
    out.append("")
    clients = preview.refused_clients
    out.append(f"#### Clients that could no longer connect ({len(clients)})")
    out += _cut([f"- {code(c.client.name)} on {code(c.client.topic)}: {text(c.reason)}" for c in clients], "clients")
    out += [] if clients else ["- none"]
    out.append("")
    if preview.shielded:
        out.append(f"#### Topics it does not (fully) reach ({len(preview.shielded)})")
        out += _cut([f"- {code(t.topic)}: {text('; '.join(t.shielded_by))}" for t in preview.shielded], "topics")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _id(proposal: ProposalRef | None) -> str:
    return "ID" if proposal is None else str(proposal.id)


def _proposal_lines(proposal: ProposalRef) -> list[str]:
    label = f"#{proposal.id}"
    name = link(label, proposal.url) if proposal.url else label
    lines = [
        f"**Proposal {name}**: {text(proposal.title)} · {proposal.state} · revision {proposal.revision} against "
        f"{text(proposal.base)}"
    ]
    if proposal.note:
        lines.append(f"> {text(proposal.note)}")
    return [*lines, ""]


def _problem_lines(grouped: Sequence[GroupedProblem], found: int) -> list[str]:
    if not grouped:
        return []
    introduced = sum(1 for g in grouped if g.first.introduced)
    there = sum(1 for g in grouped if g.first.introduced is False)
    split = f": {introduced} introduced, {there} already there" if there or introduced else ""
    every = f", {found} failed checks" if found > len(grouped) else ""
    out = [f"#### Problems ({len(grouped)}{split}{every})", ""]
    items: list[str] = []
    for number, group in enumerate(grouped, 1):
        marked = group.first
        problem = marked.problem
        mark = "" if marked.introduced is None else ("**introduced** · " if marked.introduced else "already there · ")
        where = f" at {code(problem.path)}" if problem.path else ""
        item = [f"{number}. {mark}`{problem.code}`{where}: {text(_direction_text(group))}"]
        item.append(f"   {text(problem.message)}")
        if problem.hint:
            item.append(f"   _hint:_ {text(problem.hint)}")
        items.append("  \n".join(item))
    return [*out, *_cut(items, "problems"), ""]


def _blocking_lines(review: ProposalReview) -> list[str]:
    """Per strategy, whether the candidate introduces a refusal there: what the namespace could move to.
    ALWAYS_INCOMPATIBLE refuses every change, so it is said so, and not counted."""
    icons = {"yes": "❌", "no": "✅"}
    words = {s: refusal_word(review, s) for s in review.blocking or {}}
    cells = [f"{icons[w]} `{s}`" if w in icons else f"➖ `{s}` {w}" for s, w in words.items()]
    summary = f"This change {refusals_text(review)} (❌)"
    return [f"<details><summary>{summary}</summary>", "", " · ".join(cells), "", "</details>", ""]


def _advisory_lines(advisories: Sequence[Advisory]) -> list[str]:
    if not advisories:
        return []
    out = [f"#### Advisories ({len(advisories)}): accepted by Pulsar, but worth a look", ""]
    items = []
    for advisory in advisories:
        where = f" at {code(advisory.path)}" if advisory.path else ""
        hint = f" _hint:_ {text(advisory.hint)}" if advisory.hint else ""
        items.append(f"- {advisory.severity} `{advisory.code}`{where}: {text(advisory.message)}{hint}")
    return [*out, *_cut(items, "advisories"), ""]


def _upgrade_lines(what_if: WhatIf) -> list[str]:
    out = ["#### Upgrade order", ""]
    change = what_if.change_order
    if change is not None:
        out.append(f"- This change: **{change.order}**: {text(change.explanation)}.")
    out.append(f"- `{what_if.effective.value}` guarantees **{what_if.strategy_order}** for any change it accepts.")
    plan = what_if.plan
    if plan is not None:
        if not plan.feasible:
            reasons = [f"  - {text(reason)}" for reason in _BLOCKERS.split(plan.reason) if reason.strip()]
            out.append("- Recorded clients: no safe order:")
            out += _cut(reasons, "clients", MAX_CLIENTS, indent="  ")
        elif plan.steps:
            out.append("- Recorded clients, in this order:")
            for step in plan.steps:
                names = ", ".join(c.name for c in step.clients)
                out.append(f"  {step.number}. {step.role}s {text(names)}: {text(step.explanation)}")
    return [*out, ""]


def _change_lines(diff: SchemaDiff | None) -> list[str]:
    if diff is None or not diff.changes:
        return []
    out = [
        f"<details><summary>Changes against version {diff.old_version} ({len(diff.changes)})</summary>",
        "",
    ]
    items = []
    for change in diff.changes:
        mark = "❗ " if change.is_breaking else ""
        items.append(
            f"- {mark}{change.kind} {code(change.path)}: {text(change.message)} "
            f"(backward {change.backward}, forward {change.forward})"
        )
    return [*out, *_cut(items, "changes"), "", "</details>", ""]


def _cut(items: list[str], what: str, most: int = MAX_ITEMS, *, indent: str = "") -> list[str]:
    if len(items) <= most:
        return items
    return [*items[:most], f"{indent}- … and {len(items) - most} more {what} (run the command for all of them)"]
