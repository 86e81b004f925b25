"""Jumanji reference for Level-Based Foraging and the multi-robot warehouse: ``--reference jumanji``.

Jumanji (``pip install jumanji==1.1.2``) has JAX versions of both: ``LevelBasedForaging-v0`` and
``RobotWarehouse-v0``. They are re-implementations with their own rules (Jumanji's LBF, for one,
normalises rewards and places items its own way), so the comparison is throughput on the same
sizes, not the same trajectories. The rollout does what alem's does, with Jumanji's API: ``N``
envs ``jax.vmap``-ed inside a ``jax.lax.scan`` over ``T`` steps, one ``jax.jit`` over the whole
rollout, every agent's action uniform among its legal ones (``alem.rollout.random_legal_actions``
on Jumanji's ``action_mask``, one draw for the batch), and Jumanji's own auto-reset
(``jumanji.wrappers.AutoResetWrapper``: a ``lax.cond`` that ``vmap`` turns into a fresh episode
computed every step for every env). The final state and timestep are outputs, so XLA cannot drop
Jumanji's observations as dead code.

The same sizes: LBF's grid, agents, food, sight (Jumanji's ``fov``), the highest agent level, the
cooperative variant and the episode limit; RWARE's shelf rows and columns (rware's sizes), column
height 8, agents, sensor range, request queue and episode limit. ``jumanji`` is imported inside the
step builder only.
"""

from __future__ import annotations

import importlib.util
from typing import Any

#: rware size -> (shelf rows, shelf columns), as rware 2.0.0 builds them (column height 8).
RWARE_SHELVES = {"tiny": (1, 3), "small": (2, 3), "medium": (2, 5), "large": (3, 5)}


def jumanji_available() -> bool:
    return importlib.util.find_spec("jumanji") is not None


def _family(env_id: str) -> str | None:
    if env_id.startswith("lbf"):
        return "lbf"
    if env_id.startswith("rware_"):
        return "rware"
    return None


def make_jumanji_env(env_id: str, env: Any) -> Any:
    """The Jumanji env of the same sizes as the alem env ``env`` (see the module docstring)."""
    import jumanji
    from jumanji.environments.routing.lbf.generator import RandomGenerator as LbfGenerator
    from jumanji.environments.routing.robot_warehouse.generator import RandomGenerator as RwareGenerator

    p = env.default_params
    if _family(env_id) == "lbf":
        generator = LbfGenerator(
            grid_size=int(env.rows),
            num_agents=env.num_agents,
            num_food=int(env.num_food),
            fov=int(env.sight),
            max_agent_level=int(env.max_agent_level),
            force_coop=bool(p.force_coop),
        )
        return jumanji.make(
            "LevelBasedForaging-v0",
            generator=generator,
            time_limit=int(p.max_steps),
            penalty=float(p.penalty),
            normalize_reward=bool(p.normalize_reward),
        )
    size = env_id.split("_")[1]
    rows, columns = RWARE_SHELVES[size]
    generator = RwareGenerator(
        shelf_rows=rows,
        shelf_columns=columns,
        column_height=8,
        num_agents=env.num_agents,
        sensor_range=int(env.sensor_range),
        request_queue_size=int(env.request_queue_size),
    )
    return jumanji.make("RobotWarehouse-v0", generator=generator, time_limit=int(p.max_steps))


def jumanji_step_program(env_id: str, env: Any, num_envs: int) -> Any:
    """Jumanji's step of ``num_envs`` envs as a :class:`~benchmarks.harness.StepProgram`; carry
    ``(state, timestep, total_reward)``."""
    import jax
    import jax.numpy as jnp
    from jumanji.wrappers import AutoResetWrapper

    from alem.rollout import random_legal_actions
    from benchmarks.harness import StepProgram

    jenv = AutoResetWrapper(make_jumanji_env(env_id, env))
    reset, step = jax.vmap(jenv.reset), jax.vmap(jenv.step)

    def init(key):
        state, ts = reset(jax.random.split(key, num_envs))
        return state, ts, jnp.zeros((), jnp.float32)

    def body(carry, key):
        state, ts, total = carry
        actions = random_legal_actions(key, ts.observation.action_mask)  # [N, agents], one draw
        state, ts = step(state, actions)
        return state, ts, total + ts.reward.sum()

    return StepProgram(init, body)


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        family = _family(env_id)
        if family is None:
            return f"the Jumanji reference covers LBF and RWARE ids, not {env_id!r}"
        if family == "rware" and env_id.split("_")[1] not in RWARE_SHELVES:
            return f"no rware size in {env_id!r}; known: {sorted(RWARE_SHELVES)}"
        if family == "lbf" and env.rows != env.cols:
            return "Jumanji's LBF grid is square"
        if not jumanji_available():
            return "jumanji is not installed (pip install jumanji==1.1.2)"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import jax

        run = bench.scan_program(jumanji_step_program(env_id, env, num_envs), num_steps)
        return lambda seed: run(jax.random.key(seed))[-1]

    return [
        bench.Reference(
            name="jumanji",
            description=(
                "Jumanji 1.1.2 (LevelBasedForaging-v0, RobotWarehouse-v0) at the alem env's sizes: vmap over "
                "envs in one jitted lax.scan, random legal actions (same sampler as alem), its AutoResetWrapper"
            ),
            supports=supports,
            prepare=prepare,
            step=jumanji_step_program,
        )
    ]
