"""Prompt modes (``llm.legal_moves``, ``llm.rules``) and the harness hash, through a real local
HTTP server and the evaluator; every text env's turn under ``llm.legal_moves=none``."""

from __future__ import annotations

import json
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.evaluate import evaluate
from alem.players import FunctionPlayer
from alem.rundir import read_jsonl
from alem.text.llm.player import LLMPlayer
from alem.text.llm.prompts import ANSWER_FORMAT, PromptMode, harness_hash, system_prompt, turn_prompt
from alem.text.llm.testing import FakeChatServer
from alem.text.train.pool import TextEnvPool
from tests.ids import contract_ids

FAST = dict(backend="openai", model="fake-model", backoff_s=0.001, backoff_cap_s=0.01, timeout_s=5.0)
CELLS = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]


@pytest.fixture(scope="module")
def ttt():
    return alem.make("tic_tac_toe-v0")


def _last_legal(env):
    """O takes the last empty cell, so X's first-legal habit keeps its own cells free."""
    return FunctionPlayer(
        lambda key, turn: (
            turn.action_mask.shape[-1] - 1 - jnp.argmax(turn.action_mask[..., ::-1], axis=-1)
        ).astype(jnp.int32),
        "last",
    )


def _play(env, llm, run_dir, episodes=1):
    res = evaluate(
        env, [llm, _last_legal(env)], episodes=episodes, num_envs=1, seed=0, run_dir=run_dir, openings=0
    )
    return res, list(read_jsonl(run_dir / "transcripts.jsonl"))


def test_without_the_legal_list_an_illegal_reply_is_invalid_and_the_reprompt_names_it(ttt, tmp_path):
    """The server answers the first action its request allows; without the legal list that is
    the vocabulary's first, a1, which is taken after X's first move: every later decision is
    illegal, re-prompted (naming a1, listing nothing), then played by the fallback."""
    with FakeChatServer(script="first") as srv:
        llm = LLMPlayer(ttt, base_url=srv.base_url, legal_moves="none", reprompts=1, invalid="first", **FAST)
        res, records = _play(ttt, llm, tmp_path)
        bodies = list(srv.requests)
    system = records[0]["attempts"][0]["messages"][0]["content"]
    assert "Actions are named: " + ", ".join(CELLS) in system and "three marks in a row" in system
    for r in records:
        turn = r["attempts"][0]["messages"][-1]["content"]
        assert "Legal actions" not in turn and "Your move." in turn
    # structured output may name any action (an enum of the legal ones would give them away)
    enums = {
        tuple(b["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]) for b in bodies
    }
    assert enums == {tuple(CELLS)}
    assert [a["status"] for a in records[0]["attempts"]] == ["ok"] and records[0]["action_name"] == "a1"
    for r in records[1:]:
        assert [a["status"] for a in r["attempts"]] == ["illegal", "illegal"]
        feedback = r["attempts"][1]["messages"][-1]["content"]
        assert feedback.startswith('"a1" is not a legal action now.') and "Legal actions" not in feedback
        assert r["fallback"] == "first" and r["action_name"] == r["legal"][0]
    seat = res["seats"][0]
    assert seat["llm_illegal"] == 2 * (len(records) - 1) and seat["llm_fallbacks"] == len(records) - 1
    info = res["players_info"][0]
    assert (info["legal_moves"], info["rules"]) == ("none", "full")
    assert info["harness"] == harness_hash(PromptMode(legal_moves="none"))


def test_the_same_player_with_and_without_the_legal_list(ttt, tmp_path):
    """A random-move player that is never wrong with the list makes illegal moves without it."""
    rates = {}
    for mode in ("list", "none"):
        llm = LLMPlayer(ttt, backend="scripted", script="random", legal_moves=mode, reprompts=0)
        res, _ = _play(ttt, llm, tmp_path / mode, episodes=8)
        rates[mode] = res["seats"][0]["invalid_rate"]
    # about 0.3 expected (a random cell of nine, a third to half of them taken); 8 episodes
    # keep the sample's rate well above the bound
    assert rates["list"] == 0.0 and rates["none"] > 0.1


def test_short_rules_name_the_game_and_seat_only(ttt):
    full = system_prompt(ttt, ttt.default_params, 1)
    short = system_prompt(ttt, ttt.default_params, 1, PromptMode(rules="short"))
    assert short.startswith("You are player 1 in tic-tac-toe and play O; your opponent plays X.\n\n")
    assert "three marks in a row" in full and "three marks in a row" not in short
    assert "Legal actions" in turn_prompt("board", ["a1"]) and "a1" not in turn_prompt(
        "board", ["a1"], PromptMode(legal_moves="none")
    )


def test_every_text_env_summarises_its_rules_in_one_sentence():
    for env_id, spec in alem.registry().items():
        if not spec.text or not str(spec.entry_point).startswith("alem."):
            continue  # not a text env, or one another test registered
        env = alem.make(env_id)
        for agent in range(env.num_agents):
            summary = env.rules_summary(env.default_params, agent)
            assert summary and "\n" not in summary and summary[-1] in ".!?", (env_id, summary)
            assert len(summary) < len(env.rules_text(env.default_params, agent)), env_id


def test_the_harness_hash_names_templates_parser_and_mode():
    modes = [PromptMode(lm, r) for lm in ("list", "none") for r in ("full", "short")]
    hashes = [harness_hash(m) for m in modes]
    assert len(set(hashes)) == 4 and hashes[0] == harness_hash()
    assert all(len(h) == 16 and int(h, 16) >= 0 for h in hashes)


def test_unknown_modes_are_refused_by_name(ttt):
    with pytest.raises(
        alem.AlemError, match=r"llm.legal_moves must be one of \['list', 'none'\], got 'hidden'"
    ):
        LLMPlayer(ttt, backend="scripted", legal_moves="hidden")
    with pytest.raises(alem.AlemError, match=r"llm.rules must be one of \['full', 'short'\], got 'none'"):
        LLMPlayer(ttt, backend="scripted", rules="none")
    with pytest.raises(alem.AlemError, match="prompt_mode must be a PromptMode"):
        TextEnvPool(ttt, 2, prompt_mode="none")


def test_the_training_pool_prompts_in_the_same_modes(ttt):
    pool = TextEnvPool(ttt, 2, prompt_mode=PromptMode(legal_moves="none", rules="short"))
    turns = pool.reset(list(range(2)))
    messages = turns[0].messages
    assert messages[0]["content"] == system_prompt(ttt, ttt.default_params, 0, PromptMode("none", "short"))
    assert "Legal actions" not in messages[-1]["content"]
    step = pool.step([json.dumps({"action": "a1"}), "b2"])
    assert [d.status for d in step.decisions] == ["ok", "ok"]


# ---------------------------------------------------------------- llm.legal_moves=none hides the moves
TEXT_IDS = sorted(k for k, spec in alem.registry().items() if spec.text)
#: The default tier's ids: SMAX's maps by its representatives (tests/ids.py: one code path, the
#: smoke sweep's compiled programs); the exhaustive variant below takes every text id.
SWEPT_TEXT_IDS = [i for i in contract_ids() if i in TEXT_IDS]
LIST, NONE = PromptMode(), PromptMode(legal_moves="none")
NONE_JSON = PromptMode(legal_moves="none", format="json")
#: What a line says when it offers the seat its moves ("It is your turn: pass or bet").
OFFER = re.compile(r"\b(?:your turn|your move|legal|options?|you (?:may|can)|choose)\b", re.IGNORECASE)


def _named(line: str, names: list[str]) -> list[str]:
    """The ``names`` that ``line`` mentions as whole words (case ignored)."""
    low = line.lower()
    return [n for n in names if re.search(rf"(?<![a-z0-9]){re.escape(n.lower())}(?![a-z0-9])", low)]


def _check_turns_hide_the_moves(env, params, states) -> int:
    """Every acting seat's turn under ``legal_moves=none`` (text and JSON) offers none of its legal
    moves by name, and what the listing mode's view has beyond it names legal moves only (the state
    is told the same). Returns how many turns were checked.

    A legal move's name elsewhere in a line (a board coordinate, a direction to the food, a past
    round's move) is the state, not an offer: a line leaks when it names a legal move and says
    that it is the seat's turn or what it may do."""
    checked = 0
    for state in states:
        mask = np.asarray(env.action_mask(state, params))
        for agent in map(int, np.flatnonzero(mask.any(-1))):
            legal = env.legal_action_names(state, agent, params)
            bare = NONE.view(env, state, agent, params)
            for mode, view in ((NONE, bare), (NONE_JSON, NONE_JSON.view(env, state, agent, params))):
                prompt = turn_prompt(view, legal, mode)
                assert prompt.endswith(f"Your move. Answer with {ANSWER_FORMAT}.")
                for line in prompt.splitlines():
                    named = _named(line, legal)
                    assert not (named and OFFER.search(line)), (
                        f"{env.id}: seat {agent}'s turn under llm.legal_moves=none ({mode.format}) offers "
                        f"its legal moves {named}: {line!r}"
                    )
            bare_lines = set(bare.splitlines())
            for line in LIST.view(env, state, agent, params).splitlines():
                assert line in bare_lines or _named(line, legal), (
                    f"{env.id}: legal_moves=none drops a line that names no legal move: {line!r}"
                )
            checked += 1
    return checked


def _rows(batch, n: int) -> list:
    return [jax.tree.map(lambda x, b=b: x[b], batch) for b in range(n)]


@pytest.mark.parametrize("env_id", SWEPT_TEXT_IDS)
def test_no_text_env_offers_its_moves_in_a_turn_without_the_legal_list(env_id, harness):
    """After reset and after one random legal step (the smoke program's states, two deals and
    two seeds): an acting seat's turn text names no legal move as available."""
    h = harness(env_id)
    states = []
    for seed in (0, 1):
        before, _, after, _ = jax.device_get(h.smoke(jax.random.key(seed), h.params))
        states += _rows(before, 2) + _rows(after, 2)
    assert _check_turns_hide_the_moves(h.env, h.params, states) > 0


@pytest.mark.exhaustive
@pytest.mark.parametrize("env_id", SWEPT_TEXT_IDS)  # SMAX by its representatives: one text code path
def test_no_text_env_offers_its_moves_a_few_random_steps_in(env_id, harness):
    """The same check a few random legal steps into an episode (the conformance suite's programs)."""
    h = harness(env_id)
    state, ts = h.reset(jax.random.key(3))
    states = []
    for t in range(6):
        states.append(jax.device_get(state))
        if bool(ts.done):
            break
        state, ts = h.step(jax.random.key(100 + t), state, h.random_actions(jax.random.key(200 + t), ts))
    assert _check_turns_hide_the_moves(h.env, h.params, states) > 0


def test_kuhn_poker_without_the_list_says_whose_turn_it_is_but_not_the_options():
    kuhn = alem.make("kuhn_poker-v0")
    state, _ = kuhn.reset(jax.random.key(0))
    listed = LIST.view(kuhn, state, 0, kuhn.default_params)
    bare = NONE.view(kuhn, state, 0, kuhn.default_params)
    assert listed.endswith("It is your turn: pass (check) or bet (1 chip).")
    assert bare.endswith("It is your turn.") and "pass" not in bare and "bet" not in bare
    assert bare == kuhn.render_text(state, 0, moves=False) and listed == kuhn.render_text(state, 0)


def test_a_wrapped_env_hides_its_moves_and_one_without_the_flag_is_refused_by_name():
    from alem.wrappers.base import Wrapper

    kuhn = alem.make("kuhn_poker-v0")

    class OldKuhn(type(kuhn)):  # a text env written before render_text took ``moves``
        def render_text(self, state, agent=None, params=None):
            return super().render_text(state, agent, params)

    state, _ = kuhn.reset(jax.random.key(0))
    bare = NONE.view(kuhn, state, 0, kuhn.default_params)
    assert NONE.view(Wrapper(kuhn), state, 0, kuhn.default_params) == bare
    old = OldKuhn()
    assert LIST.view(old, state, 0, kuhn.default_params) == LIST.view(kuhn, state, 0, kuhn.default_params)
    with pytest.raises(alem.AlemError, match=r"^OldKuhn: render_text takes no moves flag, so llm"):
        NONE.view(old, state, 0, kuhn.default_params)


def test_chess_without_the_legal_list_names_its_move_format_not_4674_actions():
    """Under llm.legal_moves=none the system prompt listed every action name (chess: 4,674, about
    36,000 tokens, refused by a 2,048-token model); a game with an ``action_format`` names the
    format instead, and the JSON view drops its ``legal_moves``."""
    env = alem.make("chess-v0")
    params = env.default_params
    prompt = system_prompt(env, params, 0, NONE)
    assert "UCI" in prompt and "e2e4" in prompt and len(prompt) < 4000 and "a1-off-board" not in prompt
    ttt = alem.make("tic_tac_toe-v0")
    assert all(n in system_prompt(ttt, ttt.default_params, 0, NONE) for n in ttt.action_names(0))
    state, _ = env.reset(jax.random.key(0))
    seen = json.loads(NONE_JSON.view(env, state, 0, params))
    assert "legal_moves" not in seen and "fen" in {k.lower() for k in seen}
    assert "legal_moves" in json.loads(PromptMode(format="json").view(env, state, 0, params))
