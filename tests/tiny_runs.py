"""Tiny training runs for tests that need a finished ``python -m alem.train`` run directory."""

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
