"""Pulsar Schema Explorer's core: an embedded schema registry that answers exactly as a Pulsar broker does.

No UI, web or Spark imports here: the app, server, pipeline and notebooks are thin shells over this facade.

`__all__` is what a user of the library needs: `registry.open` and the one handle type, the values it takes
and answers with, the explanations, proposals and their people, and the error tree. Everything else the core
offers is imported from the module that defines it (`from registry._catalog import IndexStatus`), as the
project's own shells do; the public subpackages `registry.compare`, `registry.webhooks`, `registry.views` and
`registry.storage.conformance` keep their own `__all__`.
"""

from ._audit import AuditAction, AuditEntry, AuditOutcome
from ._catalog import TopicPage, TopicQuery, TopicSummary
from ._changes import Advisory, AdvisoryCode, Change, ChangeKind, SchemaDiff, Severity
from ._errors import (
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
from ._model import (
    STRATEGIES,
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    ConnectedClient,
    Direction,
    EffectivePolicy,
    NamespacePolicy,
    PolicySource,
    Problem,
    Registration,
    RuleCode,
    SchemaInfo,
    SchemaVersion,
    TopicPolicy,
    UpgradeOrder,
)
from ._names import NamespaceName, TopicName
from ._open import open as open
from ._registry import Registry
from ._seed import seed_sample_data
from ._snapshot import export_snapshot, import_snapshot
from ._types import SchemaType
from ._wire import from_json, to_json
from .explain._preview import PolicyPreview
from .explain._upgrade import UpgradePlan
from .explain._whatif import PolicyImpact, WhatIf
from .policy._changes import NamespacePolicyChange, TopicPolicyChange
from .proposals._handle import Proposals
from .proposals._model import Actor, Proposal, ProposalKind, ProposalReview, ProposalState, ReviewRules, Role
from .storage._base import LocalStorage as StorageBackend
from .storage._forwarding import ForwardingStorage
from .storage._memory import MemoryStorage
from .storage._postgres import PostgresStorage
from .storage._sqlite import SqliteStorage
from .webhooks._handle import Webhooks
from .webhooks._model import Webhook

# `open` is public (`registry.open(location)`) but left out of `from registry import *`, where it would hide
# the builtin `open`. tests/unit/test_public_api.py holds this list to at most 90 names.
__all__ = [
    # the handle and opening one (besides `open`)
    "Registry",
    "SchemaRegistry",
    "Proposals",
    "Webhooks",
    # what a schema, a version and a verdict are
    "STRATEGIES",
    "AutoUpdateStrategy",
    "CompatibilityResult",
    "CompatibilityStrategy",
    "Direction",
    "NamespaceName",
    "Problem",
    "Registration",
    "RuleCode",
    "SchemaInfo",
    "SchemaType",
    "SchemaVersion",
    "TopicName",
    "UpgradeOrder",
    # policies, the broker and its clients
    "BrokerConfig",
    "ClientRole",
    "ConnectedClient",
    "EffectivePolicy",
    "NamespacePolicy",
    "PolicySource",
    "TopicPolicy",
    "NamespacePolicyChange",
    "TopicPolicyChange",
    # explanations
    "Advisory",
    "AdvisoryCode",
    "Change",
    "ChangeKind",
    "PolicyImpact",
    "PolicyPreview",
    "SchemaDiff",
    "Severity",
    "UpgradePlan",
    "WhatIf",
    # the catalog and the audit trail
    "AuditAction",
    "AuditEntry",
    "AuditOutcome",
    "TopicPage",
    "TopicQuery",
    "TopicSummary",
    # proposals, the people who make them, and webhooks
    "Actor",
    "Proposal",
    "ProposalKind",
    "ProposalReview",
    "ProposalState",
    "ReviewRules",
    "Role",
    "Webhook",
    # one JSON form, snapshots, sample data
    "export_snapshot",
    "from_json",
    "import_snapshot",
    "seed_sample_data",
    "to_json",
    # a storage of one's own, around a built-in one (docs/guide/operating.md)
    "ForwardingStorage",
    "MemoryStorage",
    "PostgresStorage",
    "SqliteStorage",
    "StorageBackend",
    # the error tree (registry/_errors.py)
    "ApprovalsMissingError",
    "AuthError",
    "IncompatibleSchemaError",
    "InvalidArgumentError",
    "InvalidNameError",
    "InvalidSchemaError",
    "InvalidVersionError",
    "NamespaceNotFoundError",
    "NotFoundError",
    "NotSupportedError",
    "PartitionPolicyError",
    "PermissionDeniedError",
    "PoisonedHistoryError",
    "PolicyChangedError",
    "PolicyError",
    "ProposalError",
    "ProposalNotFoundError",
    "ProposalsRequiredError",
    "ReadOnlyError",
    "RebaseConflictError",
    "RegistryError",
    "RegistryNotFoundError",
    "RevisionChangedError",
    "SchemaNotFoundError",
    "StaleProposalError",
    "StorageError",
    "TenantNotFoundError",
    "TopicNotFoundError",
    "TopicPoliciesDisabledError",
]
