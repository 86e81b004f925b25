"""Population play's partners (``algo.partners=<pool>[:split]``): a partner pool's trained actors,
loaded and checked against the learner, stacked for the PPO core's fixed pool
(:mod:`alem.algos.selfplay`). Called by ``alem.algos.make_learner(..., partners=...)`` (the
training command's learner) before anything is written."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

import alem
from alem.algos.checkpoint_player import CheckpointPlayer
from alem.algos.config import LearnerConfigError
from alem.algos.ppo import make_ppo_learner

__all__ = ["partner_actors", "with_id_inputs"]


def partner_actors(lcfg: Any, env: alem.MultiAgentEnv) -> tuple[Any, Any]:
    """``algo.partners``: the pool's partners (split ``train`` unless one is named) loaded and
    checked (checkpoint partners whose actor has the learner's shapes), stacked ``[K, R, ...]``;
    the config gets ``pool_size = K``."""
    from alem.pools import SPLITS, read_pool

    arg = lcfg.partners
    where = f"algo.partners={arg}"
    make_ppo_learner(env, lcfg)  # the learner fits the env before the pool is read
    pool = read_pool(arg if arg.rpartition(":")[2] in SPLITS else f"{arg}:train", env, option="algo.partners")
    trained = [p for p in pool.partners if p.spec.partition(":")[0] == "checkpoint"]
    scripted = [p.name for p in pool.partners if p not in trained]
    if not trained:
        raise LearnerConfigError(
            f"{where}: the split holds no trained partner ({', '.join(f'{p.name!r} is {p.spec!r}' for p in pool.partners)}); "
            "population play trains against checkpoint partners (PPO actors of the learner's shape); "
            "play scripted ones with mode=crossplay"
        )
    if scripted:  # a pool's split may mix them: the trained ones are the population
        print(
            f"algo.partners: scripted partners {scripted} left out (population play seats trained actors)",
            flush=True,
        )
    lcfg = dataclasses.replace(lcfg, pool_size=len(trained))
    template = jax.eval_shape(make_ppo_learner(env, lcfg).init, jax.random.key(0)).params["actor"]
    actors = []
    for partner in trained:
        rest = partner.spec.partition(":")[2]
        try:  # the checkpoint player reads the spec (<run dir>[#slot]) and keywords as the arena does
            player = CheckpointPlayer(env, spec=rest, **partner.kwargs)
        except (alem.AlemError, TypeError) as e:
            raise LearnerConfigError(f"{where}: partner {partner.name!r}: {e}") from None
        learner, params = player.learner, player.params
        actor = params.get("actor")  # None: a core without an actor (value-based)
        if actor is not None and lcfg.agent_id and not learner.cfg.agent_id:
            actor = with_id_inputs(actor, template, env.num_agents)
        if actor is None or _shapes(actor) != _shapes(template):
            kind = "a value-based run" if actor is None else "an actor of other shapes"
            hint = (
                "; a learner with algo.agent_id=true (mappo) also seats actors without the id input"
                if actor is not None and learner.cfg.agent_id and not lcfg.agent_id
                else ""
            )
            raise LearnerConfigError(
                f"{where}: partner {partner.name!r} is {kind} ({learner.cfg.name}); the learner "
                f"({lcfg.name}) can seat only PPO actors of its own shapes (hidden sizes, roles, inputs){hint}"
            )
        actors.append(actor)
    return lcfg, jax.tree.map(lambda *xs: jnp.stack(xs), *actors)


def _shapes(tree: Any) -> Any:
    return jax.tree.map(lambda x: (tuple(x.shape), str(x.dtype)), tree)


def with_id_inputs(actor: Any, template: Any, n: int) -> Any:
    """A feed-forward actor trained without the agent-id input (IPPO), as an actor of the
    ``template``'s layout with it (MAPPO, ``algo.agent_id``): the one-hot id is appended to the
    observation (:func:`alem.algos.decision_units.with_agent_id`), so the first layer's kernel gets ``n``
    zero input rows and computes the same function. Returned unchanged when the layouts differ
    otherwise (the caller then refuses it)."""
    leaves, treedef = jax.tree.flatten(actor)
    if treedef != jax.tree.structure(template):
        return actor
    out = []
    for got, want in zip(leaves, jax.tree.leaves(template), strict=True):
        one_kernel_short = got.ndim >= 2 and got.shape[-2] + n == want.shape[-2]
        if one_kernel_short and got.shape[:-2] + got.shape[-1:] == want.shape[:-2] + want.shape[-1:]:
            got = jnp.pad(got, [(0, 0)] * (got.ndim - 2) + [(0, n), (0, 0)])
        out.append(got)
    return jax.tree.unflatten(treedef, out)
