"""Training throughput: alem IPPO against JaxMARL's IPPO-FF baseline on MPE simple_spread, in one run.

Both learners train on ``simple_spread`` with JaxMARL's shipped hyperparameters
(``baselines/IPPO/config/ippo_ff_mpe.yaml``: 16 envs x 128 steps per update, 4 epochs x 4
minibatches, Adam 2.5e-4 annealed, 64-64 tanh actor and critic); each side is one jitted function
that runs a whole training run (init + every update), ``jax.vmap``-ed over seeds, compiled ahead of
time so compile is reported apart, then timed in interleaved repetitions (ABBA). Each side lives in
its own worker process (compiled once, then one timed run per repetition on request), so the two
programs never share a JAX runtime::

    git clone https://github.com/FLAIROx/JaxMARL
    python -m benchmarks.train_throughput --jaxmarl-ippo JaxMARL/baselines/IPPO/ippo_ff_mpe.py \\
        --total-steps 61440 --seeds 2 --reps 5 [--out result.json]

No JaxMARL code lives here: ``make_train`` is imported from the given file at run time and called
with the config that sits next to it (``config/ippo_ff_mpe.yaml``), ``TOTAL_TIMESTEPS`` and
``NUM_SEEDS`` replaced. Its per-update ``io_callback`` (metrics to the host for ``wandb.log``; wandb
is off in the shipped config) is replaced by a no-op, so JaxMARL does slightly less work, and its
orthogonal initializer by alem's (same distribution, no LAPACK call: flax's batched QR deadlocks
jaxlib's CPU thread pool on 2-core machines, which was the benchmark's "hang").

One env step is one transition of one env (3 agents): ``env-steps/s = seeds * total steps / s``.
``ratio`` = alem median / JaxMARL median (> 1: alem is faster). Each repetition also records the
process CPU time (all threads): on a shared, oversubscribed machine env-steps per CPU-second
(``ratio_cpu``) is the steadier measure of the work each side does. The returns printed at the end
are a sanity check (both runs are short): per agent, JaxMARL's logged return divided by its agent
count.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import multiprocessing as mp
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import alem
from alem.algos import make_config, make_learner
from alem.algos.config import PPOConfig
from benchmarks.harness import machine, positive_int, timed

ENV_ID = "mpe/simple_spread-v0"
JAXMARL_ENV = "MPE_simple_spread_v3"
CONFIG_NAME = "ippo_ff_mpe.yaml"

#: JaxMARL config key -> alem PPOConfig field (same meaning; see docs/guide/training.md).
MATCHED = {
    "LR": "lr",
    "NUM_ENVS": "num_envs",
    "NUM_STEPS": "num_steps",
    "UPDATE_EPOCHS": "update_epochs",
    "NUM_MINIBATCHES": "num_minibatches",
    "GAMMA": "gamma",
    "GAE_LAMBDA": "gae_lambda",
    "CLIP_EPS": "clip_eps",
    "ENT_COEF": "ent_coef",
    "VF_COEF": "vf_coef",
    "MAX_GRAD_NORM": "max_grad_norm",
    "ACTIVATION": "activation",
    "ANNEAL_LR": "anneal_lr",
}


#: The hyperparameters of JaxMARL's shipped ``config/ippo_ff_mpe.yaml`` (commit c793d09), for the
#: alem side of a comparison made without a checkout (the HLO proxy); with one, its file is read.
SHIPPED_IPPO = {
    "ENV_NAME": JAXMARL_ENV,
    "LR": 2.5e-4,
    "NUM_ENVS": 16,
    "NUM_STEPS": 128,
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 4,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2,
    "ENT_COEF": 0.01,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "ACTIVATION": "tanh",
    "ANNEAL_LR": True,
}


def load_jaxmarl_config(script: Path, total_steps: int, seeds: int) -> dict[str, Any]:
    """The baseline's shipped config (``config/ippo_ff_mpe.yaml`` beside the script) for this benchmark."""
    from omegaconf import OmegaConf

    path = script.parent / "config" / CONFIG_NAME
    if not path.is_file():
        raise SystemExit(
            f"--jaxmarl-ippo: {path} not found (expected beside the script in a JaxMARL checkout)"
        )
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    if cfg.get("ENV_NAME") != JAXMARL_ENV or cfg.get("ENV_KWARGS"):
        raise SystemExit(
            f"{path}: expected ENV_NAME={JAXMARL_ENV} with no ENV_KWARGS, got {cfg.get('ENV_NAME')}"
        )
    return {**cfg, "TOTAL_TIMESTEPS": total_steps, "NUM_SEEDS": seeds, "WANDB_MODE": "disabled"}


def alem_config(jcfg: dict[str, Any], **overrides: Any) -> PPOConfig:
    """alem's IPPO preset with every hyperparameter JaxMARL's config sets (64-64 layers in both)."""
    fields = {ours: jcfg[theirs] for theirs, ours in MATCHED.items()}
    return make_config(
        "ippo", **fields, hidden=(64, 64), total_steps=int(jcfg["TOTAL_TIMESTEPS"]), **overrides
    )


def _updates(jcfg: dict[str, Any]) -> int:
    return int(jcfg["TOTAL_TIMESTEPS"]) // jcfg["NUM_STEPS"] // jcfg["NUM_ENVS"]


def prepare_alem(
    jcfg: dict[str, Any], seeds: int, **overrides: Any
) -> tuple[Callable[[], Any], float, PPOConfig]:
    """Compiled ``run() -> (state, metrics)`` of alem IPPO over ``seeds`` vmapped seeds; compile seconds."""
    cfg = alem_config(jcfg, **overrides)
    learner = make_learner(alem.make(ENV_ID), cfg)
    updates = _updates(jcfg)
    keys = jax.vmap(jax.random.key)(jnp.arange(seeds))
    fn = jax.jit(jax.vmap(lambda k: learner.run(learner.init(k), updates)))
    compile_s, compiled = timed(lambda: fn.lower(keys).compile())
    return (lambda: compiled(keys)), compile_s, cfg


def load_make_train(script: Path) -> Callable[[dict], Callable]:
    """``make_train`` from a JaxMARL checkout's ``ippo_ff_mpe.py`` (imported, not copied)."""
    # Its networks use flax's orthogonal initializer, a batched LAPACK QR under the seeds' vmap that
    # deadlocks jaxlib's 2-thread CPU pool (the "hang" seen here: every thread asleep in
    # lapack_sorgqr_ffi -> ParallelBatchMap). alem's initializer draws the same distribution with
    # matrix-vector products only; swapping it in changes the one-time init, not the training loop.
    import flax.linen.initializers

    from alem.algos.networks import orthogonal

    flax.linen.initializers.orthogonal = orthogonal
    spec = importlib.util.spec_from_file_location("jaxmarl_ippo_ff_mpe", script)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--jaxmarl-ippo: cannot import {script}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Its update step sends metrics to the host for ``wandb.log`` (``jax.experimental.io_callback``;
    # wandb is off in the shipped config). The callback is dropped (no wandb run is needed, and it was
    # a suspect for hangs seen on jax 0.10.2 CPU): JaxMARL then does slightly less work than as
    # shipped. This worker process runs only JaxMARL, so the patch touches nothing else.
    import jax.experimental

    jax.experimental.io_callback = lambda *args, **kwargs: None
    return module.make_train


def prepare_jaxmarl(script: Path, jcfg: dict[str, Any], seeds: int) -> tuple[Callable[[], Any], float]:
    """Compiled JaxMARL ``train`` vmapped over ``seeds`` seeds, as the baseline's ``main`` runs it."""
    train = load_make_train(script)(dict(jcfg))
    rngs = jax.random.split(jax.random.PRNGKey(jcfg["SEED"]), seeds)
    fn = jax.jit(jax.vmap(train))
    compile_s, compiled = timed(lambda: fn.lower(rngs).compile())
    return (lambda: compiled(rngs)), compile_s


def alem_late_return(out: Any, last: int) -> list[float]:
    """Per seed: mean episode return per agent over the last ``last`` updates."""
    m = jax.device_get(out[1])
    ret = m["return_sum"][:, -last:].sum(1) / np.maximum(m["episodes"][:, -last:].sum(1), 1)[:, None]
    return [float(x) for x in ret.mean(-1)]


def jaxmarl_late_return(out: Any, last: int, num_agents: int) -> list[float]:
    """Per seed: JaxMARL's logged return (x agents, by its MPE log wrapper) per agent, last ``last`` updates."""
    r = np.asarray(jax.device_get(out["metrics"]["returned_episode_returns"]))  # [S, U, ...]
    return [float(x) for x in r[:, -last:].reshape(r.shape[0], -1).mean(-1) / num_agents]


# ------------------------------------------------------------------------ value-based (--algo pqn_vdn | vdn)
@dataclasses.dataclass(frozen=True)
class QComparison:
    """One value-based comparison: JaxMARL's script config, alem's preset, and how its keys map.

    ``matched``: JaxMARL config key -> alem ``QConfig`` field of the same meaning. ``converted``:
    alem fields computed from JaxMARL's (its units differ). ``fixed``: alem fields that follow
    what the script does in code (not in its config)."""

    config: str
    preset: str
    matched: dict[str, str]
    converted: Callable[[dict[str, Any]], dict[str, Any]] = lambda jcfg: {}
    fixed: dict[str, Any] = dataclasses.field(default_factory=dict)


_COMMON = {
    "LR": "lr",
    "NUM_ENVS": "num_envs",
    "NUM_STEPS": "num_steps",
    "GAMMA": "gamma",
    "MAX_GRAD_NORM": "max_grad_norm",
    "EPS_START": "epsilon_start",
    "EPS_FINISH": "epsilon_end",
    "EPS_DECAY": "epsilon_fraction",
    "LR_LINEAR_DECAY": "anneal_lr",
}

Q_COMPARISONS = {
    # pqn_vdn_ff.py: Q(lambda) over the rollout, LayerNorm; the team reward is JaxMARL's
    # `__all__` reward, the agents' sum
    "pqn_vdn": QComparison(
        config="pqn_vdn_ff_mpe.yaml",
        preset="pqn_vdn",
        matched={
            **_COMMON,
            "NUM_EPOCHS": "update_epochs",
            "NUM_MINIBATCHES": "num_minibatches",
            "LAMBDA": "q_lambda",
        },
        fixed={"team_reward": "sum"},
    ),
    # vdn_ff.py: a flat buffer of BUFFER_SIZE transitions, NUM_EPOCHS gradient steps per update,
    # the target network's own max (no double Q), learning after LEARNING_STARTS env steps of all
    # envs; alem's buffer and learning_starts count steps per env
    "vdn": QComparison(
        config="vdn_ff_mpe.yaml",
        preset="vdn",
        matched={
            **_COMMON,
            "NUM_EPOCHS": "train_steps",
            "BUFFER_BATCH_SIZE": "batch_size",
            "TARGET_UPDATE_INTERVAL": "target_every",
            "TAU": "tau",
        },
        converted=lambda jcfg: {
            "buffer_size": int(jcfg["BUFFER_SIZE"]) // int(jcfg["NUM_ENVS"]),
            "learning_starts": -(-int(jcfg["LEARNING_STARTS"]) // int(jcfg["NUM_ENVS"])),
        },
        fixed={"team_reward": "sum", "double_q": False},
    ),
}


def load_jaxmarl_q_config(script: Path, total_steps: int, seeds: int, algo: str) -> dict[str, Any]:
    """``config/config.yaml`` merged with the comparison's ``config/alg/*.yaml``, as the script's
    ``single_run`` merges them, for this benchmark (wandb off)."""
    from omegaconf import OmegaConf

    name = Q_COMPARISONS[algo].config
    main, alg = script.parent / "config" / "config.yaml", script.parent / "config" / "alg" / name
    for path in (main, alg):
        if not path.is_file():
            raise SystemExit(
                f"--jaxmarl-script: {path} not found (expected beside the script in a JaxMARL checkout)"
            )
    cfg = {**OmegaConf.to_container(OmegaConf.load(main)), **OmegaConf.to_container(OmegaConf.load(alg))}
    if cfg.get("ENV_NAME") != JAXMARL_ENV or cfg.get("ENV_KWARGS"):
        raise SystemExit(
            f"{alg}: expected ENV_NAME={JAXMARL_ENV} with no ENV_KWARGS, got {cfg.get('ENV_NAME')}"
        )
    return {
        **cfg,
        "TOTAL_TIMESTEPS": total_steps,
        "NUM_SEEDS": seeds,
        "WANDB_MODE": "disabled",
        "SAVE_PATH": None,
    }


def alem_q_config(jcfg: dict[str, Any], algo: str) -> Any:
    """alem's preset with every hyperparameter JaxMARL's config sets (and what its code fixes)."""
    comp = Q_COMPARISONS[algo]
    fields = {ours: jcfg[theirs] for theirs, ours in comp.matched.items()}
    hidden = (int(jcfg["HIDDEN_SIZE"]),) * int(jcfg.get("NUM_LAYERS", 2))
    return make_config(
        comp.preset,
        **fields,
        **comp.converted(jcfg),
        **comp.fixed,
        hidden=hidden,
        total_steps=int(jcfg["TOTAL_TIMESTEPS"]),
    )


def prepare_alem_q(jcfg: dict[str, Any], seeds: int, algo: str) -> tuple[Callable[[], Any], float, Callable]:
    """Compiled alem value-based training over ``seeds`` seeds, and its greedy evaluation (untimed)."""
    from alem.training.evaluation import policy_evaluator

    cfg = alem_q_config(jcfg, algo)
    env = alem.make(ENV_ID)
    learner = make_learner(env, cfg)
    keys = jax.vmap(jax.random.key)(jnp.arange(seeds))
    fn = jax.jit(jax.vmap(lambda k: learner.run(learner.init(k), _updates(jcfg))))
    compile_s, compiled = timed(lambda: fn.lower(keys).compile())
    # JaxMARL's test: TEST_NUM_ENVS greedy envs for TEST_NUM_STEPS steps; alem: its num_envs for as many env steps
    steps = -(-int(jcfg["TEST_NUM_ENVS"]) * int(jcfg["TEST_NUM_STEPS"]) // cfg.num_envs)
    evaluate = policy_evaluator(env, learner, steps)
    eval_keys = jax.vmap(jax.random.key)(jnp.arange(seeds) + 1000)

    def greedy_return(out: Any, last: int) -> list[float]:
        ret = evaluate(eval_keys, out[0].params).returns
        return [float(x) for x in np.nanmean(ret, -1)]

    return (lambda: compiled(keys)), compile_s, greedy_return


def prepare_jaxmarl_q(
    script: Path, jcfg: dict[str, Any], seeds: int
) -> tuple[Callable[[], Any], float, Callable]:
    """JaxMARL's ``make_train(config, env)`` of a Q-learning script, vmapped over seeds as its ``single_run``."""
    import flax.linen.initializers

    from alem.algos.networks import orthogonal

    flax.linen.initializers.orthogonal = orthogonal  # as for IPPO: no batched LAPACK QR (see above)
    spec = importlib.util.spec_from_file_location(f"jaxmarl_{script.stem}", script)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--jaxmarl-script: cannot import {script}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    jcfg = dict(jcfg)
    env, _ = module.env_from_config(jcfg)
    train = module.make_train(jcfg, env)
    rngs = jax.random.split(jax.random.PRNGKey(jcfg["SEED"]), seeds)
    fn = jax.jit(jax.vmap(train))
    compile_s, compiled = timed(lambda: fn.lower(rngs).compile())
    n = alem.make(ENV_ID).num_agents

    def greedy_return(out: Any, last: int) -> list[float]:
        # its last greedy test (the dict in runner_state: index 2 in pqn_vdn_ff, 3 in vdn_ff);
        # the MPE log wrapper's return is x agents
        test = next(
            jax.device_get(x)
            for x in out["runner_state"]
            if isinstance(x, dict) and "returned_episode_returns" in x
        )
        return [
            float(x) / n for x in np.asarray(test["returned_episode_returns"]).reshape(seeds, -1).mean(-1)
        ]

    return (lambda: compiled(rngs)), compile_s, greedy_return


def _side_worker(
    side: str, script: Path, jcfg: dict[str, Any], seeds: int, conn: Any, algo: str = "ippo"
) -> None:
    """Child process of one side: compile, then one timed training run per ``"run"`` message."""
    if algo in Q_COMPARISONS:
        run, compile_s, late = (
            prepare_alem_q(jcfg, seeds, algo) if side == "alem" else prepare_jaxmarl_q(script, jcfg, seeds)
        )
    elif side == "alem":
        run, compile_s, _ = prepare_alem(jcfg, seeds)
        late = lambda out, last: alem_late_return(out, last)
    else:
        run, compile_s = prepare_jaxmarl(script, jcfg, seeds)
        n = alem.make(ENV_ID).num_agents
        late = lambda out, last: jaxmarl_late_return(out, last, n)
    conn.send(compile_s)
    while (last := conn.recv()) is not None:
        c0 = time.process_time()
        t, out = timed(run)
        conn.send((t, time.process_time() - c0, late(out, last)))


class _Side:
    """One side in its own process (so the two compiled programs never share a runtime)."""

    def __init__(
        self, side: str, script: Path, jcfg: dict[str, Any], seeds: int, timeout: float, algo: str = "ippo"
    ):
        ctx = mp.get_context("spawn")
        self.side, self.timeout = side, timeout
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(
            target=_side_worker, args=(side, script, jcfg, seeds, child, algo), daemon=True
        )
        self.proc.start()
        self.compile_s = self._recv()

    def _recv(self) -> Any:
        if not self.conn.poll(self.timeout):
            self.close()
            raise SystemExit(
                f"{self.side}: no answer within {self.timeout:.0f} s (hung or too slow); stopped"
            )
        return self.conn.recv()

    def run(self, last: int) -> tuple[float, float, float]:
        self.conn.send(last)
        return self._recv()

    def close(self) -> None:
        if self.proc.is_alive():
            self.proc.terminate()
        self.proc.join()


def run_benchmark(
    script: Path, total_steps: int, seeds: int, reps: int, timeout: float = 900, algo: str = "ippo"
) -> dict[str, Any]:
    value_based = algo in Q_COMPARISONS
    jcfg = (
        load_jaxmarl_q_config(script, total_steps, seeds, algo)
        if value_based
        else load_jaxmarl_config(script, total_steps, seeds)
    )
    updates = _updates(jcfg)
    if updates < 1:
        raise SystemExit(
            f"--total-steps {total_steps} is less than one update ({jcfg['NUM_ENVS'] * jcfg['NUM_STEPS']})"
        )
    steps = updates * jcfg["NUM_ENVS"] * jcfg["NUM_STEPS"]  # per seed, both sides
    last = max(1, updates // 10)
    cfg = alem_q_config(jcfg, algo) if value_based else alem_config(jcfg)
    matched = Q_COMPARISONS[algo].matched if value_based else MATCHED
    sides = {}
    try:
        for side in ("alem", "jaxmarl"):  # compiled one after the other
            sides[side] = _Side(side, script, jcfg, seeds, timeout, algo)
        times: dict[str, list[float]] = {"alem": [], "jaxmarl": []}
        cpu: dict[str, list[float]] = {"alem": [], "jaxmarl": []}
        late: dict[str, list[float]] = {}
        for rep in range(reps):
            order = ("alem", "jaxmarl") if rep % 2 == 0 else ("jaxmarl", "alem")
            for side in order:
                t, c, late[side] = sides[side].run(last)
                times[side].append(t)
                cpu[side].append(c)
                print(
                    f"rep {rep + 1}/{reps} {side}: {seeds * steps / t:,.0f} env-steps/s "
                    f"({t:.2f} s wall, {c:.2f} s CPU)",
                    file=sys.stderr,
                )
    finally:
        for s in sides.values():
            s.close()
    alem_compile, jaxmarl_compile = sides["alem"].compile_s, sides["jaxmarl"].compile_s
    rates = {side: [seeds * steps / t for t in ts] for side, ts in times.items()}
    med = {side: statistics.median(r) for side, r in rates.items()}
    cpu_rates = {side: [seeds * steps / t for t in ts] for side, ts in cpu.items()}
    cpu_med = {side: statistics.median(r) for side, r in cpu_rates.items()}
    return {
        "benchmark": "train_throughput",
        "env": {"alem": ENV_ID, "jaxmarl": JAXMARL_ENV},
        "unit": "env-steps/s (seeds * env steps / s; one env step = one transition of 3 agents)",
        "algo": algo,
        "jaxmarl_script": script.name,
        "jaxmarl_config": {k: v for k, v in jcfg.items() if k not in ("ENTITY", "PROJECT")},
        "alem_config": (
            {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()}
            if value_based
            else {
                k: getattr(cfg, k)
                for k in (*matched.values(), "hidden", "clip_value", "bootstrap_truncation")
            }
        ),
        "num_envs": jcfg["NUM_ENVS"],
        "num_steps": jcfg["NUM_STEPS"],
        "updates": updates,
        "env_steps_per_seed": steps,
        "seeds": seeds,
        "reps": reps,
        "alem": {
            "compile_s": alem_compile,
            "steps_per_s": med["alem"],
            "steps_per_s_reps": rates["alem"],
            "steps_per_cpu_s": cpu_med["alem"],
            "steps_per_cpu_s_reps": cpu_rates["alem"],
        },
        "jaxmarl": {
            "compile_s": jaxmarl_compile,
            "steps_per_s": med["jaxmarl"],
            "steps_per_s_reps": rates["jaxmarl"],
            "steps_per_cpu_s": cpu_med["jaxmarl"],
            "steps_per_cpu_s_reps": cpu_rates["jaxmarl"],
        },
        "ratio": med["alem"] / med["jaxmarl"],
        "ratio_cpu": cpu_med["alem"] / cpu_med["jaxmarl"],
        "late_return_per_agent": {
            # ippo: the training return of the last updates; value-based: the greedy test after training
            "updates_averaged": last if algo == "ippo" else None,
            "alem": float(np.mean(late["alem"])),
            "jaxmarl": float(np.mean(late["jaxmarl"])),
            "alem_seeds": late["alem"],
            "jaxmarl_seeds": late["jaxmarl"],
        },
        "machine": machine(),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--algo", choices=["ippo", *Q_COMPARISONS], default="ippo", help="the comparison (default ippo)"
    )
    p.add_argument(
        "--jaxmarl-ippo",
        "--jaxmarl-script",
        dest="jaxmarl_script",
        type=Path,
        required=True,
        help="the JaxMARL baseline script: baselines/IPPO/ippo_ff_mpe.py (ippo) or "
        "baselines/QLearning/pqn_vdn_ff.py (pqn_vdn) or vdn_ff.py (vdn) of a JaxMARL checkout",
    )
    p.add_argument(
        "--total-steps",
        type=positive_int,
        default=61_440,
        help="env steps per seed (default 61440: 30 updates)",
    )
    p.add_argument("--seeds", type=positive_int, default=2, help="vmapped seeds per run (default 2)")
    p.add_argument("--reps", type=positive_int, default=5, help="timed repetitions per side (default 5)")
    p.add_argument(
        "--timeout", type=float, default=900, help="seconds to wait for a compile or a run (default 900)"
    )
    p.add_argument("--out", type=Path, help="also write the JSON here")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    if not args.jaxmarl_script.is_file():
        raise SystemExit(f"--jaxmarl-script: {args.jaxmarl_script} is not a file")
    result = run_benchmark(
        args.jaxmarl_script.resolve(), args.total_steps, args.seeds, args.reps, args.timeout, args.algo
    )
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return result


if __name__ == "__main__":
    main()
