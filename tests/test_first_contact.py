"""The first-contact contract of every command line: a mistake (a value of the wrong type or out of
range, an option the chosen backend, learner or mode does not read, an output path that cannot be
written) is refused before anything is written, with exit status 2 and one line on stderr,
``<prog>: error: ...``, naming the option and the value; never a traceback.

``CASES`` holds a case per option of every CLI (``alem.train``, ``alem.evaluate``, ``alem.serve``,
``alem.partners``, ``alem.render``, ``alem.arena.report``, ``alem.text.train.export``,
``benchmarks.pogema_protocol``, ``benchmarks.run_all``), run in this process through the CLI's own
entry point (refusals come before any compile: the whole table takes seconds).
``test_every_option_of_every_cli_has_a_case`` reads the options each CLI declares (its Hydra
config's keys, its argparse parser) and fails on one without a case. The learner options
(``algo.<field>``, about 90) are covered where the CLI's message comes from, the learner configs,
for every field: ``test_every_learner_option_refuses_a_wrong_type_and_nan``.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import sys
import typing
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import alem
from alem.algos.config import LearnerConfig
from alem.algos.qconfig import QConfig
from alem.errors import LearnerConfigError

TTT = "env.id=tic_tac_toe-v0"
SPREAD = "env.id=mpe/simple_spread-v0"
OUT = "output_dir={tmp}/out"  # a run folder that a refusal never creates
BLOCKED = "{tmp}/a_file/x"  # under a regular file: cannot be created
SHIPPED_LBF = Path(alem.__file__).parent / "pools" / "lbf_8x8_2p_2f_coop"  # a whole pool
TWO = ["distributed.num_processes=2", "distributed.process_id=1", "distributed.coordinator=h:1", OUT]
LLM = [TTT, "players=[llm,random]"]
OPENAI = [*LLM, "llm=openai", "llm.model=m", "llm.base_url=http://127.0.0.1:9/v1"]
EXPERTS = ["experts", "--env", "tic_tac_toe-v0", "--players", "minimax", "--episodes", "2"]
MAZES = ["--set", "mazes"]

# (cli, option, argv, fragments the one line holds besides "<prog>: error:")
CASES: list[tuple[str, str, list[str], list[str]]] = [
    # ------------------------------------------------------------------ alem.train
    ("alem.train", "algo", ["algo=ipo"], ["algo=ipo", "'ippo'"]),
    ("alem.train", "algo.*", ["algo.lr=abc"], ["algo.lr", "a number", "'abc'"]),
    ("alem.train", "algo.*", ["algo.lrr=0.1"], ["algo.lrr is not an option"]),
    ("alem.train", "algo.*", ["algo.dpo_beta1=2"], ["algo.dpo_beta1", "algo.objective=dpo"]),
    ("alem.train", "algo.*", ["algo=qmix", "algo.update_epochs=2"], ["algo.update_epochs", "replay=false"]),
    ("alem.train", "env", ["env=nope"], ["env=nope", "simple_spread"]),
    ("alem.train", "env.id", ["env.id=tic_tac_to-v0"], ["tic_tac_to-v0", "tic_tac_toe-v0"]),
    ("alem.train", "env.kwargs", ["env.kwargs=abc"], ["env.kwargs", "'abc'", "mapping"]),
    ("alem.train", "env.kwargs", [SPREAD, "+env.kwargs.num_agent=2"], ["num_agent", "num_agents"]),
    ("alem.train", "seed", ["seed=-1"], ["seed", "-1", "2**32"]),
    ("alem.train", "num_seeds", ["num_seeds=0"], ["num_seeds", ">= 1", "0"]),
    ("alem.train", "output_dir", [f"output_dir={BLOCKED}"], ["output_dir=", "a_file/x", "cannot be written"]),
    ("alem.train", "chunk_updates", ["chunk_updates=abc"], ["chunk_updates", "'abc'"]),
    ("alem.train", "resume", ["resume={tmp}/nowhere"], ["resume=", "nowhere", "no config.yaml"]),
    ("alem.train", "stop_after_chunks", ["stop_after_chunks=0"], ["stop_after_chunks", "0"]),
    ("alem.train", "devices", ["devices=two"], ["devices", "'two'", "'auto'"]),
    ("alem.train", "sweep.lr", ["sweep.lr=abc"], ["sweep.lr", "'abc'", "list of numbers"]),
    (
        "alem.train",
        "sweep.ent_coef",
        ["sweep.ent_coef=[-1]"],
        ["sweep.ent_coef", "algo.ent_coef must be >= 0"],
    ),
    ("alem.train", "sweep.clip_eps", ["sweep.clip_eps=[0]"], ["sweep.clip_eps", "must be > 0"]),
    ("alem.train", "sweep.gamma", ["sweep.gamma=[2]"], ["sweep.gamma", "[0, 1]"]),
    ("alem.train", "sweep.gae_lambda", ["sweep.gae_lambda=[x]"], ["sweep.gae_lambda", "'x'"]),
    ("alem.train", "distributed.num_processes", ["distributed.num_processes=0"], ["num_processes", "0"]),
    (
        "alem.train",
        "distributed.process_id",
        [*TWO, "distributed.process_id=2"],
        ["process_id", "[0, 1]", "2"],
    ),
    ("alem.train", "distributed.coordinator", [*TWO, "distributed.coordinator=h"], ["coordinator", "'h'"]),
    ("alem.train", "distributed.timeout_s", [*TWO, "distributed.timeout_s=0"], ["timeout_s", ">= 1", "0"]),
    ("alem.train", "eval.num_steps", ["eval.num_steps=-4"], ["eval.num_steps", "-4"]),
    ("alem.train", "logger", ["logger=tensorboard"], ["logger", "'tensorboard'", "'wandb'"]),
    ("alem.train", "wandb.mode", ["wandb.mode=sometimes"], ["wandb.mode", "'sometimes'", "'offline'"]),
    ("alem.train", "wandb.project", ["wandb.project=p"], ["wandb.project", "logger=wandb"]),
    ("alem.train", "wandb.entity", ["logger=wandb", "wandb.entity=[1]"], ["wandb.entity", "[1]", "string"]),
    ("alem.train", "wandb.group", ["logger=wandb", "wandb.group=[1]"], ["wandb.group", "string"]),
    ("alem.train", "wandb.name", ["logger=wandb", "wandb.name=[1]"], ["wandb.name", "string"]),
    (
        "alem.train",
        "wandb.tags",
        ["logger=wandb", "wandb.tags=abc"],
        ["wandb.tags", "'abc'", "list of strings"],
    ),
    # ------------------------------------------------------------------ alem.evaluate
    ("alem.evaluate", "env", ["env=nope"], ["env=nope"]),
    ("alem.evaluate", "env.id", ["env.id=nope-v0"], ["nope-v0"]),
    ("alem.evaluate", "env.kwargs", [TTT, "env.kwargs=abc"], ["env.kwargs", "'abc'"]),
    ("alem.evaluate", "mode", [TTT, "mode=league"], ["mode", "'league'", "'round_robin'"]),
    ("alem.evaluate", "players", [TTT, "players=[random,nope]"], ["'nope'", "minimax"]),
    (
        "alem.evaluate",
        "panel",
        [TTT, "players=[random,random]", "panel=[random]"],
        ["panel=", "mode=gauntlet"],
    ),
    ("alem.evaluate", "partners", [TTT, "players=[random,random]", "partners=p"], ["partners=", "crossplay"]),
    ("alem.evaluate", "player_kwargs", [TTT, "player_kwargs=abc"], ["player_kwargs", "'abc'"]),
    ("alem.evaluate", "episodes", [TTT, "episodes=0"], ["episodes", ">= 1", "0"]),
    ("alem.evaluate", "num_envs", [TTT, "num_envs=abc"], ["num_envs", "'abc'"]),
    ("alem.evaluate", "seed", [TTT, "seed=-1"], ["seed", "-1"]),
    ("alem.evaluate", "max_steps", [TTT, "max_steps=0"], ["max_steps", "0"]),
    ("alem.evaluate", "openings", [TTT, "openings=-1"], ["openings", ">= 0", "-1"]),
    ("alem.evaluate", "report", [TTT, "report=pdf"], ["report", "'pdf'", "html"]),
    (
        "alem.evaluate",
        "output_dir",
        [TTT, "players=[random,random]", f"output_dir={BLOCKED}"],
        ["output_dir="],
    ),
    ("alem.evaluate", "resume", [TTT, "resume={tmp}/nowhere"], ["resume=", "no config.yaml"]),
    ("alem.evaluate", "llm", [TTT, "llm=remote"], ["llm=remote", "'openai'"]),
    ("alem.evaluate", "llm.backend", [*LLM, "llm.backend=grpc"], ["llm.backend", "'grpc'", "'openai'"]),
    (
        "alem.evaluate",
        "llm.*",
        [TTT, "players=[random,random]", "llm.max_tokens=8"],
        ["llm.max_tokens", "seats none"],
    ),
    ("alem.evaluate", "llm.model", [*LLM, "llm.model=[1]"], ["llm.model", "[1]", "string"]),
    ("alem.evaluate", "llm.model", [*LLM, "llm=openai", "llm.base_url=http://127.0.0.1:9/v1"], ["llm.model"]),
    (
        "alem.evaluate",
        "llm.model_path",
        [*LLM, "llm.model_path={tmp}/none.gguf"],
        ["llm.model_path", "none.gguf"],
    ),
    ("alem.evaluate", "llm.threads", [*LLM, "llm.threads=abc"], ["llm.threads", "'abc'", ">= 1"]),
    ("alem.evaluate", "llm.threads", [*OPENAI, "llm.threads=2"], ["llm.threads=2", "llm=local only"]),
    ("alem.evaluate", "llm.context", [*LLM, "llm.context=0"], ["llm.context", "0"]),
    ("alem.evaluate", "llm.parallel", [*LLM, "llm.parallel=0"], ["llm.parallel", "0"]),
    (
        "alem.evaluate",
        "llm.base_url",
        [*LLM, "llm.base_url=http://127.0.0.1:9/v1"],
        ["llm.base_url", "llm=openai"],
    ),
    (
        "alem.evaluate",
        "llm.base_url",
        [*OPENAI, "llm.base_url=ftp://x"],
        ["llm.base_url", "'ftp://x'", "http"],
    ),
    ("alem.evaluate", "llm.api_key_env", [*OPENAI, "llm.api_key_env=ALEM_NO_SUCH_KEY"], ["ALEM_NO_SUCH_KEY"]),
    ("alem.evaluate", "llm.temperature", [*LLM, "llm.temperature=-1"], ["llm.temperature", ">= 0", "-1"]),
    ("alem.evaluate", "llm.top_p", [*LLM, "llm.top_p=2"], ["llm.top_p", "<= 1.0", "2"]),
    ("alem.evaluate", "llm.max_tokens", [*LLM, "llm.max_tokens=0"], ["llm.max_tokens", ">= 1", "0"]),
    ("alem.evaluate", "llm.seed", [*LLM, "llm.seed=abc"], ["llm.seed", "'abc'", "integer"]),
    ("alem.evaluate", "llm.structured", [*LLM, "llm.structured=yes"], ["llm.structured", "'yes'", "'auto'"]),
    ("alem.evaluate", "llm.reprompts", [*LLM, "llm.reprompts=-1"], ["llm.reprompts", ">= 0", "-1"]),
    (
        "alem.evaluate",
        "llm.legal_moves",
        [*LLM, "llm.legal_moves=all"],
        ["llm.legal_moves", "'all'", "'list'"],
    ),
    ("alem.evaluate", "llm.rules", [*LLM, "llm.rules=long"], ["llm.rules", "'long'", "'short'"]),
    ("alem.evaluate", "llm.format", [*LLM, "llm.format=xml"], ["llm.format", "'xml'", "'json'"]),
    ("alem.evaluate", "llm.obfuscate", [*LLM, "llm.obfuscate=maybe"], ["llm.obfuscate", "'maybe'"]),
    ("alem.evaluate", "llm.invalid", [*LLM, "llm.invalid=pass"], ["llm.invalid", "'pass'", "'forfeit'"]),
    ("alem.evaluate", "llm.fallback", [*LLM, "llm.fallback=pass"], ["llm.fallback", "'pass'", "'forfeit'"]),
    ("alem.evaluate", "llm.history", [*LLM, "llm.history=-1"], ["llm.history", ">= 0", "-1"]),
    ("alem.evaluate", "llm.max_concurrency", [*LLM, "llm.max_concurrency=0"], ["llm.max_concurrency", "0"]),
    ("alem.evaluate", "llm.timeout_s", [*LLM, "llm.timeout_s=0"], ["llm.timeout_s", "> 0", "0"]),
    ("alem.evaluate", "llm.max_retries", [*LLM, "llm.max_retries=-1"], ["llm.max_retries", "-1"]),
    ("alem.evaluate", "llm.backoff_s", [*LLM, "llm.backoff_s=-1"], ["llm.backoff_s", "-1"]),
    ("alem.evaluate", "llm.backoff_cap_s", [*LLM, "llm.backoff_cap_s=abc"], ["llm.backoff_cap_s", "'abc'"]),
    (
        "alem.evaluate",
        "llm.max_reply_bytes",
        [*LLM, "llm.max_reply_bytes=10"],
        ["llm.max_reply_bytes", "1024"],
    ),
    (
        "alem.evaluate",
        "llm.max_consecutive_failures",
        [*LLM, "llm.max_consecutive_failures=0"],
        ["failures", "0"],
    ),
    (
        "alem.evaluate",
        "llm.max_failure_rate",
        [*LLM, "llm.max_failure_rate=2"],
        ["llm.max_failure_rate", "(0, 1]"],
    ),
    ("alem.evaluate", "llm.min_decisions", [*LLM, "llm.min_decisions=0"], ["llm.min_decisions", "0"]),
    ("alem.evaluate", "llm.extra_body", [*LLM, "llm.extra_body=abc"], ["llm.extra_body", "'abc'", "mapping"]),
    ("alem.evaluate", "llm.cache", [*LLM, f"llm.cache={BLOCKED}"], ["llm.cache=", "cannot be written"]),
    (
        "alem.evaluate",
        "llm.cache_mode",
        [*LLM, "llm.cache_mode=read"],
        ["llm.cache_mode", "'read'", "'replay'"],
    ),
    (
        "alem.evaluate",
        "llm.price_in_per_mtok",
        [*LLM, "llm.price_in_per_mtok=-1"],
        ["price_in_per_mtok", "-1"],
    ),
    (
        "alem.evaluate",
        "llm.price_out_per_mtok",
        [*LLM, "llm.price_out_per_mtok=x"],
        ["price_out_per_mtok", "'x'"],
    ),
    (
        "alem.evaluate",
        "llm.script",
        [*LLM, "llm=scripted", "llm.script=best"],
        ["llm.script='best'", "'first'"],
    ),
    # ------------------------------------------------------------------ alem.serve
    ("alem.serve", "env", ["env=nope"], ["env=nope"]),
    ("alem.serve", "env.id", ["env.id=nope-v0"], ["nope-v0"]),
    ("alem.serve", "env.kwargs", ["env.kwargs=abc"], ["env.kwargs", "'abc'"]),
    ("alem.serve", "protocol", ["protocol=grpc"], ["protocol", "'grpc'", "'mcp'"]),
    ("alem.serve", "host", ["host=no.such.host.invalid."], ["cannot listen on no.such.host.invalid."]),
    ("alem.serve", "host", ["protocol=mcp-stdio", "host=0.0.0.0"], ["host", "mcp-stdio"]),
    ("alem.serve", "port", ["port=70000"], ["port", "0..65535", "70000"]),
    ("alem.serve", "max_sessions", ["max_sessions=0"], ["max_sessions", "0"]),
    ("alem.serve", "idle_timeout_s", ["idle_timeout_s=0"], ["idle_timeout_s", "> 0", "0"]),
    ("alem.serve", "max_steps", ["max_steps=0"], ["max_steps", "0"]),
    ("alem.serve", "max_body_bytes", ["max_body_bytes=abc"], ["max_body_bytes", "'abc'"]),
    # ------------------------------------------------------------------ alem.partners
    ("alem.partners", "(subcommand)", ["bild"], ["expected the subcommand build or export", "'bild'"]),
    ("alem.partners", "env", ["build", "env=nope"], ["env=nope"]),
    ("alem.partners", "env.id", ["build", TTT], ["tic_tac_toe-v0", "zero-sum"]),
    ("alem.partners", "env.kwargs", ["build", "env.kwargs=abc"], ["env.kwargs", "'abc'"]),
    ("alem.partners", "algos", ["build", "algos=[ippo,ipo]"], ["'ipo'", "'ippo'"]),
    ("alem.partners", "num_seeds", ["build", "num_seeds=0"], ["num_seeds", "0"]),
    ("alem.partners", "seed", ["build", "seed=-1"], ["seed", "-1"]),
    ("alem.partners", "scripted", ["build", "scripted=maybe"], ["scripted", "'maybe'"]),
    ("alem.partners", "split_seed", ["build", "split_seed=abc"], ["split_seed", "'abc'"]),
    ("alem.partners", "train_overrides", ["build", "train_overrides=abc"], ["train_overrides", "'abc'"]),
    ("alem.partners", "output_dir", ["build", f"output_dir={BLOCKED}"], ["output_dir=", "cannot be written"]),
    ("alem.partners", "resume", ["build", "resume=maybe"], ["resume", "'maybe'"]),
    (
        "alem.partners",
        "export pool",
        ["export", "{tmp}/nope", "{tmp}/out"],
        ["nope", "not a readable partner pool"],
    ),
    ("alem.partners", "export out", ["export", str(SHIPPED_LBF), "{tmp}/a_file"], ["a_file", "exists"]),
    # ------------------------------------------------------------------ alem.render
    ("alem.render", "env_id", ["nope-v0", "{tmp}/x.gif"], ["nope-v0"]),
    ("alem.render", "out", ["tic_tac_toe-v0", f"{BLOCKED}.gif"], ["cannot write", "a_file"]),
    ("alem.render", "out", ["tic_tac_toe-v0", "{tmp}/x.png"], ["argument out", ".gif", "x.png"]),
    ("alem.render", "--steps", ["tic_tac_toe-v0", "{tmp}/x.gif", "--steps", "abc"], ["--steps", "'abc'"]),
    ("alem.render", "--seed", ["tic_tac_toe-v0", "{tmp}/x.gif", "--seed", "-1"], ["--seed", "-1"]),
    ("alem.render", "--fps", ["tic_tac_toe-v0", "{tmp}/x.gif", "--fps", "0"], ["--fps", "> 0", "0.0"]),
    ("alem.render", "--run", ["tic_tac_toe-v0", "{tmp}/x.gif", "--run", "{tmp}"], ["no results.json"]),
    (
        "alem.render",
        "--seed-index",
        ["tic_tac_toe-v0", "{tmp}/x.gif", "--seed-index", "1"],
        ["--seed-index", "--run"],
    ),
    ("alem.render", "--greedy", ["tic_tac_toe-v0", "{tmp}/x.gif", "--greedy"], ["--greedy", "--run"]),
    # ------------------------------------------------------------------ alem.arena.report
    ("alem.arena.report", "run_dir", ["{tmp}/nowhere"], ["run_dir", "nowhere", "not a folder"]),
    ("alem.arena.report", "run_dir", ["{tmp}"], ["results.json"]),
    ("alem.arena.report", "--out", ["{tmp}", "--out", BLOCKED], ["cannot write", "a_file"]),
    (
        "alem.arena.report",
        "--overwrite",
        ["{tmp}", "--out", "{tmp}/a_file"],
        ["a_file exists", "--overwrite"],
    ),
    # ------------------------------------------------------------------ alem.text.train.export
    ("alem.text.train.export", "(subcommand)", ["games"], ["argument source", "'games'", "'experts'"]),
    (
        "alem.text.train.export",
        "experts --env",
        ["experts", "--env", "nope-v0", "--players", "random", "--episodes", "2", "--out", "{tmp}/o.jsonl"],
        ["nope-v0"],
    ),
    (
        "alem.text.train.export",
        "experts --players",
        [*EXPERTS[:4], "nope", *EXPERTS[5:], "--out", "{tmp}/o"],
        ["'nope'", "minimax"],
    ),
    (
        "alem.text.train.export",
        "experts --episodes",
        [*EXPERTS[:6], "0", "--out", "{tmp}/o"],
        ["--episodes", "0"],
    ),
    (
        "alem.text.train.export",
        "experts --num-envs",
        [*EXPERTS, "--num-envs", "0", "--out", "{tmp}/o"],
        ["--num-envs", "0"],
    ),
    (
        "alem.text.train.export",
        "experts --seed",
        [*EXPERTS, "--seed", "x", "--out", "{tmp}/o"],
        ["--seed", "'x'"],
    ),
    (
        "alem.text.train.export",
        "experts --history",
        [*EXPERTS, "--history", "-1", "--out", "{tmp}/o"],
        ["--history", "-1"],
    ),
    (
        "alem.text.train.export",
        "experts --max-steps",
        [*EXPERTS, "--max-steps", "0", "--out", "{tmp}/o"],
        ["--max-steps", "0"],
    ),
    ("alem.text.train.export", "experts --out", [*EXPERTS, "--out", BLOCKED], ["cannot write", "a_file"]),
    ("alem.text.train.export", "experts --overwrite", [*EXPERTS, "--out", "{tmp}/a_file"], ["--overwrite"]),
    (
        "alem.text.train.export",
        "run run_dir",
        ["run", "{tmp}/nowhere", "--out", "{tmp}/o"],
        ["no config.yaml"],
    ),
    ("alem.text.train.export", "run --out", ["run", "{tmp}", "--out", BLOCKED], ["cannot write", "a_file"]),
    (
        "alem.text.train.export",
        "run --history",
        ["run", "{tmp}", "--out", "{tmp}/o", "--history", "-2"],
        ["--history", "-2"],
    ),
    (
        "alem.text.train.export",
        "run --num-envs",
        ["run", "{tmp}", "--out", "{tmp}/o", "--num-envs", "0"],
        ["--num-envs", "0"],
    ),
    ("alem.text.train.export", "run --overwrite", ["run", "{tmp}", "--out", "{tmp}/a_file"], ["--overwrite"]),
    # ------------------------------------------------------------------ benchmarks.pogema_protocol
    (
        "benchmarks.pogema_protocol",
        "--set",
        ["--set", "maze", "--out", "{tmp}/o"],
        ["--set", "'maze'", "'mazes'"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--mode",
        [*MAZES, "--mode", "mapd", "--out", "{tmp}/o"],
        ["--mode", "'mapd'"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--maps",
        ["--maps", "{tmp}/m.yaml", "--config", "{tmp}/c.yaml", "--out", "{tmp}/o"],
        ["--maps", "m.yaml"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--config",
        [*MAZES, "--config", "{tmp}/c.yaml", "--out", "{tmp}/o"],
        ["--config", "c.yaml"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--policy",
        [*MAZES, "--policy", "astar", "--out", "{tmp}/o"],
        ["--policy", "'astar'", "pibt"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--num-agents",
        [*MAZES, "--num-agents", "0", "--out", "{tmp}/o"],
        ["--num-agents", "[0]"],
    ),
    (
        "benchmarks.pogema_protocol",
        "--limit-maps",
        [*MAZES, "--limit-maps", "0", "--out", "{tmp}/o"],
        ["--limit-maps", "0"],
    ),
    ("benchmarks.pogema_protocol", "--seed", [*MAZES, "--seed", "-3", "--out", "{tmp}/o"], ["--seed", "-3"]),
    ("benchmarks.pogema_protocol", "--out", [*MAZES, "--out", BLOCKED], ["cannot write", "a_file"]),
    (
        "benchmarks.pogema_protocol",
        "--resume",
        [*MAZES, "--resume", "--out", "{tmp}/a_file"],
        ["--resume", "a_file", "not a run folder"],
    ),
    # ------------------------------------------------------------------ benchmarks.run_all
    ("benchmarks.run_all", "--device", ["--device", "tpu"], ["--device", "'tpu'", "'gpu'"]),
    ("benchmarks.run_all", "--reps", ["--reps", "0"], ["--reps", ">= 1", "0"]),
    ("benchmarks.run_all", "--only", ["--only", "chess"], ["--only", "'chess'", "'games'"]),
    ("benchmarks.run_all", "--jaxmarl-ippo", ["--jaxmarl-ippo", "{tmp}/i.py"], ["--jaxmarl-ippo", "i.py"]),
    ("benchmarks.run_all", "--jaxmarl-pqn-vdn", ["--jaxmarl-pqn-vdn", "{tmp}/q.py"], ["--jaxmarl-pqn-vdn"]),
    ("benchmarks.run_all", "--out-dir", ["--out-dir", BLOCKED], ["cannot create", "a_file"]),
    ("benchmarks.run_all", "--budget-s", ["--budget-s", "nan"], ["--budget-s", "nan"]),
]

#: What each CLI's line starts with (its ``prog``).
PROGS = {
    "alem.render": "python -m alem.render",
    "alem.arena.report": "python -m alem.arena.report",
    "alem.text.train.export": "python -m alem.text.train.export",
    "benchmarks.pogema_protocol": "python -m benchmarks.pogema_protocol",
    "benchmarks.run_all": "python -m benchmarks.run_all",
}
HYDRA = ("alem.train", "alem.evaluate", "alem.serve", "alem.partners")
#: Options that take no value (argparse flags): nothing to get wrong but their pairing, and the
#: flags that choose what runs.
FLAGS = {"--quick", "--include-fallback", "--help"}


def _run_cli(cli: str, argv: list[str], monkeypatch) -> int | str | None:
    """Run ``cli``'s entry point on ``argv`` in this process; its exit status."""
    module = importlib.import_module(cli)
    try:
        if cli in HYDRA:
            # Hydra's logging set-up closes every logging handler, pytest's capture among them
            quiet = [] if argv[:1] == ["export"] else ["hydra/job_logging=none", "hydra/hydra_logging=none"]
            monkeypatch.setattr(sys, "argv", [cli, *argv, *quiet])
            module.main()
        else:
            module.main(argv)
    except SystemExit as e:
        return e.code
    finally:
        if cli in HYDRA:
            from hydra.core.global_hydra import GlobalHydra

            GlobalHydra.instance().clear()
    return 0


@pytest.mark.parametrize(("cli", "option", "argv", "fragments"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_a_mistake_is_one_line_naming_it_exit_2_and_nothing_written(
    cli, option, argv, fragments, tmp_path, monkeypatch, capsys
):
    (tmp_path / "a_file").write_text("not a folder")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("ALEM_NO_SUCH_KEY", raising=False)
    before = sorted(tmp_path.rglob("*"))
    code = _run_cli(cli, [a.format(tmp=tmp_path) for a in argv], monkeypatch)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"{PROGS.get(cli, cli)}"), lines[0]
    assert ": error: " in lines[0], lines[0]
    for fragment in fragments:
        assert fragment.format(tmp=tmp_path) in lines[0], (fragment, lines[0])
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, not even a folder


def _leaves(cfg, prefix: str = "") -> list[str]:
    out = []
    for key, value in cfg.items():
        if OmegaConf.is_dict(value) and len(value) and key != "extra_body":  # free request fields
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


def _hydra_options(config: str, groups: dict[str, list[str]]) -> set[str]:
    """Every key a Hydra CLI's config declares (with each choice of ``groups``), and its groups."""
    from hydra import compose, initialize_config_module

    keys = set(groups)
    with initialize_config_module(config_module="alem.configs", version_base=None):
        for group, choices in groups.items():
            for choice in choices or [None]:
                cfg = compose(config, overrides=[f"{group}={choice}"] if choice else [])
                keys |= {k for k in _leaves(cfg) if k != "hydra" and not k.startswith("hydra.")}
    keys.add("env.kwargs")
    return keys


def _argparse_options(cli: str, monkeypatch, argv: list[str] | None = None) -> set[str]:
    """The options of an argparse CLI's parser (and of its subcommands, as ``<sub> <option>``),
    read from the parser its entry point builds on ``argv``."""
    from alem.cli import ArgumentParser

    seen = []

    def record(self, *args, **kwargs):
        seen.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(ArgumentParser, "parse_args", record)
    _run_cli(cli, argv or [], monkeypatch)
    (parser,) = seen
    out = set()
    for action in parser._actions:
        if action.choices and isinstance(action.choices, dict):  # subcommands
            out.add("(subcommand)")
            for name, sub in action.choices.items():
                out |= {f"{name} {o}" for a in sub._actions for o in _names(a)}
        else:
            out |= set(_names(action))
    return out


def _names(action) -> list[str]:
    if action.nargs == 0:  # a flag: --greedy, --overwrite; kept when a case covers its pairing
        return [o for o in action.option_strings if o.startswith("--") and o not in FLAGS]
    return [o for o in action.option_strings if o.startswith("--")] or [action.dest]


def test_every_option_of_every_cli_has_a_case(monkeypatch):
    covered: dict[str, set[str]] = {}
    for cli, option, _, _ in CASES:
        covered.setdefault(cli, set()).add(option)
    declared = {
        "alem.train": {
            k for k in _hydra_options("config", {"algo": [], "env": []}) if not k.startswith("algo.")
        }
        | {"algo.*"},
        "alem.evaluate": {
            k
            for k in _hydra_options("evaluate", {"llm": ["local", "openai", "scripted"], "env": []})
            if not k.startswith("player_kwargs.")
        }
        | {"player_kwargs", "llm.*"},
        "alem.serve": _hydra_options("serve", {"env": []}),
        "alem.partners": _hydra_options("partners", {"env": []})
        | {"(subcommand)"}
        | {f"export {o}" for o in _argparse_options("alem.partners", monkeypatch, ["export"])},
    }
    for cli in [c for c in {c[0] for c in CASES} if c not in HYDRA]:
        declared[cli] = _argparse_options(cli, monkeypatch)
    assert set(declared) == set(covered)
    for cli, options in declared.items():
        assert options - covered[cli] == set(), f"{cli}: options without a case"
        assert covered[cli] - options == set(), f"{cli}: cases for options it does not have"


# ---------------------------------------------------------------------------- learner options
_WRONG = {bool: "maybe", int: 1.5, float: "abc", str: 3}


@pytest.mark.parametrize("config", [LearnerConfig, QConfig], ids=lambda c: c.__name__)
def test_every_learner_option_refuses_a_wrong_type_and_nan(config):
    """``algo.<field>`` of every field of both learner configurations (the CLI prints the message
    after ``<prog>: error:``): a value of the wrong type, and for numbers NaN and infinity, are
    refused naming the option; nothing later could read them."""
    hints = typing.get_type_hints(config)
    fields = [f.name for f in dataclasses.fields(config) if f.name not in ("name", "sweep")]
    assert len(fields) > 30
    for name in fields:
        hint = hints[name]
        wrong = _WRONG.get(hint, "abc" if name == "hidden" else 3)
        with pytest.raises(LearnerConfigError, match=rf"^algo\.{name}\b"):
            config.from_mapping({name: wrong})
        if hint is float:
            for bad in (math.nan, math.inf):
                with pytest.raises(LearnerConfigError, match=rf"algo\.{name}\b.*got (nan|inf)"):
                    config.from_mapping({name: bad})


#: Each integer option's value out of range (its whole range is meaningful for none of them).
_INT_OUT_OF_RANGE = {
    "num_envs": 0,
    "num_steps": 0,
    "total_steps": 0,
    "update_epochs": 0,
    "num_minibatches": 0,
    "resets_per_step": -1,
    "anneal_param_steps": -1,
    "recurrent": -1,
    "seps_roles": 0,
    "seps_steps": 0,
    "seps_epochs": 0,
    "pool_size": 0,
    "snapshot_every": 0,
    "selfplay_random_seat": -2,
    "psro_iters": 0,
    "psro_eval_envs": 0,
    "psro_eval_steps": 0,
    "buffer_size": 0,
    "batch_size": 0,
    "sequence_length": -1,
    "burn_in": -1,
    "learning_starts": -1,
    "train_steps": 0,
    "target_every": 0,
    "mixer_embed": 0,
    "mixer_hyper_hidden": 0,
}


@pytest.mark.parametrize("config", [LearnerConfig, QConfig], ids=lambda c: c.__name__)
def test_every_integer_learner_option_refuses_a_value_out_of_range(config):
    hints = typing.get_type_hints(config)
    ints = {f.name for f in dataclasses.fields(config) if hints[f.name] is int}
    assert ints <= set(_INT_OUT_OF_RANGE), ints - set(_INT_OUT_OF_RANGE)
    for name in sorted(ints):
        with pytest.raises(LearnerConfigError, match=rf"algo\.{name}\b"):
            config.from_mapping({name: _INT_OUT_OF_RANGE[name]})


def test_the_unread_options_are_read_by_the_setting_named():
    """``unread()`` lists an option only where its configuration never reads it: the setting it
    names does read it (no longer listed)."""
    base = LearnerConfig()
    assert {"dpo_beta1", "seps_roles", "psro_iters", "value_norm_beta"} <= set(base.unread())
    assert "dpo_beta1" not in LearnerConfig(objective="dpo").unread()
    assert "seps_roles" not in LearnerConfig(sharing="seps").unread()
    assert "value_norm_beta" not in LearnerConfig(value_norm=True).unread()
    q = QConfig()  # PQN: no replay buffer, no mixer
    assert {"buffer_size", "mixer_embed"} <= set(q.unread()) and "update_epochs" not in q.unread()
    assert "buffer_size" not in QConfig(replay=True, mixer="qmix").unread()
    assert "mixer_embed" not in QConfig(replay=True, mixer="qmix").unread()
