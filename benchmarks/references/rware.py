"""rware reference for the throughput benchmark: ``--reference rware``.

rware's ``Warehouse`` is a NumPy/networkx env, one object per env, as EPyMARL runs it. The rollout keeps
``N`` envs built with the alem env's configuration and, for each of ``T`` steps, steps every env once
(a Python ``for`` loop) with actions drawn uniformly from the five actions; an ended env is reset. One
env step is one joint transition. All ``N * T`` steps are run and timed.
"""

from __future__ import annotations

import importlib.util
from typing import Any


def make_references(h: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if importlib.util.find_spec("rware") is None:
            return "rware is not installed (pip install rware==2.0.0)"
        if not env_id.startswith("rware"):
            return "not a multi-robot warehouse env"
        if env.msg_bits or env.observation_type != "flattened":
            return "the rware reference covers the flattened observation without messages"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import numpy as np
        from rware.warehouse import ObservationType, RewardType, Warehouse

        p = env.default_params
        no_limit = 2**31 - 1
        chars = np.where(env.layout.highway, ".", "x").astype(object)
        for r, c in env.layout.goals:
            chars[r, c] = "g"
        layout = "\n".join("".join(row) for row in chars)
        envs = [
            Warehouse(
                shelf_columns=3,
                column_height=8,
                shelf_rows=1,
                n_agents=env.num_agents,
                msg_bits=0,
                sensor_range=env.sensor_range,
                request_queue_size=env.request_queue_size,
                max_inactivity_steps=None
                if int(p.max_inactivity_steps) >= no_limit
                else int(p.max_inactivity_steps),
                max_steps=None if int(p.max_steps) >= no_limit else int(p.max_steps),
                reward_type=RewardType(int(p.reward_type)),
                layout=layout,
                observation_type=ObservationType.FLATTENED,
                normalised_coordinates=env.normalised_coordinates,
            )
            for _ in range(num_envs)
        ]

        def step(e, action):
            _, rewards, done, _, _ = e.step(action)
            return sum(rewards), done

        draw = lambda rng: rng.integers(0, 5, size=(num_envs, env.num_agents)).tolist()
        return h.python_loop_rollout(envs, num_steps, draw, step)

    return [
        h.Reference(
            name="rware",
            description="rware 2.0.0 Warehouse (NumPy/networkx), one object per env, Python loop",
            supports=supports,
            prepare=prepare,
        )
    ]
