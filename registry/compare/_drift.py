"""Each topic's state between two registries, versions compared as Pulsar's duplicate check compares them
(§3.3, `_dedup.py`): same type and the same bytes, or for AVRO/JSON/PROTOBUF equal parsed Avro schemas, so a
schema stored with other whitespace or key order is the same version. Properties are not compared (Pulsar's
duplicate check ignores them too).

Where both storages list fingerprints, a history whose fingerprints agree (or whose equality digests agree) is
`same` without reading its text; only the histories that differ are read whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from .._errors import InvalidSchemaError
from .._model import SchemaVersion
from .._pulsar_version import PulsarLine
from .._schema_data import parse_avro_data
from .._types import AVRO_PARSED_TYPES
from ..storage._base import Fingerprint
from ._sides import Side
from ._values import TopicDrift, TopicState


class _Entry(Protocol):
    @property
    def version(self) -> int: ...
    @property
    def deleted(self) -> bool: ...


def same_version(a: SchemaVersion, b: SchemaVersion, line: PulsarLine) -> bool:
    """Whether two stored entries are the same version as Pulsar would see it."""
    if a.version != b.version or a.deleted != b.deleted:
        return False
    if a.deleted:
        return True
    if a.type is not b.type:
        return False
    if a.data == b.data:
        return True
    if a.type not in AVRO_PARSED_TYPES:
        return False
    try:
        return parse_avro_data(a.type, a.data, line=line) == parse_avro_data(b.type, b.data, line=line)
    except InvalidSchemaError:  # an unparsable version equals only its own bytes
        return False


def same_print(a: Fingerprint, b: Fingerprint) -> bool | None:
    """The same comparison on fingerprints: None when they cannot tell (digests differ, equality unknown)."""
    if a.version != b.version or a.deleted != b.deleted:
        return False
    if a.deleted:
        return True
    if a.type is not b.type:
        return False
    if a.sha256 == b.sha256:
        return True
    if a.equality is not None and b.equality is not None:
        return a.equality == b.equality
    return None if a.type in AVRO_PARSED_TYPES else False


def topic_drift(schema_id: str, source: Side, target: Side, line: PulsarLine) -> TopicDrift | None:
    """The topic's state, or None when neither side has a history for it."""
    a_prints, b_prints = source.fingerprints(schema_id), target.fingerprints(schema_id)
    if a_prints is not None and b_prints is not None:
        if not a_prints and not b_prints:
            return None
        if len(a_prints) == len(b_prints) and all(same_print(x, y) for x, y in zip(a_prints, b_prints, strict=True)):
            return _drift(schema_id, source, target, TopicState.SAME, a_prints, b_prints, None)
    a, b = source.history(schema_id), target.history(schema_id)
    if not a and not b:
        return None
    state, first = state_of(a, b, lambda x, y: same_version(x, y, line))
    return _drift(schema_id, source, target, state, a, b, first)


def state_of(
    a: Sequence[SchemaVersion], b: Sequence[SchemaVersion], equal: Callable[[SchemaVersion, SchemaVersion], bool]
) -> tuple[TopicState, int | None]:
    """The state of history `b` against `a`, and the first version number at which they part."""
    if not b:
        return TopicState.ONLY_IN_FROM, None
    if not a:
        return TopicState.ONLY_IN_TO, None
    common = 0
    while common < min(len(a), len(b)) and equal(a[common], b[common]):
        common += 1
    first = None if common == len(a) == len(b) else (a if common < len(a) else b)[common].version
    if b[-1].deleted and not a[-1].deleted:
        return TopicState.DELETED_IN_TO, first
    if a[-1].deleted and not b[-1].deleted:
        return TopicState.DELETED_IN_FROM, first
    if common == len(a) == len(b):
        return TopicState.SAME, None
    if common == len(b):
        return TopicState.TO_BEHIND, first
    if common == len(a):
        return TopicState.TO_AHEAD, first
    return TopicState.DIVERGED, first


def _drift(
    schema_id: str,
    source: Side,
    target: Side,
    state: TopicState,
    a: Sequence[_Entry],
    b: Sequence[_Entry],
    first: int | None,
) -> TopicDrift:
    a_live, b_live = _live(a), _live(b)
    return TopicDrift(
        topic=source.names.get(schema_id) or target.names.get(schema_id) or f"persistent://{schema_id}",
        state=state,
        from_latest=a_live[-1].version if a_live else None,
        to_latest=b_live[-1].version if b_live else None,
        from_versions=len(a_live),
        to_versions=len(b_live),
        first_difference=first,
    )


def _live(entries: Sequence[_Entry]) -> Sequence[_Entry]:
    """The entries after the last tombstone (§3.2), for fingerprints as for versions."""
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].deleted:
            return entries[i + 1 :]
    return entries
