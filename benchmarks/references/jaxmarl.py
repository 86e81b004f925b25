"""JaxMARL reference for the MPE benchmark: ``--reference jaxmarl``.

JaxMARL (``pip install jaxmarl==0.2.0``) has JAX versions of the MPE scenarios. The rollout does
what alem's does, with JaxMARL's API: ``N`` envs ``jax.vmap``-ed inside a ``jax.lax.scan`` over ``T``
steps, one ``jax.jit`` over the whole rollout, uniformly random actions drawn for the whole batch in
one call per agent (the same count of random numbers as alem's sampler), and JaxMARL's own
auto-reset (its ``step`` resets with a split key when an episode ends, as alem's ``AutoReset``). The
final state and observations are outputs, so XLA cannot drop them as dead code. The harness's
``first_call_s`` for this reference is JaxMARL's compile time (trace + compile + one run).

Differences worth knowing (they change the work little): JaxMARL runs 26 transitions per episode
for ``max_steps=25`` (alem and mpe2 run 25), and JaxMARL's continuous scenarios are not compared
here (only the default, discrete actions). ``jaxmarl`` is imported inside ``prepare`` only.

Hanabi (``hanabi-v0`` and HLE's small presets; ``jaxmarl.make("hanabi")``, whose defaults are
alem's hanabi-v0: 2 players, 5 colours x 5 ranks with 3/2/2/2/1 copies, hands of 5, 8 information
tokens, 3 lives; the plugin passes the alem env's configuration explicitly anyway) is turn-based
with legal moves, so its rollout samples legal actions instead: JaxMARL 0.2.0's Hanabi does not
implement ``get_avail_actions`` (the base class raises ``NotImplementedError``), so the masks come
from its ``get_legal_moves(state)`` (a dict of float ``[21]`` rows: the 20 HLE moves plus a no-op
that only the waiting player may take). As alem's sampler does for turn-based envs, one action per
env is drawn (``alem.rollout.random_legal_actions`` on the union of the agents' rows without the
no-op, i.e. the moves of the player to move) and given to the player to move; the waiting player
gets the no-op, so every agent's action is legal. Rewards are summed over the agents (``"__all__"``
left out), as alem sums every agent's reward. JaxMARL's observation (its "v0 belief" encoding, 658
floats for the full game, as alem's ``card_knowledge``) is computed for both players each step,
and its auto-reset computes a fresh game (deck shuffle and observation) every step, as for MPE.

SMAX (``smax_<map>-v0``; JaxMARL's ``HeuristicEnemySMAX`` on the same map with the alem env's
options, ``smax_kwargs``): every ally draws uniformly among its available actions
(``get_avail_actions``, alem's ``random_legal_actions`` for the batch, as alem's rollout samples its
action mask); the heuristic enemy moves inside each env's step. JaxMARL computes a fresh episode
(unit placement, SMACv2 unit draws) every step for its auto-reset; alem's ``BatchedAutoReset`` only
for the envs that ended. Self-play SMAX is not compared.
"""

from __future__ import annotations

import importlib.util
from typing import Any

#: alem id -> (JaxMARL env id, alem constructor keyword -> JaxMARL keyword).
SCENARIOS = {
    "mpe/simple-v0": ("MPE_simple_v3", {}),
    "mpe/simple_spread-v0": ("MPE_simple_spread_v3", {"num_agents": "num_agents"}),
    "mpe/simple_reference-v0": ("MPE_simple_reference_v3", {}),
    "mpe/simple_speaker_listener-v0": ("MPE_simple_speaker_listener_v4", {}),
    "mpe/simple_crypto-v0": ("MPE_simple_crypto_v3", {}),
    "mpe/simple_tag-v0": ("MPE_simple_tag_v3", {}),
    "mpe/simple_adversary-v0": ("MPE_simple_adversary_v3", {}),
    "mpe/simple_push-v0": ("MPE_simple_push_v3", {}),
    "mpe/simple_world_comm-v0": ("MPE_simple_world_comm_v3", {}),
}


#: alem Overcooked ids -> JaxMARL 0.2.0 layout names (``jaxmarl.make("overcooked", layout=...)``).
#: JaxMARL's Overcooked is not overcooked-ai 1.1.0's dynamics (its pots start cooking by themselves
#: at 3 onions, its counter_circuit has no tomatoes); the comparison is throughput only.
OVERCOOKED = {
    "overcooked_cramped_room-v0": "cramped_room",
    "overcooked_asymmetric_advantages-v0": "asymm_advantages",
    "overcooked_coordination_ring-v0": "coord_ring",
    "overcooked_forced_coordination-v0": "forced_coord",
    "overcooked_counter_circuit-v0": "counter_circuit",
}

#: alem SMAX ids: JaxMARL's ``HeuristicEnemySMAX`` on the same map, built with the alem env's options.
SMAX_PREFIX = "smax_"

#: alem Hanabi ids: JaxMARL's ``hanabi`` built with the alem env's configuration.
HANABI = ("hanabi-v0", "hanabi_small-v0", "hanabi_very_small-v0")


def hanabi_kwargs(env: Any) -> dict[str, Any]:
    """``jaxmarl.make("hanabi", **kwargs)`` arguments matching an alem Hanabi env."""
    return {
        "num_agents": env.num_players,
        "num_colors": env.colours,
        "num_ranks": env.ranks,
        "hand_size": env.hand_size,
        "max_info_tokens": env.max_info,
        "max_life_tokens": env.max_life,
        "num_cards_of_rank": [int(c) for c in env.copies],
    }


def smax_kwargs(env: Any) -> dict[str, Any]:
    """``HeuristicEnemySMAX(**kwargs)`` / ``SMAX(**kwargs)`` arguments matching an alem SMAX env
    (the map and every option the two share; the enemy's options are the caller's)."""
    from jaxmarl.environments.smax import map_name_to_scenario

    p = env.default_params
    return {
        "scenario": map_name_to_scenario(env.scenario.name),
        "walls_cause_death": env.walls_cause_death,
        "see_enemy_actions": env.see_enemy_actions,
        "max_steps": int(p.max_steps),
        "won_battle_bonus": float(p.won_battle_bonus),
        "world_steps_per_env_step": env.world_ticks,
        "time_per_step": env.tick_seconds,
        "map_width": env.map_width,
        "map_height": env.map_height,
    }


def jaxmarl_available() -> bool:
    return importlib.util.find_spec("jaxmarl") is not None


def legal_move_sampler(env: Any):
    """``draw(key, states) -> {agent: int32 [N]}`` for a batch of JaxMARL Hanabi states.

    One uniformly random legal move per env (alem's ``random_legal_actions``, one draw for the
    batch) from ``env.get_legal_moves`` for the player to move; the no-op (the last action, legal for
    the waiting players only) for the others.
    """
    import jax
    import jax.numpy as jnp

    from alem.rollout import random_legal_actions

    agents = list(env.agents)
    legal = jax.vmap(env.get_legal_moves)
    noop = env.action_space(agents[0]).n - 1

    def draw(key, states):
        moves = legal(states)
        mask = jnp.stack([moves[a] for a in agents], axis=1) > 0  # [N, P, A]
        one = random_legal_actions(key, mask[..., :noop].any(axis=1))  # [N]: the mover's move
        waiting = mask[..., noop]  # [N, P]
        return {a: jnp.where(waiting[:, i], noop, one) for i, a in enumerate(agents)}

    return draw


def avail_action_sampler(env: Any):
    """``draw(key, states) -> {agent: int32 [N]}`` for a batch of JaxMARL states of an env with
    ``get_avail_actions`` (SMAX): every agent draws uniformly among its available actions, the
    whole batch in one call of alem's ``random_legal_actions`` (what alem's rollout does)."""
    import jax
    import jax.numpy as jnp

    from alem.rollout import random_legal_actions

    agents = list(env.agents)
    avail = jax.vmap(env.get_avail_actions)

    def draw(key, states):
        masks = avail(states)
        acts = random_legal_actions(key, jnp.stack([masks[a] for a in agents], axis=1) > 0)  # [N, A]
        return {a: acts[:, i] for i, a in enumerate(agents)}

    return draw


def jaxmarl_step_program(
    jaxmarl_id: str,
    num_envs: int,
    legal_moves: bool = False,
    avail_actions: bool = False,
    **kwargs: Any,
) -> Any:
    """JaxMARL's step of ``num_envs`` envs as a :class:`~benchmarks.harness.StepProgram`; carry
    ``(obs, state, total_reward)``.

    ``legal_moves=True`` (turn-based games with a no-op for the waiting players, e.g. Hanabi): one
    uniformly random legal move per env from ``env.get_legal_moves`` for the player to move, the
    no-op (the last action) for the others. ``avail_actions=True`` (SMAX): each agent's move is
    uniform among ``env.get_avail_actions``. Else every agent draws uniformly from its whole space.
    """
    import jax
    import jax.numpy as jnp
    import jaxmarl

    from benchmarks.harness import StepProgram

    env = jaxmarl.make(jaxmarl_id, **kwargs)
    agents = list(env.agents)
    sizes = [env.action_space(a).n for a in agents]
    reset = jax.vmap(env.reset)
    step = jax.vmap(env.step)

    if legal_moves:
        draw = legal_move_sampler(env)
    elif avail_actions:
        draw = avail_action_sampler(env)
    else:

        def draw(key, state):
            u = jax.random.uniform(key, (len(agents), num_envs))  # one draw for the whole batch
            return {
                a: jnp.floor(u[i] * n).astype(jnp.int32)
                for i, (a, n) in enumerate(zip(agents, sizes, strict=True))
            }

    def init(key):
        obs, state = reset(jax.random.split(key, num_envs))
        return obs, state, jnp.zeros((), jnp.float32)

    def body(carry, step_key):
        obs, state, total = carry
        key_act, key_env = jax.random.split(step_key)
        actions = draw(key_act, state)
        obs, state, reward, _, _ = step(jax.random.split(key_env, num_envs), state, actions)
        return obs, state, total + sum(reward[a].sum() for a in agents)

    return StepProgram(init, body)


def build_jaxmarl_rollout(jaxmarl_id: str, num_envs: int, num_steps: int, **kwargs: Any):
    """Jitted ``run(key) -> (total_reward, final_state, final_obs)`` of ``num_envs`` JaxMARL envs for
    ``num_steps`` steps (:func:`jaxmarl_step_program` in a ``lax.scan``; same keywords)."""
    from benchmarks.harness import scan_program

    run = scan_program(jaxmarl_step_program(jaxmarl_id, num_envs, **kwargs), num_steps)

    def rollout(key):
        obs, state, total = run(key)
        return total, state, obs

    return rollout


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if env_id in HANABI:
            if env.observation_type != "card_knowledge":
                return (
                    f"JaxMARL's Hanabi has the card-knowledge observation only; this env has "
                    f"observation_type={env.observation_type!r}"
                )
            if not jaxmarl_available():
                return "jaxmarl is not installed (pip install jaxmarl==0.2.0)"
            return None
        if env_id in OVERCOOKED:
            return None if jaxmarl_available() else "jaxmarl is not installed (pip install jaxmarl==0.2.0)"
        if env_id.startswith(SMAX_PREFIX):
            if getattr(env, "self_play", False):
                return "the JaxMARL SMAX reference covers the heuristic enemy only, not self-play"
            return None if jaxmarl_available() else "jaxmarl is not installed (pip install jaxmarl==0.2.0)"
        if env_id not in SCENARIOS:
            covered = sorted([*SCENARIOS, *HANABI, *OVERCOOKED, "smax_<map>-v0"])
            return f"JaxMARL has no counterpart of {env_id!r}; covered: {covered}"
        if getattr(env, "continuous_actions", False):
            return "the JaxMARL reference covers discrete actions only"
        if not jaxmarl_available():
            return "jaxmarl is not installed (pip install jaxmarl==0.2.0)"
        return None

    def program(env_id: str, env: Any, num_envs: int):
        """The JaxMARL counterpart of ``env_id`` (``supports`` said yes) as a step program."""
        if env_id in HANABI:
            return jaxmarl_step_program("hanabi", num_envs, legal_moves=True, **hanabi_kwargs(env))
        if env_id in OVERCOOKED:
            from jaxmarl.environments.overcooked import overcooked_layouts

            layout = overcooked_layouts[OVERCOOKED[env_id]]
            return jaxmarl_step_program(
                "overcooked", num_envs, layout=layout, max_steps=int(env.default_params.max_steps)
            )
        if env_id.startswith(SMAX_PREFIX):
            return jaxmarl_step_program(
                "HeuristicEnemySMAX",
                num_envs,
                avail_actions=True,
                enemy_shoots=env.enemy_shoots,
                attack_mode=env.attack_mode,
                **smax_kwargs(env),
            )
        jaxmarl_id, names = SCENARIOS[env_id]
        kwargs = {}
        if "num_agents" in names:
            kwargs = {"num_agents": env.num_agents, "num_landmarks": env.num_agents}
        return jaxmarl_step_program(jaxmarl_id, num_envs, **kwargs)

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import jax

        run = bench.scan_program(program(env_id, env, num_envs), num_steps)
        return lambda seed: run(jax.random.key(seed))[-1]

    return [
        bench.Reference(
            name="jaxmarl",
            description=(
                "JaxMARL 0.2.0 (MPE, Hanabi, Overcooked, SMAX): vmap over envs inside one jitted lax.scan, its "
                "own auto-reset; Hanabi: random legal moves from get_legal_moves"
            ),
            supports=supports,
            prepare=prepare,
            step=program,
        )
    ]


def _cpu_time_main() -> None:
    """``python -m benchmarks.references.jaxmarl --env ID --num-envs N [N ...]``: alem vs JaxMARL in
    process CPU seconds (all threads) instead of wall time, alternating reps; a steadier ratio than
    wall time on a machine shared with other jobs (it ignores time spent waiting for a core)."""
    import argparse
    import json
    import statistics
    import time

    import jax

    import alem
    from benchmarks import harness  # alem's rollout is the one it times

    p = argparse.ArgumentParser(description=_cpu_time_main.__doc__)
    p.add_argument("--env", default="mpe/simple_spread-v0")
    p.add_argument("--num-envs", type=int, nargs="+", default=[1024])
    p.add_argument("--steps", type=int, default=128)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    env = alem.make(args.env)
    (ref,) = make_references(harness)
    reason = ref.supports(args.env, env)
    if reason:
        raise SystemExit(reason)
    rows = []
    for n in args.num_envs:
        ours = harness.make_alem_rollout(env, n, args.steps)
        theirs = ref.prepare(args.env, env, n, args.steps)
        jax.block_until_ready(ours(jax.random.key(0), env.default_params))
        jax.block_until_ready(theirs(0))
        cpu = {"alem": [], "jaxmarl": []}
        for r in range(args.reps):
            calls = [
                ("alem", ours, (jax.random.key(r + 1), env.default_params)),
                ("jaxmarl", theirs, (r + 1,)),
            ]
            for name, fn, fn_args in calls[:: -1 if r % 2 else 1]:  # ABBA order
                t0 = time.process_time()
                jax.block_until_ready(fn(*fn_args))
                cpu[name].append(time.process_time() - t0)
        steps = n * args.steps
        row = {"N": n, **{f"{k}_steps_per_cpu_s": steps / statistics.median(v) for k, v in cpu.items()}}
        row["ratio"] = row["alem_steps_per_cpu_s"] / row["jaxmarl_steps_per_cpu_s"]
        rows.append(row)
    print(
        json.dumps(
            {
                "env_id": args.env,
                "T": args.steps,
                "reps": args.reps,
                "unit": "env-steps per CPU second",
                "results": rows,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    _cpu_time_main()
