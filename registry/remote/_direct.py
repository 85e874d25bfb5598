"""The writes a person makes straight to a remote registry (register, delete, policies, creation), gated and
audited where the registry cannot do it itself.

`schema-explorer serve` checks its review rules and writes its audit line in the write's own transaction, so
there these calls only send. A plain broker has neither, so its workspace (remote/_workspace.py) does both
around the admin call: a schema or policy change is refused before it is sent where the namespace's rules
require proposals, and every write made through the explorer, refused or done, is recorded with the name the
caller gives (`user`; a gateway passes the person its token names). Applying a proposal does not come here: it
sends through `_send_*` under the proposal's own gate and audit line (remote/_apply.py).
"""

from __future__ import annotations

import abc
import contextlib

from .._audit import AuditAction, AuditOutcome
from .._auditing import AuditNote, created
from .._cache_budget import bounded
from .._model import NamespacePolicy, Registration, SchemaInfo, TopicPolicy
from .._names import NamespaceName, TopicName, parse_tenant
from ..explain._preview import describe_changes
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange
from ..policy._rules import policy_topic
from ..proposals._permissions import Step
from ._answers import ServerAnswers
from ._workspace import WorkspaceSlot


class DirectWrites(ServerAnswers):
    """The direct writes of `RemoteRegistry`, over its `_send_*` calls."""

    _workspace: WorkspaceSlot | None

    @abc.abstractmethod
    def _send_register(self, topic: str, info: SchemaInfo) -> Registration:
        """POST /schema itself."""

    @abc.abstractmethod
    def _send_delete(self, topic: str, force: bool) -> int | None:
        """DELETE /schema itself."""

    @abc.abstractmethod
    def _send_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None
    ) -> NamespacePolicy:
        """A namespace's policy calls themselves; the policy stored after."""

    @abc.abstractmethod
    def _send_topic_policy(self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None) -> TopicPolicy:
        """A topic's policy calls themselves; the policy stored after."""

    @abc.abstractmethod
    def _send_create(self, kind: str, name: str) -> bool:
        """PUT a tenant, namespace or topic; False when it existed."""

    @bounded
    def register(self, topic: str, info: SchemaInfo, *, user: str = "") -> Registration:
        name = TopicName.parse(topic)
        with self._direct(AuditAction.REGISTER, str(name.base), user, Step.REGISTER, name.namespace_name) as note:
            note.input = info.schema if isinstance(info, SchemaInfo) else None
            made = self._send_register(topic, info)
            note.detail = (
                f"schema stored as version {made.version}"
                if made.stored
                else f"identical to live version {made.version}: nothing stored"
            )
            note.outcome = AuditOutcome.OK if made.stored else AuditOutcome.UNCHANGED
            note.version = made.version if made.stored else None
        return made

    def delete(self, topic: str, *, force: bool = False, user: str = "") -> int | None:
        """DELETE /schema[?force=true]: the tombstone's version, or None when forced (-1 on the wire)."""
        name = TopicName.parse(topic)
        with self._direct(AuditAction.DELETE, str(name.base), user, Step.DELETE, name.namespace_name) as note:
            version = self._send_delete(topic, force)
            note.detail = (
                "force: the whole history dropped"
                if force
                else f"soft delete: deletion marker stored as version {version}"
            )
        return version

    def _set_namespace_policy(
        self, namespace: str, change: NamespacePolicyChange, expected: NamespacePolicy | None, user: str
    ) -> NamespacePolicy:
        ns = NamespaceName.parse(namespace)
        if self._workspace is None:  # serve gates and audits it itself
            return self._send_namespace_policy(str(ns), change, expected)
        with self._direct(AuditAction.SET_NAMESPACE_POLICY, str(ns), user, Step.SET_POLICY, ns) as note:
            before = self.namespace_policy(str(ns))
            after = self._send_namespace_policy(str(ns), change, expected)
            note.detail = "; ".join(describe_changes(before, after)) or "no change"
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def _set_topic_policy(
        self, topic: str, change: TopicPolicyChange, expected: TopicPolicy | None, user: str
    ) -> TopicPolicy:
        name = policy_topic(topic, self.broker)
        if self._workspace is None:
            return self._send_topic_policy(str(name), change, expected)
        ns = name.namespace_name
        with self._direct(AuditAction.SET_TOPIC_POLICY, str(name.base), user, Step.SET_POLICY, ns) as note:
            before = self.topic_policy(str(name))
            after = self._send_topic_policy(str(name), change, expected)
            note.detail = "; ".join(describe_changes(before, after)) or "no change"
            note.outcome = AuditOutcome.OK if before != after else AuditOutcome.UNCHANGED
        return after

    def create_tenant(self, tenant: str, *, user: str = "") -> bool:
        """PUT /tenants/{tenant}, allowed on every cluster the endpoint knows; False when it existed."""
        return self._create(AuditAction.CREATE_TENANT, "tenant", parse_tenant(tenant), user)

    def create_namespace(self, namespace: str, *, user: str = "") -> bool:
        return self._create(AuditAction.CREATE_NAMESPACE, "namespace", str(NamespaceName.parse(namespace)), user)

    def create_topic(self, topic: str, *, user: str = "") -> bool:
        return self._create(AuditAction.CREATE_TOPIC, "topic", str(TopicName.parse(topic).base), user)

    def _create(self, action: AuditAction, kind: str, name: str, user: str) -> bool:
        with self._direct(action, name, user, None, None) as note:
            made = self._send_create(kind, name)
            note.outcome, note.detail = created(made, kind)
        return made

    def _direct(
        self, action: AuditAction, target: str, user: str, step: Step | None, namespace: NamespaceName | None
    ) -> contextlib.AbstractContextManager[AuditNote]:
        """A direct write to a plain broker, gated and audited by its workspace (`serve` does both itself)."""
        if self._workspace is None:
            return contextlib.nullcontext(AuditNote(target))
        return self._workspace.get().direct(action, target, user, step, None if namespace is None else str(namespace))
