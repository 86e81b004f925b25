"""Multi-turn alem games as rollouts of TRL's ``GRPOTrainer`` (its ``rollout_func`` argument).

One GRPO completion is one whole episode of the trained seat: the first prompt is the seat's
first chat from :class:`~alem.text.train.pool.TextEnvPool` (system: the rules and the answer
format; user: its view and the legal moves), then every reply of the model and every later view
(as a user message) follow in one conversation, token by token, until the game ends. The other
seats are device policies inside the pool's jitted step (``opponent=``). The env's tokens (each
new view, the chat template's turn markers) are returned with ``env_mask`` 0, so the loss covers
only the model's own tokens; each reply is sampled by the trainer's own generation (transformers
or vLLM) from exactly the tokens the loss sees.

Dataset rows name the game: ``prompt`` is a tag ``"alem:<env id> seat=<seat> seed=<seed>"`` (TRL
hands a rollout function only the prompts) and ``seed`` a column, so the ``num_generations``
copies of a row are games of the same deal: the group-relative advantage compares replies, not
luck. The rollout adds per-completion fields that TRL passes to reward functions:
``alem_reward`` (the seat's return minus ``invalid_penalty`` per invalid reply),
``alem_return``, ``alem_invalid`` and ``alem_decisions``; :func:`episode_reward` returns the
first.

Usage (needs the ``llmtrain`` extra: ``pip install -e ".[llmtrain]"``)::

    from trl import GRPOConfig, GRPOTrainer
    from alem.text.train.trl_env import AlemRollout, episode_reward

    rollout = AlemRollout("kuhn_poker-v0", seat=0, opponent="random", invalid_penalty=0.5)
    trainer = GRPOTrainer(
        model=model,  # a causal LM or a peft model; its tokenizer needs a chat template
        processing_class=tokenizer,
        reward_funcs=episode_reward,
        args=GRPOConfig(output_dir="out", num_generations=4, max_completion_length=32),
        train_dataset=rollout.dataset(range(1000)),
        rollout_func=rollout,
    )
    trainer.train()

``max_completion_length`` bounds each reply (the trainer's generation settings apply to every
turn), not the episode. Why a rollout function rather than TRL's ``environment_factory``: that
one drives the game through tool calls, which needs a chat template with tools (SmolLM2's has
none) and prompts that ask for tool calls instead of alem's answer format; this one keeps alem's
prompts and parser, steps every game of a batch in one vmapped program, and works with any chat
template.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from alem.core import MultiAgentEnv
from alem.errors import AlemError, ConfigError
from alem.players import Player
from alem.text.train.grpo import ANSWER_RULES, episode_rewards, opponent_player, pool_reply
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import EpisodeResult

__all__ = ["AlemRollout", "Generate", "episode_reward", "prompt_tag", "parse_tag"]

#: ``generate(inputs) -> (completions, logprobs)``: one reply (token ids, cut after the stop
#: token) per input token list, and their per-token log-probabilities or None.
Generate = Callable[[list[list[int]]], tuple[list[list[int]], list[list[float]] | None]]

_TAG = re.compile(r"alem:(?P<env>\S+) seat=(?P<seat>\d+) seed=(?P<seed>\d+)")
_MARK = "\x00alem-reply\x00"  # stands in for a reply when the template's turn markers are read off


def prompt_tag(env_id: str, seat: int, seed: int) -> str:
    """The ``prompt`` of a dataset row: which game, seat and deal (``seed``) it plays."""
    return f"alem:{env_id} seat={int(seat)} seed={int(seed)}"


def parse_tag(prompt: Any) -> tuple[str, int, int]:
    """``(env id, seat, seed)`` of a :func:`prompt_tag`; raises :class:`ConfigError` otherwise."""
    m = _TAG.fullmatch(prompt.strip()) if isinstance(prompt, str) else None
    if m is None:
        raise ConfigError(
            f"AlemRollout: the prompt {str(prompt)[:80]!r} is not an alem row tag; build the dataset "
            "with AlemRollout.dataset(seeds) (or .rows(seeds))"
        )
    return m["env"], int(m["seat"]), int(m["seed"])


def episode_reward(
    prompts: Any = None, completions: Any = None, *, alem_reward: Sequence[float], **_: Any
) -> list[float]:
    """A TRL reward function: the ``alem_reward`` field :class:`AlemRollout` adds to every
    completion (the seat's return minus the rollout's ``invalid_penalty`` per invalid reply)."""
    return [float(r) for r in alem_reward]


class AlemRollout:
    """TRL's ``rollout_func`` playing alem episodes (see the module docstring).

    Args:
        env: a registered id (``"kuhn_poker-v0"``) or an env instance with text support.
        seat: the trained seat, or several (rows name theirs; e.g. ``(0, 1)`` alternates roles).
        opponent: the other seats' player: a device player spec of the env (``"random"``,
            ``"minimax"``, ``"cfr"``, ``"always:<move>"``, ...) or a device :class:`~alem.players.Player`.
        seed: the pool's base seed; row seed ``s`` deals like episode ``s`` of
            ``python -m alem.evaluate seed=<seed>``.
        invalid: what a reply that names no legal move plays (the pool's ``invalid=``).
        invalid_penalty: subtracted from ``alem_reward`` per invalid reply.
        answer: ``"json"``: only replies with a JSON ``{"action": ...}`` count; ``"tolerant"``: the
            parser's free-text fallbacks too (:func:`~alem.text.train.grpo.pool_reply`).
        max_steps: cut episodes after this many env steps (None: the env's horizon).
        generate: a replacement for the trainer's generation (tests, custom backends).
        env_kwargs: keyword arguments of :func:`alem.make` when ``env`` is an id.
    """

    __name__ = "alem_rollout"

    def __init__(
        self,
        env: MultiAgentEnv | str,
        *,
        seat: int | Sequence[int] = 0,
        opponent: str | Player = "random",
        seed: int = 0,
        invalid: str = "random",
        invalid_penalty: float = 0.0,
        answer: str = "json",
        max_steps: int | None = None,
        generate: Generate | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
    ):
        if isinstance(env, str):
            import alem

            env = alem.make(env, **dict(env_kwargs or {}))
        elif env_kwargs:
            raise ConfigError("env_kwargs is for an env given by id; got an env instance")
        seats = [seat] if isinstance(seat, int) else list(seat)
        n = env.num_agents
        if not seats or any(not isinstance(s, int) or not 0 <= s < n for s in seats):
            raise ConfigError(f"AlemRollout: seat must be seats of {env.id} (0..{n - 1}), got {seat!r}")
        if answer not in ANSWER_RULES:
            raise ConfigError(f"answer must be one of {ANSWER_RULES}, got {answer!r}")
        self.env, self.seats = env, seats
        self.opponent = opponent_player(env, opponent) if isinstance(opponent, str) else opponent
        self.seed, self.invalid, self.invalid_penalty = int(seed), invalid, float(invalid_penalty)
        self.answer, self.max_steps, self.generate = answer, max_steps, generate
        self._pools: dict[tuple[int, int], TextEnvPool] = {}
        #: The episodes of the last call, one per prompt, in order (for inspection and logging).
        self.last_episodes: list[EpisodeResult] = []

    # ------------------------------------------------------------------ dataset
    def rows(self, seeds: Iterable[int]) -> list[dict[str, Any]]:
        """One row per seed and trained seat: ``prompt`` (the tag), ``seed``, ``seat``."""
        return [
            {"prompt": prompt_tag(self.env.id, s, int(x)), "seed": int(x), "seat": s}
            for x in seeds
            for s in self.seats
        ]

    def dataset(self, seeds: Iterable[int]) -> Any:
        """:meth:`rows` as a ``datasets.Dataset`` (TRL's ``train_dataset``)."""
        from alem.extras import require

        require("llmtrain", "AlemRollout.dataset")
        import datasets

        return datasets.Dataset.from_list(self.rows(seeds))

    # ------------------------------------------------------------------ TRL's rollout_func
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        """Play one episode per prompt with ``trainer``'s model (TRL calls this)."""
        tok = trainer.processing_class
        tok = tok if hasattr(tok, "apply_chat_template") else tok.tokenizer
        generate = self.generate
        if generate is None:
            # The trainer's own sampler (transformers, continuous batching or vLLM, with its
            # generation settings); TRL's tool loop calls it the same way for later turns.
            def generate(ids: list[list[int]]) -> tuple[list[list[int]], list[list[float]] | None]:
                return trainer._generate_single_turn(ids, None, {}, 1)

        eos = list(getattr(trainer, "eos_token_ids", None) or [tok.eos_token_id])
        kwargs = dict(getattr(trainer, "chat_template_kwargs", None) or {})
        return self.play(prompts, tok, generate, eos_token_ids=eos, chat_template_kwargs=kwargs)

    def play(
        self,
        prompts: Sequence[Any],
        tokenizer: Any,
        generate: Generate,
        *,
        eos_token_ids: Sequence[int],
        chat_template_kwargs: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The rollout without a trainer: ``tokenizer`` (``apply_chat_template``, ``encode``,
        ``decode``) renders the chat, ``generate`` samples the replies.

        Returns TRL's rollout dict: ``prompt_ids``, ``completion_ids``, ``logprobs`` (None
        unless ``generate`` gives them; 0 on the env's tokens), ``env_mask`` and the ``alem_*``
        fields (module docstring), one entry per prompt.
        """
        rows = [parse_tag(p) for p in prompts]
        for env_id, seat, _ in rows:
            if env_id != self.env.id or seat not in self.seats:
                raise ConfigError(
                    f"AlemRollout: a row plays {env_id} seat {seat}; this rollout plays {self.env.id} "
                    f"seat(s) {self.seats}"
                )
        b = len(rows)
        chat = _Chat(tokenizer, dict(chat_template_kwargs or {}), [int(i) for i in eos_token_ids])
        prompt_ids: list[list[int]] = [[] for _ in range(b)]
        completion: list[list[int]] = [[] for _ in range(b)]
        mask: list[list[int]] = [[] for _ in range(b)]
        logprobs: list[list[float]] | None = [[] for _ in range(b)]
        episodes: list[EpisodeResult | None] = [None] * b
        first: list[list[dict[str, str]]] = [[] for _ in range(b)]
        for seat in sorted({s for _, s, _ in rows}):
            idx = [k for k, (_, s, _) in enumerate(rows) if s == seat]
            pool = self._pool(seat, len(idx))
            pending = pool.reset([rows[k][2] for k in idx])  # pool row j plays prompt idx[j]
            while not pool.done:
                replies: list[str] = []
                if pending:
                    inputs = []
                    for t in pending:
                        k = idx[t.env]
                        if not prompt_ids[k]:
                            first[k] = list(t.messages)
                            prompt_ids[k] = chat.prompt(t.messages)
                        else:  # the view after the last reply, as the next user message
                            more = chat.next_turn(first[k], t.messages[-1], completion[k])
                            completion[k] += more
                            mask[k] += [0] * len(more)
                            if logprobs is not None:
                                logprobs[k] += [0.0] * len(more)
                        inputs.append(prompt_ids[k] + completion[k])
                    outs, lps = generate(inputs)
                    if lps is None:
                        logprobs = None
                    for j, (t, ids) in enumerate(zip(pending, outs, strict=True)):
                        k = idx[t.env]
                        ids = [int(i) for i in ids]
                        completion[k] += ids
                        mask[k] += [1] * len(ids)
                        if logprobs is not None:
                            logprobs[k] += [float(x) for x in lps[j]]
                        replies.append(pool_reply(chat.text(ids), self.answer))
                res = pool.step(replies)
                for ep in res.finished:
                    episodes[idx[ep.env]] = ep
                pending = res.pending
        for k in range(b):
            if not prompt_ids[k]:  # the seat never had to act: nothing to train on
                raise AlemError(
                    f"AlemRollout: seat {rows[k][1]} never acted in {self.env.id} seed {rows[k][2]}"
                )
            if not completion[k]:  # an empty reply: one masked stop token keeps TRL's shapes
                completion[k], mask[k] = [chat.eos[0]], [0]
                if logprobs is not None:
                    logprobs[k] = [0.0]
        done = [ep for ep in episodes if ep is not None]
        if len(done) != b:
            raise AlemError("AlemRollout: an episode did not finish")  # the pool ends every episode
        self.last_episodes = done
        reward = [0.0] * b
        for seat in set(self.seats):
            idx = [k for k in range(b) if rows[k][1] == seat]
            for k, r in zip(
                idx, episode_rewards([done[k] for k in idx], seat, self.invalid_penalty), strict=True
            ):
                reward[k] = float(r)
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion,
            "logprobs": logprobs,
            "env_mask": mask,
            "alem_reward": reward,
            "alem_return": [float(done[k].returns[rows[k][1]]) for k in range(b)],
            "alem_invalid": [int(done[k].invalid[rows[k][1]]) for k in range(b)],
            "alem_decisions": [int(done[k].decisions[rows[k][1]]) for k in range(b)],
        }

    def _pool(self, seat: int, num_envs: int) -> TextEnvPool:
        """One pool per trained seat and batch size (each compiles its program once)."""
        key = (seat, num_envs)
        if key not in self._pools:
            others = {i: self.opponent for i in range(self.env.num_agents) if i != seat}
            self._pools[key] = TextEnvPool(
                self.env,
                num_envs,
                seed=self.seed,
                invalid=self.invalid,
                max_steps=self.max_steps,
                players=others,
            )
        return self._pools[key]


class _Chat:
    """Token ids of one growing conversation under a tokenizer's chat template."""

    def __init__(self, tokenizer: Any, kwargs: dict[str, Any], eos: list[int]):
        self.tok, self.kwargs, self.eos = tokenizer, kwargs, eos or [tokenizer.eos_token_id]

    def _render(self, messages: Sequence[Mapping[str, str]]) -> str:
        return self.tok.apply_chat_template(
            list(messages), tokenize=False, add_generation_prompt=True, **self.kwargs
        )

    def _encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def prompt(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """The first prompt, with the assistant turn opened."""
        return self._encode(self._render(messages))

    def next_turn(
        self, first: Sequence[Mapping[str, str]], user: Mapping[str, str], so_far: list[int]
    ) -> list[int]:
        """The tokens between the last reply and the next one: the template's end of the
        assistant turn (its stop token only if the reply did not end with one), the new user
        message (the pool's view) and the next assistant turn's opening.

        Read off the template after ``first`` (the first prompt's messages) and a placeholder
        reply, so any template works, strict alternation of roles included."""
        if user.get("role") != "user":
            raise AlemError(f"AlemRollout: the pool's last message is {user.get('role')!r}, not the user's")
        text = self._render([*first, {"role": "assistant", "content": _MARK}, user])
        tail = text[text.index(_MARK) + len(_MARK) :]
        if so_far and so_far[-1] in self.eos:
            stop = self.tok.decode([so_far[-1]], skip_special_tokens=False)
            if stop and tail.startswith(stop):
                tail = tail[len(stop) :]
        return self._encode(tail)

    def text(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)
