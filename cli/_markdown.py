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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from registry import (
    Advisory,
    CompatibilityResult,
    CompatibilityStrategy,
    PolicyPreview,
    Problem,
    PulsarLine,
    SchemaDiff,
    WhatIf,
)

from ._common import for_terminal

MARKER = "<!-- schema-explorer check -->"
MAX_ITEMS = 40  # problems, advisories, changes, topics: each list is cut after this many
MAX_TEXT = 600  # characters of one message kept in a comment

# Every ASCII punctuation character Markdown or GitHub gives a meaning to (CommonMark lets each be escaped
# with a backslash): emphasis, code, links and images (`[`, `]`, `!`), headings and setext underlines (`#`,
# `=`, `-`), list markers (`-`, `+`, `*`, `1.`, `1)`), tables, HTML and entities (`<`, `&`), math (`$`),
# strikethrough, directives, @mentions. Quotes mean something only inside a link, which `[` cannot open.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&@=])")


def text(value: object, limit: int = MAX_TEXT) -> str:
    """User text as inert Markdown: control characters shown as escapes (`\\x1b`), every line break and run of
    spaces made one space (a newline could start a heading or end the list item), cut at `limit` characters,
    and each Markdown or HTML character backslash-escaped so it shows as typed."""
    flat = " ".join(for_terminal(str(value)).split())
    if len(flat) > limit:
        flat = flat[:limit] + "…"
    return _SPECIAL.sub(r"\\\1", flat)


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
    blocking: Mapping[CompatibilityStrategy, bool] | None = None,
    diff: SchemaDiff | None = None,
) -> str:
    """The comment for a schema verdict: the verdict (strategy, versions, Pulsar line), the proposal it is
    about, its problems (introduced ones first), advisories, the upgrade order, and the changes (`diff`, a
    proposal's against its base; default: the what-if's, against the latest version)."""
    compatible = bool(result.compatible)
    verdict = "compatible" if compatible else "incompatible"
    icon = "✅" if compatible else "❌"
    out = [MARKER, f"### {icon} Schema check: {verdict}", ""]
    checked = ", ".join(map(str, result.checked_versions))
    against = (
        f"checked against version{'s' * (len(result.checked_versions) != 1)} {checked}"
        if checked
        else ("no live version to check against")
    )
    out.append(
        f"**Topic** {code(topic)} · **strategy** `{result.strategy}` · {against} · answered as "
        f"{line.title}, Avro {line.avro}"
    )
    out.append("")
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
    out += _problem_lines(problems)
    if blocking is not None:
        out += _blocking_lines(blocking)
    out += _advisory_lines(advisories)
    if what_if is not None:
        out += _upgrade_lines(what_if)
        out += _change_lines(diff if diff is not None else what_if.diff)
    return "\n".join(out).rstrip() + "\n"


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


def _problem_lines(problems: Sequence[MarkedProblem]) -> list[str]:
    if not problems:
        return []
    ordered = sorted(problems, key=lambda p: p.introduced is False)  # introduced (or unmarked) first, stable
    introduced = sum(1 for p in problems if p.introduced)
    there = sum(1 for p in problems if p.introduced is False)
    split = f": {introduced} introduced, {there} already there" if there or introduced else ""
    out = [f"#### Problems ({len(problems)}{split})", ""]
    items: list[str] = []
    for number, marked in enumerate(ordered, 1):
        problem = marked.problem
        mark = "" if marked.introduced is None else ("**introduced** · " if marked.introduced else "already there · ")
        where = f" at {code(problem.path)}" if problem.path else ""
        item = [f"{number}. {mark}`{problem.code}`{where}: {text(problem.direction_text)}"]
        item.append(f"   {text(problem.message)}")
        if problem.hint:
            item.append(f"   _hint:_ {text(problem.hint)}")
        items.append("  \n".join(item))
    return [*out, *_cut(items, "problems"), ""]


def _blocking_lines(blocking: Mapping[CompatibilityStrategy, bool]) -> list[str]:
    """Per strategy, whether the candidate introduces a refusal there: what the namespace could move to."""
    cells = [f"{'❌' if refuses else '✅'} `{strategy}`" for strategy, refuses in blocking.items()]
    return ["<details><summary>Under each strategy (❌: this change introduces a refusal)</summary>", "",
            " · ".join(cells), "", "</details>", ""]  # fmt: skip


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
        out.append(f"This change: **{change.order}**: {text(change.explanation)}.")
    out.append(f"`{what_if.effective.value}` guarantees **{what_if.strategy_order}** for any change it accepts.")
    plan = what_if.plan
    if plan is not None:
        if not plan.feasible:
            out.append(f"Recorded clients: no safe order: {text(plan.reason)}")
        elif plan.steps:
            out.append("")
            out.append("Recorded clients:")
            for step in plan.steps:
                names = ", ".join(c.name for c in step.clients)
                out.append(f"{step.number}. {step.role}s {text(names)}: {text(step.explanation)}")
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


def _cut(items: list[str], what: str) -> list[str]:
    if len(items) <= MAX_ITEMS:
        return items
    return [*items[:MAX_ITEMS], f"- … and {len(items) - MAX_ITEMS} more {what} (run the command for all of them)"]
