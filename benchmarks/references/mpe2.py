"""mpe2 reference for the MPE benchmark: ``--reference mpe2``.

mpe2 (``pip install mpe2``, checked with 1.1.1) is the maintained PettingZoo MPE, written in
NumPy with a Python loop over agents and entity pairs; its ``parallel_env`` steps one world at a
time. The rollout keeps ``N`` parallel envs and, for each of ``T`` steps, steps each of them with
uniformly random actions (one NumPy draw per step for the whole batch) and resets those whose
episode ended, summing every reward. Its cost grows linearly with ``N``, so measure it at small
``N`` (e.g. ``--num-envs 1 64``): at about 5e3 env-steps/s, ``N = 1024, T = 128`` takes ~30 s per rep.
``mpe2`` is imported inside ``prepare`` only.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import numpy as np

from benchmarks.harness import python_loop_rollout

#: alem id -> mpe2 module.
SCENARIOS = {
    "mpe/simple-v0": "simple_v3",
    "mpe/simple_spread-v0": "simple_spread_v3",
    "mpe/simple_reference-v0": "simple_reference_v3",
    "mpe/simple_speaker_listener-v0": "simple_speaker_listener_v4",
    "mpe/simple_crypto-v0": "simple_crypto_v3",
    "mpe/simple_tag-v0": "simple_tag_v3",
    "mpe/simple_adversary-v0": "simple_adversary_v3",
    "mpe/simple_push-v0": "simple_push_v3",
    "mpe/simple_world_comm-v0": "simple_world_comm_v3",
}


def build_mpe2_rollout(module_name: str, num_envs: int, num_steps: int, **kwargs: Any):
    """``rollout(seed) -> total reward`` of ``num_envs`` mpe2 parallel envs for ``num_steps`` steps."""
    module = importlib.import_module(f"mpe2.{module_name}")
    envs = [module.parallel_env(**kwargs) for _ in range(num_envs)]
    agents = list(envs[0].possible_agents)
    sizes = np.array([envs[0].action_space(a).n for a in agents])

    def step(e, action):
        _, reward, _, _, _ = e.step(dict(zip(agents, action.tolist(), strict=True)))
        return sum(reward.values()), not e.agents  # every agent terminated or truncated

    draw = lambda rng: (rng.random((num_envs, len(agents))) * sizes).astype(np.int64)
    return python_loop_rollout(envs, num_steps, draw, step)


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if env_id not in SCENARIOS:
            return f"mpe2 has no counterpart of {env_id!r}; covered: {sorted(SCENARIOS)}"
        if getattr(env, "continuous_actions", False):
            return "the mpe2 reference covers discrete actions only"
        if importlib.util.find_spec("mpe2") is None:
            return "mpe2 is not installed (pip install mpe2)"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        kwargs = {"N": env.num_agents} if env_id == "mpe/simple_spread-v0" else {}
        return build_mpe2_rollout(SCENARIOS[env_id], num_envs, num_steps, **kwargs)

    return [
        bench.Reference(
            name="mpe2",
            description="mpe2 1.1 (PettingZoo MPE, NumPy): Python loop over N parallel envs per step",
            supports=supports,
            prepare=prepare,
        )
    ]
