"""Self-play against population play with held-out partners: the README's ad hoc teamwork table.

For each env with a shipped partner pool (``partners=builtin``), two egos of ``--seeds`` seeds
(vmapped in one run each) are trained with the pool's recipe:

- **self-play**: ``python -m alem.train env.id=<id> algo=mappo seed=100 num_seeds=3 ...``;
- **population play**: the same, with ``algo.partners=builtin`` (the pool's train split: its
  IPPO and MAPPO partners; MAPPO's id input seats both, :func:`alem.algos.population.with_id_inputs`).

Each seed is exported as an actor of its own (:func:`alem.algos.actor_export.export_actor`) and
``python -m alem.evaluate mode=crossplay partners=builtin:heldout`` plays every ego seed with
every held-out partner in every seat. The score of an ego seed with a partner is the normalised
cross-play return (0 = the random pair, 1 = the best any player reached with that partner);
per method the IQM over seeds x held-out partners with its 95% stratified-bootstrap CI
(rliable), beside the raw held-out return and the ego's self-play::

    python -m benchmarks.adhoc_teamwork --out adhoc            # all four envs
    python -m benchmarks.adhoc_teamwork --out adhoc --envs lbf hanabi_mini

Runs already finished in ``--out`` are kept (a killed run of this script resumes by
re-running it: finished training and evaluation folders are read, not redone; an unfinished
one is resumed). ``<out>/table.json`` holds every number; the table is printed as markdown.
``--llm-envs hanabi_mini`` adds the embedded SmolLM2-135M as an ego (``llm=local``, zero-shot
through the text bridge; one model, so its interval is over the partners and episodes only).
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

#: The pool's own training recipe per env (the shipped partners were trained so; egos likewise).
OVERCOOKED = [
    "+env.kwargs.reward_shaping=true",
    "algo.num_envs=64",
    "algo.num_steps=128",
    "algo.lr=0.0005",
    "algo.hidden=[128,128]",
    "algo.total_steps=3014656",
    "algo.anneal_param=shaping_factor",
    "algo.anneal_param_end=0",
    "algo.anneal_param_steps=1507328",
    "eval.num_steps=800",
]
RECIPES = {
    "lbf": ("lbf_8x8_2p_2f_coop-v0", ["algo.num_envs=64", "algo.lr=0.0005", "algo.total_steps=614400"], 32),
    "hanabi_mini": ("hanabi_mini-v0", ["algo.total_steps=2000000"], 64),
    "cramped_room": ("overcooked_cramped_room-v0", OVERCOOKED, 16),
    "asymm_advantages": ("overcooked_asymmetric_advantages-v0", OVERCOOKED, 16),
}
METHODS = {"self-play": [], "population play": ["algo.partners=builtin"]}
EGO_SEED = 100
LLM_ROW = "SmolLM2-135M, zero-shot"


def _python(args: list[str], log: Path) -> None:
    with log.open("a") as f:
        done = subprocess.run([sys.executable, "-m", *args], stdout=f, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed (exit {done.returncode}); see {log}")


def _train(env_id: str, recipe: list[str], extra: list[str], seeds: int, out: Path) -> None:
    if (out / "results.json").is_file():
        return
    resume = [f"resume={out}"] if out.exists() else [f"output_dir={out}"]
    args = ["alem.train", f"env.id={env_id}", "algo=mappo", f"seed={EGO_SEED}", f"num_seeds={seeds}"]
    _python([*args, *recipe, *extra, *resume], out.parent / f"{out.name}.log")


def run_env(name: str, seeds: int, out: Path, llm_episodes: int = 0) -> dict:
    from alem.algos.actor_export import export_actor

    env_id, recipe, episodes = RECIPES[name]
    root = out / name
    root.mkdir(parents=True, exist_ok=True)
    players = []
    for method, extra in METHODS.items():
        tag = "sp" if not extra else "pp"
        _train(env_id, recipe, extra, seeds, root / tag)
        for k in range(seeds):
            folder = root / "egos" / f"{tag}_s{k}"
            if not folder.exists():
                export_actor(root / tag, folder, seed_indices=[k])
            players.append((method, k, f"checkpoint:{folder}"))
    xp = root / "crossplay"
    if not (xp / "results.json").is_file():
        args = ["alem.evaluate", f"env.id={env_id}", "mode=crossplay", "partners=builtin:heldout"]
        args += [f"players=[{','.join(p[2] for p in players)}]", f"episodes={episodes}", "num_envs=16"]
        _python([*args, f"resume={xp}" if xp.exists() else f"output_dir={xp}"], root / "crossplay.log")
    res = json.loads((xp / "results.json").read_text())
    norm = np.asarray(res["normalized"], float)  # [egos, held-out partners]
    raw = np.asarray(res["crossplay_matrix"], float)
    sp = np.asarray(res["selfplay"], float)
    rows = {}
    for method in METHODS:
        idx = [i for i, p in enumerate(players) if p[0] == method]
        rows[method] = {"normalized": norm[idx], "raw": raw[idx], "selfplay": sp[idx]}
    if llm_episodes:
        rows[LLM_ROW] = _llm_row(env_id, res, llm_episodes, root)
    return {"env_id": env_id, "partners": res["partners"], "random_pair": res["random_pair"], "rows": rows}


def _llm_row(env_id: str, marl: dict, episodes: int, root: Path) -> dict:
    """SmolLM2 (``llm=local``, zero-shot through the text bridge) with the same held-out partners,
    on the same episodes; normalised against the MARL run's random pair and best-with-partner
    (raised to the LLM's own return with a partner where that is higher)."""
    xp = root / "crossplay_llm"
    if not (xp / "results.json").is_file():
        args = ["alem.evaluate", f"env.id={env_id}", "mode=crossplay", "partners=builtin:heldout"]
        args += ["players=[llm]", "llm=local", f"episodes={episodes}", "num_envs=4"]
        _python([*args, f"resume={xp}" if xp.exists() else f"output_dir={xp}"], root / "crossplay_llm.log")
    res = json.loads((xp / "results.json").read_text())
    assert res["partners"] == marl["partners"], (res["partners"], marl["partners"])
    raw = np.asarray(res["crossplay_matrix"], float)
    floor = marl["random_pair"]
    best = np.maximum(np.asarray(marl["best_with_partner"], float), raw[0])
    seats, moves = [], {}
    for match in sorted((xp / "matches").iterdir()):
        seats += [
            x for x in json.loads((match / "results.json").read_text())["seats"] if x["player"] == "llm"
        ]
        for line in (match / "transcripts.jsonl").read_text().splitlines():
            move = json.loads(line).get("action_name")
            moves[move] = moves.get(move, 0) + 1
    decisions = sum(x["llm_decisions"] for x in seats)
    top = max(moves, key=moves.get)
    return {
        "llm": {
            "decisions": decisions,
            "invalid_rate": sum(x["invalid_rate"] * x["llm_decisions"] for x in seats) / decisions,
            "tokens_in_per_decision": sum(x["llm_tokens_in"] for x in seats) / decisions,
            "most_frequent_move": top,
            "its_share": moves[top] / sum(moves.values()),
        },
        "normalized": (raw - floor) / (best - floor),
        "raw": raw,
        "selfplay": np.asarray(res["selfplay"], float),
    }


def main(argv: list[str] | None = None) -> int:
    from alem.cli import ArgumentParser, refuse_bad_args
    from benchmarks.reference_results import iqm_with_ci

    ap = ArgumentParser(prog="python -m benchmarks.adhoc_teamwork", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="a folder for the runs and table.json (kept between runs)")
    ap.add_argument("--envs", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument("--seeds", type=int, default=3, help="ego seeds per method (vmapped in one run)")
    ap.add_argument(
        "--llm-envs",
        nargs="*",
        default=[],
        choices=list(RECIPES),
        help="envs where the embedded SmolLM2 (llm=local, the llm extra) also plays the held-out partners",
    )
    ap.add_argument("--llm-episodes", type=int, default=4, help="episodes per seating for the LLM")
    args = ap.parse_args(argv)
    refuse_bad_args(
        ap,
        [
            ("--seeds", args.seeds, args.seeds >= 1, "an integer >= 1"),
            ("--llm-episodes", args.llm_episodes, args.llm_episodes >= 1, "an integer >= 1"),
        ],
    )
    out = Path(args.out).resolve()
    table = {"machine": platform.processor() or platform.machine(), "seeds": args.seeds, "envs": {}}
    lines = [
        "| env | ego | held-out XP, normalised: IQM [95% CI] | held-out XP, team return | self-play |",
        "|---|---|---|---|---|",
    ]
    for name in args.envs:
        got = run_env(name, args.seeds, out, args.llm_episodes if name in args.llm_envs else 0)
        stats = iqm_with_ci({m: r["normalized"] for m, r in got["rows"].items()})
        entry = {
            "env_id": got["env_id"],
            "heldout_partners": got["partners"],
            "random_pair": got["random_pair"],
        }
        for method, r in got["rows"].items():
            s = stats[method]
            entry[method] = {
                **s,
                "normalized": r["normalized"].tolist(),
                "heldout_return": r["raw"].tolist(),
                "selfplay": r["selfplay"].tolist(),
                **({"llm": r["llm"]} if "llm" in r else {}),
            }
            ci = (
                f"[{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
                if method != LLM_ROW
                else "(one model: no CI over seeds)"
            )
            lines.append(
                f"| {got['env_id']} | {method} | {s['iqm']:.2f} {ci} "
                f"| {r['raw'].mean():.2f} | {r['selfplay'].mean():.2f} |"
            )
        table["envs"][name] = entry
        (out / "table.json").write_text(json.dumps(table, indent=1) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
