"""Field statistics of the data as the reader sees it: counts, nulls, numeric and time ranges, enum symbols and
boolean values per topic, part and field path (pipeline/data_audit.py).
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, time
from decimal import Decimal
from functools import partial
from typing import Any

from registry import (
    SchemaType,
)

from ._data_plan import Plan
from ._payload import time_text

# --- statistics ------------------------------------------------------------------------------------------------


def fold_field_stats(
    topic: str,
    plan: Plan,
    datums: list[Any],
    stats: dict[tuple[str, str | None, str | None, str], list[Any]],
    symbols: Counter[tuple[str, str | None, str | None, str]],
) -> None:
    """Fold the statistics of these datums (read by `plan`) into the running totals: per (topic, part,
    field, type) [values, nulls, min, max, min_time, max_time]; per (topic, part, field, symbol) a count. A
    primitive value (a primitive topic, or a primitive KEY_VALUE part) is one field with no name."""
    protobuf = plan.codec == "protobuf"
    part = plan.part
    for label, path, kind, type_name in plan.fields:
        if not path:
            values = datums
        else:
            values = _protobuf_column(datums, path[0]) if protobuf else _column(datums, path)
        nulls = values.count(None)
        present = values if not nulls else [v for v in values if v is not None]
        key = (topic, part, label, type_name)
        total = stats.get(key)
        if total is None:
            total = stats[key] = [0, 0, None, None, None, None]
        total[0] += len(values)
        total[1] += nulls
        if present and kind == "number":
            numbers = [float(v) for v in present] if type_name == "decimal" else present
            _widen(total, 2, float(min(numbers)), float(max(numbers)))
        elif present and kind == "time":
            iso = partial(time_text, SchemaType(type_name)) if plan.codec == "primitive" else iso_text
            _widen(total, 4, iso(min(present)), iso(max(present)))
        elif kind == "symbol":
            for symbol, count in Counter(present).items():
                text = ("true" if symbol else "false") if isinstance(symbol, bool) else str(symbol)
                symbols[(topic, part, label, text)] += count


def _widen(total: list[Any], at: int, low: Any, high: Any) -> None:
    if total[at] is None or low < total[at]:
        total[at] = low
    if total[at + 1] is None or high > total[at + 1]:
        total[at + 1] = high


def _column(datums: list[Any], path: tuple[str, ...]) -> list[Any]:
    first, *rest = path
    try:
        values = [d.get(first) for d in datums]  # record datums are dicts: the common case, without a check
    except AttributeError:
        values = [d.get(first) if isinstance(d, dict) else None for d in datums]
    for name in rest:
        values = [v.get(name) if isinstance(v, dict) else None for v in values]
    return values


def _protobuf_column(messages: list[Any], name: str) -> list[Any]:
    if not messages:
        return []
    descriptor = messages[0].DESCRIPTOR.fields_by_name[name]
    if descriptor.has_presence:
        values = [getattr(m, name) if m.HasField(name) else None for m in messages]
    else:
        values = [getattr(m, name) for m in messages]
    if descriptor.enum_type is not None:
        names = {v.number: v.name for v in descriptor.enum_type.values}
        values = [None if v is None else names.get(v, str(v)) for v in values]
    if descriptor.message_type is not None:
        values = [None if v is None else "set" for v in values]
    return values


def iso_text(value: Any) -> str:
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)
