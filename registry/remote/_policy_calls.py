"""The admin API calls that change schema policies on a plain broker, one per field (§7.2, §7.3).

Pulsar has no call for several fields at once and no compare-and-set of policies, so over a broker a remote
handle compares `expected` with a read just before these calls and then makes them in turn (over `serve` it
sends one write instead: server/_policy_writes.py). Each call is (method, path, JSON body, query parameters);
the values are checked here, before any call is made, so a bad value changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import PolicyError
from .._model import AutoUpdateStrategy
from .._model import CompatibilityStrategy as S
from .._names import NamespaceName, TopicName
from ..policy._changes import NamespacePolicyChange, TopicPolicyChange
from ..policy._rules import UNSET, flag, optional_flag
from ._admin_client import ADMIN, topic_path

Call = tuple[str, str, Any, dict[str, str] | None]


def namespace_calls(
    ns: NamespaceName, change: NamespacePolicyChange, allow_in_force: Callable[[], bool], url: str
) -> list[Call]:
    """The calls for the fields `change` sets (UNSET: left alone). `allow_in_force` reads the auto-update flag
    in force, which the call setting only the replicator flag must carry too (a null would be read as false)."""
    calls: list[Call] = []
    base = f"{ADMIN}/namespaces/{ns.tenant}/{ns.namespace}"
    compatibility, auto_update = change.compatibility, change.auto_update_strategy
    if compatibility is not UNSET:
        strategy = S.UNDEFINED if compatibility is None else S.parse(compatibility)
        calls.append(("PUT", f"{base}/schemaCompatibilityStrategy", str(strategy), None))
    if auto_update is not UNSET:
        auto = None if auto_update is None else AutoUpdateStrategy.parse(auto_update)
        auto_text = None if auto is None else str(auto)
        calls.append(("PUT", f"{base}/schemaAutoUpdateCompatibilityStrategy", auto_text, None))
    if change.allow_auto_update is None:
        # Pulsar reads a null body as false for this flag: sending it would set false, not clear it.
        raise PolicyError(
            f"the admin API of {url} cannot clear isAllowAutoUpdateSchema of {ns} (a null body sets false); set "
            "allow_auto_update=True or False instead"
        )
    allow = UNSET if change.allow_auto_update is UNSET else flag("allow_auto_update", change.allow_auto_update)
    asked = change.allow_auto_update_with_replicator
    replicator = UNSET if asked is UNSET else flag("allow_auto_update_with_replicator", asked)
    if allow is True and replicator is False:
        raise PolicyError("allow_auto_update=True cannot be combined with allow_auto_update_with_replicator=False")
    if allow is not UNSET or replicator is not UNSET:
        params = None if replicator is UNSET else {"allowAutoUpdateSchemaWithReplicator": str(replicator).lower()}
        body = allow_in_force() if allow is UNSET else allow
        calls.append(("POST", f"{base}/isAllowAutoUpdateSchema", body, params))
    if change.validation_enforced is not UNSET:
        enforced = flag("validation_enforced", change.validation_enforced)
        calls.append(("POST", f"{base}/schemaValidationEnforced", enforced, None))
    return calls


def topic_calls(name: TopicName, change: TopicPolicyChange) -> list[Call]:
    """The calls for the fields a topic's `change` sets; clearing one is a DELETE."""
    path = topic_path(name)
    calls: list[Call] = []
    if change.compatibility is not UNSET:
        compatibility = change.compatibility
        strategy = None if compatibility is None else S.parse(compatibility)
        if strategy in (None, S.UNDEFINED):
            calls.append(("DELETE", f"{path}/schemaCompatibilityStrategy", None, None))
        else:
            calls.append(("PUT", f"{path}/schemaCompatibilityStrategy", str(strategy), None))
    if change.validation_enforced is not UNSET:
        enforced = optional_flag("validation_enforced", change.validation_enforced)
        if enforced is None:
            calls.append(("DELETE", f"{path}/schemaValidationEnforced", None, None))
        else:
            calls.append(("POST", f"{path}/schemaValidationEnforced", enforced, None))
    return calls
