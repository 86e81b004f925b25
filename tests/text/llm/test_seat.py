"""One text seat: LLMPlayer and TextEnvPool build the same prompt and play the same move for an
invalid reply, from the shared :mod:`alem.text.llm.seat`."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import alem
from alem.engine.lockstep import episode_key
from alem.players import Turn
from alem.text.llm.player import LLMPlayer
from alem.text.llm.prompts import PromptMode
from alem.text.train.pool import TextEnvPool


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


class _Records:
    """A transcript that keeps the decision records in memory."""

    def __init__(self):
        self.records = []

    def write(self, record):
        self.records.append(record)


def _player_decision(env, player, seed, episode):
    """The record of ``player``'s first decision (seat 0) in arena episode ``episode`` of ``seed``:
    the deal a pool of that seed gives episode seed ``episode``."""
    state, ts = jax.jit(env.reset)(episode_key(jax.random.key(seed), episode, 0))
    batch = jax.tree.map(lambda x: x[None], (state, ts))
    turn = Turn(env, env.default_params, 0, batch[0], batch[1], np.array([True]), np.array([episode]))
    out = _Records()
    player.transcript = out
    try:
        player.act(jax.random.key(0), turn)
    finally:
        player.close()
    return out.records[-1]


@pytest.mark.parametrize(
    "mode", [PromptMode(), PromptMode(legal_moves="none", rules="short"), PromptMode(format="json")]
)
def test_player_and_pool_prompt_the_same_state_alike(ttt, mode):
    pool = TextEnvPool(ttt, 1, seed=3, prompt_mode=mode)
    pooled = pool.reset([2])[0].messages
    llm = LLMPlayer(ttt, backend="scripted", seed=3, **vars(mode))
    assert _player_decision(ttt, llm, 3, 2)["attempts"][0]["messages"] == pooled


@pytest.mark.parametrize("seed", [0, 11])
def test_an_invalid_reply_plays_the_same_random_move_in_player_and_pool(ttt, seed):
    """Both default to the random rule and seed it alike: (seed, episode, seat, decision)."""
    episodes = range(4)
    pool = TextEnvPool(ttt, 1, seed=seed)
    pooled = []
    for e in episodes:
        pool.reset([e])
        pooled.append(pool.step(["no idea"]).decisions[0].action)
    played = []
    for e in episodes:
        llm = LLMPlayer(ttt, backend="scripted", script=lambda body: "no idea", reprompts=0, seed=seed)
        record = _player_decision(ttt, llm, seed, e)
        assert record["fallback"] == "random"
        played.append(record["action"])
    assert played == pooled
