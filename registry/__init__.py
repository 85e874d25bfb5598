"""Pulsar Schema Explorer's core: an embedded schema registry that answers exactly as a Pulsar broker does.

No UI, web or Spark imports here: the app, server, pipeline and notebooks are thin shells over this facade.
"""

from typing import TYPE_CHECKING, Any

from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._cache_budget import CACHE_BYTES_ENV, FAST_READ_BYTES
from ._cache_usage import CacheUsage
from ._catalog import INDEX_WORKERS, IndexState, IndexStatus, TopicPage, TopicQuery, TopicSummary
from ._changes import Advisory, AdvisoryCode, Change, ChangeKind, Effect, SchemaDiff, Severity
from ._compatibility import PairVerdict, pair_verdict
from ._errors import (
    ERROR_HEADER,
    ApprovalsMissingError,
    AuthError,
    IncompatibleSchemaError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    NamespaceNotFoundError,
    NotFoundError,
    NotSupportedError,
    PartitionPolicyError,
    PermissionDeniedError,
    PoisonedHistoryError,
    PolicyChangedError,
    PolicyError,
    ProposalError,
    ProposalNotFoundError,
    ProposalsRequiredError,
    ReadOnlyError,
    RebaseConflictError,
    RegistryError,
    RegistryNotFoundError,
    RevisionChangedError,
    SchemaNotFoundError,
    StaleProposalError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
    TopicPoliciesDisabledError,
)
from ._handle import SchemaRegistry
from ._history import version_number
from ._identity import name_clash, person_key, same_person
from ._key_value import KEY_VALUE_ENCODINGS, KEY_VALUE_PART_TYPES, decode_key_value
from ._limits import Limits, SchemaTooLargeError, current_limits, limited, set_limits
from ._model import (
    JUDGED_HEADER,
    STORED_HEADER,
    STRATEGIES,
    STRATEGY_FACTS,
    Admission,
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    ConnectedClient,
    Direction,
    Effective,
    EffectivePolicy,
    NamespacePolicy,
    PolicySource,
    Problem,
    Registration,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
    StrategyFacts,
    TopicPolicy,
    UpgradeOrder,
)
from ._names import NamespaceName, TopicName
from ._open import open as open
from ._paths import default_db_path, remote_url
from ._pulsar_version import DEFAULT_LINE, PULSAR_LINES, PulsarLine, answering_as, line_for_broker, pulsar_line
from ._read_only import ReadOnlyRegistry
from ._record_pitfalls import record_advisories
from ._records import RecordError
from ._registry import Registry
from ._schema_data import key_value_parts, key_value_schema_info, to_schema_data
from ._seed import SeedReport, seed_sample_data
from ._snapshot import (
    audit_records,
    export_snapshot,
    import_snapshot,
    iter_snapshot_records,
    read_snapshot_records,
    registry_from_records,
    snapshot_head,
    snapshot_records,
)
from ._types import SchemaData, SchemaType
from ._wire import from_json, policies_json, schema_response, to_json
from .compare import Comparison, HazardReason, TopicState, compare_registries, drift_diff, propose_plan
from .explain._diff import schema_text
from .explain._preview import PolicyPreview, TopicPreview
from .explain._upgrade import (
    STRATEGY_UPGRADE_ORDER,
    ChangeOrder,
    UpgradePlan,
    UpgradeStep,
    change_order,
    strategy_order,
)
from .explain._whatif import PolicyImpact, RefusedClient, TopicImpact, WhatIf
from .policy._rules import namespace_allow_auto_update, namespace_validation_enforced
from .proposals._model import (
    Actor,
    Approval,
    Comment,
    Proposal,
    ProposalKind,
    ProposalReview,
    ProposalState,
    ReviewedProblem,
    ReviewRules,
    Revision,
    Role,
)
from .proposals._permissions import AllowedSteps, Step, allowed_steps, apply_role, counted_approvals, may_review
from .proposals._pointer import comment_paths
from .proposals._readiness import ApplyReadiness, apply_readiness
from .proposals._revisions import RevisionDiff
from .proposals._rules import judged_under, require_satisfiable
from .proposals._words import applied_text, approvals_text, refusal_word, refusals_text, rules_note
from .protobuf._native import ProtobufNativeSchema, parse_protobuf_native, to_protobuf_native_data
from .protobuf._protoc import ProtoCompileError, compile_proto, compile_uploads, declared_messages
from .remote._broker_index import CACHE_ENV_VAR
from .remote._connection import PULSARCTL_CONFIG, ConnectionSummary, describe_connection, pulsarctl_contexts
from .storage._base import LocalStorage as StorageBackend
from .storage._base import StaleHistoryError
from .storage._forwarding import ForwardingStorage
from .storage._locations import ENTRY_POINT_GROUP as STORAGE_ENTRY_POINT_GROUP
from .storage._locations import StorageLocation, parse_location
from .storage._memory import MemoryStorage
from .storage._postgres import PostgresStorage
from .storage._ranges import KeyRange, RangeRead, RangeReader, ReadState, TopicBundle, namespace_bundles
from .storage._snapshot_values import SnapshotError
from .storage._sqlite import SqliteStorage
from .webhooks._model import Webhook, WebhookDelivery

if TYPE_CHECKING:
    from .remote._handle import RemoteRegistry


def __getattr__(name: str) -> Any:
    """`RemoteRegistry` is imported on first use, so `import registry` does not pay for httpx."""
    if name == "RemoteRegistry":
        from .remote._handle import RemoteRegistry

        return RemoteRegistry
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# `open` is public (`registry.open(location)`) but left out of `from registry import *`, where it would hide
# the builtin `open`.
__all__ = [
    "Comparison",
    "HazardReason",
    "TopicState",
    "compare_registries",
    "drift_diff",
    "propose_plan",
    "CACHE_BYTES_ENV",
    "DEFAULT_LINE",
    "ERROR_HEADER",
    "PULSAR_LINES",
    "PulsarLine",
    "answering_as",
    "line_for_broker",
    "pulsar_line",
    "FAST_READ_BYTES",
    "CacheUsage",
    "Admission",
    "Advisory",
    "AdvisoryCode",
    "AuditAction",
    "AuditEntry",
    "AuditOutcome",
    "AuthError",
    "AutoUpdateStrategy",
    "BrokerConfig",
    "Change",
    "ChangeKind",
    "ChangeOrder",
    "ClientRecord",
    "ConnectedClient",
    "ClientRole",
    "CACHE_ENV_VAR",
    "INDEX_WORKERS",
    "IndexState",
    "IndexStatus",
    "CompatibilityResult",
    "CompatibilityStrategy",
    "Direction",
    "Effect",
    "Effective",
    "EffectivePolicy",
    "IncompatibleSchemaError",
    "InvalidArgumentError",
    "InvalidNameError",
    "InvalidSchemaError",
    "InvalidVersionError",
    "Limits",
    "NamespaceName",
    "NamespaceNotFoundError",
    "NamespacePolicy",
    "NotFoundError",
    "PairVerdict",
    "ProtobufNativeSchema",
    "PoisonedHistoryError",
    "PartitionPolicyError",
    "PolicyError",
    "PolicyImpact",
    "PolicyPreview",
    "PolicySource",
    "ReadOnlyError",
    "ReadOnlyRegistry",
    "Problem",
    "RefusedClient",
    "Registry",
    "RegistryError",
    "RegistryNotFoundError",
    "RemoteRegistry",
    "SchemaRegistry",
    "version_number",
    "Registration",
    "JUDGED_HEADER",
    "STORED_HEADER",
    "PolicyChangedError",
    "Actor",
    "Approval",
    "Comment",
    "Proposal",
    "ProposalKind",
    "ProposalReview",
    "RevisionDiff",
    "ProposalState",
    "ReviewedProblem",
    "ReviewRules",
    "Revision",
    "Role",
    "NotSupportedError",
    "PermissionDeniedError",
    "ProposalsRequiredError",
    "ProposalNotFoundError",
    "ProposalError",
    "ApprovalsMissingError",
    "RevisionChangedError",
    "RebaseConflictError",
    "StaleProposalError",
    "may_review",
    "counted_approvals",
    "approvals_text",
    "applied_text",
    "refusals_text",
    "refusal_word",
    "rules_note",
    "apply_role",
    "comment_paths",
    "name_clash",
    "person_key",
    "same_person",
    "ApplyReadiness",
    "apply_readiness",
    "judged_under",
    "require_satisfiable",
    "allowed_steps",
    "AllowedSteps",
    "Step",
    "RecordError",
    "record_advisories",
    "STRATEGY_FACTS",
    "StrategyFacts",
    "KEY_VALUE_ENCODINGS",
    "KEY_VALUE_PART_TYPES",
    "decode_key_value",
    "StorageBackend",
    "ForwardingStorage",
    "MemoryStorage",
    "PostgresStorage",
    "SqliteStorage",
    "StaleHistoryError",
    "STORAGE_ENTRY_POINT_GROUP",
    "StorageLocation",
    "parse_location",
    "ProtoCompileError",
    "compile_proto",
    "compile_uploads",
    "declared_messages",
    "policies_json",
    "schema_response",
    "from_json",
    "to_json",
    "RuleCode",
    "STRATEGIES",
    "STRATEGY_UPGRADE_ORDER",
    "SchemaDiff",
    "SchemaData",
    "SchemaInfo",
    "SchemaNotFoundError",
    "SchemaTooLargeError",
    "SchemaType",
    "SchemaVersion",
    "SeedReport",
    "Severity",
    "SnapshotError",
    "StorageError",
    "TenantNotFoundError",
    "TopicImpact",
    "TopicPreview",
    "TopicName",
    "Webhook",
    "WebhookDelivery",
    "TopicNotFoundError",
    "TopicPoliciesDisabledError",
    "TopicPage",
    "TopicPolicy",
    "TopicQuery",
    "TopicSummary",
    "UpgradeOrder",
    "UpgradePlan",
    "UpgradeStep",
    "WhatIf",
    "change_order",
    "current_limits",
    "default_db_path",
    "remote_url",
    "ConnectionSummary",
    "describe_connection",
    "pulsarctl_contexts",
    "PULSARCTL_CONFIG",
    "export_snapshot",
    "import_snapshot",
    "key_value_parts",
    "namespace_allow_auto_update",
    "namespace_validation_enforced",
    "key_value_schema_info",
    "limited",
    "pair_verdict",
    "parse_protobuf_native",
    "iter_snapshot_records",
    "KeyRange",
    "RangeRead",
    "RangeReader",
    "ReadState",
    "TopicBundle",
    "namespace_bundles",
    "read_snapshot_records",
    "audit_records",
    "snapshot_head",
    "registry_from_records",
    "snapshot_records",
    "to_schema_data",
    "schema_text",
    "seed_sample_data",
    "set_limits",
    "strategy_order",
    "to_protobuf_native_data",
]
