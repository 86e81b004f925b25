"""TextEnvPool: records, replies, invalid rules, auto-reset, device seats, and the deal of a seed."""

from __future__ import annotations

import json
import random

import jax
import numpy as np
import pytest

import alem
from alem.engine.lockstep import episode_key
from alem.errors import AlemError, ConfigError
from alem.players import make_player
from alem.text.llm.prompts import system_prompt, turn_prompt
from alem.text.train.pool import TextEnvPool
from alem.text.train.turns import answer, credit_rewards


@pytest.fixture(scope="module")
def kuhn():
    return alem.make("kuhn_poker-v0")


@pytest.fixture(scope="module")
def kuhn_pool(kuhn):
    """One compiled pool for the Kuhn tests (a pool may be reset any number of times)."""
    return TextEnvPool(kuhn, 3, seed=5, invalid="first")


def random_replies(pending, rng):
    return [answer(rng.choice(t.legal)) for t in pending]


def test_records_carry_the_seats_own_view_and_legal_moves(kuhn, kuhn_pool):
    pool = kuhn_pool
    pending = pool.reset([0, 1, 2])
    assert [(t.env, t.seat, t.turn, t.decision, t.seed) for t in pending] == [
        (0, 0, 0, 0, 0),
        (1, 0, 0, 0, 1),
        (2, 0, 0, 0, 2),
    ]
    t = pending[1]
    assert (t.agent, t.role, t.role_name) == ("player_0", 0, "player")
    assert t.legal == ["pass", "bet"] and t.legal_actions == [0, 1]
    assert t.messages[0] == {"role": "system", "content": system_prompt(kuhn, kuhn.default_params, 0)}
    # The deal of seed 1 under base seed 5 is arena episode 1's: render it independently.
    state, _ = jax.jit(kuhn.reset)(episode_key(jax.random.key(5), 1, 0))
    view = kuhn.render_text(jax.device_get(state), 0)
    assert t.messages[1] == {"role": "user", "content": turn_prompt(view, ["pass", "bet"])}
    assert len(t.messages) == 2


def test_replies_invalid_rules_and_auto_reset_from_a_seed_stream(kuhn_pool):
    rng = random.Random(0)
    pool = kuhn_pool
    pending = pool.reset(iter(range(5)))  # 5 episodes through 3 rows
    finished, flagged = [], 0
    step_no = 0
    while not pool.done:
        replies = random_replies(pending, rng)
        if step_no == 0:
            replies[0] = "I would rather not say."  # unparseable -> first legal move (pass)
            replies[1] = json.dumps({"action": "fold"})  # an alias of pass: legal, fine
        res = pool.step(replies)
        if step_no == 0:
            assert res.invalid.tolist() == [True, False, False]
            d = res.decisions[0]
            assert (d.status, d.action, d.action_name, d.invalid) == ("unparseable", 0, "pass", True)
            assert res.decisions[1].action_name == "pass" and not res.decisions[1].invalid
        flagged += int(res.invalid.sum())
        for ep in res.finished:
            assert res.done[ep.env]
            np.testing.assert_allclose(res.returns[ep.env], ep.returns)
            assert sum(ep.returns) == 0.0  # zero-sum
        assert np.isnan(res.returns[~res.done]).all()
        finished += res.finished
        pending = res.pending
        step_no += 1
    assert sorted(e.seed for e in finished) == [0, 1, 2, 3, 4]
    assert sum(sum(e.invalid) for e in finished) == flagged == 1
    for e in finished:  # credited rewards add up to each seat's return
        for i in range(2):
            mine = [d.reward for d in e.trajectory if d.turn.seat == i]
            assert sum(mine) == pytest.approx(e.returns[i])
    assert pool.pending == [] and pool.step([]).finished == []


def test_forfeit_lets_the_env_rule_apply_and_random_is_seeded():
    env = alem.make("tic_tac_toe-v0", illegal_action="lose")
    pool = TextEnvPool(env, 1, invalid="forfeit")
    pool.reset([0])
    res = pool.step(["no idea"])
    d = res.decisions[0]
    assert d.invalid and d.action == -1 and d.env_illegal
    assert res.done[0] and res.finished[0].returns == (-1.0, 1.0)
    pool.invalid_rule = "random"  # the random rule: the same move for the same (seed, seat, turn)
    moves = []
    for _ in range(2):
        pool.reset([7])
        moves.append(pool.step(["?"]).decisions[0].action)
    assert moves[0] == moves[1]


def test_simultaneous_seats_answer_in_one_step_and_history_is_kept():
    env = alem.make("iterated_prisoners_dilemma-v0")
    pool = TextEnvPool(env, 2, history=1)
    pending = pool.reset([0, 1])
    assert [(t.env, t.seat) for t in pending] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    names = env.action_names(0)
    res = pool.step([answer(names[0]), answer(names[1]), answer(names[0]), answer(names[0])])
    assert res.rewards.shape == (2, 2)
    nxt = res.pending[1]
    assert nxt.turn == 1 and nxt.decision == 1
    # system, the previous exchange (user + the reply as given), the new user message
    assert [m["role"] for m in nxt.messages] == ["system", "user", "assistant", "user"]
    assert nxt.messages[2]["content"] == answer(names[1])
    assert nxt.messages[1] == pending[1].messages[-1]


def test_device_seats_play_inside_the_step():
    env = alem.make("tic_tac_toe-v0")
    pool = TextEnvPool(env, 4, players={1: make_player("minimax", env)})
    rng = random.Random(1)
    results = list(pool.play(lambda p: random_replies(p, rng), range(4)))
    assert len(results) == 4
    assert all(d.turn.seat == 0 for r in results for d in r.trajectory)  # minimax's moves not recorded
    assert all(r.returns[0] <= 0 for r in results)  # random play never beats minimax
    with pytest.raises(ConfigError, match="device policy"):
        TextEnvPool(env, 1, players={0: make_player("llm", env, backend="scripted")})


def test_misuse_is_refused(kuhn, kuhn_pool):
    with pytest.raises(ConfigError, match="invalid"):
        TextEnvPool(kuhn, 1, invalid="skip")
    pool = TextEnvPool(kuhn, 3)
    with pytest.raises(AlemError, match="before reset"):
        pool.step([])
    pool = kuhn_pool
    pool.reset([0])
    with pytest.raises(AlemError, match="1 records are pending, got 2"):
        pool.step(["a", "b"])
    with pytest.raises(ConfigError, match="seeds"):
        pool.reset([-1])
    with pytest.raises(AlemError, match="needs an env with text support"):
        TextEnvPool(alem.make("mpe/simple-v0"), 1)


def test_credit_rewards_by_hand():
    # decisions at steps 1 and 3 of 5; the reward of step 0 (before the first) goes to the first
    assert credit_rewards(np.array([0.5, 0.0, 1.0, 2.0, -1.0]), [1, 3]).tolist() == [1.5, 1.0]
    assert credit_rewards(np.zeros(3), []).tolist() == []
