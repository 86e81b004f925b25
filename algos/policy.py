"""Trained learners as evaluator players: ``checkpoint:<run dir>``.

The run directory of ``python -m alem.train`` holds the learner configuration
(``results.json``), the roles and the last checkpoint; :class:`CheckpointPolicy`
rebuilds the learner for the env it is asked to play and samples from (or
takes the mode of) the trained actor of one seed. It is a device policy: a pure
JAX function of the observation and the legal-action mask.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.algos.checkpoint import CheckpointError, latest, restore
from alem.algos.config import LearnerConfig
from alem.algos.ppo import make_learner
from alem.core import MultiAgentEnv
from alem.errors import AlemError
from alem.policies import Policy, Turn

__all__ = ["CheckpointPolicy", "load_trained"]


def load_trained(run_dir: str | Path, env: MultiAgentEnv, seed_index: int = 0):
    """``(learner, actor_params)`` of seed ``seed_index`` of a finished or checkpointed run."""
    run_dir = Path(run_dir)
    results = run_dir / "results.json"
    if not results.is_file():
        raise CheckpointError(f"{run_dir}: no results.json; is it a finished `python -m alem.train` run?")
    try:
        res = json.loads(results.read_text(encoding="utf-8"))
        if not isinstance(res, dict) or not isinstance(res.get("env_id"), str):
            raise ValueError("not an alem.train results object")
    except (ValueError, RecursionError) as e:
        raise CheckpointError(
            f"{results} is damaged or not written by `python -m alem.train` ({type(e).__name__}: {e}); "
            f"resume the run with `python -m alem.train resume={run_dir}` to rewrite it"
        ) from None
    if "learner" not in res:
        raise AlemError(f"{run_dir}: algo {res.get('algo')!r} has no trained parameters to play")
    if res["env_id"] != env.id:
        raise AlemError(f"{run_dir} was trained on {res['env_id']!r}, not {env.id!r}")
    if not 0 <= seed_index < res["num_seeds"]:
        raise AlemError(f"seed_index={seed_index} out of range: the run has {res['num_seeds']} seeds")
    fields = dict(res["learner"])
    fields["hidden"] = tuple(fields["hidden"])
    lcfg = LearnerConfig(**fields)
    if lcfg.recurrent:
        raise AlemError("recurrent checkpoints cannot be played by the evaluator yet (feed-forward only)")
    learner = make_learner(env, lcfg, roles=np.asarray(res["roles"]))
    found = latest(run_dir)
    if found is None:
        raise CheckpointError(f"{run_dir}: no checkpoint")
    keys = jax.vmap(jax.random.key)(jnp.arange(res["num_seeds"]))
    template = jax.vmap(learner.init)(keys)
    state = restore(found[1], template)
    params = jax.tree.map(lambda x: x[seed_index], state.params)
    return learner, params


class CheckpointPolicy(Policy):
    """Plays seat ``turn.agent`` with the trained actor of a run (``spec`` = the run directory)."""

    def __init__(
        self, env: MultiAgentEnv, spec: str | None = None, seed_index: int = 0, greedy: bool = False
    ):
        if not spec:
            raise AlemError("the checkpoint player needs a run directory: checkpoint:<run dir>")
        self.learner, self.params = load_trained(spec, env, int(seed_index))
        self.greedy = bool(greedy)
        self.name = f"checkpoint:{Path(spec).name}"

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        ts = turn.timestep
        b = ts.obs.shape[0]
        learner = self.learner
        hidden = learner.actor_net.initial_hidden((b, 1 if learner.centralised else learner.n))
        _, actions, _, _ = learner.act(
            self.params,
            hidden,
            ts.obs,
            jnp.zeros((b, 0), jnp.float32),
            ts.action_mask,
            jnp.ones((b,), bool),
            key,
            greedy=self.greedy,
        )
        return actions[:, turn.agent]

    def describe(self) -> dict[str, Any]:
        return {"algo": self.learner.cfg.name, "greedy": self.greedy}
