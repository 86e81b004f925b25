"""Tiny training runs for tests that need a finished ``python -m alem.train`` run directory, and
an untrained stand-in for a trained player."""

from __future__ import annotations

from pathlib import Path

#: A tiny IPPO run (64 env-steps, 8-unit MLP) for tests that need a finished run directory.
TINY_RUN = [
    "algo=ippo",
    "algo.hidden=[8]",
    "algo.num_envs=4",
    "algo.num_steps=8",
    "algo.num_minibatches=2",
    "algo.total_steps=64",
    "chunk_updates=2",
    "eval.num_steps=8",
]


def train_tiny_run(tmp_path_factory, name: str, overrides: list[str]) -> Path:
    """Train ``TINY_RUN`` plus ``overrides`` (the env, extra algo options) into a new run directory."""
    from hydra import compose, initialize_config_module

    from alem.train import run

    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config", overrides=[*TINY_RUN, *overrides])
    run_dir = tmp_path_factory.mktemp(name) / "run"
    run(cfg, run_dir)
    return run_dir


def checkpoint_stand_in(env, greedy: bool = False, seed: int = 1, hidden: int = 16):
    """A CheckpointPlayer around an untrained learner with one parameter set per seat, its
    actor weights drawn N(0, 1) from ``seed`` (far from uniform probabilities; no costly
    ``learner.init``, no files)."""
    import jax
    import jax.numpy as jnp

    from alem.algos.checkpoint_player import CheckpointPlayer
    from alem.algos.config import LearnerConfig
    from alem.algos.ppo import make_learner

    learner = make_learner(env, LearnerConfig(sharing="none", num_envs=4, hidden=(hidden,)))
    net = learner.actor_net
    a_in, _ = learner.inputs(jnp.zeros(env.observation_space().shape), jnp.zeros((0,)))
    init = lambda k: net.init(k, net.initial_hidden((1,)), a_in[None, None, 0], jnp.ones((1, 1), bool))
    shapes = jax.eval_shape(jax.vmap(init), jax.random.split(jax.random.key(0), learner.num_param_sets))
    leaves, treedef = jax.tree.flatten(shapes)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    actor = [jax.random.normal(k, x.shape, x.dtype) for x, k in zip(leaves, keys, strict=True)]
    player = CheckpointPlayer.__new__(CheckpointPlayer)  # what load_trained would give, minus the files
    player.learner, player.greedy, player.name = learner, greedy, "checkpoint:test"
    player.params = {"actor": jax.tree.unflatten(treedef, actor)}
    return player
