"""One error tree for the whole registry; shells map these to HTTP codes or messages in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._model import CompatibilityResult


class RegistryError(Exception):
    """Root of every error the registry raises on purpose."""


class NotFoundError(RegistryError, LookupError):
    """Something asked for does not exist."""


class RegistryNotFoundError(NotFoundError):
    """`Registry.open` named a registry file that does not exist, and `create=True` was not given.

    Fail closed: a command that only reads must never check a candidate against an empty registry it just made
    (that answers "compatible" having checked nothing)."""


class SchemaNotFoundError(NotFoundError):
    """No live schema (none stored, latest is a tombstone, or version outside the trimmed list). Pulsar §3.6."""


class TopicNotFoundError(NotFoundError):
    """The topic is unknown to the registry."""


class NamespaceNotFoundError(NotFoundError):
    """Pulsar answers 404 "Namespace does not exist"."""


class TenantNotFoundError(NotFoundError):
    """Pulsar answers 404 "Tenant does not exist"."""


class InvalidSchemaError(RegistryError, ValueError):
    """Schema data fails structural validation (Pulsar §3.7, REST 422). Nothing is stored."""


class InvalidNameError(RegistryError, ValueError):
    """A tenant, namespace or topic name that Pulsar would refuse."""


class IncompatibleSchemaError(RegistryError):
    """A registration refused by the compatibility rules (REST 409). `.result` says why."""

    def __init__(self, message: str, result: CompatibilityResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class PoisonedHistoryError(RegistryError):
    """A stored version carries an invalid Avro default; Pulsar fails every later put with HTTP 500 (§4.8).

    We refuse with a clear message instead, naming the version and field, so the user knows to delete the schema.
    """


class PolicyError(RegistryError, ValueError):
    """A policy value or combination Pulsar refuses (e.g. an unknown strategy)."""


class PolicyChangedError(PolicyError):
    """A policy change made against a preview (`expected=`) found the stored policy changed since: another
    write got there first, and nothing was saved."""


class TopicPoliciesDisabledError(PolicyError):
    """Topic policies asked of a broker with `topicLevelPoliciesEnabled=false`: Pulsar's
    `AdminResource.checkTopicLevelPolicyEnable` answers 405 Method Not Allowed."""


class PartitionPolicyError(PolicyError):
    """A topic policy asked of one partition (`...-partition-N`): Pulsar's `PersistentTopicsBase.preValidation`
    answers 412 Precondition Failed; policies belong to the partitioned topic."""


class StorageError(RegistryError):
    """The embedded store failed (corrupt file, disk full, too much contention)."""


class AuthError(RegistryError):
    """Missing or insufficient credentials (used by the REST shell and remote registries)."""


class InvalidVersionError(RegistryError, ValueError):
    """A schema version that is not a non-negative whole number."""


class InvalidArgumentError(RegistryError, ValueError):
    """An argument outside its allowed range (a page size, an offset, a limit)."""


class ReadOnlyError(RegistryError):
    """A write through a read-only registry handle (`Registry.read_only()`): nothing is written, nothing is
    audited. The app started with --read-only holds only such a handle, so no page or widget can write."""


class NotSupportedError(RegistryError):
    """The registry behind this handle cannot do that at all (a plain Pulsar broker keeps no proposals); the
    message says where it can be done."""


class PermissionDeniedError(RegistryError):
    """The person's role does not allow the call (a viewer approving, a producer applying a policy change), or
    the call is not theirs to make (an author approving their own proposal). Nothing was written."""


class ProposalsRequiredError(PermissionDeniedError):
    """A direct schema or policy write in a namespace whose review rules require proposals
    (`require_proposals`): whoever asks, nothing is written; the change goes through a proposal."""


class ProposalNotFoundError(NotFoundError):
    """No proposal has that id."""


class ProposalError(RegistryError):
    """A proposal cannot do what was asked in the state it is in (approving a withdrawn one, applying one
    that lacks its approvals). Nothing was written."""


class ApprovalsMissingError(ProposalError):
    """An apply of a proposal that has fewer approvals than its namespace's review rules ask for."""


class RevisionChangedError(ProposalError):
    """An approval or an apply named the revision its person reviewed, and the proposal has a newer one now:
    nothing was written. Review the current revision, then try again."""


class StaleProposalError(ProposalError):
    """An approval or an apply found the topic's latest version (or the policy) no longer the proposal's base:
    something was stored since it was reviewed. The proposal is now stale; nothing was approved or applied.
    Rebase it and review again."""


class RebaseConflictError(ProposalError):
    """A rebase found that the proposal and a version stored since its base changed the same part of the schema
    differently (a field's type or default, a union's branch): the message names each such part. Nothing was
    written; revise the proposal with a schema built on the latest version instead."""


# `schema-explorer serve` names the class of each error it answers in this header (Pulsar's `{"reason"}` body
# stays as it is), so a remote registry raises the very class the embedded one raises, where a broker's
# status code alone leaves it to a guess.
ERROR_HEADER = "X-Registry-Error"


def error_named(name: str) -> type[RegistryError] | None:
    """The RegistryError class called `name`, or None for any other name."""
    found = globals().get(name)
    if isinstance(found, type) and issubclass(found, RegistryError):
        return found
    return None
