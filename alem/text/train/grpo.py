"""The game side of GRPO on alem's text envs, without torch: device opponents, the seeds of
each training step, rewards and groups of episodes, and the summaries and tables of an
evaluation. The repository's ``examples/grpo_demo.py`` runs them with a LoRA policy in torch;
another trainer can use them as they are."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from alem.errors import ConfigError

__all__ = [
    "ANSWER_RULES",
    "fixed_move_player",
    "opponent_player",
    "fixed_move_policy",
    "opponent_policy",
    "Sample",
    "pool_reply",
    "training_seeds",
    "episode_rewards",
    "grpo_batch",
    "summarize",
    "paired_difference",
    "format_return",
    "markdown_table",
]

#: Values of ``--answer``: which replies count as answers (see :func:`pool_reply`).
ANSWER_RULES = ("json", "tolerant")


# ---------------------------------------------------------------------------- opponents
def fixed_move_player(env: Any, move: str) -> Any:
    """A device player that plays ``move`` (an action name) whenever it is legal, else the
    first legal move; the seats whose action names lack ``move`` are refused at first use."""
    import jax.numpy as jnp

    from alem.errors import did_you_mean
    from alem.players import FunctionPlayer

    index: dict[int, int] = {}
    for seat in range(env.num_agents):
        names = list(env.action_names(seat))
        if move in names:
            index[seat] = names.index(move)
    if not index:
        names = sorted({n for s in range(env.num_agents) for n in env.action_names(s)})
        raise ConfigError(f"always:{move}: {env.id} has no move {move!r}{did_you_mean(move, names)}")

    def act(key: Any, turn: Any) -> Any:
        if turn.agent not in index:
            raise ConfigError(f"always:{move}: seat {turn.agent} of {env.id} has no move {move!r}")
        mask = jnp.asarray(turn.action_mask)
        j = index[turn.agent]
        return jnp.where(mask[:, j], j, jnp.argmax(mask, axis=1)).astype(jnp.int32)

    player = FunctionPlayer(act, f"always:{move}")
    player.label = f"always:{move}"
    return player


def opponent_player(env: Any, spec: str) -> Any:
    """``always:<move>`` (:func:`fixed_move_player`) or any player spec of ``env`` (a device player)."""
    if spec.startswith("always:"):
        return fixed_move_player(env, spec.partition(":")[2])
    from alem.arena.players import build_player

    player = build_player(env, spec)
    if player.host:
        raise ConfigError(f"--opponent {spec!r} runs on the host; the opponent must be a device player")
    return player


# ---------------------------------------------------------------------------- pure helpers (no torch)
@dataclasses.dataclass(frozen=True)
class Sample:
    """One generated reply: its token ids (cut after the stop token) and its text."""

    ids: list[int]
    text: str


def pool_reply(text: str, answer: str = "json") -> str:
    """What the pool is given for a model reply ``text`` under the answer rule ``answer``.

    - ``"json"``: the reply must carry the answer format the prompt asks for, a JSON object
      with an ``action`` field (text around it is tolerated); any other reply is passed as ``""``,
      so the pool flags it invalid and plays its invalid rule. The ``action`` field is then
      read by the env's parser as usual.
    - ``"tolerant"``: the reply as it is, read by :func:`~alem.text.llm.parsing.parse_reply`'s
      free-text fallbacks too (names or one-letter aliases inside a sentence), which a policy can
      learn to exploit.
    """
    if answer == "tolerant":
        return text
    if answer != "json":
        raise ConfigError(f"answer must be one of {ANSWER_RULES}, got {answer!r}")
    from alem.text.llm.parsing import _json_action

    return text if _json_action(text) is not None else ""


def training_seeds(step: int, groups: int, group_size: int, start: int) -> list[int]:
    """The seeds of training step ``step``: ``groups`` fresh seeds from ``start`` on, each
    repeated ``group_size`` times (``[s0]*G + [s1]*G + ...``: a GRPO group is one deal)."""
    first = start + step * groups
    return [first + g for g in range(groups) for _ in range(group_size)]


def episode_rewards(episodes: Sequence[Any], seat: int, invalid_penalty: float = 0.0) -> np.ndarray:
    """Each episode's training reward: the seat's return minus ``invalid_penalty`` per invalid reply."""
    return np.array(
        [float(ep.returns[seat]) - invalid_penalty * int(ep.invalid[seat]) for ep in episodes], np.float64
    )


def grpo_batch(
    episodes: Sequence[Any], seat: int, *, invalid_penalty: float = 0.0, scale: bool = True
) -> tuple[np.ndarray, np.ndarray, list[tuple[Any, float]]]:
    """Rewards, group-relative advantages (groups: episodes of the same seed) and the decisions
    to train on: every reply of ``seat`` in every episode, paired with its episode's advantage.

    Decisions of scripted seats (``record_scripted``) are left out.
    """
    from alem.text.train.advantages import grpo_advantages

    rewards = episode_rewards(episodes, seat, invalid_penalty)
    adv = grpo_advantages(rewards, [ep.seed for ep in episodes], scale=scale)
    batch = [
        (d, float(a))
        for ep, a in zip(episodes, adv, strict=True)
        for d in ep.trajectory
        if d.turn.seat == seat and not d.scripted
    ]
    return rewards, adv, batch


def _outcomes(episodes: Sequence[Any], seat: int) -> np.ndarray:
    """+1 win, 0 draw, -1 loss of ``seat`` against the best other seat, per episode."""
    out = []
    for ep in episodes:
        mine = float(ep.returns[seat])
        best_other = max(float(r) for i, r in enumerate(ep.returns) if i != seat)
        out.append(np.sign(mine - best_other))
    return np.array(out, np.float64)


def summarize(episodes: Sequence[Any], seat: int, replies: Mapping[Any, tuple[str, int]]) -> dict[str, Any]:
    """Evaluation numbers of ``seat``: mean return with a 95% Student-t half-width
    (:func:`alem.arena.stats.ci95`), win/draw/loss rates, invalid-reply rate, the moves chosen
    by valid replies, and from ``replies`` (each decision's model reply and its generated token
    count): the mean tokens per reply and the five commonest replies (cut to 80 characters)."""
    from alem.arena.stats import ci95

    returns = np.array([float(ep.returns[seat]) for ep in episodes], np.float64)
    outcome = _outcomes(episodes, seat)
    mine = [d for ep in episodes for d in ep.trajectory if d.turn.seat == seat and not d.scripted]
    invalid = sum(d.invalid for d in mine)
    moves = Counter(d.action_name for d in mine if not d.invalid)
    counts = [replies[d][1] for d in mine if d in replies]
    texts = Counter(replies[d][0][:80] for d in mine if d in replies)
    return {
        "episodes": len(episodes),
        "mean_return": float(returns.mean()) if len(returns) else float("nan"),
        "ci95": ci95(returns),
        "win": float((outcome > 0).mean()) if len(outcome) else float("nan"),
        "draw": float((outcome == 0).mean()) if len(outcome) else float("nan"),
        "loss": float((outcome < 0).mean()) if len(outcome) else float("nan"),
        "decisions": len(mine),
        "invalid_rate": invalid / len(mine) if mine else float("nan"),
        "tokens_per_reply": float(np.mean(counts)) if counts else float("nan"),
        "moves": dict(sorted(moves.items(), key=lambda kv: (-kv[1], str(kv[0])))),
        "top_replies": [[text, n] for text, n in texts.most_common(5)],
    }


def paired_difference(before: Sequence[Any], after: Sequence[Any], seat: int) -> dict[str, Any]:
    """Mean of ``after - before`` returns of ``seat`` paired by seed (the same deals), with its
    95% Student-t half-width."""
    from alem.arena.stats import ci95

    b = {ep.seed: float(ep.returns[seat]) for ep in before}
    a = {ep.seed: float(ep.returns[seat]) for ep in after}
    seeds = sorted(set(a) & set(b))
    diff = np.array([a[s] - b[s] for s in seeds], np.float64)
    return {
        "pairs": len(seeds),
        "mean": float(diff.mean()) if len(diff) else float("nan"),
        "ci95": ci95(diff),
    }


def format_return(s: Mapping[str, Any]) -> str:
    ci = s.get("ci95")
    return f"{s['mean_return']:+.3f} ± {ci:.3f}" if ci is not None else f"{s['mean_return']:+.3f}"


def markdown_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """A Markdown table of labelled :func:`summarize` results."""
    lines = [
        "| model | episodes | return (95% CI) | win / draw / loss | invalid replies | tokens / reply | moves |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, s in rows:
        moves = ", ".join(f"{k} {v}" for k, v in s["moves"].items()) or "-"
        lines.append(
            f"| {label} | {s['episodes']} | {format_return(s)} | "
            f"{s['win']:.2f} / {s['draw']:.2f} / {s['loss']:.2f} | {100 * s['invalid_rate']:.1f}% | "
            f"{s['tokens_per_reply']:.1f} | {moves} |"
        )
    return "\n".join(lines)


# deprecated aliases (the player rename), kept for one release: docs/changelog.md
fixed_move_policy, opponent_policy = fixed_move_player, opponent_player
