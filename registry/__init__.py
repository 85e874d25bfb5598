"""Pulsar Schema Explorer's core: an embedded schema registry that answers exactly as a Pulsar broker does.

No UI, web or Spark imports here: the app, server, pipeline and notebooks are thin shells over this facade.
"""

from ._errors import (
    AuthError,
    IncompatibleSchemaError,
    InvalidNameError,
    InvalidSchemaError,
    InvalidVersionError,
    NamespaceNotFoundError,
    NotFoundError,
    PoisonedHistoryError,
    PolicyError,
    RegistryError,
    SchemaNotFoundError,
    StorageError,
    TenantNotFoundError,
    TopicNotFoundError,
)
from ._model import (
    STRATEGIES,
    Admission,
    AutoUpdateStrategy,
    BrokerConfig,
    ClientRecord,
    ClientRole,
    CompatibilityResult,
    CompatibilityStrategy,
    Direction,
    Effective,
    EffectivePolicy,
    NamespacePolicy,
    PolicySource,
    Problem,
    RuleCode,
    SchemaInfo,
    SchemaType,
    SchemaVersion,
    TopicPolicy,
)
from ._names import NamespaceName, TopicName
from ._paths import default_db_path
from ._protobuf_native import to_protobuf_native_data
from ._registry import Registry
from ._schema_data import key_value_schema_info
from ._seed import SeedReport, seed_sample_data

__all__ = [
    "STRATEGIES",
    "Admission",
    "AuthError",
    "AutoUpdateStrategy",
    "BrokerConfig",
    "ClientRecord",
    "ClientRole",
    "CompatibilityResult",
    "CompatibilityStrategy",
    "Direction",
    "Effective",
    "EffectivePolicy",
    "IncompatibleSchemaError",
    "InvalidNameError",
    "InvalidSchemaError",
    "InvalidVersionError",
    "NamespaceName",
    "NamespaceNotFoundError",
    "NamespacePolicy",
    "NotFoundError",
    "PoisonedHistoryError",
    "PolicyError",
    "PolicySource",
    "Problem",
    "Registry",
    "RegistryError",
    "RuleCode",
    "SchemaInfo",
    "SchemaNotFoundError",
    "SchemaType",
    "SchemaVersion",
    "SeedReport",
    "StorageError",
    "TenantNotFoundError",
    "TopicName",
    "TopicNotFoundError",
    "TopicPolicy",
    "default_db_path",
    "key_value_schema_info",
    "seed_sample_data",
    "to_protobuf_native_data",
]
