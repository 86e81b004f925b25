"""lbforaging reference for the throughput benchmark: ``--reference lbforaging`` (draft plugin).

lbforaging's ``ForagingEnv`` is a NumPy/Python env, one object per env, as EPyMARL runs it. The rollout
keeps ``N`` envs built with the alem env's configuration and, for each of ``T`` steps, steps every env
once (a Python ``for`` loop) with actions drawn uniformly from all six actions (EPyMARL's LBF exposes
every action; invalid ones are no-ops); an ended env is reset. One env step is one joint transition.
All ``N * T`` steps are run and timed.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def make_references(h: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if importlib.util.find_spec("lbforaging") is None:
            return "lbforaging is not installed (pip install lbforaging)"
        if not env_id.startswith("lbf"):
            return "not a Level-Based Foraging env"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        from lbforaging.foraging.environment import ForagingEnv

        p = env.default_params
        envs = [
            ForagingEnv(
                players=env.num_agents,
                min_player_level=env.min_agent_level,
                max_player_level=env.max_agent_level,
                min_food_level=env.min_food_level,
                max_food_level=env.max_food_level,
                field_size=(env.rows, env.cols),
                max_num_food=env.num_food,
                sight=env.sight,
                max_episode_steps=int(p.max_steps),
                force_coop=bool(p.force_coop),
                penalty=float(p.penalty),
            )
            for _ in range(num_envs)
        ]

        def step(e, action):
            _, rewards, done, _, _ = e.step(action)
            return sum(rewards), done

        draw = lambda rng: rng.integers(0, 6, size=(num_envs, env.num_agents)).tolist()
        return h.python_loop_rollout(envs, num_steps, draw, step)

    return [
        h.Reference(
            name="lbforaging",
            description="lbforaging 2.x ForagingEnv (NumPy/Python), one object per env, Python loop",
            supports=supports,
            prepare=prepare,
        )
    ]
