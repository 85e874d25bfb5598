"""HTML for Jupyter's rich display of the core's values: `to_html(value)`, and the renderers `registry.views`
registers with IPython's HTML formatter.

Every piece of text that comes from a schema, a topic, a client or a message goes through `esc` (schema docs
are user input: a `<script>` in a doc stays text). No JavaScript; inline styles only, since notebook
front-ends drop or sandbox `<style>` blocks. Colours are mid-tones with white text, or translucent
backgrounds over inherited text colour, so the output reads on light and dark notebook themes alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from registry import (
    STRATEGIES,
    Advisory,
    Change,
    CompatibilityResult,
    CompatibilityStrategy,
    EffectivePolicy,
    PolicyImpact,
    Problem,
    SchemaDiff,
    SchemaVersion,
    Severity,
    UpgradePlan,
    WhatIf,
)
from registry._changes import Effect
from registry._model import Admission, ClientRecord, Effective
from registry.explain._diff import schema_text
from registry.explain._upgrade import STRATEGY_UPGRADE_ORDER
from registry.explain.text_diff import line_diff

GREEN = "#2f9e5f"
RED = "#d9473f"
AMBER = "#c98a0b"
GREY = "#8a8a8a"
BLUE = "#3b82c4"

_BOX = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.45;max-width:100%"
_HEAD = "margin:0 0 6px 0;font-weight:600;font-size:14px"
_SUB = "margin:10px 0 4px 0;font-weight:600;font-size:13px"
_MUTED = "opacity:.75"
_TABLE = "border-collapse:collapse;margin:2px 0 6px 0;font-size:12.5px"
_TH = "text-align:left;padding:3px 8px;border-bottom:1px solid rgba(128,128,128,.5);font-weight:600"
_TD = "text-align:left;padding:3px 8px;border-bottom:1px solid rgba(128,128,128,.2);vertical-align:top"
_PRE = (
    "margin:4px 0;padding:8px;max-height:360px;overflow:auto;border:1px solid rgba(128,128,128,.35);"
    "border-radius:4px;background:rgba(128,128,128,.08);font-family:ui-monospace,Menlo,Consolas,monospace;"
    "font-size:12px;line-height:1.4;white-space:pre;text-align:left"
)
_CODE = "font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px"


def esc(value: object) -> str:
    """Text for HTML: every value, always, including quotes (attribute-safe)."""
    return escape(str(value), quote=True)


def badge(text: str, color: str) -> str:
    return (
        f'<span style="display:inline-block;padding:0 7px;border-radius:9px;background:{color};color:#fff;'
        f'font-size:12px;font-weight:600;white-space:nowrap">{esc(text)}</span>'
    )


def verdict_badge(ok: bool, yes: str = "compatible", no: str = "incompatible") -> str:
    return badge(f"✓ {yes}", GREEN) if ok else badge(f"✗ {no}", RED)


_EFFECT_COLOR = {Effect.OK: GREEN, Effect.RISK: AMBER, Effect.BREAKS: RED}
_SEVERITY_COLOR = {Severity.INFO: BLUE, Severity.WARNING: AMBER, Severity.ERROR: RED}


def code(text: object) -> str:
    return f'<code style="{_CODE}">{esc(text)}</code>'


def box(*parts: str) -> str:
    return f'<div style="{_BOX}">{"".join(parts)}</div>'


def head(html: str) -> str:
    return f'<div style="{_HEAD}">{html}</div>'


def sub(text: str) -> str:
    return f'<div style="{_SUB}">{esc(text)}</div>'


def muted(text: str) -> str:
    return f'<span style="{_MUTED}">{esc(text)}</span>'


def pre(text: str) -> str:
    return f'<pre style="{_PRE}">{esc(text)}</pre>'


def table(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table whose cells are already HTML (callers escape text with `esc`)."""
    header = "".join(f'<th style="{_TH}">{esc(c)}</th>' for c in columns)
    body = "".join("<tr>" + "".join(f'<td style="{_TD}">{cell}</td>' for cell in row) + "</tr>" for row in rows)
    return f'<table style="{_TABLE}"><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>'


def when(millis: int | None) -> str:
    if not millis:
        return "—"
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def version_text(version: int | str | None) -> str:
    return "—" if version is None else str(version)


# --- schema versions and histories ---------------------------------------------------------------------------


def schema_version_html(version: SchemaVersion) -> str:
    status = badge("tombstone (deleted)", GREY) if version.deleted else badge("live", BLUE)
    title = f"{code(version.topic)} · version {esc(version.version)} · {esc(version.type)} {status}"
    meta = f"registered {esc(when(version.timestamp))}" + (f" by {esc(version.user)}" if version.user else "")
    parts = [head(title), f"<div>{muted(meta)}</div>"]
    if version.properties:
        parts.append(sub("Properties"))
        parts.append(table(("key", "value"), ((code(k), esc(v)) for k, v in sorted(version.properties.items()))))
    if not version.deleted:
        parts.append(pre(schema_text(version)))
    return box(*parts)


def history_html(history: Sequence[SchemaVersion], topic: str = "") -> str:
    name = topic or (history[0].topic if history else "")
    live = sum(1 for v in history if not v.deleted)
    tombstones = len(history) - live
    summary = f"{live} live version{'s' if live != 1 else ''}" + (
        f", {tombstones} tombstone{'s' if tombstones != 1 else ''}" if tombstones else ""
    )
    rows = (
        (
            esc(v.version),
            esc(v.type),
            badge("deleted", GREY) if v.deleted else badge("live", BLUE),
            esc(when(v.timestamp)),
            esc(v.user or "—"),
            esc(f"{len(v.data):,}"),
        )
        for v in history
    )
    parts = [
        head(f"History of {code(name)}" if name else "History"),
        f"<div>{muted(summary)}</div>",
        table(("version", "type", "status", "registered", "user", "bytes"), rows),
    ]
    latest = next((v for v in reversed(history) if not v.deleted), None)
    if latest is not None:
        parts.append(
            f'<details><summary style="cursor:pointer">Latest schema (version {esc(latest.version)})</summary>'
            f"{pre(schema_text(latest))}</details>"
        )
    return box(*parts)


# --- verdicts -------------------------------------------------------------------------------------------------


def problems_table(problems: Sequence[Problem]) -> str:
    rows = (
        (
            code(p.code),
            esc(p.direction_text),
            code(p.path or "—"),
            esc(p.message) + (f"<br>{muted('fix: ' + p.hint)}" if p.hint else ""),
        )
        for p in problems
    )
    return table(("rule", "direction", "where", "why"), rows)


def advisories_table(advisories: Sequence[Advisory]) -> str:
    rows = (
        (
            badge(a.severity, _SEVERITY_COLOR[a.severity]),
            code(a.code),
            code(a.path or "—"),
            esc(version_text(a.version)),
            esc(a.message) + (f"<br>{muted('hint: ' + a.hint)}" if a.hint else ""),
            esc(a.source or "—"),
        )
        for a in advisories
    )
    return table(("severity", "advisory", "where", "version", "what", "source"), rows)


def result_parts(result: CompatibilityResult) -> list[str]:
    checked = ", ".join(str(v) for v in result.checked_versions) or "none (no live version)"
    parts = [
        head(f"{verdict_badge(result.compatible)} under {code(result.strategy)}"),
        f"<div>{muted('checked against versions ' + checked)}</div>",
    ]
    if result.problems:
        parts += [sub(f"Problems ({len(result.problems)})"), problems_table(result.problems)]
    if result.advisories:
        parts += [
            sub(f"Advisories ({len(result.advisories)}, not counted by Pulsar)"),
            advisories_table(result.advisories),
        ]
    return parts


def compatibility_result_html(result: CompatibilityResult) -> str:
    return box(*result_parts(result))


def problem_html(problem: Problem) -> str:
    return box(problems_table((problem,)))


def advisory_html(advisory: Advisory) -> str:
    return box(advisories_table((advisory,)))


# --- policies -------------------------------------------------------------------------------------------------


def _effective_row(name: str, value: Effective[CompatibilityStrategy] | Effective[bool]) -> tuple[str, str, str]:
    shown = value.value
    text = ("yes" if shown else "no") if isinstance(shown, bool) else str(shown)
    return esc(name), code(text), esc(value.source)


def effective_policy_html(policy: EffectivePolicy) -> str:
    rows = [
        _effective_row("compatibility (producers and consumers)", policy.compatibility),
        _effective_row("compatibility (admin REST: upload, check)", policy.admin_compatibility),
        _effective_row("allow auto update", policy.allow_auto_update),
        _effective_row("validation enforced", policy.validation_enforced),
    ]
    parts = [head(f"Effective policy of {code(policy.topic)}")]
    if policy.is_system_topic:
        parts.append(f"<div>{badge('system topic', GREY)}</div>")
    parts.append(table(("policy", "value", "from"), rows))
    return box(*parts)


# --- diffs ----------------------------------------------------------------------------------------------------


def _effect(effect: Effect) -> str:
    return badge(effect, _EFFECT_COLOR[effect])


def changes_table(changes: Sequence[Change]) -> str:
    rows = (
        (
            code(c.kind),
            code(c.path or "—"),
            _effect(c.backward),
            _effect(c.forward),
            esc(c.message),
        )
        for c in changes
    )
    return table(("change", "path", "backward", "forward", "what"), rows)


_ADD = "background:rgba(47,158,95,.22)"
_DEL = "background:rgba(217,71,63,.22)"
_HUNK = "opacity:.6"


def text_diff(old: str, new: str) -> str:
    """A unified diff of the two normalised texts, added and removed lines tinted."""
    lines = list(line_diff(old, new).unified("old", "new", context=3))
    if not lines:
        return f"<div>{muted('the normalised texts are identical')}</div>"
    out = []
    for line in lines[2:]:
        style = (
            _ADD
            if line.startswith("+")
            else _DEL
            if line.startswith("-")
            else _HUNK
            if line[:2] in ("@@", "# ")
            else ""
        )
        out.append(f'<span style="display:block;{style}">{esc(line) or " "}</span>')
    return f'<pre style="{_PRE}">{"".join(out)}</pre>'


def diff_parts(diff: SchemaDiff, title: str = "Diff") -> list[str]:
    kinds = f"{diff.old_type} → {diff.new_type}" if diff.old_type != diff.new_type else str(diff.new_type)
    parts = [
        head(
            f"{esc(title)} {muted('(' + kinds + ')')} · backward {_effect(diff.backward)} · "
            f"forward {_effect(diff.forward)}"
        ),
        f"<div>{muted('backward: the new schema reads old data; forward: the old schema reads new data')}</div>",
    ]
    if diff.changes:
        parts += [sub(f"Changes ({len(diff.changes)})"), changes_table(diff.changes)]
    else:
        parts.append(f"<div>{muted('no semantic change')}</div>")
    parts.append(
        '<details><summary style="cursor:pointer">Text diff</summary>'
        f"{text_diff(diff.old_text, diff.new_text)}</details>"
    )
    return parts


def schema_diff_html(diff: SchemaDiff) -> str:
    return box(*diff_parts(diff))


# --- what-if, impact, plans -----------------------------------------------------------------------------------


def _admission(label: str, admission: Admission) -> tuple[str, str, str]:
    verdict = verdict_badge(admission.accepted, "accepted", "refused")
    detail = []
    if admission.version is not None:
        detail.append(f"version {admission.version}" + (" (new)" if admission.registered else " (existing)"))
    if admission.reason:
        detail.append(admission.reason)
    return esc(label), verdict, esc("; ".join(detail) or "—")


def strategy_table(what_if: WhatIf) -> str:
    rows = []
    for strategy in STRATEGIES:
        result = what_if.by_strategy[strategy]
        first = result.problems[0] if result.problems else None
        name = code(strategy) + (f" {badge('effective', GREY)}" if strategy is what_if.effective.value else "")
        rows.append(
            (
                name,
                verdict_badge(result.compatible, "accepted", "refused"),
                esc(STRATEGY_UPGRADE_ORDER[strategy]),
                (code(first.code) + " " + esc(first.message)) if first else "",
            )
        )
    return table(("strategy", "verdict", "upgrade order", "first problem"), rows)


def what_if_html(what_if: WhatIf) -> str:
    effective = f"{code(what_if.effective.value)} {muted('(from ' + what_if.effective.source + ')')}"
    parts = [
        head(f"What if a {esc(what_if.candidate_type)} candidate were registered on {code(what_if.topic)}?"),
        f"<div>effective strategy {effective} · latest version {esc(version_text(what_if.latest_version))}</div>",
        *result_parts(what_if.result)[:1],
    ]
    if what_if.duplicate_of is not None:
        parts.append(f"<div>{badge('duplicate', BLUE)} identical to live version {esc(what_if.duplicate_of)}</div>")
    parts += [
        sub("Admission (simulated, nothing written)"),
        table(
            ("who", "verdict", "detail"),
            (
                _admission("registration (REST upload)", what_if.registration),
                _admission("producer connecting with it", what_if.producer),
                _admission("consumer connecting with it", what_if.consumer),
            ),
        ),
        sub("Under each strategy"),
        strategy_table(what_if),
    ]
    if what_if.result.problems:
        parts += [sub(f"Problems under {what_if.result.strategy}"), problems_table(what_if.result.problems)]
    if what_if.advisories:
        parts += [sub(f"Advisories ({len(what_if.advisories)})"), advisories_table(what_if.advisories)]
    parts.append(sub("Upgrade order"))
    order_rows = [(esc("the strategy guarantees"), code(what_if.strategy_order), "")]
    if what_if.change_order is not None:
        order_rows.append(
            (esc("this change needs"), code(what_if.change_order.order), esc(what_if.change_order.explanation))
        )
    parts.append(table(("", "order", "why"), order_rows))
    if what_if.diff is not None:
        parts += diff_parts(what_if.diff, f"Diff against version {version_text(what_if.latest_version)}")
    if what_if.plan is not None:
        parts += plan_parts(what_if.plan)
    return box(*parts)


def _client(client: ClientRecord) -> str:
    name = code(client.name)
    if client.subscription:
        name += f" {muted('subscription ' + client.subscription)}"
    return name


def plan_parts(plan: UpgradePlan) -> list[str]:
    verdict = badge("feasible", GREEN) if plan.feasible else badge("no safe order", RED)
    target = f"version {plan.target_version}" if isinstance(plan.target_version, int) else "the candidate"
    parts = [sub(f"Upgrade plan to {target}"), f"<div>{verdict}</div>"]
    if plan.steps:
        rows = (
            (
                esc(step.number),
                esc(f"{step.role}s"),
                "<br>".join(f"{_client(c)} {muted('from version ' + version_text(c.version))}" for c in step.clients),
                esc(step.explanation),
            )
            for step in plan.steps
        )
        parts.append(table(("step", "upgrade", "clients", "why this is safe"), rows))
    elif plan.feasible:
        parts.append(f"<div>{muted('every recorded client is already on the target version')}</div>")
    if plan.reason:
        parts.append(f"<div>{esc(plan.reason)}</div>")
    if plan.unaffected:
        names = ", ".join(c.name for c in plan.unaffected)
        parts.append(f"<div>{muted('unaffected (no schema): ' + names)}</div>")
    return parts


def upgrade_plan_html(plan: UpgradePlan) -> str:
    return box(head(f"Upgrade plan for {code(plan.topic)}"), *plan_parts(plan)[1:])


def policy_impact_html(impact: PolicyImpact) -> str:
    affected = [t for t in impact.topics if t.affected]
    summary = (
        f"{len(impact.topics)} topics · {len(affected)} affected · {len(impact.refused_topics)} would refuse their "
        f"latest version · {len(impact.refused_clients)} clients refused"
    )
    parts = [
        head(f"If {code(impact.namespace)} used {code(impact.proposed)}"),
        f"<div>{muted(summary)}</div>",
    ]
    rows = (
        (
            code(t.topic),
            f"{code(t.current.value)} {muted('(' + t.current.source + ')')}",
            badge("topic override keeps it", GREY)
            if t.overridden
            else (verdict_badge(not t.affected, "unaffected", "affected")),
            esc(", ".join(str(v) for v in t.refused_versions) or "—"),
            esc(", ".join(c.client.name for c in t.refused_clients) or "—"),
            (code(t.first_problem.code) + " " + esc(t.first_problem.message)) if t.first_problem else "",
        )
        for t in impact.topics
    )
    parts.append(table(("topic", "now", "verdict", "refused versions", "refused clients", "first problem"), rows))
    return box(*parts)


# The core's values and their renderers; registry.views registers each with IPython's HTML formatter.
RENDERERS: dict[type, Callable[[Any], str]] = {
    SchemaVersion: schema_version_html,
    CompatibilityResult: compatibility_result_html,
    Problem: problem_html,
    Advisory: advisory_html,
    EffectivePolicy: effective_policy_html,
    SchemaDiff: schema_diff_html,
    WhatIf: what_if_html,
    UpgradePlan: upgrade_plan_html,
    PolicyImpact: policy_impact_html,
}


def to_html(value: object) -> str:
    """The HTML Jupyter shows for one of the core's values (TypeError for any other value)."""
    render = RENDERERS.get(type(value))
    if render is None:
        raise TypeError(
            f"no HTML view for {type(value).__name__}; views exist for {', '.join(t.__name__ for t in RENDERERS)}"
        )
    return render(value)
