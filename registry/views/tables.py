"""pandas DataFrames from the core's values, for the app's tables, the notebooks and the charts.

One function per value, one row per item, columns named as the values' fields. Enums become their Pulsar
names (plain strings), epoch-millisecond timestamps become UTC datetimes, absent versions become <NA>.
Not imported by `registry/__init__.py`: the core must import without pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from registry import (
    STRATEGIES,
    Advisory,
    CompatibilityResult,
    ConnectedClient,
    PolicyImpact,
    PolicyPreview,
    Problem,
    Registry,
    SchemaDiff,
    SchemaVersion,
    TopicName,
    TopicPage,
    TopicSummary,
    UpgradePlan,
    WhatIf,
    to_json,
)
from registry._compatibility import pair_verdict
from registry._model import ClientRecord
from registry._pulsar_version import answering_as
from registry._types import SchemaData
from registry.explain._upgrade import STRATEGY_UPGRADE_ORDER

__all__ = [
    "COMPAT_MATRIX_COLUMNS",
    "advisories_frame",
    "changes_frame",
    "clients_frame",
    "compatibility_matrix",
    "history_frame",
    "policy_impact_frame",
    "problems_frame",
    "strategy_frame",
    "topics_frame",
    "upgrade_plan_frame",
]

# The columns of the Spark compat-matrix job's `compat_matrix` Parquet table (pipeline/compat_matrix.py).
COMPAT_MATRIX_COLUMNS = (
    "tenant",
    "namespace",
    "topic",
    "schema_type",
    "reader_version",
    "writer_version",
    "compatible",
    "readable",
    "rule_code",
    "reader_path",
    "writer_path",
    "message",
)

TOPIC_COLUMNS = (
    "topic",
    "tenant",
    "namespace",
    "name",
    "schema_type",
    "versions",
    "latest_version",
    "updated_at",
    "deleted",
    "strategy",
    "strategy_source",
    "producers",
    "consumers",
    "fields",
    "error",
)
HISTORY_COLUMNS = ("topic", "version", "type", "registered_at", "deleted", "user", "size", "properties")
STRATEGY_COLUMNS = (
    "strategy",
    "accepted",
    "effective",
    "upgrade_order",
    "problems",
    "rule_code",
    "message",
    "checked_versions",
)
PROBLEM_COLUMNS = ("code", "direction", "version", "path", "reader_path", "writer_path", "message", "hint")
ADVISORY_COLUMNS = ("code", "severity", "direction", "version", "path", "message", "hint", "source")
CHANGE_COLUMNS = ("kind", "path", "backward", "forward", "is_breaking", "before", "after", "message")
CLIENT_COLUMNS = ("topic", "role", "name", "subscription", "schema_type", "version", "connected_at", "replicator")
CONNECTED_COLUMNS = (
    "role",
    "name",
    "subscription",
    "subscription_type",
    "connected_since",
    "address",
    "client_version",
)
PREVIEW_COLUMNS = (
    "topic",
    "compatibility",
    "admin_compatibility",
    "allow_auto_update",
    "validation_enforced",
    "latest_refused",
    "refused_versions",
    "refused_clients",
    "rule_code",
    "message",
)
IMPACT_COLUMNS = (
    "topic",
    "current",
    "current_source",
    "proposed",
    "overridden",
    "affected",
    "latest_refused",
    "refused_versions",
    "refused_clients",
    "rule_code",
    "message",
)
PLAN_COLUMNS = ("step", "role", "client", "subscription", "from_version", "to_version", "explanation")


def _frame(rows: Iterable[Mapping[str, object]], columns: Sequence[str], *, ints: Sequence[str] = ()) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows), columns=list(columns))
    for column in ints:
        frame[column] = frame[column].astype("Int64")  # nullable: a missing version stays <NA>, not NaN
    return frame


def _when(millis: pd.Series) -> pd.Series:
    return pd.to_datetime(millis, unit="ms", utc=True)


def topics_frame(topics: TopicPage | Iterable[TopicSummary]) -> pd.DataFrame:
    """One row per topic of a `Registry.search_topics` page (or any TopicSummary rows), in the given order."""
    rows = topics.items if isinstance(topics, TopicPage) else topics
    frame = _frame(
        (
            {
                "topic": t.topic,
                "tenant": t.tenant,
                "namespace": t.namespace,
                "name": t.short_name,
                "schema_type": t.schema_type.value if t.schema_type else None,
                "versions": t.versions,
                "latest_version": t.latest_version,
                "updated_at": t.updated_at,
                "deleted": t.deleted,
                "strategy": t.strategy.value,
                "strategy_source": t.strategy_source.value,
                "producers": t.producers,
                "consumers": t.consumers,
                "fields": ", ".join(t.fields),
                "error": t.error,
            }
            for t in rows
        ),
        TOPIC_COLUMNS,
        ints=("latest_version", "updated_at"),
    )
    frame["updated_at"] = _when(frame["updated_at"])
    return frame


def history_frame(history: Sequence[SchemaVersion]) -> pd.DataFrame:
    """One row per version of `Registry.history(topic, include_deleted=...)`; tombstones have deleted=True."""
    frame = _frame(
        (
            {
                "topic": v.topic,
                "version": v.version,
                "type": v.type.value,
                "registered_at": v.timestamp,
                "deleted": v.deleted,
                "user": v.user,
                "size": len(v.data),
                "properties": ", ".join(f"{k}={val}" for k, val in sorted(v.properties.items())),
            }
            for v in history
        ),
        HISTORY_COLUMNS,
        ints=("version", "registered_at", "size"),
    )
    frame["registered_at"] = _when(frame["registered_at"])
    return frame


def strategy_frame(what_if: WhatIf) -> pd.DataFrame:
    """The 8 strategies × accepted/refused for one candidate, with the first problem of each refusal."""
    rows = []
    for strategy in STRATEGIES:
        result = what_if.by_strategy[strategy]
        first = result.problems[0] if result.problems else None
        rows.append(
            {
                "strategy": strategy.value,
                "accepted": result.compatible,
                "effective": strategy is what_if.effective.value,
                "upgrade_order": STRATEGY_UPGRADE_ORDER[strategy].value,
                "problems": len(result.problems),
                "rule_code": first.code.value if first else None,
                "message": first.message if first else "",
                "checked_versions": ", ".join(str(v) for v in result.checked_versions),
            }
        )
    return _frame(rows, STRATEGY_COLUMNS)


def problems_frame(problems: CompatibilityResult | Iterable[Problem]) -> pd.DataFrame:
    """Why a candidate is refused: one row per problem (rule code, direction, version, JSON pointers)."""
    items = problems.problems if isinstance(problems, CompatibilityResult) else problems
    return _frame((to_json(p) for p in items), PROBLEM_COLUMNS, ints=("version",))


def advisories_frame(advisories: CompatibilityResult | WhatIf | Iterable[Advisory]) -> pd.DataFrame:
    """What Pulsar accepts but will hurt later: one row per advisory."""
    items = advisories.advisories if isinstance(advisories, CompatibilityResult | WhatIf) else advisories
    return _frame((to_json(a) for a in items), ADVISORY_COLUMNS, ints=("version",))


def changes_frame(diff: SchemaDiff | None) -> pd.DataFrame:
    """The semantic changes of a diff, each with its effect on BACKWARD and FORWARD reading."""
    return _frame((to_json(c) for c in (diff.changes if diff is not None else ())), CHANGE_COLUMNS)


def clients_frame(clients: Iterable[ClientRecord]) -> pd.DataFrame:
    """Recorded producers and consumers (`Registry.clients(topic)`), with the schema version each uses."""
    rows = [to_json(c) | {"connected_at": c.connected_at or None} for c in clients]
    frame = _frame(rows, CLIENT_COLUMNS, ints=("version", "connected_at"))
    frame["connected_at"] = _when(frame["connected_at"])
    return frame


def connected_frame(clients: Iterable[ConnectedClient]) -> pd.DataFrame:
    """Producers and consumers connected now, as a broker's topic stats list them (no schema versions)."""
    return _frame([to_json(c) for c in clients], CONNECTED_COLUMNS)


def policy_impact_frame(impact: PolicyImpact) -> pd.DataFrame:
    """A proposed namespace strategy, topic by topic: which live versions and clients it would refuse."""
    return _frame(
        (
            {
                "topic": t.topic,
                "current": t.current.value.value,
                "current_source": t.current.source.value,
                "proposed": t.proposed.value,
                "overridden": t.overridden,
                "affected": t.affected,
                "latest_refused": t.latest_refused,
                "refused_versions": ", ".join(str(v) for v in t.refused_versions),
                "refused_clients": ", ".join(c.client.name for c in t.refused_clients),
                "rule_code": t.first_problem.code.value if t.first_problem else None,
                "message": t.first_problem.message if t.first_problem else "",
            }
            for t in impact.topics
        ),
        IMPACT_COLUMNS,
    )


def policy_preview_frame(preview: PolicyPreview) -> pd.DataFrame:
    """A previewed policy change, one row per topic it reaches: the values in force now → then, and what it
    would refuse. Topics it does not reach are in `shielded_frame`."""
    return _frame(
        (
            {
                "topic": t.topic,
                "compatibility": _now_then(t.current.compatibility.value, t.proposed.compatibility.value),
                "admin_compatibility": _now_then(
                    t.current.admin_compatibility.value, t.proposed.admin_compatibility.value
                ),
                "allow_auto_update": _now_then(t.current.allow_auto_update.value, t.proposed.allow_auto_update.value),
                "validation_enforced": _now_then(
                    t.current.validation_enforced.value, t.proposed.validation_enforced.value
                ),
                "latest_refused": t.latest_refused,
                "refused_versions": ", ".join(str(v) for v in t.refused_versions),
                "refused_clients": len(t.refused_clients),
                "rule_code": t.first_problem.code.value if t.first_problem else None,
                "message": t.first_problem.message if t.first_problem else "",
            }
            for t in preview.topics
            if t.changed
        ),
        PREVIEW_COLUMNS,
    )


def preview_clients_frame(preview: PolicyPreview) -> pd.DataFrame:
    """The recorded producers and consumers a previewed change would keep out, with the broker's reason."""
    return _frame(
        (
            {
                "topic": c.client.topic,
                "role": c.client.role.value,
                "client": c.client.name,
                "subscription": c.client.subscription,
                "version": c.client.version,
                "reason": c.reason,
            }
            for c in preview.refused_clients
        ),
        ("topic", "role", "client", "subscription", "version", "reason"),
        ints=("version",),
    )


def shielded_frame(preview: PolicyPreview) -> pd.DataFrame:
    """The topics a previewed namespace change does not (fully) reach, and why."""
    return _frame(
        ({"topic": t.topic, "kept_by": "; ".join(t.shielded_by)} for t in preview.shielded),
        ("topic", "kept_by"),
    )


def _now_then(now: object, then: object) -> str:
    def text(value: object) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    return text(now) if now == then else f"{text(now)} → {text(then)}"


def upgrade_plan_frame(plan: UpgradePlan) -> pd.DataFrame:
    """One row per client per step of an upgrade plan (empty when no client needs to move)."""
    return _frame(
        (
            {
                "step": step.number,
                "role": step.role.value,
                "client": c.name,
                "subscription": c.subscription,
                "from_version": c.version,
                "to_version": str(plan.target_version),
                "explanation": step.explanation,
            }
            for step in plan.steps
            for c in step.clients
        ),
        PLAN_COLUMNS,
        ints=("step", "from_version"),
    )


def compatibility_matrix(registry: Registry, topic: str, *, max_versions: int = 20) -> pd.DataFrame:
    """Can each live version read data written with each other one? One row per (reader, writer) pair.

    The same rows and columns as the Spark compat-matrix job's `compat_matrix` table (pipeline/compat_matrix.py),
    for one topic and without Spark: `compatible` is Pulsar's verdict for the reader checked against the writer
    under BACKWARD (with the first problem's rule code and pointers); `readable` adds the wire breaks Pulsar's
    checkers let through. Pairs of a version with itself are left out, as in the job.
    """
    name = TopicName.parse(topic)
    live = registry.history(topic)
    checked = live[-max_versions:] if max_versions > 0 else live
    schemas = [SchemaData(e.type, e.data, e.properties) for e in checked]
    rows = []
    for r, reader in enumerate(checked):
        for w, writer in enumerate(checked):
            if r == w:
                continue
            with answering_as(registry.pulsar_line):  # the verdicts of the line the registry answers as
                verdict = pair_verdict(schemas[r], schemas[w], writer.version)
            first = verdict.first
            rows.append(
                {
                    "tenant": name.tenant,
                    "namespace": str(name.namespace_name),
                    "topic": str(name.base),
                    "schema_type": reader.type.value,
                    "reader_version": reader.version,
                    "writer_version": writer.version,
                    "compatible": verdict.compatible,
                    "readable": verdict.readable,
                    "rule_code": first.code.value if first else None,
                    "reader_path": first.reader_path if first else None,
                    "writer_path": first.writer_path if first else None,
                    "message": first.message if first else None,
                }
            )
    return _frame(rows, COMPAT_MATRIX_COLUMNS, ints=("reader_version", "writer_version"))
