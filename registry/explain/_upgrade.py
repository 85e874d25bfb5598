"""Which clients to upgrade first: by strategy, by the actual change, and as a plan over recorded clients."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .._model import STRATEGY_FACTS, ClientRecord, ClientRole, CompatibilityStrategy, UpgradeOrder

S = CompatibilityStrategy


# users.md, "Upgrade order table": the order each strategy guarantees to be safe (from STRATEGY_FACTS).
STRATEGY_UPGRADE_ORDER: Mapping[CompatibilityStrategy, UpgradeOrder] = {
    strategy: facts.upgrade_order for strategy, facts in STRATEGY_FACTS.items()
}

_WHY = {
    UpgradeOrder.CONSUMERS_FIRST: "the new schema reads data written with the old one, but the old schema cannot "
    "read new data: upgrade consumers, then producers",
    UpgradeOrder.PRODUCERS_FIRST: "the old schema reads data written with the new one, but the new schema cannot "
    "read old data: upgrade producers, then consumers once old data is consumed",
    UpgradeOrder.ANY_ORDER: "each schema reads the other's data: upgrade in any order",
    UpgradeOrder.BREAKING: "neither schema reads the other's data: no order is safe. Instead, add defaults to new "
    "fields and keep removed fields optional, or publish the new schema on a new topic and "
    "migrate consumers there",
    UpgradeOrder.EVOLUTION_DISABLED: "the strategy refuses every change: only existing versions can be used",
}


def strategy_order(strategy: CompatibilityStrategy) -> UpgradeOrder:
    """The upgrade order a strategy guarantees for any change it accepts (STRATEGY_UPGRADE_ORDER)."""
    if strategy is S.UNDEFINED:
        raise ValueError("UNDEFINED is not a strategy; resolve the effective strategy first")
    return STRATEGY_UPGRADE_ORDER[strategy]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeOrder:
    """The order a concrete change needs, from whether each side reads the other."""

    order: UpgradeOrder
    new_reads_old: bool
    old_reads_new: bool
    explanation: str


def change_order(new_reads_old: bool, old_reads_new: bool) -> ChangeOrder:
    """backward-only → consumers first, forward-only → producers first, both → any, neither → breaking."""
    order = {
        (True, True): UpgradeOrder.ANY_ORDER,
        (True, False): UpgradeOrder.CONSUMERS_FIRST,
        (False, True): UpgradeOrder.PRODUCERS_FIRST,
        (False, False): UpgradeOrder.BREAKING,
    }[(new_reads_old, old_reads_new)]
    return ChangeOrder(order=order, new_reads_old=new_reads_old, old_reads_new=old_reads_new, explanation=_WHY[order])


@dataclass(frozen=True, slots=True, kw_only=True)
class UpgradeStep:
    number: int
    role: ClientRole
    clients: tuple[ClientRecord, ...]
    explanation: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UpgradePlan:
    """Steps that move every recorded client with a schema to `target_version`, each step keeping every
    reader able to read every writer; or `feasible=False` and the reason no such order exists."""

    topic: str
    target_version: int | str
    feasible: bool
    steps: tuple[UpgradeStep, ...]
    reason: str = ""
    unaffected: tuple[ClientRecord, ...] = ()

    def __repr__(self) -> str:
        state = f"steps={len(self.steps)}" if self.feasible else f"reason={self.reason!r}"
        return f"UpgradePlan({self.topic!r}, target={self.target_version!r}, feasible={self.feasible}, {state})"


# `can_read(reader_version, writer_version)` → None when it can, else why not.
CanRead = Callable[[int | str, int | str], str | None]


def plan_upgrade(topic: str, clients: Sequence[ClientRecord], target: int | str, can_read: CanRead) -> UpgradePlan:
    """Greedy plan: move consumers when the target reads every producer still writing, producers when every
    consumer still reading can read the target. Each move only makes further moves easier, so greedy finds
    an order whenever one exists."""
    with_schema = [c for c in clients if c.version is not None]
    unaffected = tuple(c for c in clients if c.version is None)
    version: dict[ClientRecord, int | str] = {c: c.version for c in with_schema if c.version is not None}
    steps: list[UpgradeStep] = []
    while any(v != target for v in version.values()):
        producers = {v for c, v in version.items() if c.role is ClientRole.PRODUCER}
        consumers = {v for c, v in version.items() if c.role is ClientRole.CONSUMER}
        movable_consumers = all(can_read(target, p) is None for p in producers)
        movable_producers = all(can_read(c, target) is None for c in consumers)
        role = (
            ClientRole.CONSUMER
            if movable_consumers and any(v != target for c, v in version.items() if c.role is ClientRole.CONSUMER)
            else ClientRole.PRODUCER
            if movable_producers and any(v != target for c, v in version.items() if c.role is ClientRole.PRODUCER)
            else None
        )
        if role is None:
            return UpgradePlan(
                topic=topic,
                target_version=target,
                feasible=False,
                steps=tuple(steps),
                reason=_stuck(version, target, can_read),
                unaffected=unaffected,
            )
        moved = tuple(
            sorted(
                (c for c, v in version.items() if c.role is role and v != target),
                key=lambda c: (c.name, c.subscription),
            )
        )
        for client in moved:
            version[client] = target
        explanation = (
            f"version {target} reads every version producers still write"
            if role is ClientRole.CONSUMER
            else f"every consumer's version can read data written with version {target}"
        )
        steps.append(UpgradeStep(number=len(steps) + 1, role=role, clients=moved, explanation=explanation))
    return UpgradePlan(topic=topic, target_version=target, feasible=True, steps=tuple(steps), unaffected=unaffected)


def _stuck(version: Mapping[ClientRecord, int | str], target: int | str, can_read: CanRead) -> str:
    reasons = []
    for client, v in version.items():
        if v == target:
            continue
        if client.role is ClientRole.PRODUCER:
            why = can_read(target, v)
            if why:
                reasons.append(f"version {target} cannot read producer {client.name!r}'s version {v}: {why}")
        else:
            why = can_read(v, target)
            if why:
                reasons.append(f"consumer {client.name!r} on version {v} cannot read version {target}: {why}")
    return "; ".join(dict.fromkeys(reasons)) or "no client can move without breaking another"
