"""Pulsar admin v2 DTOs, field for field (pulsar-semantics.md §7.1): what Pulsar tooling sends and reads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from registry import InvalidSchemaError, NamespacePolicy, SchemaInfo, SchemaType, SchemaVersion
from registry._wire import policies_json, schema_response

AVRO_EXAMPLE = (
    '{"type":"record","name":"Order","namespace":"acme","fields":[{"name":"id","type":"string"},'
    '{"name":"amount","type":"double"},{"name":"note","type":["null","string"],"default":null}]}'
)
# The names Java's SchemaType.valueOf accepts, in the enum's order (the client-side AUTO* types parse, and the
# registry then refuses them as Pulsar's SchemaDataValidator does).
_WIRE_TYPE_NAMES = tuple(t.value for t in SchemaType)


class ErrorBody(BaseModel):
    """Pulsar's RestException body."""

    reason: str = Field(examples=["Schema not found"])


class PostSchemaPayload(BaseModel):
    """A schema as `pulsar-admin schemas upload` posts it. `schema` is "" for primitive types and the
    `{"key": …, "value": …}` form for KEY_VALUE, with the part types in `properties`."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"type": "AVRO", "schema": AVRO_EXAMPLE, "properties": {"owner": "orders"}}]}
    )

    type: str = Field(description="Pulsar SchemaType name, e.g. AVRO, JSON, STRING, KEY_VALUE, PROTOBUF_NATIVE")
    schema_: str = Field(alias="schema", description="the schema definition text")
    properties: dict[str, str] | None = Field(default=None, description="SchemaInfo properties")

    def to_info(self) -> SchemaInfo:
        """Pulsar reads the type with Java's `SchemaType.valueOf(payload.getType())` (SchemasResourceBase
        postSchemaAsync, testCompatibilityAsync, getVersionBySchemaAsync): exact, case-sensitive enum names, so
        `avro` or `KEYVALUE` fail there (an internal error, 500). Refused here as invalid schema data (422),
        with the same refuse outcome; the facade's friendlier parsing is not the wire format."""
        if self.type not in _WIRE_TYPE_NAMES:
            valid = ", ".join(_WIRE_TYPE_NAMES)
            raise InvalidSchemaError(f"unknown schema type {self.type!r}: Pulsar expects exactly one of {valid}")
        return SchemaInfo(type=SchemaType(self.type), schema=self.schema_, properties=self.properties or {})


class GetSchemaResponse(BaseModel):
    version: int = Field(examples=[2])
    type: str = Field(examples=["AVRO"])
    timestamp: int = Field(description="broker clock at registration, ms since the epoch", examples=[1767225600000])
    data: str = Field(examples=[AVRO_EXAMPLE])
    properties: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def of(cls, entry: SchemaVersion) -> GetSchemaResponse:
        return cls(**schema_response(entry))


class GetAllVersionsSchemaResponse(BaseModel):
    getSchemaResponses: list[GetSchemaResponse]  # noqa: N815 (Pulsar's field name)


class LongSchemaVersion(BaseModel):
    version: int = Field(examples=[3])


class PostSchemaResponse(BaseModel):
    """Jackson's rendering of `LongSchemaVersion` inside PostSchemaResponse (inferred, §7.1)."""

    version: LongSchemaVersion


class IsCompatibilityResponse(BaseModel):
    compatibility: bool = Field(examples=[True])
    schemaCompatibilityStrategy: str = Field(examples=["FULL"])  # noqa: N815


class IndexEntry(BaseModel):
    """A storage index entry. This registry has no BookKeeper ledgers: ledgerId and entryId are -1."""

    ledgerId: int = -1  # noqa: N815
    entryId: int = -1  # noqa: N815
    version: int


class SchemaMetadata(BaseModel):
    info: IndexEntry = Field(description="the latest entry (a tombstone after a soft delete)")
    index: list[IndexEntry] = Field(description="every entry of the history, tombstones included, oldest first")


class TenantInfo(BaseModel):
    """Pulsar's TenantInfo; this registry keeps no admin roles or clusters, so both lists are empty."""

    adminRoles: list[str] = Field(default_factory=list)  # noqa: N815
    allowedClusters: list[str] = Field(default_factory=list)  # noqa: N815


class Policies(BaseModel):
    """The schema fields of Pulsar's namespace `Policies`, with Pulsar's JSON names (nulls omitted)."""

    schema_compatibility_strategy: str = Field(examples=["UNDEFINED"])
    schema_auto_update_compatibility_strategy: str | None = Field(default=None, examples=["Full"])
    is_allow_auto_update_schema: bool | None = None
    is_allow_auto_update_schema_with_replicator: bool = True
    schema_validation_enforced: bool = False

    @classmethod
    def of(cls, policy: NamespacePolicy) -> Policies:
        return cls(**policies_json(policy))
