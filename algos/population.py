"""Population play's partners (``algo.partners=<pool>[:split]``): a partner pool's trained actors,
loaded and checked against the learner, stacked for the PPO core's fixed pool
(:mod:`alem.algos.selfplay`). Called by the training command before anything is written."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

import alem
from alem.algos.checkpoint_player import CheckpointPlayer
from alem.algos.config import LearnerConfigError
from alem.algos.ppo import Learner, make_learner

__all__ = ["partner_actors"]


def partner_actors(lcfg: Any, env: alem.MultiAgentEnv) -> tuple[Any, Any]:
    """``algo.partners``: the pool's partners (split ``train`` unless one is named) loaded and
    checked (checkpoint partners whose actor has the learner's shapes), stacked ``[K, R, ...]``;
    the config gets ``pool_size = K``."""
    from alem.arena.crossplay import SPLITS, read_pool  # the pool's manifest format

    arg = lcfg.partners
    where = f"algo.partners={arg}"
    make_learner(env, lcfg)  # the learner fits the env before the pool is read
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
    template = jax.eval_shape(make_learner(env, lcfg).init, jax.random.key(0)).params["actor"]
    want = jax.tree.map(lambda x: (x.shape, str(x.dtype)), template)
    actors = []
    for partner in trained:
        rest = partner.spec.partition(":")[2]
        try:  # the checkpoint player reads the spec (<run dir>[#slot]) and keywords as the arena does
            player = CheckpointPlayer(env, spec=rest, **partner.kwargs)
        except (alem.AlemError, TypeError) as e:
            raise LearnerConfigError(f"{where}: partner {partner.name!r}: {e}") from None
        learner, params = player.learner, player.params
        got = (
            jax.tree.map(lambda x: (tuple(x.shape), str(x.dtype)), params["actor"])
            if isinstance(learner, Learner)
            else None
        )
        if got != want:
            kind = "a value-based run" if not isinstance(learner, Learner) else "an actor of other shapes"
            raise LearnerConfigError(
                f"{where}: partner {partner.name!r} is {kind} ({learner.cfg.name}); the learner "
                f"({lcfg.name}) can seat only PPO actors of its own shapes (same preset, hidden sizes and roles)"
            )
        actors.append(params["actor"])
    return lcfg, jax.tree.map(lambda *xs: jax.numpy.stack(xs), *actors)
