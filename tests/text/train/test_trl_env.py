"""TRL's GRPOTrainer on alem games (alem/text/train/trl_env.py): the rollout function without
torch (a character tokenizer and scripted replies), and one real GRPO step of SmolLM2 (slow)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from alem.errors import ConfigError, DependencyNotInstalled
from alem.text.llm.scripted import ScriptedBackend, legal_names_in
from alem.text.train.adapters import rollout as backend_rollout
from alem.text.train.advantages import grpo_advantages
from alem.text.train.trl_env import AlemRollout, episode_reward, parse_tag, prompt_tag
from alem.text.train.turns import answer
from tests.torch_stack import model_stack

KUHN = "kuhn_poker-v0"
SEEDS = [8, 8, 14, 14]  # two deals, two games each (2 prompts x 2 generations); both two-turn games
LOGP = -0.5  # what the scripted sampler reports for each token it "generates"


class CharTokenizer:
    """A ChatML template over characters, with two special tokens (ids 1, 2; 2 stops)."""

    special = ("<|im_start|>", "<|im_end|>")
    eos_token_id = 2

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=False):
        assert not tokenize
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")

    def encode(self, text, add_special_tokens=False):
        ids, i = [], 0
        while i < len(text):
            for k, s in enumerate(self.special):
                if text.startswith(s, i):
                    ids.append(k + 1)
                    i += len(s)
                    break
            else:
                ids.append(ord(text[i]) + 10)
                i += 1
        return ids

    def decode(self, ids, skip_special_tokens=False):
        return "".join(
            ("" if skip_special_tokens else self.special[i - 1]) if i < 10 else chr(i - 10) for i in ids
        )


TOK = CharTokenizer()


def scripted_reply(view: str) -> str:
    """King: the last legal move (bet or call); Queen: the first (check or fold); Jack: no move."""
    legal = legal_names_in({"messages": [{"content": view}]})
    if "Your card: King" in view:
        return answer(legal[-1])
    if "Your card: Queen" in view:
        return answer(legal[0])
    return "no idea"


def last_user(text: str) -> str:
    return text.rsplit("<|im_start|>user\n", 1)[1].split("<|im_end|>", 1)[0]


def scripted_generate(inputs):
    """The stand-in sampler: reads the view off the tokens, ends valid replies with the stop
    token and cuts invalid ones short (as a reply that hit the length limit)."""
    outs = []
    for ids in inputs:
        reply = scripted_reply(last_user(TOK.decode(ids)))
        outs.append(TOK.encode(reply) + ([TOK.eos_token_id] if reply.startswith("{") else []))
    return outs, [[LOGP] * len(o) for o in outs]


@pytest.fixture(scope="module")
def kuhn():
    """Seat 0 trained, a random device opponent; its seat-0 pool of 4 rows compiles once."""
    return AlemRollout(KUHN, seat=0, opponent="random", seed=1, invalid_penalty=0.5)


@pytest.fixture(scope="module")
def played(kuhn):
    out = kuhn.play(
        [prompt_tag(KUHN, 0, s) for s in SEEDS], TOK, scripted_generate, eos_token_ids=[TOK.eos_token_id]
    )
    return out, list(kuhn.last_episodes)


def test_rollout_plays_the_games_the_pool_plays_with_the_same_replies(kuhn, played):
    out, episodes = played
    # the same pool, driven as any chat backend drives it, with the same replies
    backend = ScriptedBackend(lambda body: scripted_reply(body["messages"][-1]["content"]))
    ref = sorted(backend_rollout(kuhn._pool(0, 4), backend, SEEDS), key=lambda ep: ep.env)
    assert [ep.seed for ep in episodes] == [ep.seed for ep in ref] == SEEDS
    assert out["alem_return"] == [ep.returns[0] for ep in ref]
    assert out["alem_invalid"] == [ep.invalid[0] for ep in ref]
    assert out["alem_decisions"] == [ep.decisions[0] for ep in ref]
    want = np.array(out["alem_return"]) - 0.5 * np.array(out["alem_invalid"])
    np.testing.assert_allclose(out["alem_reward"], want)
    assert episode_reward(None, None, alem_reward=out["alem_reward"], seed=SEEDS) == out["alem_reward"]
    # two-turn games after cut invalid replies (seed 8: Jack) and after stopped valid ones (14: Queen)
    assert out["alem_decisions"] == [2, 2, 2, 2] and out["alem_invalid"] == [2, 2, 0, 0]


def test_completion_is_the_whole_episode_as_one_chat_with_only_the_replies_trained(kuhn, played):
    out, episodes = played
    assert out["prompt_ids"][0] == out["prompt_ids"][1]  # a group: the same deal, the same prompt
    for k, ep in enumerate(episodes):
        turns = [d.turn for d in ep.trajectory if d.turn.seat == 0]
        assert len(turns) == out["alem_decisions"][k]
        replies = [scripted_reply(t.messages[-1]["content"]) for t in turns]
        chat = list(turns[0].messages)
        for t, reply in zip(turns[1:], replies, strict=False):
            chat += [{"role": "assistant", "content": reply}, t.messages[-1]]
        chat.append({"role": "assistant", "content": replies[-1]})
        # prompt + completion is the template's rendering of the episode's conversation (the
        # last reply's stop token is there when it was generated, the template's newline is not)
        text = TOK.decode(out["prompt_ids"][k] + out["completion_ids"][k])
        full = TOK.apply_chat_template(chat)
        assert full.startswith(text) and full[len(text) :] in ("\n", "<|im_end|>\n")
        assert TOK.decode(out["prompt_ids"][k]) == TOK.apply_chat_template(
            chat[:2], add_generation_prompt=True
        )
        # the loss mask keeps exactly the generated tokens, with their log-probabilities
        comp, mask, logp = (np.array(out[f][k]) for f in ("completion_ids", "env_mask", "logprobs"))
        assert comp.shape == mask.shape == logp.shape
        assert TOK.decode(comp[mask == 1].tolist()) == "".join(
            r + ("<|im_end|>" if r.startswith("{") else "") for r in replies
        )
        assert np.all(logp[mask == 1] == LOGP) and np.all(logp[mask == 0] == 0.0)


class StandInTrainer:
    """What AlemRollout reads from a GRPOTrainer: its tokenizer, stop ids, template kwargs and
    its one-turn sampler."""

    processing_class = TOK
    eos_token_ids = [TOK.eos_token_id]
    chat_template_kwargs: dict = {}

    def __init__(self):
        self.calls = 0

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations):
        assert images is None and multimodal_fields == {} and num_generations == 1
        self.calls += 1
        return scripted_generate(prompt_ids)


def test_as_trls_rollout_func_it_samples_with_the_trainers_generation(kuhn, played):
    out, _ = played
    trainer = StandInTrainer()
    again = kuhn([prompt_tag(KUHN, 0, s) for s in SEEDS], trainer)
    assert again == out and trainer.calls == max(out["alem_decisions"])
    # a sampler without log-probabilities (transformers' generate): TRL gets None
    no_logp = AlemRollout(kuhn.env, seat=0, seed=1, generate=lambda ids: (scripted_generate(ids)[0], None))
    no_logp._pools = kuhn._pools  # the same pool config: skip a compile
    res = no_logp([prompt_tag(KUHN, 0, s) for s in SEEDS], trainer)
    assert res["logprobs"] is None and res["completion_ids"] == out["completion_ids"]
    assert trainer.calls == max(out["alem_decisions"])  # its own sampler, not the trainer's


def test_rows_of_both_seats_play_their_own_seat_against_the_opponent():
    both = AlemRollout(KUHN, seat=(0, 1), opponent="always:bet", seed=1)
    prompts = [r["prompt"] for r in both.rows([3, 8])]  # seat 0 and seat 1 of each deal
    out = both.play(prompts, TOK, scripted_generate, eos_token_ids=[TOK.eos_token_id])
    episodes = both.last_episodes
    for k, seat in enumerate([0, 1, 0, 1]):
        assert episodes[k].seed == [3, 3, 8, 8][k] and episodes[k].decisions[1 - seat] >= 1
        assert out["alem_return"][k] == episodes[k].returns[seat]
        assert f"You are player {seat}." in TOK.decode(out["prompt_ids"][k])
    assert sorted(both._pools) == [(0, 2), (1, 2)]  # one pool per trained seat


def test_rows_tags_and_clear_errors(kuhn, monkeypatch):
    both = AlemRollout(KUHN, seat=(0, 1), opponent="always:bet")
    assert both.rows([5, 6]) == [
        {"prompt": "alem:kuhn_poker-v0 seat=0 seed=5", "seed": 5, "seat": 0},
        {"prompt": "alem:kuhn_poker-v0 seat=1 seed=5", "seed": 5, "seat": 1},
        {"prompt": "alem:kuhn_poker-v0 seat=0 seed=6", "seed": 6, "seat": 0},
        {"prompt": "alem:kuhn_poker-v0 seat=1 seed=6", "seed": 6, "seat": 1},
    ]
    assert parse_tag(" alem:kuhn_poker-v0 seat=1 seed=42\n") == (KUHN, 1, 42)
    with pytest.raises(ConfigError, match="not an alem row tag.*AlemRollout.dataset"):
        parse_tag([{"role": "user", "content": "hi"}])
    with pytest.raises(ConfigError, match="plays tic_tac_toe-v0 seat 0; this rollout plays kuhn_poker-v0"):
        kuhn.play([prompt_tag("tic_tac_toe-v0", 0, 1)], TOK, scripted_generate, eos_token_ids=[2])
    with pytest.raises(ConfigError, match="seat 1; this rollout plays kuhn_poker-v0 seat"):
        kuhn.play([prompt_tag(KUHN, 1, 1)], TOK, scripted_generate, eos_token_ids=[2])
    with pytest.raises(ConfigError, match=r"seats of kuhn_poker-v0 \(0..1\)"):
        AlemRollout(KUHN, seat=2)
    with pytest.raises(ConfigError, match="answer must be one of"):
        AlemRollout(KUHN, answer="lenient")
    with pytest.raises(ConfigError, match="no move 'raise'"):
        AlemRollout(KUHN, opponent="always:raise")
    monkeypatch.setitem(sys.modules, "trl", None)  # as if trl were not installed
    # trl is named missing (with the rest of the extra where that is missing too, as in a dev-only venv)
    with pytest.raises(
        DependencyNotInstalled, match=r'missing: ([^)]*, )?trl\): pip install "alem\[llmtrain\]"'
    ):
        kuhn.dataset([1, 2])


def test_dataset_is_the_rows():
    pytest.importorskip("datasets")
    pytest.importorskip("trl")
    roll = AlemRollout(KUHN, seat=1)
    ds = roll.dataset(range(3))
    assert ds.to_list() == roll.rows(range(3)) and ds.column_names == ["prompt", "seed", "seat"]


# ---------------------------------------------------------------------------- the real trainer
@pytest.mark.exhaustive
def test_one_grpo_trainer_step_on_kuhn_poker_moves_smollm2_the_way_the_advantages_say(tmp_path, monkeypatch):
    torch = model_stack("trl", "datasets")
    from trl import GRPOConfig, GRPOTrainer

    from examples import lora_policy as lp

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    policy = lp.LoRAChatPlayer(seed=0, rank=8)
    base = policy.model.get_base_model()
    # The GGUF file is dequantised to float32 on load, but transformers still marks the model
    # quantized, and its Trainer refuses to train a GGUF-quantized model: drop the mark.
    if getattr(base, "hf_quantizer", None) is not None:
        base.hf_quantizer.remove_quantization_config(base)
    roll = AlemRollout(KUHN, seat=0, opponent="random", invalid_penalty=1.0, answer="tolerant")
    seen = []

    def rollout_func(prompts, trainer):
        out = roll(prompts, trainer)
        seen.append((list(prompts), out, list(roll.last_episodes)))
        return out

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        num_generations=2,
        per_device_train_batch_size=4,  # 2 deals x 2 games
        max_completion_length=8,  # per reply
        max_steps=1,
        learning_rate=2e-3,
        temperature=1.0,
        bf16=False,
        use_cpu=True,
        report_to="none",
        save_strategy="no",
        logging_steps=1,
        seed=0,
    )
    trainer = GRPOTrainer(
        model=policy.model,
        processing_class=policy.tokenizer,
        reward_funcs=episode_reward,
        args=args,
        train_dataset=roll.dataset([11, 12]),
        rollout_func=rollout_func,
    )
    trainer.train()
    assert len(seen) == 1
    prompts, out, episodes = seen[0]
    seeds = [parse_tag(p)[2] for p in prompts]
    assert sorted(seeds) == [11, 11, 12, 12] and seeds[0] == seeds[1] and seeds[2] == seeds[3]
    assert [ep.seed for ep in episodes] == seeds
    assert max(out["alem_decisions"]) == 2  # a multi-turn episode is in the batch
    # TRL's group-relative advantages are alem's (sample std, TRL's eps)
    adv = grpo_advantages(out["alem_reward"], seeds, ddof=1, eps=1e-4)
    np.testing.assert_allclose(list(trainer._logs["advantages"]), adv, atol=1e-5)
    assert (adv > 0).any() and (adv < 0).any(), "no reward difference in a group: nothing to learn"

    def model_logp():
        """Each completion's summed log-probability of its own (generated) tokens."""
        sums = []
        with torch.no_grad():
            for p, c, m in zip(out["prompt_ids"], out["completion_ids"], out["env_mask"], strict=True):
                logits = policy.model(input_ids=torch.tensor([p + c])).logits[0, len(p) - 1 : -1]
                lp_tok = logits.log_softmax(-1).gather(1, torch.tensor(c)[:, None])[:, 0]
                sums.append(float((lp_tok * torch.tensor(m, dtype=lp_tok.dtype)).sum()))
        return np.array(sums)

    after = model_logp()
    with policy.model.disable_adapter():  # LoRA starts at zero: adapters off = the model before the step
        before = model_logp()
    delta = after - before
    assert np.abs(delta).max() > 1e-3, "the step did not move the adapter"
    # replies that did better than their group's mean gained probability relative to the others
    assert delta[adv > 0].mean() > delta[adv < 0].mean()
    assert float(np.dot(adv, delta)) > 0
