"""Reference results: every baseline learner on the standard tasks, under one evaluation protocol.

The protocol is Gorsane et al. 2022 ("Towards a standardised performance evaluation protocol for
cooperative MARL"), the one Mava and BenchMARL report with:

- training runs in chunks of ``eval_interval`` updates; after each chunk (and once before
  training) the current policy is evaluated on fresh envs (an *evaluation checkpoint*);
- per seed, the **final return** is the last checkpoint's and the **absolute return** is the best
  checkpoint's policy re-evaluated with ``absolute_factor`` (10) times the evaluation episodes;
- across seeds and tasks: the interquartile mean (IQM) with 95% stratified-bootstrap confidence
  intervals and the probability of improvement between algorithms, computed with ``rliable``
  (``pip install -e '.[benchmarks]'``).

Returns are alem's: per seed, the mean over agents of each agent's mean episode return over the
episodes that ended during the evaluation (the PPO learners' stochastic policy, the value-based
learners' greedy one, as in ``alem.train``'s final evaluation; the code is the same,
:func:`alem.training.policy_evaluator`). The value-based learners take their options from the
task's ``q_learner`` block and are evaluated at the same env steps as the PPO ones.

One command runs the whole table (the configs are frozen in ``configs/benchmark/*.yaml``)::

    python -m benchmarks.reference_results --out benchmarks/results/reference
    python -m benchmarks.reference_results --quick --out /tmp/quick   # smoke run (tests)
    python -m benchmarks.reference_results --summarize --out benchmarks/results/reference

Writes into ``--out``: ``runs/<task>/<algo>.json`` (one cell: per-seed results, every checkpoint,
config, timings; a cell whose file exists is not run again, so an interrupted table resumes),
``marl_eval.json`` (every cell in marl-eval's JSON layout), ``summary.json`` (IQM, CIs,
probabilities of improvement, machine, command, wall time) and ``table.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CONFIGS = ROOT / "configs" / "benchmark"
TASKS = (
    "simple_spread",
    "simple_reference",
    "simple_speaker_listener",
    "lbf_8x8_2p_2f_coop",
    "overcooked_cramped_room",
)
PPO_ALGOS = ("ippo", "mappo", "dpo", "happo", "cppo")
Q_ALGOS = ("pqn", "pqn_vdn", "iql", "vdn", "qmix")  # the value-based core (alem.algos.qlearning)
ALGOS = PPO_ALGOS + Q_ALGOS
METRIC = "return"  # the marl-eval metric name
BOOTSTRAP_REPS = 2000

#: --quick: tiny sizes over the frozen configs (a smoke run, not a result)
QUICK_TASKS = ("simple_spread",)
QUICK_ALGOS = ("ippo", "qmix")  # one of each core
QUICK = {
    "num_seeds": 2,
    "total_steps": 4 * 4 * 32,  # 4 updates of 4 envs x 32 steps
    "eval_interval": 2,
    "eval_steps": 32,
    "learner": {"num_envs": 4, "num_steps": 32, "num_minibatches": 2, "hidden": [16]},
    "q_learner": {
        "num_envs": 4,
        "num_steps": 32,
        "num_minibatches": 2,
        "hidden": [16],
        "eval_interval": 2,
        "batch_size": 16,
        "learning_starts": 8,
    },
}
QUICK_REPS = 200


# ---------------------------------------------------------------------------- configs
def load_task(name: str, quick: bool = False) -> dict[str, Any]:
    """The frozen config ``configs/benchmark/<name>.yaml`` (with the ``--quick`` sizes over it)."""
    import yaml

    path = CONFIGS / f"{name}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
        raise SystemExit(f"reference_results: no task config {path}; known tasks: {known}")
    task = yaml.safe_load(path.read_text())
    task["name"] = name
    if quick:
        task.update({k: v for k, v in QUICK.items() if k not in ("learner", "q_learner")})
        task["learner"] = {**task["learner"], **QUICK["learner"]}
        task["q_learner"] = {**task.get("q_learner", {}), **QUICK["q_learner"]}
        task["presets"] = {}
    return task


def learner_options(task: Mapping[str, Any], algo: str) -> tuple[dict[str, Any], int]:
    """One cell's learner options and its updates between evaluation checkpoints.

    The options are the task's shared ones (``learner`` for the PPO core, ``q_learner`` for the
    value-based one), the algorithm's own (``presets``) and the budget. ``eval_interval`` may be
    set per core or preset, so that every algorithm is evaluated at the same env steps even when
    its updates are of another size.
    """
    from alem.algos import learner_entry

    entry = learner_entry(algo)  # the learner table: which core, so which block of options
    block = "q_learner" if entry.core == "q" else "learner"
    if block not in task:
        raise SystemExit(
            f"reference_results: task {task['name']} has no `{block}:` block for {algo}; "
            f"add the options of the {entry.kind} learners to its config"
        )
    options = {**task[block], **(task.get("presets") or {}).get(algo, {})}
    interval = int(options.pop("eval_interval", task["eval_interval"]))
    per_update = options["num_envs"] * options["num_steps"]
    updates = -(-task["total_steps"] // per_update)
    updates = -(-updates // interval) * interval  # whole chunks
    options["total_steps"] = updates * per_update
    if "hidden" in options:
        options["hidden"] = tuple(options["hidden"])
    return options, interval


# ---------------------------------------------------------------------------- protocol
class BestCheckpoint:
    """Per seed, the parameters of the evaluation checkpoint with the highest return so far.

    ``params`` have the seed axis first; a checkpoint where a seed had no finished episode (NaN)
    never replaces that seed's best. Ties keep the earlier checkpoint.
    """

    def __init__(self, params: Any, num_seeds: int):
        import jax
        import jax.numpy as jnp

        def select(better, new, old):
            return jax.tree.map(
                lambda n, o: jnp.where(better.reshape((-1,) + (1,) * (n.ndim - 1)), n, o), new, old
            )

        self._select = jax.jit(select)
        self.params = params
        self.value = np.full(num_seeds, -np.inf)
        self.index = np.full(num_seeds, -1)

    def update(self, index: int, params: Any, returns: np.ndarray) -> None:
        returns = np.asarray(returns, dtype=float)
        better = np.isfinite(returns) & (returns > self.value)
        if better.any():
            self.params = self._select(better, params, self.params)
            self.value = np.where(better, returns, self.value)
            self.index = np.where(better, index, self.index)


def team_return(per_agent: np.ndarray) -> np.ndarray:
    """``[S, N]`` mean return per agent -> ``[S]`` mean over agents (NaN where no episode ended)."""
    per_agent = np.asarray(per_agent, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(per_agent).all(-1), per_agent.mean(-1), np.nan)


def _floats(x: Any) -> Any:
    """NumPy to JSON-able floats (NaN -> None)."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        return float(arr) if math.isfinite(arr) else None
    return [_floats(v) for v in arr]


def train_cell(task: Mapping[str, Any], algo: str) -> dict[str, Any]:
    """Train ``algo`` on ``task`` over its vmapped seeds with evaluation checkpoints; the cell's record."""
    import dataclasses

    import jax

    from alem.algos import make_learner
    from alem.cli import make_env
    from alem.training import eval_keys, final_evaluation, policy_evaluator, seed_keys

    env = make_env(task["env"])
    options, interval = learner_options(task, algo)
    learner = make_learner(algo, env, **options)  # the learner table picks the core
    lcfg = learner.cfg
    num_seeds = task["num_seeds"]
    num_chunks = lcfg.num_updates // interval
    per_update = lcfg.num_envs * lcfg.num_steps
    absolute_steps = task["absolute_factor"] * task["eval_steps"]
    keys = seed_keys(task["seed"], num_seeds)

    t0 = time.perf_counter()
    state = jax.jit(jax.vmap(learner.init))(keys)
    chunk = jax.jit(jax.vmap(lambda st: learner.run(st, interval)))
    evaluate = policy_evaluator(env, learner, task["eval_steps"])
    steps, returns, per_agent, episodes, chunk_s, outcomes = [], [], [], [], [], []
    best = BestCheckpoint(state.params, num_seeds)
    for i in range(num_chunks + 1):
        t = time.perf_counter()
        if i:
            state, _ = chunk(state)
        ep, ret, rates = evaluate(eval_keys(keys, i + 1), state.params)  # waits for the chunk
        chunk_s.append(time.perf_counter() - t)
        team = team_return(ret)
        best.update(i, state.params, team)
        steps.append(i * interval * per_update)
        returns.append(team)
        per_agent.append(ret)
        episodes.append(ep)
        outcomes.append(rates)
        won = f" | won {np.nanmean(rates['won_rate']):.0%}" if "won_rate" in rates else ""
        print(
            f"  {task['name']}/{algo}: checkpoint {i}/{num_chunks} at {steps[-1]:,} env steps per seed | "
            f"return {np.nanmean(team):.4g}{won} | {chunk_s[-1]:.1f} s",
            flush=True,
        )
    train_s = time.perf_counter() - t0

    t = time.perf_counter()
    absolute = policy_evaluator(env, learner, absolute_steps)
    abs_episodes, abs_ret, abs_rates = absolute(eval_keys(keys, 10**6), best.params)
    # The final policy and the random policy with the same 10x evaluation (alem.train's final evaluation).
    final10 = final_evaluation(env, learner, state, keys, absolute_steps, evaluate=absolute)
    eval_s = time.perf_counter() - t
    returns_arr = np.asarray(returns)  # [C, S]
    # The env's episode outcomes (SMAX: won_rate, ...), as the returns: per checkpoint, final, absolute.
    rates = {
        name: {
            f"checkpoint_{name}_per_seed": _floats(np.asarray([o[name] for o in outcomes]).T),  # [S, C]
            f"final_{name}_per_seed": _floats(outcomes[-1][name]),
            f"absolute_{name}_per_seed": _floats(abs_rates[name]),
            f"final_policy_10x_{name}_per_seed": final10[f"trained_{name}_per_seed"],
            f"random_{name}_mean": final10[f"random_{name}_mean"],
        }
        for name in outcomes[-1]
    }
    return {
        "task": task["name"],
        "env_id": env.id,
        "env_name": task["env_name"],
        "task_name": task["task_name"],
        "algo": algo,
        "agents": list(env.agents),
        "seeds": list(range(task["seed"], task["seed"] + num_seeds)),
        "env_steps_per_seed": num_chunks * interval * per_update,
        "checkpoint_steps": steps,
        "checkpoint_return_per_seed": _floats(returns_arr.T),  # [S, C]
        "checkpoint_return_per_agent": _floats(np.transpose(np.asarray(per_agent), (1, 0, 2))),  # [S, C, N]
        "checkpoint_episodes_per_seed": np.asarray(episodes).T.tolist(),
        "final_return_per_seed": _floats(returns_arr[-1]),
        "best_checkpoint_per_seed": best.index.tolist(),
        "best_checkpoint_return_per_seed": _floats(best.value),
        "absolute_return_per_seed": _floats(team_return(abs_ret)),
        "absolute_return_per_agent": _floats(abs_ret),
        "absolute_episodes_per_seed": np.asarray(abs_episodes).tolist(),
        "final_policy_10x_return_per_seed": _floats(team_return(final10["trained_return_per_seed"])),
        "random_return_per_seed": _floats(team_return(final10["random_return_per_seed"])),
        **{k: v for block in rates.values() for k, v in block.items()},
        "eval_steps": task["eval_steps"],
        "absolute_eval_steps": absolute_steps,
        "eval_envs": lcfg.num_envs,
        "learner": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(lcfg).items()},
        "wall_time_s": train_s + eval_s,
        "first_chunk_s": chunk_s[1] if len(chunk_s) > 1 else None,  # includes compiling the chunk
        "train_s": train_s,
        "absolute_eval_s": eval_s,
    }


# ---------------------------------------------------------------------------- outputs
def marl_eval_json(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every cell in marl-eval's layout: env -> task -> algo -> ``seed_k`` -> ``step_k`` / ``absolute_metrics``.

    Each metric list holds one number per evaluation: the mean return over that evaluation's
    episodes (alem's learners sum episode statistics inside the compiled rollout and do not keep
    each episode's return; marl-eval averages the list, which gives the same value).
    """
    out: dict[str, Any] = {}
    for r in records:
        algos = out.setdefault(r["env_name"], {}).setdefault(r["task_name"], {})
        runs = algos.setdefault(r["algo"], {})
        for s in range(len(r["seeds"])):
            run: dict[str, Any] = {}
            for c, step in enumerate(r["checkpoint_steps"]):
                run[f"step_{c}"] = {"step_count": step, METRIC: [r["checkpoint_return_per_seed"][s][c]]}
            run["absolute_metrics"] = {METRIC: [r["absolute_return_per_seed"][s]]}
            runs[f"seed_{s}"] = run
    return out


def _score_matrix(records, algo: str, tasks: Sequence[str], key: str) -> np.ndarray:
    """``[seeds, tasks]`` of one per-seed value (NaN for a missing value)."""
    cols = []
    for t in tasks:
        r = next(x for x in records if x["algo"] == algo and x["task"] == t)
        cols.append([np.nan if v is None else v for v in r[key]])
    return np.asarray(cols, dtype=float).T


def _rliable():
    """``rliable``'s ``library`` and ``metrics`` modules, working with every ``arch`` it may meet.

    rliable 1.2 passes ``random_state=`` to arch's bootstrap classes; arch 8 renamed it ``seed``
    (and arch 7 does not import with pandas 3). With arch 8 the keyword is forwarded under its new
    name, nothing else changes.
    """
    import inspect

    from arch.bootstrap import IIDBootstrap, IndependentSamplesBootstrap

    for cls in (IIDBootstrap, IndependentSamplesBootstrap):
        init = cls.__init__
        if "random_state" in inspect.signature(init).parameters or getattr(init, "_alem_compat", False):
            continue

        def forwarding(self, *args, random_state=None, _init=init, **kwargs):
            kwargs.setdefault("seed", random_state)
            _init(self, *args, **kwargs)

        forwarding._alem_compat = True
        cls.__init__ = forwarding
    from rliable import library, metrics

    return library, metrics


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean over every value (rliable's ``aggregate_iqm``)."""
    _, metrics = _rliable()

    return float(metrics.aggregate_iqm(np.asarray(scores, dtype=float)))


def iqm_with_ci(
    score_dict: Mapping[str, np.ndarray], reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> dict[str, dict[str, float]]:
    """Per algorithm, the IQM of its ``[runs, tasks]`` scores and the 95% stratified-bootstrap CI."""
    rly, metrics = _rliable()

    point, interval = rly.get_interval_estimates(
        {k: np.asarray(v, dtype=float) for k, v in score_dict.items()},
        lambda x: np.array([metrics.aggregate_iqm(x)]),
        reps=reps,
        random_state=np.random.RandomState(seed),
    )
    return {
        k: {  # None where no episode ended (NaN scores)
            "iqm": _floats(point[k][0]),
            "ci_low": _floats(interval[k][0, 0]),
            "ci_high": _floats(interval[k][1, 0]),
        }
        for k in score_dict
    }


def probability_of_improvement(
    score_dict: Mapping[str, np.ndarray], reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> dict[str, dict[str, float]]:
    """P(X > Y) for every ordered pair of algorithms (``"X,Y"``), with its 95% bootstrap CI."""
    rly, metrics = _rliable()

    names = list(score_dict)
    pairs = {f"{x},{y}": (score_dict[x], score_dict[y]) for x in names for y in names if x != y}
    point, interval = rly.get_interval_estimates(
        pairs, metrics.probability_of_improvement, reps=reps, random_state=np.random.RandomState(seed)
    )
    return {
        k: {
            "p": _floats(np.ravel(point[k])[0]),
            "ci_low": _floats(np.ravel(interval[k])[0]),
            "ci_high": _floats(np.ravel(interval[k])[1]),
        }
        for k in pairs
    }


def normalise(records: Sequence[Mapping[str, Any]], key: str) -> dict[tuple[str, str], list[float]]:
    """Per task min-max normalisation of a per-seed value over every algorithm's runs (marl-eval's rule)."""
    out = {}
    for t in {r["task"] for r in records}:
        vals = [v for r in records if r["task"] == t for v in r[key] if v is not None]
        lo, hi = (min(vals), max(vals)) if vals else (np.nan, np.nan)  # no episode ended: NaN
        for r in records:
            if r["task"] == t:
                out[(r["algo"], t)] = [
                    np.nan if v is None else (v - lo) / (hi - lo) if hi > lo else 0.0 for v in r[key]
                ]
    return out


def summarize(records: Sequence[Mapping[str, Any]], reps: int = BOOTSTRAP_REPS) -> dict[str, Any]:
    """IQM and CIs per task (raw returns) and over tasks (min-max normalised), probability of improvement."""
    tasks = [t for t in TASKS if any(r["task"] == t for r in records)]
    tasks += sorted({r["task"] for r in records} - set(tasks))
    algos = [a for a in ALGOS if any(r["algo"] == a for r in records)]
    algos += sorted({r["algo"] for r in records} - set(algos))
    common = [t for t in tasks if all(any(r["algo"] == a and r["task"] == t for r in records) for a in algos)]
    out: dict[str, Any] = {
        "tasks": tasks,
        "algos": algos,
        "aggregate_tasks": common,
        "bootstrap_reps": reps,
        "per_task": {},
    }
    for metric in ("final", "absolute"):
        key = f"{metric}_return_per_seed"
        per_task = {}
        for t in tasks:
            have = [a for a in algos if any(r["algo"] == a and r["task"] == t for r in records)]
            per_task[t] = iqm_with_ci({a: _score_matrix(records, a, [t], key) for a in have}, reps)
        out["per_task"][metric] = per_task
        # The aggregate spans the tasks every algorithm ran (a task that only some ran, e.g.
        # one added later, is in the per-task table but not here), so all algorithms compare.
        norm = normalise([r for r in records if r["task"] in common], key)
        scores = (
            {a: np.asarray([norm[(a, t)] for t in common], dtype=float).T for a in algos} if common else {}
        )
        out[f"{metric}_normalised_iqm"] = iqm_with_ci(scores, reps) if scores else {}
        out[f"{metric}_probability_of_improvement"] = (
            probability_of_improvement(scores, reps) if len(scores) > 1 else {}
        )
    # Win rates, for the tasks whose env reports a won outcome (SMAX): per task, IQM and CI.
    won = {t: [a for a in algos if _has(records, a, t, "final_won_rate_per_seed")] for t in tasks}
    if any(won.values()):
        out["per_task_won_rate"] = {
            metric: {
                t: iqm_with_ci(
                    {a: _score_matrix(records, a, [t], f"{metric}_won_rate_per_seed") for a in have}, reps
                )
                for t, have in won.items()
                if have
            }
            for metric in ("final", "absolute")
        }
    return out


def _has(records: Sequence[Mapping[str, Any]], algo: str, task: str, key: str) -> bool:
    return any(r["algo"] == algo and r["task"] == task and key in r for r in records)


def _fmt_ci(d: Mapping[str, float] | None, digits: int = 2) -> str:
    if not d:
        return "-"
    if d["iqm"] is None:
        return "no episode ended"
    return f"{d['iqm']:.{digits}f} [{d['ci_low']:.{digits}f}, {d['ci_high']:.{digits}f}]"


def table_md(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """The published table: per task and algorithm, IQM [95% CI] of the absolute and final returns."""
    lines = [
        "| task | algorithm | env steps per seed | seeds | absolute return, IQM [95% CI] | "
        "final return, IQM [95% CI] | random policy (mean) |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in summary["tasks"]:
        for a in summary["algos"]:
            r = next((x for x in records if x["task"] == t and x["algo"] == a), None)
            if r is None:
                lines.append(f"| {t} | {a} | - | - | not run | not run | - |")
                continue
            rnd = [v for v in r["random_return_per_seed"] if v is not None]
            lines.append(
                f"| {r['env_id']} | {a} | {r['env_steps_per_seed']:,} | {len(r['seeds'])} | "
                f"{_fmt_ci(summary['per_task']['absolute'][t].get(a))} | "
                f"{_fmt_ci(summary['per_task']['final'][t].get(a))} | {f'{np.mean(rnd):.2f}' if rnd else '-'} |"
            )
    if summary.get("per_task_won_rate"):
        lines += [
            "",
            "Win rates (the share of evaluation episodes the env reports as won), IQM [95% CI] over seeds:",
            "",
            "| task | algorithm | absolute win rate | final win rate | random policy (mean) |",
            "|---|---|---|---|---|",
        ]
        for t, per_algo in summary["per_task_won_rate"]["final"].items():
            for a in per_algo:
                r = next(x for x in records if x["task"] == t and x["algo"] == a)
                rnd = r.get("random_won_rate_mean")
                lines.append(
                    f"| {r['env_id']} | {a} | {_fmt_ci(summary['per_task_won_rate']['absolute'][t].get(a))} | "
                    f"{_fmt_ci(per_algo.get(a))} | {'-' if rnd is None else f'{rnd:.2f}'} |"
                )
    lines += [
        "",
        f"Over the tasks every algorithm ran ({', '.join(summary.get('aggregate_tasks', summary['tasks']))}; "
        "per-task min-max normalised over every algorithm's seeds), IQM [95% CI]:",
        "",
        "| algorithm | absolute | final |",
        "|---|---|---|",
    ]
    for a in summary["absolute_normalised_iqm"]:
        lines.append(
            f"| {a} | {_fmt_ci(summary['absolute_normalised_iqm'].get(a))} | "
            f"{_fmt_ci(summary['final_normalised_iqm'].get(a))} |"
        )
    return "\n".join(lines) + "\n"


def _machine() -> dict[str, Any]:
    from benchmarks.harness import machine

    return machine()


def _write(path: Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)


def load_records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*/*.json"))]


def write_outputs(out: Path, meta: Mapping[str, Any], reps: int) -> dict[str, Any]:
    """``marl_eval.json``, ``summary.json`` and ``table.md`` from every cell file under ``out/runs``."""
    records = load_records(out)
    if not records:
        raise SystemExit(f"reference_results: no cell results under {out / 'runs'}")
    summary = {**meta, **summarize(records, reps)}
    # The table's wall time: from the first cell's start to the last cell's end (cells of one table
    # may come from several runs of the command, e.g. after an interruption).
    ends = [datetime.datetime.fromisoformat(r["date"]) for r in records if r.get("date")]
    if len(ends) == len(records):
        starts = [
            e - datetime.timedelta(seconds=r["wall_time_s"]) for e, r in zip(ends, records, strict=True)
        ]
        summary["total_wall_time_s"] = (max(ends) - min(starts)).total_seconds()
    summary["cells_wall_time_s"] = sum(r["wall_time_s"] for r in records)
    summary["cells"] = [
        {
            "task": r["task"],
            "algo": r["algo"],
            "wall_time_s": r["wall_time_s"],
            "env_steps_per_seed": r["env_steps_per_seed"],
        }
        for r in records
    ]
    _write(out / "marl_eval.json", marl_eval_json(records))
    _write(out / "summary.json", summary)
    (out / "table.md").write_text(table_md(summary, records))
    return summary


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "reference")
    p.add_argument("--tasks", nargs="+", help=f"task configs in configs/benchmark/ (default: {list(TASKS)})")
    p.add_argument("--algos", nargs="+", help=f"default: {list(ALGOS)}")
    p.add_argument("--quick", action="store_true", help="tiny smoke run (2 seeds, a few updates)")
    p.add_argument("--summarize", action="store_true", help="only rewrite the summary from the cell files")
    args = p.parse_args(argv)
    tasks = args.tasks or (QUICK_TASKS if args.quick else TASKS)
    algos = args.algos or (QUICK_ALGOS if args.quick else ALGOS)
    reps = QUICK_REPS if args.quick else BOOTSTRAP_REPS
    out = args.out
    previous = json.loads((out / "summary.json").read_text()) if (out / "summary.json").is_file() else {}
    meta = {
        "protocol": "Gorsane et al. 2022: final and absolute (best checkpoint, 10x episodes) return per "
        "seed; IQM and 95% stratified-bootstrap CIs, probability of improvement (rliable)",
        # --summarize: the command that makes these cells (the same code and configs)
        "command": f"python -m benchmarks.reference_results {'--quick ' if args.quick else ''}--out {out}"
        if args.summarize
        else "python -m benchmarks.reference_results " + shlex.join(argv),
        "quick": args.quick,
        "machine": previous.get("machine") if args.summarize else None,
        "configs": {t: load_task(t, args.quick) for t in tasks},
    }
    if not args.summarize:
        import jax

        meta["machine"] = _machine()
        meta["machine"]["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
        for t in tasks:
            task = load_task(t, args.quick)
            for a in algos:
                path = out / "runs" / t / f"{a}.json"
                if path.is_file():
                    print(f"{t}/{a}: {path} exists, kept", flush=True)
                    continue
                print(f"{t}/{a}: training ({jax.default_backend()})", flush=True)
                record = train_cell(task, a)
                record["date"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")
                _write(path, record)
                print(
                    f"{t}/{a}: absolute {np.nanmean(np.asarray(record['absolute_return_per_seed'], float)):.4g} "
                    f"final {np.nanmean(np.asarray(record['final_return_per_seed'], float)):.4g} "
                    f"({record['wall_time_s']:.0f} s)",
                    flush=True,
                )
        meta["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    summary = write_outputs(out, meta, reps)
    print((out / "table.md").read_text(), flush=True)
    print(f"Results written to {out}", flush=True)
    return summary


if __name__ == "__main__":
    main()
