"""Proposals from a comparison's plan: one in B per topic B would accept, never for a refused, blocked or
diverged one (the plan explains those). Each proposes the topic's next version from A, pinned to B's latest
version as every proposal is; once it is applied, comparing again proposes the one after."""

from __future__ import annotations

from .._handle import SchemaRegistry
from ..proposals._model import Actor, Proposal
from ._values import Comparison, TopicPlan


def propose_plan(source: SchemaRegistry, target: SchemaRegistry, found: Comparison, *, actor: Actor) -> list[Proposal]:
    """Open the proposals in `target` (B) for the plan's safe topics, in plan order; the first refusal (B keeps no
    proposals, the actor may not propose) raises and the later ones are not opened."""
    return [_propose(source, target, plan, actor) for plan in found.plan if plan.safe]


def _propose(source: SchemaRegistry, target: SchemaRegistry, plan: TopicPlan, actor: Actor) -> Proposal:
    first = plan.steps[0]
    version = source.get(plan.topic, first.version)
    rest = ", ".join(str(step.version) for step in plan.steps[1:])
    more = f" Then versions {rest} of A, one proposal each, after this one is applied." if rest else ""
    return target.proposals.propose_schema(
        plan.topic,
        version.info,
        title=f"Replicate version {first.version} of {plan.topic} from {source.location}",
        description=f"`compare` found this topic {plan.state} here against {source.location} (A); this registry "
        f"accepts A's version {first.version} as version {first.registers_as}.{more}",
        actor=actor,
    )
