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


def jaxmarl_available() -> bool:
    return importlib.util.find_spec("jaxmarl") is not None


def build_jaxmarl_rollout(jaxmarl_id: str, num_envs: int, num_steps: int, **kwargs: Any):
    """Jitted ``run(key) -> (total_reward, final_state, final_obs)`` of ``num_envs`` JaxMARL envs."""
    import jax
    import jax.numpy as jnp
    import jaxmarl

    env = jaxmarl.make(jaxmarl_id, **kwargs)
    agents = list(env.agents)
    sizes = [env.action_space(a).n for a in agents]
    reset = jax.vmap(env.reset)
    step = jax.vmap(env.step)

    def run(key):
        key_reset, key_run = jax.random.split(key)
        obs, state = reset(jax.random.split(key_reset, num_envs))

        def body(carry, step_key):
            obs, state, total = carry
            key_act, key_env = jax.random.split(step_key)
            u = jax.random.uniform(key_act, (len(agents), num_envs))  # one draw for the whole batch
            actions = {
                a: jnp.floor(u[i] * n).astype(jnp.int32)
                for i, (a, n) in enumerate(zip(agents, sizes, strict=True))
            }
            obs, state, reward, _, _ = step(jax.random.split(key_env, num_envs), state, actions)
            return (obs, state, total + sum(r.sum() for r in reward.values())), None

        init = (obs, state, jnp.zeros((), jnp.float32))
        (obs, state, total), _ = jax.lax.scan(body, init, jax.random.split(key_run, num_steps))
        return total, state, obs

    return jax.jit(run)


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if env_id not in SCENARIOS:
            return f"JaxMARL has no counterpart of {env_id!r}; covered: {sorted(SCENARIOS)}"
        if getattr(env, "continuous_actions", False):
            return "the JaxMARL reference covers discrete actions only"
        if not jaxmarl_available():
            return "jaxmarl is not installed (pip install jaxmarl==0.2.0)"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import jax

        jaxmarl_id, names = SCENARIOS[env_id]
        kwargs = {}
        if "num_agents" in names:
            kwargs = {"num_agents": env.num_agents, "num_landmarks": env.num_agents}
        run = build_jaxmarl_rollout(jaxmarl_id, num_envs, num_steps, **kwargs)
        return lambda seed: run(jax.random.key(seed))[0]

    return [
        bench.Reference(
            name="jaxmarl",
            description="JaxMARL 0.2.0 MPE: vmap over envs inside one jitted lax.scan, its own auto-reset",
            supports=supports,
            prepare=prepare,
        )
    ]


def _cpu_time_main() -> None:
    """``python benchmarks/references/jaxmarl.py --env ID --num-envs N [N ...]``: alem vs JaxMARL in
    process CPU seconds (all threads) instead of wall time, alternating reps; a steadier ratio than
    wall time on a machine shared with other jobs (it ignores time spent waiting for a core)."""
    import argparse
    import json
    import statistics
    import sys
    import time
    import types
    from pathlib import Path

    import jax

    here = Path(__file__).resolve().parent
    # Run as a script, this folder is first on sys.path and this file would shadow the real jaxmarl.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(here.parent))
    import throughput  # the harness: alem's rollout is the one it times

    p = argparse.ArgumentParser(description=_cpu_time_main.__doc__)
    p.add_argument("--env", default="mpe/simple_spread-v0")
    p.add_argument("--num-envs", type=int, nargs="+", default=[1024])
    p.add_argument("--steps", type=int, default=128)
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args()
    env = throughput.alem.make(args.env)
    (ref,) = make_references(types.SimpleNamespace(Reference=throughput.Reference))
    reason = ref.supports(args.env, env)
    if reason:
        raise SystemExit(reason)
    rows = []
    for n in args.num_envs:
        ours = throughput.make_alem_rollout(env, n, args.steps)
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
