"""The self-play demo (examples/selfplay_demo.py): RAE self-play batches, the information-state
prompts, the sampled-exploitability table against OpenSpiel, paired differences and the
comparison table without torch; one real self-play step of SmolLM2 (slow)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import alem
from alem.errors import RunDirError
from alem.game_tree import exploitability, game_tree
from alem.text.train.advantages import RoleBaseline
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import answer
from examples import selfplay_demo as sd
from tests.torch_stack import model_stack

BET, PASS = answer("bet"), answer("pass")
CARDS = {"Jack": "0", "Queen": "1", "King": "2"}


@pytest.fixture(scope="module")
def kuhn():
    return alem.make("kuhn_poker-v0")


@pytest.fixture(scope="module")
def selfplay_pool(kuhn):
    """Both seats answer through the pool (self-play)."""
    return TextEnvPool(kuhn, 4, seed=1)


def play_replies(pool, seeds, reply):
    """Play ``seeds`` to the end, answering each pending turn with ``reply(turn)``."""
    finished = list(pool.play(lambda pending: [reply(t) for t in pending], seeds))
    return sorted(finished, key=lambda ep: ep.seed)


def test_selfplay_rae_batch_trains_each_seat_against_its_own_baseline(selfplay_pool):
    # seat 0 bets, seat 1 calls, except one unreadable reply (the pool plays a random move for it)
    def reply(t):
        return "hmm" if (t.seed, t.seat) == (11, 1) else BET

    episodes = play_replies(selfplay_pool, [10, 11, 12, 13], reply)
    entries = [(ep, s) for ep in episodes for s in (0, 1)]
    rewards, adv, batch = sd.role_batch(entries, RoleBaseline(0.5), invalid_penalty=1.0)
    returns = [ep.returns[s] for ep, s in entries]
    invalid = [ep.invalid[s] for ep, s in entries]
    assert sum(invalid) == 1 and invalid[3] == 1  # episode 11, seat 1
    np.testing.assert_allclose(rewards, np.array(returns) - np.array(invalid))
    # RAE by hand: one moving average per (game, seat), updated before each advantage
    b = {0: 0.0, 1: 0.0}
    expected = []
    for (_, s), r in zip(entries, rewards, strict=True):
        b[s] = 0.5 * b[s] + 0.5 * r
        expected.append(r - b[s])
    np.testing.assert_allclose(adv, expected)
    # every decision of both seats, each with its own seat's advantage
    assert len(batch) == sum(len(ep.trajectory) for ep in episodes)
    for d, a in batch:
        k = next(i for i, (ep, s) in enumerate(entries) if ep.seed == d.turn.seed and s == d.turn.seat)
        assert a == pytest.approx(adv[k])
    # without RAE (SPIRAL's ablation) the advantage is the raw reward
    raw_rewards, raw_adv, raw_batch = sd.role_batch(entries, None, invalid_penalty=1.0)
    np.testing.assert_allclose(raw_adv, raw_rewards)
    assert [d for d, _ in raw_batch] == [d for d, _ in batch]
    # the baselines are per seat: a seat-0-only batch leaves seat 1's alone
    base = RoleBaseline(0.5)
    sd.role_batch([(ep, 0) for ep in episodes], base)
    assert set(base.baselines) == {("kuhn_poker-v0", 0)}


def test_fixed_opponent_batch_trains_only_the_models_seat(kuhn):
    from alem.text.train.grpo import opponent_player

    pool = TextEnvPool(kuhn, 3, seed=0, players={0: opponent_player(kuhn, "cfr")})
    episodes = play_replies(pool, [1, 2, 3], lambda t: PASS)
    _, adv, batch = sd.role_batch([(ep, 1) for ep in episodes], RoleBaseline())
    assert batch and {d.turn.seat for d, _ in batch} == {1}
    assert len(adv) == 3


def _openspiel_key(messages):
    """OpenSpiel's Kuhn information state string (card, then p/b moves) of a pool prompt."""
    user = messages[-1]["content"]
    card = CARDS[re.search(r"Your card: (\w+)\.", user).group(1)]
    moves = re.search(r"Moves so far: (.*)\.", user).group(1)
    return card + "".join("p" if w == "checked" else "b" for w in re.findall(r"checked|bet", moves))


def test_infoset_prompts_are_the_pools_prompts_and_cover_every_information_state(kuhn, selfplay_pool):
    prompts = sd.infoset_prompts(kuhn)
    tree = game_tree(kuhn)
    assert len(prompts) == tree.num_infosets == 12
    assert len({_openspiel_key(p.messages) for p in prompts}) == 12
    seen = []
    rng = np.random.default_rng(0)
    pending = selfplay_pool.reset(range(40))
    while not selfplay_pool.done:
        seen += [json.dumps(t.messages) for t in pending]
        res = selfplay_pool.step_actions([int(rng.choice(t.legal_actions)) for t in pending])
        pending = res.pending
    assert set(seen) == {json.dumps(p.messages) for p in prompts}


def _openspiel_exploitability(probs_by_key):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability as os_expl

    game = pyspiel.load_game("kuhn_poker")
    pol = os_policy.TabularPolicy(game)
    for key, probs in probs_by_key.items():
        pol.action_probability_array[pol.state_lookup[key]] = probs
    return os_expl.exploitability(game, pol)


def test_sampled_exploitability_of_always_bet_matches_openspiel(kuhn):
    table, info = sd.sampled_policy_table(kuhn, lambda p, k: [BET] * k, 3)
    assert info["invalid_rate"] == 0.0 and info["top_replies"] == [[BET, 36]]
    np.testing.assert_allclose(table, np.tile([0.0, 1.0], (12, 1)))
    keys = [_openspiel_key(p.messages) for p in sd.infoset_prompts(kuhn)]
    want = _openspiel_exploitability(dict.fromkeys(keys, [0.0, 1.0]))
    assert exploitability(kuhn, table) == pytest.approx(want, abs=1e-9)
    assert want == pytest.approx(1 / 3)


def test_sampled_table_counts_invalid_replies_as_the_pools_random_move(kuhn):
    # King bets; Queen answers one unreadable reply in two at its first decision, else passes;
    # Jack bluffs as seat 1 after a check and passes otherwise; free text in the tolerant rule.
    def replies(p, k):
        key = _openspiel_key(p.messages)
        if key[0] == "2":
            return ["I bet."] * k
        if key == "1":
            return ["I pass", "no idea"] * (k // 2)
        if key == "0p":
            return [BET] * k
        return ["pass"] * k

    table, info = sd.sampled_policy_table(kuhn, replies, 2, answer="tolerant")
    keys = [_openspiel_key(p.messages) for p in sd.infoset_prompts(kuhn)]
    expected = {
        k: [0.0, 1.0] if k[0] == "2" or k == "0p" else [0.75, 0.25] if k == "1" else [1.0, 0.0] for k in keys
    }
    np.testing.assert_allclose(table, [expected[k] for k in keys])
    assert info["invalid_rate"] == pytest.approx(1 / 24)
    assert exploitability(kuhn, table) == pytest.approx(_openspiel_exploitability(expected), abs=1e-9)
    # the json rule refuses the same free text: every reply is then the random move
    table_json, info_json = sd.sampled_policy_table(kuhn, replies, 2, answer="json")
    assert info_json["invalid_rate"] == pytest.approx(1 - 2 / 24)  # only "0p" answers in JSON
    assert exploitability(kuhn, table_json) != pytest.approx(exploitability(kuhn, table))


def _eps(rows):
    return [sd._Returns(seed, tuple(r)) for seed, r in rows]


def test_seat_paired_difference_pairs_each_deal_and_averages_the_seats():
    before = {0: _eps([(0, (1, -1)), (1, (-2, 2)), (2, (1, -1))]), 1: _eps([(0, (1, -1)), (1, (2, -2))])}
    after = {0: _eps([(0, (2, -2)), (1, (-1, 1)), (2, (1, -1))]), 1: _eps([(0, (-1, 1)), (1, (1, -1))])}
    d = sd.seat_paired_difference(before, after)
    assert d["0"]["pairs"] == 3 and d["0"]["mean"] == pytest.approx((1 + 1 + 0) / 3)
    assert d["1"]["pairs"] == 2 and d["1"]["mean"] == pytest.approx((2 + 1) / 2)
    # both seats: deals 0 and 1 (deal 2 lacks seat 1); per deal the mean over the seats
    both = [((2 + 1) / 2) - ((1 - 1) / 2), ((-1 + -1) / 2) - ((-2 + -2) / 2)]
    assert d["both"]["pairs"] == 2 and d["both"]["mean"] == pytest.approx(np.mean(both))
    assert d["both"]["ci95"] == pytest.approx(12.7062 * np.std(both, ddof=1) / np.sqrt(2), rel=1e-4)


def test_comparison_table_has_one_row_per_run():
    def match(b, a):
        cell = {"both": {"mean": b}}
        return {
            "before": cell,
            "after": {"both": {"mean": a}},
            "difference": {"both": {"mean": a - b, "ci95": 0.5}},
        }

    run = {
        "mode": "selfplay-rae",
        "train": [{"tokens_per_reply": 12.0}, {"tokens_per_reply": 5.5}],
        "eval": {
            "kuhn": {"cfr": match(-0.25, 0.0), "random": match(0.0, 0.5)},
            "held_out": {g: match(0.0, 0.0) for g in sd.HELD_OUT},
            "exploitability": {"before": {"sampled": 0.31}, "after": {"sampled": 0.2}},
            "invalid_rate": {"before": 0.9, "after": 0.1},
        },
    }
    lines = sd.comparison_table([run, run | {"mode": "fixed-cfr"}]).splitlines()
    assert len(lines) == 4 and lines[0].count("|") == lines[1].count("|") == lines[2].count("|") == 9
    assert lines[2].startswith("| selfplay-rae | -0.25 → +0.00 [+0.250 ± 0.500] | ")
    assert "| 0.310 → 0.200 | 90% → 10% | 12.0 → 5.5 |" in lines[2] and lines[3].startswith("| fixed-cfr |")


def test_cli_refuses_an_occupied_out_and_bad_settings_before_loading_anything(tmp_path):
    from alem.errors import ConfigError

    out = tmp_path / "run"
    out.mkdir()
    (out / "results.json").write_text("{}")
    with pytest.raises(RunDirError, match="already holds files"):
        sd.main(["--out", str(out)])
    with pytest.raises(ConfigError, match="--games must be even"):
        sd.main(["--games", "3", "--out", str(tmp_path / "new")])
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------------------- the real model
@pytest.mark.exhaustive
def test_one_selfplay_rae_step_of_smollm2_trains_both_seats(kuhn):

    torch = model_stack()
    from examples.lora_policy import LoRAChatPlayer, play, train_step

    policy = LoRAChatPlayer(seed=0)
    pool = TextEnvPool(kuhn, 2, seed=0)
    gen = torch.Generator().manual_seed(0)
    eps, comps = play(
        pool, policy, [100, 101], temperature=1.0, max_new_tokens=4, generator=gen, answer="tolerant"
    )
    baseline = RoleBaseline()
    _, adv, batch = sd.role_batch([(ep, s) for ep in eps for s in (0, 1)], baseline, invalid_penalty=1.0)
    assert {d.turn.seat for d, _ in batch} == {0, 1} and set(comps) >= {d for d, _ in batch}
    assert set(baseline.baselines) == {("kuhn_poker-v0", 0), ("kuhn_poker-v0", 1)}
    before = [p.detach().clone() for p in policy.trainable_parameters]
    opt = torch.optim.AdamW(policy.trainable_parameters, lr=1e-3, weight_decay=0.0)
    stats = train_step(policy, opt, batch, comps, temperature=1.0)
    assert stats["decisions"] == len(batch) and stats["grad_norm"] > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.trainable_parameters, strict=True))
