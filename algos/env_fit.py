"""Which learner configs fit which envs: the checks :func:`~alem.algos.ppo.make_learner` runs
before anything compiles, each refusing with one message that names the setting and the env."""

from __future__ import annotations

import dataclasses

import numpy as np

from alem.algos import joint as joint_actions
from alem.algos.config import LearnerConfig, LearnerConfigError
from alem.core import MultiAgentEnv
from alem.errors import did_you_mean

__all__ = ["check_fits", "check_param_sets"]


def check_fits(env: MultiAgentEnv, cfg: LearnerConfig) -> None:
    """Raise :class:`LearnerConfigError` if ``cfg`` cannot train on ``env``."""
    n = env.num_agents
    if env.continuous_actions:
        if cfg.actor != "local":
            raise LearnerConfigError(
                f"{env.id} has continuous actions; centralised actors (algo.actor={cfg.actor}, CPPO) "
                "need discrete ones: use a decentralised learner (ippo, mappo, happo, dpo) or the "
                "env's discrete variant"
            )
        space = env.action_space(0)
        if not (np.isfinite(space.low).all() and np.isfinite(space.high).all()):
            raise LearnerConfigError(f"{env.id}: the Gaussian policy head needs a bounded action box")
    elif cfg.actor == "joint_action" and env.num_actions**n > joint_actions.MAX_JOINT_ACTIONS:
        a = env.num_actions
        raise LearnerConfigError(
            f"actor=joint_action needs A**N = {a}**{n} = {a**n} outputs for {env.id} "
            f"(limit {joint_actions.MAX_JOINT_ACTIONS}); use actor=joint"
        )
    if cfg.actor != "local" and env.zero_sum:
        raise LearnerConfigError(
            f"algo.actor={cfg.actor} (CPPO) maximises the team's mean reward, which is always 0 in the "
            f"zero-sum {env.id}: nothing to learn; use a decentralised learner (ippo, mappo, ...)"
        )
    if (cfg.selfplay != "off" or cfg.selfplay_random > 0) and (
        n != 2 or not env.zero_sum or env.continuous_actions
    ):
        why = [
            f"it has {n} players" if n != 2 else "",
            "it is not zero-sum" if not env.zero_sum else "",
            "its actions are continuous" if env.continuous_actions else "",
        ]
        what = f"algo.selfplay={cfg.selfplay}" if cfg.selfplay != "off" else "algo.selfplay_random"
        raise LearnerConfigError(
            f"{what} seats an opponent (past snapshots, the random player) in two-player zero-sum "
            f"games with discrete actions; {env.id} does not fit: {' and '.join(w for w in why if w)}"
        )
    if cfg.partners is not None and (not env.cooperative or cfg.actor != "local"):
        why = (
            "it is not cooperative"
            if not env.cooperative
            else f"algo.actor={cfg.actor} acts for the whole team"
        )
        raise LearnerConfigError(
            f"algo.partners seats trained partners beside a decentralised learner in a cooperative env; "
            f"{env.id} does not fit: {why}"
        )
    if cfg.selfplay_random_seat >= n:
        raise LearnerConfigError(
            f"algo.selfplay_random_seat={cfg.selfplay_random_seat} is not a seat of {env.id} (seats 0..{n - 1})"
        )
    if cfg.anneal_param:
        _check_anneal_param(env, cfg.anneal_param)
    if cfg.update_order == "sequential" and n < 2:
        raise LearnerConfigError("update_order=sequential (HAPPO) needs at least 2 agents")


def check_param_sets(env: MultiAgentEnv, cfg: LearnerConfig, param_sets: np.ndarray) -> None:
    """Refuse a parameter-set assignment the config cannot use."""
    if cfg.update_order == "sequential" and int(param_sets.max()) == 0:
        raise LearnerConfigError(
            f"algo.update_order=sequential (HAPPO) with sharing={cfg.sharing} gives {env.id} a single "
            "parameter set: that is fully shared HAPPO, refused like sharing=shared; use sharing=none"
        )


def _check_anneal_param(env: MultiAgentEnv, name: str) -> None:
    """Refuse an ``algo.anneal_param`` that is not a float scalar field of the env's params."""
    params = env.default_params
    fields = [f.name for f in dataclasses.fields(params)] if dataclasses.is_dataclass(params) else []
    is_float_scalar = lambda v: np.ndim(v) == 0 and np.issubdtype(np.asarray(v).dtype, np.floating)
    floats = [f for f in fields if is_float_scalar(getattr(params, f))]
    if name not in floats:
        what = "is not a field of" if name not in fields else "is not a float scalar field of"
        raise LearnerConfigError(
            f"algo.anneal_param={name!r} {what} {env.id}'s params; float scalar fields: {floats or 'none'}"
            f"{did_you_mean(name, floats)}"
        )
