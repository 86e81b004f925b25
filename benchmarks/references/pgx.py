"""Pgx reference for the games benchmark: ``--reference pgx``.

Pgx (``pip install pgx``, checked with 2.6.0) is a JAX library of board and card games. The rollout
does what alem's does, with Pgx's API: ``N`` envs ``jax.vmap``-ed inside a ``jax.lax.scan`` over
``T`` steps, uniformly random legal actions drawn with the same sampler as alem's rollout
(``alem.rollout.random_legal_actions`` on ``state.legal_action_mask``), auto-reset inside the scan
(``pgx.experimental.auto_reset``), one ``jax.jit`` over the whole rollout. The final state is an
output, so XLA cannot drop Pgx's observations as dead code.

Differences that do not change the work much but are worth knowing: Pgx computes the observation
of the player to move only (alem computes every player's), numbers some actions differently from
OpenSpiel (e.g. Kuhn: Pgx bet=0/pass=1), and randomises who moves first; the benchmark only plays
random legal moves, so neither matters for speed. Pgx has no liar's dice.

``pgx`` is imported inside ``prepare`` only, so the harness works without it.
"""

from __future__ import annotations

import importlib.util
from typing import Any

#: alem id -> Pgx env id.
GAMES = {
    "tic_tac_toe-v0": "tic_tac_toe",
    "connect_four-v0": "connect_four",
    "kuhn_poker-v0": "kuhn_poker",
    "leduc_holdem-v0": "leduc_holdem",
    "chess-v0": "chess",
}


def pgx_available() -> bool:
    return importlib.util.find_spec("pgx") is not None


def pgx_step_program(pgx_id: str, num_envs: int) -> Any:
    """Pgx's step of ``num_envs`` envs as a :class:`~benchmarks.harness.StepProgram`: random legal
    actions (alem's sampler, one draw for the batch), ``pgx.experimental.auto_reset``; carry
    ``(state, total_reward, episodes)`` (``episodes``: games that ended)."""
    import jax
    import jax.numpy as jnp
    import pgx
    from pgx.experimental import auto_reset

    from alem.rollout import random_legal_actions
    from benchmarks.harness import StepProgram

    env = pgx.make(pgx_id)
    init_batch = jax.vmap(env.init)
    step = jax.vmap(auto_reset(env.step, env.init))

    def init(key):
        return (
            init_batch(jax.random.split(key, num_envs)),
            jnp.zeros((), jnp.float32),
            jnp.zeros((), jnp.int32),
        )

    def body(carry, step_key):
        state, total, episodes = carry
        key_act, key_env = jax.random.split(step_key)
        action = random_legal_actions(key_act, state.legal_action_mask)  # [N], one draw for the batch
        state = step(state, action, jax.random.split(key_env, num_envs))
        ended = (state.terminated | state.truncated).sum(dtype=jnp.int32)
        return state, total + state.rewards.sum(), episodes + ended

    return StepProgram(init, body, total_index=1)


def build_pgx_rollout(pgx_id: str, num_envs: int, num_steps: int):
    """Jitted ``run(key) -> (stats, final_state)`` of ``num_envs`` Pgx envs for ``num_steps`` steps.

    ``stats``: ``total_reward`` (every player, env and step) and ``episodes`` (ended games).
    """
    from benchmarks.harness import scan_program

    run = scan_program(pgx_step_program(pgx_id, num_envs), num_steps)

    def rollout(key):
        state, total, episodes = run(key)
        return {"total_reward": total, "episodes": episodes}, state

    return rollout


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if env_id not in GAMES:
            return f"Pgx has no counterpart of {env_id!r}; covered: {sorted(GAMES)}"
        if env.num_agents != 2:
            return f"Pgx's {GAMES[env_id]} is a 2-player game; this env has {env.num_agents} players"
        if not pgx_available():
            return "pgx is not installed (pip install pgx==2.6.0)"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import jax

        run = build_pgx_rollout(GAMES[env_id], num_envs, num_steps)

        def rollout(seed: int):
            stats, state = run(jax.random.key(seed))
            jax.block_until_ready(state)
            return stats["total_reward"]

        return rollout

    return [
        bench.Reference(
            name="pgx",
            description=(
                "Pgx (JAX): vmap over N envs in a jitted lax.scan over T steps, random legal actions "
                "(same sampler as alem), pgx.experimental.auto_reset"
            ),
            supports=supports,
            prepare=prepare,
            step=lambda env_id, env, num_envs: pgx_step_program(GAMES[env_id], num_envs),
        )
    ]
