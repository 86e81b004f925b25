"""Evaluating trained parameters: the final evaluation ``alem.train`` writes, and a compiled
evaluator to score many snapshots (benchmarks, notebooks)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

from alem.json_values import jsonable
from alem.metrics import EPISODE_PREFIXES, outcome_rates
from alem.rollout import random_rollout
from alem.training.loop import mean_return

__all__ = ["Evaluation", "policy_evaluator", "eval_keys", "final_evaluation"]


class Evaluation(NamedTuple):
    """What a :func:`policy_evaluator` returns, per seed."""

    episodes: np.ndarray  # [S] episodes that ended
    returns: np.ndarray  # [S, N] mean return per agent (NaN where none ended)
    outcomes: dict[str, np.ndarray]  # "<outcome>_rate" -> [S] (the env's ``outcomes``; often empty)


def policy_evaluator(env, learner, num_steps: int) -> Callable[[jax.Array, Any], Evaluation]:
    """A compiled evaluation of seed-batched learner parameters (compiled once, called many times).

    Returns ``evaluate(keys, params) -> Evaluation(episodes [S], returns [S, N], outcomes)``, the
    returns the mean return per agent and ``outcomes`` the rates of the env's episode outcomes
    (SMAX: ``won_rate``, ...): for each
    seed, ``learner.cfg.num_envs`` fresh envs run the learner's evaluation policy
    (``learner.evaluation_rollout``: PPO's stochastic policy, a Q-learner's greedy one) with ``params`` for
    ``num_steps`` steps, rounded up to whole rollouts of ``learner.cfg.num_steps``; the mean is over
    the episodes that ended (NaN where none did). ``params`` has the seed axis first, as in a
    seed-vmapped ``LearnerState.params``.
    """
    rounds = -(-num_steps // learner.cfg.num_steps)

    def one_seed(key, params):
        st = learner.init(key).replace(params=params)

        def one_rollout(s, _):
            s, _batch, stats = learner.evaluation_rollout(s, env.default_params)
            return s, stats

        _, m = jax.lax.scan(one_rollout, st, None, length=rounds)
        counts = {k: v.sum(0) for k, v in m.items() if k.startswith(EPISODE_PREFIXES)}
        return m["episodes"].sum(), m["return_sum"].sum(0), counts

    batched = jax.jit(jax.vmap(one_seed))

    def evaluate(keys: jax.Array, params: Any) -> Evaluation:
        episodes, return_sum, counts = jax.device_get(batched(keys, params))
        episodes = np.asarray(episodes)
        counts = {k: np.asarray(v) for k, v in counts.items()}
        return Evaluation(
            episodes, mean_return(np.asarray(return_sum), episodes), outcome_rates(counts, episodes)
        )

    return evaluate


def eval_keys(keys: jax.Array, index: int = 0) -> jax.Array:
    """Evaluation keys of seeds ``keys`` (``[S]``), apart from the training keys; ``index`` numbers evaluations."""
    keys = jax.vmap(lambda k: jax.random.fold_in(k, 2**31 - 1))(keys)
    return keys if index == 0 else jax.vmap(lambda k: jax.random.fold_in(k, index))(keys)


def final_evaluation(env, learner, state, keys, num_steps: int, evaluate=None) -> dict[str, Any]:
    """Mean episode return of the trained (stochastic) policy and of the random policy, same envs.

    ``evaluate``: a :func:`policy_evaluator` of the same ``num_steps`` already compiled, if any.
    """
    rounds = -(-num_steps // learner.cfg.num_steps)
    keys = eval_keys(keys)
    evaluate = evaluate or policy_evaluator(env, learner, num_steps)
    episodes, trained, outcomes = evaluate(keys, jax.device_get(state.params))
    rollout = random_rollout(env, learner.cfg.num_envs, rounds * learner.cfg.num_steps)
    rnd = jax.device_get(jax.jit(jax.vmap(lambda k: rollout(k, env.default_params)[1]))(keys))
    random_ret = mean_return(rnd["return_sum"], rnd["episodes"])
    out = {
        "episodes_per_seed": int(np.min(episodes)),
        "trained_return_per_seed": jsonable(trained),
        "random_return_per_seed": jsonable(random_ret),
        "trained_return_mean": jsonable(np.nanmean(trained)),
        "random_return_mean": jsonable(np.nanmean(random_ret)),
    }
    for name, rate in outcomes.items():  # the env's episode outcomes (SMAX: won_rate, ...)
        out[f"trained_{name}_per_seed"] = jsonable(rate)
        out[f"trained_{name}_mean"] = jsonable(np.nanmean(rate) if np.isfinite(rate).any() else np.nan)
        out[f"random_{name}_mean"] = jsonable(np.nanmean(np.asarray(rnd[name])))
    return out
