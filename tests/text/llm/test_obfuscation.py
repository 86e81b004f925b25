"""``llm.obfuscate``: relabeled text (``TextHooks.relabeled``) on tic-tac-toe, connect four, Kuhn
poker, bargaining and chess, and the LLM player playing through it."""

from __future__ import annotations

import json
import re

import jax
import numpy as np
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import make_player
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer

#: env id -> the words that name the game in its own text
GAMES = {
    "tic_tac_toe-v0": ["tic-tac-toe"],
    "connect_four-v0": ["connect four"],
    "kuhn_poker-v0": ["Kuhn poker"],
    "bargaining-v0": ["Deal or No Deal", "Bargaining"],
    "chess-v0": ["chess"],
}


@pytest.fixture(scope="module", params=sorted(GAMES))
def env(request):
    return alem.make(request.param)


def _texts(env, n_steps=4):
    """Rules and every seat's views along a short game that plays the first legal moves."""
    out = [env.rules_text(env.default_params, a) for a in range(env.num_agents)]
    state, _ = env.reset(jax.random.key(0))
    for t in range(n_steps):
        out += [env.render_text(state, a, env.default_params) for a in [None, *range(env.num_agents)]]
        mask = np.asarray(env.action_mask(state, env.default_params))
        acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in mask], np.int32)
        state, ts = env.step(jax.random.key(t + 1), state, acts)
        if bool(np.all(ts.done)):
            break
    return out


def test_a_relabeled_copy_renames_the_game_seats_pieces_and_moves(env):
    copy = env.relabeled(7)
    texts = " \n".join(_texts(copy))
    state, _ = copy.reset(jax.random.key(0))
    texts += " \n".join(json.dumps(copy.to_json(state, a)) for a in range(copy.num_agents))
    assert env.id.split("-")[0] not in texts
    for name in GAMES[env.id]:
        assert name.lower() not in texts.lower()
    assert not re.search(r"\bplayer [01]\b", texts, re.IGNORECASE)  # seats have made-up names
    for agent in range(env.num_agents):
        old, new = env.action_names(agent), copy.action_names(agent)
        assert len(new) == len(old) == len(set(new)) and not set(old) & set(new)
        # the parser maps every new name back to its action, and refuses the original names
        assert [copy.parse_action(n, agent) for n in new] == list(range(len(new)))
        assert all(copy.parse_action(n, agent) is None for n in old)
        assert [env.parse_action(n, agent) for n in old] == list(range(len(old)))  # the env is untouched
    vocab = env.text_vocabulary()
    assert {g: copy.labels(g) for g in vocab} == {g: env.relabeled(7).labels(g) for g in vocab}
    assert {g: copy.labels(g) for g in vocab} != {g: env.relabeled(8).labels(g) for g in vocab}


def test_pieces_and_coordinates_are_relabeled_consistently_on_the_board():
    ttt = alem.make("tic_tac_toe-v0").relabeled(3)
    (x, o), cols, rows = ttt.labels("piece"), ttt.labels("column"), ttt.labels("row")
    state, _ = ttt.reset(jax.random.key(0))
    state, _ = ttt.step(jax.random.key(1), state, np.array([5, 0], np.int32))  # X takes the middle right
    view = ttt.render_text(state, 1)
    assert ttt.action_names(0)[5] == f"{cols[2]}{rows[1]}"
    assert f"{rows[1]}  . | . | {x}" in view and "   " + "   ".join(cols) in view
    assert f"play {o} ({x} moves first)" in view and "X" not in view


def test_the_llm_player_plays_the_relabeled_text_and_the_same_moves(tmp_path):
    """A scripted LLM that answers the first legal move plays the same game either way: only
    the words differ, and the transcript speaks the made-up ones."""
    ttt = alem.make("tic_tac_toe-v0")
    out = {}
    for obfuscate in (False, True):
        llm = LLMPlayer(ttt, backend="scripted", script="first", obfuscate=obfuscate, seed=3)
        run_dir = tmp_path / str(obfuscate)
        res = evaluate(
            ttt, [llm, make_player("random", ttt)], episodes=4, num_envs=2, seed=0, run_dir=run_dir
        )
        out[obfuscate] = (
            res,
            list(read_jsonl(run_dir / "episodes.jsonl")),
            list(read_jsonl(run_dir / "transcripts.jsonl")),
        )
    (plain, eps_plain, _), (hidden, eps_hidden, records) = out[False], out[True]
    assert [e["returns"] for e in eps_plain] == [e["returns"] for e in eps_hidden]
    assert hidden["seats"][0]["invalid_rate"] == 0.0
    relabeled = ttt.relabeled(3)
    for r in records:
        assert set(r["legal"]) <= set(relabeled.action_names(0)) and r["action_name"] in r["legal"]
        system = r["attempts"][0]["messages"][0]["content"]
        assert "tic-tac-toe" not in system and relabeled.labels("game")[0] in system
    info = hidden["players_info"][0]
    assert info["obfuscate"] is True and info["labels"]["game"] == list(relabeled.labels("game"))
    assert plain["players_info"][0]["obfuscate"] is False


def test_obfuscation_is_refused_where_it_cannot_work():
    with pytest.raises(alem.AlemError, match="hanabi-v0 has no relabelable text vocabulary"):
        LLMPlayer(alem.make("hanabi-v0"), backend="scripted", obfuscate=True)
    with pytest.raises(alem.AlemError, match="llm.obfuscate must be true or false, got 'yes'"):
        LLMPlayer(alem.make("tic_tac_toe-v0"), backend="scripted", obfuscate="yes")
