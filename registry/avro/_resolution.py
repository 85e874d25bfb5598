"""Can a reader schema read data written with a writer schema? Avro 1.12's answer, as Pulsar asks it.

Pulsar's validator asks Avro's `Resolver` (after `Schema.applyAliases`) whether the resolving grammar has
errors (avro-resolution.md). We walk the same decision tree, but instead of stopping at a boolean we collect
every error with a JSON pointer into each schema. Record names are not compared; enum symbol loss is no error.
`read_outcome` turns one walk into Pulsar's problems and the advisories of what Avro itself would refuse,
for the compatibility checks (_compatibility.py) and the Avro diff alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .._changes import Advisory, AdvisoryCode, Outcome, Severity
from .._model import Direction, Problem, RuleCode
from ._nodes import (
    Array,
    AvroSchema,
    Enum,
    Field,
    Fixed,
    Map,
    Named,
    Node,
    Record,
    Union,
    default_json,
    default_problem,
)

# Avro's promotions, writer kind → reader kinds that can read it (spec facts as data).
PROMOTIONS: Final[dict[str, frozenset[str]]] = {
    "int": frozenset({"long", "float", "double"}),
    "long": frozenset({"float", "double"}),
    "float": frozenset({"double"}),
    "string": frozenset({"bytes"}),
    "bytes": frozenset({"string"}),
}
_PRIMITIVE_KINDS: Final = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


@dataclass(frozen=True, slots=True)
class Finding:
    """One resolution error; the strategy layer adds direction and version to make it a Problem."""

    code: RuleCode
    message: str
    reader_path: str
    writer_path: str
    hint: str


@dataclass(frozen=True, slots=True)
class Note:
    """Something the resolver accepts that other tools or later reads may not (turned into advisories)."""

    kind: str  # "enum_symbols_missing" | "record_renamed" | "union_branch_by_structure"
    reader_path: str
    writer_path: str
    reader_name: str
    writer_name: str
    symbols: tuple[str, ...] = ()


class InvalidDefaultError(Exception):
    """Resolution needed a reader default that Avro cannot encode: Java throws here (pulsar-semantics §4.8)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


@dataclass(frozen=True, slots=True)
class _Verdict:
    error_here: bool  # this level is an ErrorAction
    has_errors: bool  # an ErrorAction anywhere below (Symbol.hasErrors)
    match_error: bool = False  # Resolver.hasMatchError: record-level or top-level field error


# Verdicts are values: these are shared rather than built on every step. Indexed by the three flags as bits.
_VERDICTS: Final = tuple(_Verdict(bool(i & 4), bool(i & 2), bool(i & 1)) for i in range(8))
_OK: Final = _VERDICTS[0]
_ERROR: Final = _VERDICTS[6]  # an error at this level
_BELOW: Final = _VERDICTS[2]  # an error further down


def _passing(has_errors: bool) -> _Verdict:
    """The verdict of a level that only passes on what is below it (arrays, maps, unions)."""
    return _BELOW if has_errors else _OK


def resolve(reader: AvroSchema, writer: AvroSchema) -> list[Finding]:
    """Every reason `reader` cannot read data written with `writer`; empty when it can.

    Raises InvalidDefaultError where Avro itself would throw while resolving.
    """
    return resolve_with_notes(reader, writer)[0]


def resolve_with_notes(reader: AvroSchema, writer: AvroSchema) -> tuple[list[Finding], list[Note]]:
    """Findings plus notes on what resolution let through (renamed records, enum symbols it cannot map)."""
    resolver = Resolver(reader, writer)
    resolver.resolve(writer.root, reader.root, "", True)
    return resolver.findings, resolver.notes


class Resolver:
    """One reader schema, resolving writer nodes against its nodes (the reader's aliases rename the writer)."""

    def __init__(self, reader: AvroSchema, writer: AvroSchema | None = None) -> None:
        """The reader's aliases rename the writer, unless the two schemas are equal: `Schema.applyAliases`
        returns the writer untouched when `writer.equals(reader)` (Avro 1.11 and 1.12), so an Avro-equal copy
        of a schema reads the original field by field even where its aliases would collide ("Duplicate field")
        or swap names (avro-resolution.md §3.1). Without `writer`, the reader's aliases always apply."""
        self.findings: list[Finding] = []
        self.notes: list[Note] = []
        # (writer record, reader record, recording?) → verdict: records hash by identity, cheaply.
        self.cache: dict[tuple[Record, Record, bool], _Verdict] = {}
        # Schema.applyAliases: the reader's aliases rename writer types and writer fields.
        self.aliases, self.field_aliases = reader.alias_maps
        if (self.aliases or self.field_aliases) and writer is not None and writer == reader:
            self.aliases, self.field_aliases = {}, {}
        # Identical subtrees (equal structure ids) need no walk, unless aliases could rename what the writer's
        # subtree means.
        self.by_structure = not self.aliases and not self.field_aliases

    def can_read(self, w: Node, r: Node) -> bool:
        """Whether reader node `r` reads data written with writer node `w` (no findings recorded)."""
        try:
            return not self.resolve(w, r, "", False).has_errors
        except InvalidDefaultError:
            return False

    def writer_fullname(self, w: Named) -> str:
        return self.aliases.get(w.fullname, w.fullname)

    def writer_simple_name(self, w: Named) -> str:
        return self.writer_fullname(w).rpartition(".")[2]

    def writer_field_name(self, record_name: str, field: Field) -> str:
        return self.field_aliases.get(record_name, {}).get(field.name, field.name)

    def report(self, record: bool, finding: Finding) -> None:
        if record:
            self.findings.append(finding)

    def resolve(self, w: Node, r: Node, where: str, record: bool) -> _Verdict:
        if r.sid == w.sid and self.by_structure:
            return _OK
        if isinstance(w, Union):
            if self.union_equivalent(w, r, {}):
                # Resolver.WriterUnion: equivalent unions are read with the writer's own grammar, no errors.
                return _OK
            verdicts = [self.resolve(b, r, where, record) for b in w.branches]
            return _passing(any(v.has_errors for v in verdicts))
        if w.kind == r.kind:
            if w.kind in _PRIMITIVE_KINDS:
                return _OK
            if isinstance(w, Record):
                assert isinstance(r, Record)
                return self.resolve_record(w, r, where, record)
            if isinstance(w, Array):
                assert isinstance(r, Array)
                inner = self.resolve(w.items, r.items, f"{where}[]", record)
                return _passing(inner.has_errors)
            if isinstance(w, Map):
                assert isinstance(r, Map)
                inner = self.resolve(w.values, r.values, f"{where}{{}}", record)
                return _passing(inner.has_errors)
            assert isinstance(w, (Enum, Fixed)) and isinstance(r, (Enum, Fixed))
            if self.writer_simple_name(w) != r.name:
                self.report(
                    record,
                    Finding(
                        RuleCode.NAME_MISMATCH,
                        f"{_at(where)}{w.kind} names differ: the reader has {r.fullname}, the writer {w.fullname}",
                        r.pointer,
                        w.pointer,
                        f"keep the name {w.name!r}, or add the alias {w.fullname!r} to the reader's {r.kind}",
                    ),
                )
                return _ERROR
            if isinstance(w, Enum) and isinstance(r, Enum) and record and r.default is None:
                missing = tuple(sym for sym in w.symbols if sym not in set(r.symbols))
                if missing:
                    self.notes.append(
                        Note("enum_symbols_missing", r.pointer, w.pointer, r.fullname, w.fullname, missing)
                    )
            if isinstance(w, Fixed) and isinstance(r, Fixed) and w.size != r.size:
                self.report(
                    record,
                    Finding(
                        RuleCode.FIXED_SIZE_MISMATCH,
                        f"{_at(where)}fixed {r.fullname} has size {r.size} in the reader but {w.size} in the writer",
                        r.pointer,
                        w.pointer,
                        f"keep the size at {w.size} bytes; a new size needs a new fixed type",
                    ),
                )
                return _ERROR
            return _OK
        if isinstance(r, Union):
            return self.resolve_reader_union(w, r, where, record)
        if r.kind in PROMOTIONS.get(w.kind, ()):
            return _OK
        self.report(
            record,
            Finding(
                RuleCode.TYPE_MISMATCH,
                f"{_at(where)}the reader's {r.label} cannot read the writer's {w.label}",
                r.pointer,
                w.pointer,
                _type_hint(w, r),
            ),
        )
        return _ERROR

    def union_equivalent(self, w: Node, r: Node, seen: dict[tuple[int, int], bool]) -> bool:
        """Avro's `Resolver.unionEquiv`: same shape, named types compared by short name (after aliases),
        enums by symbols in order, records by field names in order — defaults and namespaces not compared."""
        if w.kind != r.kind:
            return False
        if isinstance(w, Named) and isinstance(r, Named) and self.writer_simple_name(w) != r.name:
            return False
        if isinstance(w, Array) and isinstance(r, Array):
            return self.union_equivalent(w.items, r.items, seen)
        if isinstance(w, Map) and isinstance(r, Map):
            return self.union_equivalent(w.values, r.values, seen)
        if isinstance(w, Fixed) and isinstance(r, Fixed):
            return w.size == r.size
        if isinstance(w, Enum) and isinstance(r, Enum):
            return w.symbols == r.symbols
        if isinstance(w, Union) and isinstance(r, Union):
            return len(w.branches) == len(r.branches) and all(
                self.union_equivalent(a, b, seen) for a, b in zip(w.branches, r.branches, strict=True)
            )
        if isinstance(w, Record) and isinstance(r, Record):
            key = (id(w), id(r))
            if key not in seen:
                seen[key] = True  # optimistic, as Avro is, for recursive records
                name = self.writer_fullname(w)
                seen[key] = len(w.fields) == len(r.fields) and all(
                    self.writer_field_name(name, wf) == rf.name and self.union_equivalent(wf.type, rf.type, seen)
                    for wf, rf in zip(w.fields, r.fields, strict=True)
                )
            return seen[key]
        return True

    def resolve_record(self, w: Record, r: Record, where: str, record: bool) -> _Verdict:
        key = (w, r, record)
        cached = self.cache.get(key)
        if cached is not None:
            return cached  # also breaks recursion, like Resolver's `seen` map
        self.cache[key] = _OK
        name = self.writer_fullname(w)
        if record and name != r.fullname:
            self.notes.append(Note("record_renamed", r.pointer, w.pointer, r.fullname, w.fullname))
        renames = self.field_aliases.get(name)
        renamed = None if renames is None else {renames.get(f.name, f.name) for f in w.fields}
        if renamed is not None and len(renamed) < len(w.fields):
            self.report_duplicate(w, r, renames or {})
            verdict = _VERDICTS[7]
            self.cache[key] = verdict
            return verdict
        # Without aliases, a field with the same structure on both sides reads as it is: only the others need a
        # walk (same verdicts, far fewer steps on wide records).
        skip_same = self.by_structure
        has_errors = field_errors = False
        for wf in w.fields:
            rf = r.by_name.get(wf.name if renames is None else renames.get(wf.name, wf.name))
            if rf is not None and not (skip_same and rf.type.sid == wf.type.sid):
                verdict = self.resolve(wf.type, rf.type, _join(where, rf.name), record)
                has_errors |= verdict.has_errors
                field_errors |= verdict.error_here
        missing_required = False
        for rf in r.fields:
            if (rf.name in w.by_name) if renamed is None else (rf.name in renamed):
                continue
            if not rf.has_default:
                missing_required = True
                self.report(
                    record,
                    Finding(
                        RuleCode.READER_FIELD_WITHOUT_DEFAULT,
                        f"field {_join(where, rf.name)!r} ({rf.type.label}) is in the reader but not in the writer, "
                        "and has no default",
                        rf.pointer,
                        w.pointer,
                        f"give field {rf.name!r} a default, or keep it in the writer",
                    ),
                )
            elif not missing_required:
                # Resolver reads the default with GenericData.getDefaultValue, which throws on an invalid one.
                self.check_default(rf, where, w)
        verdict = _VERDICTS[
            (4 if missing_required else 0)
            | (2 if has_errors or missing_required else 0)
            | (1 if missing_required or field_errors else 0)
        ]
        self.cache[key] = verdict
        return verdict

    def report_duplicate(self, w: Record, r: Record, renames: dict[str, str]) -> None:
        """`Schema.applyAliases` renames the writer's fields by the reader's field aliases before anything is
        resolved; when a rename lands on a name the writer already has, `setFields` throws "Duplicate field"
        (Pulsar: 500 under BACKWARD/FULL, 409 under the transitive strategies; refused either way)."""
        seen: dict[str, str] = {}
        for wf in w.fields:
            new = renames.get(wf.name, wf.name)
            if new in seen:
                first = seen[new]
                renamed = wf.name if new != wf.name else first
                self.report(
                    True,
                    Finding(
                        RuleCode.DUPLICATE_FIELD,
                        f"Duplicate field {new} in record {r.fullname}: the reader's alias {renamed!r} of field "
                        f"{new!r} renames the writer's field {renamed!r}, and the writer has a field {new!r} too",
                        r.by_name[new].pointer if new in r.by_name else r.pointer,
                        w.pointer,
                        f"drop the alias {renamed!r} from field {new!r}: the writer still has both fields",
                    ),
                )
                return
            seen[new] = wf.name

    def check_default(self, rf: Field, where: str, w: Record) -> None:
        value = default_json(rf)
        if value is None and (
            rf.type.kind == "null"
            or (isinstance(rf.type, Union) and rf.type.branches and rf.type.branches[0].kind == "null")
        ):
            return
        problem = default_problem(rf.type, value)
        if problem is not None:
            raise InvalidDefaultError(
                Finding(
                    RuleCode.INVALID_DEFAULT,
                    f"field {_join(where, rf.name)!r} has the default {_json(value)}, which is not a valid "
                    f"{rf.type.label}{problem}; Pulsar fails this check with an internal error (HTTP 500)",
                    f"{rf.pointer}/default",
                    w.pointer,
                    f"make the default of {rf.name!r} a valid {rf.type.label}"
                    + (', or put "null" first in the union' if value is None and isinstance(rf.type, Union) else ""),
                )
            )

    def resolve_reader_union(self, w: Node, r: Union, where: str, record: bool) -> _Verdict:
        index = self.first_matching_branch(w, r, where)
        if index < 0:
            self.report(
                record,
                Finding(
                    RuleCode.NO_MATCHING_UNION_BRANCH,
                    f"{_at(where)}the reader's union {r.label} has no branch that can read the writer's {w.label}",
                    r.pointer,
                    w.pointer,
                    f"add {_branch_name(w)} to the reader's union",
                ),
            )
            return _ERROR
        branch = r.branches[index]
        if (
            record
            and isinstance(w, Record)
            and isinstance(branch, Named)
            and self.writer_fullname(w) != branch.fullname
        ):
            self.notes.append(Note("union_branch_by_structure", branch.pointer, w.pointer, branch.fullname, w.fullname))
        inner = self.resolve(w, branch, where, record)
        return _passing(inner.has_errors)

    def first_matching_branch(self, w: Node, r: Union, where: str) -> int:
        """Resolver.firstMatchingBranch: same kind (named: same full name, records also by structure),
        then promotion."""
        structure_match = -1
        for j, b in enumerate(r.branches):
            if w.kind != b.kind:
                continue
            if isinstance(w, Named):
                assert isinstance(b, Named)
                if self.writer_fullname(w) == b.fullname:
                    return j
                if isinstance(w, Record) and isinstance(b, Record):
                    probe = self.resolve_record(w, b, where, False)
                    if not probe.match_error and (structure_match < 0 or self.writer_simple_name(w) == b.name):
                        structure_match = j
            else:
                return j
        if structure_match >= 0:
            return structure_match
        promotable = PROMOTIONS.get(w.kind, frozenset())
        for j, b in enumerate(r.branches):
            if b.kind in promotable:
                return j
        return -1


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def _at(where: str) -> str:
    return f"field {where!r}: " if where else ""


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def _branch_name(node: Node) -> str:
    return node.fullname if isinstance(node, Named) else node.kind


def _type_hint(w: Node, r: Node) -> str:
    if w.kind in _PRIMITIVE_KINDS and r.kind in _PRIMITIVE_KINDS:
        return (
            f"keep the type {w.kind}; Avro only promotes int→long→float→double and string↔bytes, "
            "so introduce a new field for the new type"
        )
    return f"keep the type {w.label}, or add a new field for the new type"


def read_outcome(reader: AvroSchema, writer: AvroSchema, direction: Direction, version: int | None) -> Outcome:
    """Can `reader` read `writer`'s data: problems (Pulsar's verdict) and advisories (what it lets through).

    An invalid default that Avro throws on mid-resolution becomes an INVALID_DEFAULT problem (§4.8).
    """
    try:
        findings, notes = resolve_with_notes(reader, writer)
    except InvalidDefaultError as hit:
        findings, notes = [hit.finding], []
    problems = [
        Problem(
            code=f.code,
            message=f.message,
            direction=direction,
            version=version,
            reader_path=f.reader_path,
            writer_path=f.writer_path,
            hint=f.hint,
        )
        for f in findings
    ]
    return Outcome(problems, _advise(notes, direction, version))


def _advise(notes: list[Note], direction: Direction, version: int | None) -> list[Advisory]:
    by_structure = {(n.reader_path, n.writer_path) for n in notes if n.kind == "union_branch_by_structure"}
    advisories = []
    for note in notes:
        # BACKWARD: the new schema reads, so the writer holds the old name; FORWARD: the other way round.
        before, after = (
            (note.writer_name, note.reader_name)
            if direction is Direction.BACKWARD
            else (note.reader_name, note.writer_name)
        )
        if note.kind == "enum_symbols_missing":
            symbols = ", ".join(note.symbols)
            advisories.append(
                Advisory(
                    code=AdvisoryCode.ENUM_SYMBOL_REMOVED,
                    severity=Severity.ERROR,
                    direction=direction,
                    version=version,
                    path=note.reader_path,
                    message=f"enum {note.reader_name} (reader) lacks symbol(s) {symbols} that {note.writer_name} "
                    "(writer) has, and has no default: Pulsar accepts this, but reading a datum with such a "
                    "symbol fails",
                    hint=f'add the symbol(s) {symbols} back, or give the reader\'s enum a "default"',
                    source="Avro SchemaCompatibility (MISSING_ENUM_SYMBOLS); read-time failure",
                )
            )
        elif note.kind == "record_renamed" and (note.reader_path, note.writer_path) not in by_structure:
            advisories.append(
                Advisory(
                    code=AdvisoryCode.RECORD_RENAMED,
                    severity=Severity.WARNING,
                    direction=direction,
                    version=version,
                    path=note.reader_path,
                    message=f"record {before} was renamed {after}: Pulsar ignores record names, but Avro's "
                    "SchemaCompatibility (Confluent, Karapace) rejects the rename (NAME_MISMATCH)",
                    hint=f"keep the name {before}, or list it in the aliases of record {after}",
                    source="Avro SchemaCompatibility",
                )
            )
        elif note.kind == "union_branch_by_structure":
            advisories.append(
                Advisory(
                    code=AdvisoryCode.UNION_RECORD_BRANCH_RENAMED,
                    severity=Severity.WARNING,
                    direction=direction,
                    version=version,
                    path=note.reader_path,
                    message=f"record {note.writer_name} is read through the union branch {note.reader_name}, matched "
                    "by structure because the names differ; Avro's SchemaCompatibility rejects this",
                    hint=f"name the union branch {note.writer_name}, or add an alias",
                    source="Avro SchemaCompatibility",
                )
            )
    return advisories
