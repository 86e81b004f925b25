"""Trajectories as chat-format JSONL for training: from arena runs and from scripted experts.

One line per decision of every seat, in play order::

    {"messages": [{"role": "system", ...}, {"role": "user", ...}],   # what the seat saw
     "reply": "{\\"action\\": \\"bet\\"}",          # the move played, in the answer format
     "action": 1, "action_name": "bet", "legal": ["pass", "bet"],
     "reward": 2.0,        # the seat's rewards credited to this decision (credit_rewards)
     "return": 2.0,        # the seat's return of the whole episode
     "turn": 1, "decision": 0, "seat": 1, "agent": "player_1", "role": 0, "role_name": "player",
     "env_id": "kuhn_poker-v0", "base_seed": 0, "seed": 3, "episode": 3, "key_splits": 3,
     "player": "cfr", "scripted": true, "status": "ok", "invalid": false, "env_illegal": false}

The messages are built exactly as the pool (and the LLM player) builds them, so no seat
sees what it must not (its own view from ``render_text``; never the other hands).
``episode`` numbers the episodes of the file (unique), ``(base_seed, seed)`` fixes the deal
(``key_splits``: how each step's key was split, for envs whose steps draw from it):
``alem.text.TextEnvPool(env, n, seed=base_seed).reset([seed])`` deals it again, and so does
episode ``seed`` of ``python -m alem.evaluate seed=<base_seed>``.

Two sources:

- :func:`export_run`: an arena run directory (``python -m alem.evaluate``; any mix of LLM,
  scripted, checkpoint and random seats). The run is replayed from its saved config: the
  same env keys, device players with the same keys, LLM seats with the moves their
  transcripts recorded (LLM lines add ``model_reply``, the model's last raw reply, and
  ``fallback``). Each replayed episode's returns must equal ``episodes.jsonl``'s, or the
  export stops with an error naming the episode.
- :func:`export_experts`: fresh episodes from jitted scripted players at scale
  (``minimax`` for tic-tac-toe, ``cfr``/``nash`` for Kuhn and Leduc, ``rule`` for Hanabi,
  ``bfs`` for the pathfinding envs, ``random`` anywhere).

CLI::

    python -m alem.text.train.export experts --env kuhn_poker-v0 --players cfr --episodes 10000 --out kuhn.jsonl
    python -m alem.text.train.export run outputs/2026-12-01/12-00-00 --out run.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from alem.cli import ArgumentParser, refuse_bad_args, refuse_unwritable
from alem.core import MultiAgentEnv
from alem.errors import AlemError, ConfigError
from alem.rundir import read_jsonl
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import EpisodeResult

__all__ = ["decision_lines", "export_experts", "export_run", "read_decisions", "main"]


def decision_lines(
    result: EpisodeResult,
    *,
    env_id: str,
    base_seed: int,
    episode: int,
    labels: Sequence[str] | None = None,
    key_splits: int = 1,
    extra: dict[tuple[int, int], dict[str, Any]] | None = None,
) -> Iterator[dict[str, Any]]:
    """The JSONL lines of one finished episode (one per recorded decision, in play order).

    ``labels[seat]`` names each seat's player; ``extra[(seat, decision)]`` adds fields to a line.
    """
    for d in result.trajectory:
        t = d.turn
        line = {
            "messages": t.messages,
            "reply": d.reply,
            "action": d.action,
            "action_name": d.action_name,
            "legal": t.legal,
            "reward": d.reward,
            "return": result.returns[t.seat],
            "turn": t.turn,
            "decision": t.decision,
            "seat": t.seat,
            "agent": t.agent,
            "role": t.role,
            "role_name": t.role_name,
            "env_id": env_id,
            "base_seed": base_seed,
            "seed": result.seed,
            "episode": episode,
            "key_splits": key_splits,
            "player": labels[t.seat] if labels else None,
            "scripted": d.scripted,
            "status": d.status,
            "invalid": d.invalid,
            "env_illegal": d.env_illegal,
        }
        if extra and (t.seat, t.decision) in extra:
            line.update(extra[(t.seat, t.decision)])
        yield line


@contextlib.contextmanager
def _writer(out: str | Path, overwrite: bool) -> Iterator[TextIO]:
    """The export file, written whole or not at all: lines go to a temporary file next to it,
    renamed over ``out`` only when the export succeeded (a failed or killed export leaves
    ``out`` as it was)."""
    path = Path(out)
    if path.exists() and not overwrite:
        raise AlemError(f"{path} exists; pass overwrite=True (--overwrite) to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _dump(f: TextIO, line: dict[str, Any]) -> None:
    f.write(json.dumps(line, ensure_ascii=False) + "\n")


def export_experts(
    env: MultiAgentEnv | str,
    players: Sequence[str] | str,
    out: str | Path,
    *,
    episodes: int,
    num_envs: int = 256,
    seed: int = 0,
    history: int = 0,
    max_steps: int | None = None,
    player_kwargs: dict[str, dict] | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Play ``episodes`` episodes (seeds ``0..episodes-1``) with scripted device players in every
    seat and write every decision (see the module docstring). Returns counts and mean returns.

    ``players``: one arena player spec per seat, or one for all (``"minimax"``, ``"cfr"``,
    ``["rule", "rule"]``, ``"random"``, ``"checkpoint:<run dir>"``).
    """
    from alem.arena.players import build_players

    if isinstance(env, str):
        import alem

        env = alem.make(env)
    specs = [players] if isinstance(players, str) else list(players)
    seated = build_players(env, specs, player_kwargs)
    labels = [p.label for p in seated]
    if any(p.host for p in seated):
        raise ConfigError(f"export_experts plays device players only; {labels} include a host player")
    pool = TextEnvPool(
        env,
        min(num_envs, episodes),
        seed=seed,
        history=history,
        max_steps=max_steps,
        players=seated,
        record_scripted=True,
    )
    n_lines, sums, count = 0, [0.0] * env.num_agents, 0
    with _writer(out, overwrite) as f:
        for result in pool.play(lambda pending: [], range(episodes)):
            for line in decision_lines(
                result,
                env_id=env.id,
                base_seed=seed,
                episode=result.seed,
                labels=labels,
                key_splits=pool.key_splits,
            ):
                _dump(f, line)
                n_lines += 1
            sums = [s + r for s, r in zip(sums, result.returns, strict=True)]
            count += 1
    return {
        "env_id": env.id,
        "players": labels,
        "episodes": count,
        "decisions": n_lines,
        "mean_returns": [s / max(count, 1) for s in sums],
        "out": str(out),
    }


def _transcript_moves(run_dir: Path) -> dict[tuple[int, int, int], dict[str, Any]]:
    """LLM decisions of a run by ``(episode, seat, decision)``: the move and the raw reply."""
    from alem.engine.record import TRANSCRIPTS_FILE

    moves: dict[tuple[int, int, int], dict[str, Any]] = {}
    for rec in read_jsonl(run_dir / TRANSCRIPTS_FILE):
        if rec.get("type") != "decision":
            continue
        attempts = rec.get("attempts") or []
        last = attempts[-1] if attempts else {}
        fallback = rec.get("fallback")
        move = {"action": int(rec["action"]), "model_reply": last.get("reply"), "fallback": fallback}
        if fallback is not None:
            # The model never gave a legal move; the one played is the fallback policy's. Its
            # line keeps the model's own outcome (unparseable, illegal, api_error), not "ok".
            move.update(status=last.get("status") or "no_reply", invalid=True)
        moves[(int(rec["episode"]), int(rec["seat"]), int(rec["decision"]))] = move
    return moves


def export_run(
    run_dir: str | Path,
    out: str | Path,
    *,
    history: int | None = None,
    num_envs: int | None = None,
    overwrite: bool = False,
    include_fallback: bool = False,
) -> dict[str, Any]:
    """Export every finished episode of the arena run in ``run_dir`` (see the module docstring).

    ``history``: earlier exchanges kept in the rebuilt messages (default: the run's
    ``llm.history``, so LLM seats' lines show what the model saw). Tournament directories are
    not supported: export each ``matches/<pairing>`` run that has its own ``config.yaml``.

    An LLM decision where the model gave no legal move (the fallback policy played) is left
    out, so the file can be fine-tuned on as it is; ``include_fallback`` keeps those lines,
    marked ``invalid: true``, with the model's ``status`` and ``fallback`` (the played move is
    the fallback's, not the model's). The returned ``fallback_decisions`` counts them.
    """
    from omegaconf import OmegaConf

    from alem.arena.evaluation import CLI
    from alem.arena.players import build_player, parse_spec
    from alem.cli import make_env
    from alem.engine.record import EPISODES_FILE, read_episodes
    from alem.rundir import read_run_config

    run_dir = Path(run_dir).resolve()
    if (run_dir / "matches").is_dir() and (run_dir / "config.yaml").is_file():
        raise ConfigError(
            f"{run_dir} is a tournament; export one pairing's run directory under {run_dir / 'matches'}"
        )
    cfg = read_run_config(run_dir, cli=CLI, required=("players", "env"), what="export of")
    if (cfg.get("mode") or "match") != "match":
        raise ConfigError(
            f"{run_dir} is a {cfg.mode} tournament; export one pairing's run directory under matches/"
        )
    conf = OmegaConf.to_container(cfg, resolve=True)
    env = make_env(cfg.env)
    specs = list(conf.get("players_resolved") or conf["players"])
    if len(specs) == 1:
        specs = specs * env.num_agents
    player_kwargs = conf.get("player_kwargs") or {}
    seats: list[Any] = []
    for spec in specs:
        name, _ = parse_spec(spec)
        if name == "llm":
            seats.append(None)  # replayed from the transcripts
            continue
        p = build_player(env, spec, player_kwargs)
        if p.host:
            raise ConfigError(
                f"player {spec!r} runs on the host and its moves are not recorded; only LLM seats "
                "(from transcripts) and device players (replayed with the run's keys) can be exported"
            )
        seats.append(p)
    llm_kwargs = player_kwargs.get("llm") or {}
    if history is None:
        history = int(llm_kwargs.get("history") or 0)
    recorded = read_episodes(run_dir / EPISODES_FILE)
    episodes = sorted(recorded)
    if not episodes:
        raise AlemError(f"{run_dir} has no finished episodes in {EPISODES_FILE}")
    moves = _transcript_moves(run_dir) if any(s is None for s in seats) else {}
    extras: dict[int, dict[tuple[int, int], dict[str, Any]]] = defaultdict(dict)
    for (ep, i, dec), m in moves.items():
        extras[ep][(i, dec)] = {k: v for k, v in m.items() if k != "action"}
    b = min(int(num_envs or conf.get("num_envs") or 8), len(episodes))
    pool = TextEnvPool(
        env,
        b,
        seed=int(conf.get("seed") or 0),
        history=history,
        max_steps=conf.get("max_steps"),
        players={i: p for i, p in enumerate(seats) if p is not None},
        record_scripted=True,
        openings=int(conf.get("openings") or 0),  # the run's (a run saved before the option had none)
    )
    labels = [_label(spec) for spec in specs]
    n_lines = n_fallback = 0
    with _writer(out, overwrite) as f:
        pending = pool.reset(episodes)
        while not pool.done:
            actions = []
            for t in pending:
                key = (t.seed, t.seat, t.decision)
                if key not in moves:
                    raise AlemError(
                        f"{run_dir}: the transcripts hold no decision {t.decision} of seat {t.seat} in "
                        f"episode {t.seed}; the run cannot be replayed"
                    )
                actions.append(moves[key]["action"])
            res = pool.step_actions(actions)
            for result in res.finished:
                want = recorded[result.seed].returns
                if any(
                    not math.isclose(a, w, rel_tol=1e-5, abs_tol=1e-5)
                    for a, w in zip(result.returns, want, strict=True)
                ):
                    raise AlemError(
                        f"{run_dir}: episode {result.seed} replays to returns {list(result.returns)}, but "
                        f"episodes.jsonl recorded {list(want)}; not exported (was the env or a player changed?)"
                    )
                extra = extras.get(result.seed)
                for line in decision_lines(
                    result,
                    env_id=env.id,
                    base_seed=pool.seed,
                    episode=result.seed,
                    labels=labels,
                    key_splits=pool.key_splits,
                    extra=extra,
                ):
                    if line.get("fallback") is not None:
                        n_fallback += 1
                        if not include_fallback:
                            continue
                    _dump(f, line)
                    n_lines += 1
            pending = res.pending
    return {
        "env_id": env.id,
        "players": labels,
        "episodes": len(episodes),
        "decisions": n_lines,
        "fallback_decisions": n_fallback,
        "fallback_included": include_fallback,
        "out": str(out),
    }


def _label(spec: str) -> str:
    """A seat's player label for the export: a checkpoint seat by its run directory's name (the
    file is shared; the path on the machine that made it means nothing elsewhere)."""
    name, _, arg = spec.partition(":")
    return f"{name}:{Path(arg).name}" if name == "checkpoint" and arg else spec


def read_decisions(path: str | Path) -> list[dict[str, Any]]:
    """The lines of an export file (a torn last line is skipped)."""
    return list(read_jsonl(path))


def episodes_of(lines: Sequence[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Lines grouped by ``episode``, in file order."""
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        out[int(line["episode"])].append(line)
    return dict(out)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = ArgumentParser(
        prog="python -m alem.text.train.export", description="Export trajectories as chat-format JSONL."
    )
    sub = ap.add_subparsers(dest="source", required=True)
    ex = sub.add_parser("experts", help="fresh episodes played by scripted device players")
    ex.add_argument("--env", required=True, help="a registered text-capable env id")
    ex.add_argument("--players", nargs="+", required=True, help="one player spec per seat, or one for all")
    ex.add_argument("--episodes", type=int, required=True)
    ex.add_argument("--num-envs", type=int, default=256)
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--history", type=int, default=0)
    ex.add_argument("--max-steps", type=int, default=None)
    ex.add_argument("--out", required=True)
    ex.add_argument("--overwrite", action="store_true")
    rn = sub.add_parser("run", help="the finished episodes of an arena run directory")
    rn.add_argument("run_dir")
    rn.add_argument("--out", required=True)
    rn.add_argument("--history", type=int, default=None)
    rn.add_argument("--num-envs", type=int, default=None)
    rn.add_argument("--overwrite", action="store_true")
    rn.add_argument(
        "--include-fallback",
        action="store_true",
        help="keep LLM decisions the fallback policy played (marked invalid); left out by default",
    )
    args = ap.parse_args(argv)
    parser = ex if args.source == "experts" else rn
    episodes, max_steps = getattr(args, "episodes", 1), getattr(args, "max_steps", None)
    if Path(args.out).exists() and not args.overwrite:  # before the slower checks of the source
        parser.error(f"{args.out} exists; pass --overwrite to replace it")
    refuse_unwritable(parser, args.out)
    refuse_bad_args(
        parser,
        [
            ("--episodes", episodes, episodes >= 1, "an integer >= 1"),
            ("--num-envs", args.num_envs, args.num_envs is None or args.num_envs >= 1, "an integer >= 1"),
            ("--history", args.history, args.history is None or args.history >= 0, "an integer >= 0"),
            ("--max-steps", max_steps, max_steps is None or max_steps >= 1, "an integer >= 1"),
        ],
    )
    try:
        return _export(args)
    except AlemError as e:
        parser.error(str(e))


def _export(args: argparse.Namespace) -> dict[str, Any]:
    if args.source == "experts":
        stats = export_experts(
            args.env,
            args.players,
            args.out,
            episodes=args.episodes,
            num_envs=args.num_envs,
            seed=args.seed,
            history=args.history,
            max_steps=args.max_steps,
            overwrite=args.overwrite,
        )
    else:
        stats = export_run(
            args.run_dir,
            args.out,
            history=args.history,
            num_envs=args.num_envs,
            overwrite=args.overwrite,
            include_fallback=args.include_fallback,
        )
    print(json.dumps(stats))
    return stats


if __name__ == "__main__":
    main()
