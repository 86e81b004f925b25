"""The Hydra app ``python -m alem.evaluate`` (``configs/evaluate.yaml``): :func:`run` and :func:`main`.

``env=<registered id>`` is shorthand for ``env.id=<id>``; ``env=<name>`` picks
``configs/env/<name>.yaml`` as in ``alem.train``. ``resume=<run dir>`` finishes that run with its
saved config; the overrides a resume may change are ``episodes``, ``num_envs`` and the LLM
transport settings (:data:`RESUME_FREE`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from alem.arena.crossplay import PARTNER_PREFIX, check_cooperative, crossplay_results, crossplay_seatings
from alem.arena.evaluation import CLI, evaluate
from alem.arena.players import build_player, build_players, parse_spec
from alem.arena.results import (
    format_crossplay,
    format_table,
    format_tournament,
    write_crossplay_results,
    write_tournament_results,
)
from alem.arena.tournament import MODES, Tournament, pairings, play_tournament, tournament_results
from alem.cli import hydra_app, hydra_overrides, hydra_run_dir, make_env, override_key, plain, resume_keys
from alem.core import MultiAgentEnv
from alem.engine.record import default_openings
from alem.errors import ConfigError
from alem.pools import read_pool
from alem.rundir import claim, hold, read_run_config, write_atomic
from alem.sanitize import redact_url

__all__ = ["RESUME_FREE", "run", "main"]

#: Player settings that only affect transport, not play; they may change on resume.
RESUME_FREE = frozenset(
    [
        "base_url",
        "api_key_env",
        "timeout_s",
        "max_retries",
        "backoff_s",
        "backoff_cap_s",
        "max_reply_bytes",
        "max_consecutive_failures",
        "max_failure_rate",
        "min_decisions",
        "max_concurrency",
        "cache",
        "cache_mode",
        "threads",
        "parallel",
        "price_in_per_mtok",
        "price_out_per_mtok",
    ]
)


def _specs(value: Any, name: str) -> list[str]:
    """Player specs from ``players=`` / ``panel=``: a list, or one spec as a plain string (for
    every seat, like a list of one); never the characters of a string."""
    value = OmegaConf.to_container(value, resolve=True) if isinstance(value, ListConfig) else value
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{name} must be a list of player specs like {name}=[llm,random], got {value!r}")
    return value


def run(cfg: DictConfig, output_dir: str | Path, overrides: list[str] | None = None) -> dict[str, Any]:
    """Evaluate as ``cfg`` says; return the results.

    Everything is checked (config, players, LLM endpoints) before the run directory is
    written; a new run refuses a directory that holds anything. ``cfg.resume=<run dir>``
    finishes that run with its saved config; ``overrides`` (the command line's
    ``key=value`` list) may raise ``episodes``, change ``num_envs`` or the LLM transport
    settings (:data:`RESUME_FREE`); one that would change play is refused, by name.
    """
    if cfg.get("report") not in (None, "html"):
        raise ConfigError(f"report must be null or html, got {cfg.get('report')!r}")
    _check_llm_overrides(cfg, overrides or [])
    resume = cfg.get("resume")
    run_dir = Path(resume if resume else output_dir).resolve()
    if resume:
        cfg = _resumed_config(cfg, run_dir, overrides or [])
        hold(run_dir)  # one process at a time finishes a run (refused: nothing written)
    current = OmegaConf.to_container(cfg, resolve=True)
    env = make_env(cfg.env)
    if current.get("openings") is None:  # saved resolved, so a resume or an export replays the same
        current["openings"] = default_openings(env)
    player_kwargs = current.get("player_kwargs") or {}
    if not isinstance(player_kwargs, dict) or not all(
        isinstance(v, dict | None) for v in player_kwargs.values()
    ):
        raise ConfigError(
            f"player_kwargs must map player names to their keywords (player_kwargs.<name>.<key>=<value>), "
            f"got {player_kwargs!r}"
        )
    mode = cfg.get("mode") or "match"
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {list(MODES)}, got {mode!r}")
    if cfg.get("panel") and mode != "gauntlet":
        raise ConfigError(
            f"panel= is read by mode=gauntlet only (the fixed opponents); this run has mode={mode}"
        )
    if mode == "crossplay":
        return _reported(cfg, run_dir, _run_crossplay(cfg, env, run_dir, current, bool(resume)))
    if cfg.get("partners"):
        raise ConfigError(f"partners= is read by mode=crossplay only; this run has mode={mode}")
    if mode != "match":
        return _reported(cfg, run_dir, _run_tournament(cfg, env, run_dir, current, bool(resume)))
    players = build_players(env, _specs(cfg.players, "players"), player_kwargs)
    labels = [p.label for p in players]
    current["players_resolved"] = labels
    current["output_dir"] = str(run_dir)
    try:
        results = evaluate(
            env,
            players,
            episodes=cfg.episodes,
            num_envs=cfg.num_envs,
            seed=cfg.seed,
            max_steps=cfg.get("max_steps"),
            openings=current["openings"],
            run_dir=run_dir,
            labels=labels,
            config=_redacted(current),
            resume=bool(resume),
        )
    finally:
        for p in players:
            p.close()
    return _reported(cfg, run_dir, results)


def _check_llm_overrides(cfg: DictConfig, overrides: list[str]) -> None:
    """``llm=...`` or ``llm.<option>=...`` on a command line that seats no LLM would be ignored:
    refused, naming the option."""
    if cfg.get("resume") or cfg.get("mode") == "crossplay":  # a pool's partners may be LLMs
        return
    given = [o for o in overrides if (override_key(o) or "").split(".")[0] == "llm"]
    specs = [*_specs(cfg.players, "players"), *_specs(cfg.get("panel") or [], "panel")]
    if given and not any(parse_spec(s)[0] == "llm" for s in specs):
        raise ConfigError(
            f"{given[0]} is read by the llm player, and players={specs} seats none "
            "(add llm or llm:<model> to players=, or drop the llm options)"
        )


def _reported(cfg: DictConfig, run_dir: Path, results: dict[str, Any]) -> dict[str, Any]:
    """``report=html``: the results page beside the results (:mod:`alem.arena.report`)."""
    if cfg.get("report") == "html":
        from alem.arena.report import write_report

        write_report(run_dir)
    return results


def _run_tournament(
    cfg: DictConfig, env: MultiAgentEnv, run_dir: Path, current: dict, resume: bool
) -> dict[str, Any]:
    """``mode=round_robin`` / ``gauntlet``: build the pool, play every seating, rate the players."""
    mode = cfg.mode
    specs, panel = _specs(cfg.players, "players"), _specs(cfg.get("panel") or [], "panel")
    if mode == "gauntlet" and not panel:
        raise ConfigError("mode=gauntlet plays the players against a fixed panel: give panel=[spec, ...]")
    player_kwargs = current.get("player_kwargs") or {}
    pool = [build_player(env, spec, player_kwargs) for spec in [*specs, *panel]]
    seatings = pairings(mode, len(specs), len(panel))
    # poker: LLM players answer the exploitability queries, so the results come before close()
    results = _play_pool(cfg, env, run_dir, current, resume, pool, seatings, tournament_results)
    write_tournament_results(run_dir, results)
    return results


def _play_pool(cfg, env, run_dir, current, resume, pool, seatings, results_of) -> dict[str, Any]:
    """Check a pool and its seatings, claim the run directory, play every seating into
    ``matches/`` (resuming what exists), and return ``results_of(tournament, run_dir)`` with the
    run's config; the players are closed whatever happens."""
    try:
        t = Tournament(
            env,
            tuple(pool),
            tuple(seatings),
            cfg.episodes,
            num_envs=cfg.num_envs,
            seed=cfg.seed,
            max_steps=cfg.get("max_steps"),
            openings=current["openings"],
            mode=cfg.mode,
        )
        for p in pool:  # start players and check LLM endpoints before anything is written
            p.begin(env, env.default_params, 0)
        if not resume:
            run_dir = claim(run_dir, cli=CLI)
            run_dir.mkdir(parents=True, exist_ok=True)
        current["output_dir"] = str(run_dir)
        write_atomic(run_dir / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(_redacted(current))))
        play_tournament(t, run_dir)
        results = results_of(t, run_dir)
    finally:
        for p in pool:
            p.close()
    results["config"] = _redacted(current)
    return results


def _run_crossplay(
    cfg: DictConfig, env: MultiAgentEnv, run_dir: Path, current: dict, resume: bool
) -> dict[str, Any]:
    """``mode=crossplay``: every ego of players= with every partner of partners= in every seat
    (:mod:`alem.arena.crossplay`)."""
    check_cooperative(env)
    if not cfg.get("partners"):
        raise ConfigError(
            "mode=crossplay plays players= with a pool of partners: give partners=<manifest>[:split]"
        )
    if _specs(cfg.get("panel") or [], "panel"):
        raise ConfigError("panel= is for mode=gauntlet; mode=crossplay takes its partners from partners=")
    partners = read_pool(cfg.partners, env)
    specs = _specs(cfg.players, "players")
    player_kwargs = current.get("player_kwargs") or {}
    egos = [build_player(env, spec, player_kwargs) for spec in specs]
    mates = []
    for partner in partners.partners:
        name = parse_spec(partner.spec)[0]
        kwargs = {**player_kwargs, name: {**(player_kwargs.get(name) or {}), **partner.kwargs}}
        player = build_player(env, partner.spec, kwargs)
        player.label = f"{PARTNER_PREFIX}{partner.name}"  # a partner may be an ego's spec too
        mates.append(player)
    floor = build_player(env, "random")
    floor.label = "(random pair)"
    current["partners_resolved"] = [dataclasses.asdict(p) for p in partners.partners]
    seatings = crossplay_seatings(len(egos), len(mates), env.num_agents)
    results = _play_pool(
        cfg,
        env,
        run_dir,
        current,
        resume,
        [*egos, *mates, floor],
        seatings,
        lambda t, d: crossplay_results(t, d, len(egos), len(mates)),
    )
    write_crossplay_results(current["output_dir"], results)
    return results


def _redacted(tree: Any) -> Any:
    """A config tree with the secrets of every ``base_url`` removed (see :func:`redact_url`)."""
    if isinstance(tree, dict):
        return {
            k: redact_url(v) if k == "base_url" and isinstance(v, str) else _redacted(v)
            for k, v in tree.items()
        }
    if isinstance(tree, list):
        return [_redacted(v) for v in tree]
    return tree


def _resumed_config(cfg: DictConfig, run_dir: Path, overrides: list[str]) -> DictConfig:
    """The saved config of the run in ``run_dir`` with the overrides a resume may apply."""
    saved = read_run_config(run_dir, cli=CLI, required=("players", "env"))
    keys, refused = resume_keys(cfg, run_dir, overrides)
    for key in keys:
        parts = key.split(".")
        # The llm group is what player_kwargs.llm holds; the run saved it resolved.
        target = ["player_kwargs", *parts] if parts[0] == "llm" else parts
        new, was = plain(OmegaConf.select(cfg, key)), plain(OmegaConf.select(saved, ".".join(target)))
        if new == was:
            continue
        free = parts[0] in ("episodes", "num_envs", "report") or (
            len(target) == 3 and target[0] == "player_kwargs" and target[2] in RESUME_FREE
        )
        if not free:
            refused.append(f"{key}={new!r} (the run has {was!r})")
            continue
        OmegaConf.update(saved, ".".join(target), new, force_add=True)
        if parts[0] == "llm":
            OmegaConf.update(saved, key, new, force_add=True)
    if refused:
        raise ConfigError(
            f"resume={run_dir} finishes the run as it was set up; these overrides would change its play: "
            + "; ".join(refused)
            + f". A resume may raise episodes, change num_envs and LLM transport settings ({', '.join(sorted(RESUME_FREE))}); "
            "start a new run for anything else"
        )
    hidden = [
        f"player_kwargs.{name}.base_url"
        for name, kw in (plain(saved.get("player_kwargs")) or {}).items()
        if isinstance(kw, dict) and "***" in str(kw.get("base_url") or "")
    ]
    if hidden:
        raise ConfigError(
            f"resume={run_dir}: the run's {hidden[0]} held credentials, which are never saved; "
            f"give it again (e.g. llm.base_url=...) to resume"
        )
    if "openings" not in saved:  # saved before the option existed: its games had no openings
        OmegaConf.update(saved, "openings", 0, force_add=True)
    saved.resume = str(run_dir)
    return saved


def _app(cfg: DictConfig) -> None:
    """The app's body: run, then print the table and where the results are."""
    results = run(cfg, cfg.get("output_dir") or hydra_run_dir(), hydra_overrides())
    if results.get("mode") == "crossplay":
        print(format_crossplay(results), flush=True)
    else:
        print(format_tournament(results) if "ratings" in results else format_table(results), flush=True)
    out = results["config"]["output_dir"]
    print(f"Results written to {Path(out) / 'results.json'}", flush=True)
    if cfg.get("report") == "html":
        print(f"Report written to {Path(out) / 'report.html'}", flush=True)


main = hydra_app(CLI, "evaluate", _app)
