"""Rendered views (text and JSON) never show other players' hidden information (generic, through the env API).

An agent's observation is its information by the env contract. Deals that give
agent ``i`` the same observation after the same public play must render the
same text for ``i``; if the text differs, it depends on something ``i`` must
not see (another player's cards or dice). Checked for every stochastic
text-capable game in the registry (card and dice games), with a leaking env as
the positive control. Games only: their observations are information states
(everything the agent knows); gridworlds with egocentric observations may
rightly show an agent its own absolute position, which its observation omits.
"""

from __future__ import annotations

import json
from collections import defaultdict

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.text_hooks import TextHooks

ROWS, STEPS = 32, 4


def _shown(env: MultiAgentEnv, state, agent: int) -> str:
    """What ``agent`` is shown of ``state``: its text view and its JSON view."""
    return env.render_text(state, agent) + "\n" + json.dumps(env.to_json(state, agent))


def render_pairs_checked(env: MultiAgentEnv, reset=None, step=None) -> int:
    """Play the first legal action in ``ROWS`` deals; return how many same-view pairs were compared.

    ``reset(key, params)`` / ``step(key, state, actions, params)`` default to ``jax.jit`` of the
    env's; registered ids pass their harness's programs (tests/conftest.py).
    """
    params = env.default_params
    reset, step = reset or jax.jit(env.reset), step or jax.jit(env.step)
    rows = [reset(k, params) for k in jax.random.split(jax.random.key(0), ROWS)]
    compared = 0
    for t in range(STEPS):
        host = jax.device_get(rows)
        live = [b for b, (_, ts) in enumerate(host) if not (ts.terminated or ts.truncated)]
        for i in range(env.num_agents):
            groups = defaultdict(list)
            for b in live:
                groups[np.asarray(host[b][1].obs[i]).tobytes()].append(b)
            for same in list(groups.values())[:12]:
                views = {b: _shown(env, host[b][0], i) for b in same[:3]}
                first = views[same[0]]
                for b, v in views.items():
                    assert v == first, (
                        f"{env.id}: agent {i} has the same observation in deals {same[0]} and {b} "
                        f"(step {t}) but is shown different text:\n{first}\n---\n{v}"
                    )
                compared += len(views) - 1
        key = jax.random.key(t + 1)
        rows = [
            step(key, st, jnp.argmax(ts.action_mask, axis=-1).astype(jnp.int32), params) for st, ts in rows
        ]
    return compared


@struct.dataclass
class DealState:
    cards: jax.Array  # int32 [2]
    done: jax.Array


class CardPeek(TextHooks, MultiAgentEnv):
    """One card each, one move each; ``leak=True`` renders the opponent's card too."""

    def __init__(self, leak: bool, leak_json: bool = False):
        super().__init__()
        self.leak, self.leak_json, self.agents = leak, leak_json, ("p0", "p1")
        self.id = f"card_peek_{'leak' if leak or leak_json else 'ok'}-v0"

    @property
    def default_params(self):
        return EnvParams()

    def observation_space(self, agent=None):
        one = spaces.Box(0.0, 1.0, (3,))
        return one if agent is not None else spaces.stack([one, one])

    def action_space(self, agent=None):
        one = spaces.Discrete(2)
        return one if agent is not None else spaces.stack([one, one])

    def observe(self, state, params):
        return jax.nn.one_hot(state.cards, 3)

    def _ts(self, state, params):
        z = jnp.zeros((2,), jnp.float32)
        ones = jnp.ones((2, 2), bool)
        return TimeStep(
            self.observe(state, params), ones, z, state.done, jnp.bool_(False), ~state.done & ones[:, 0]
        )

    def reset_env(self, key, params):
        state = DealState(jax.random.randint(key, (2,), 0, 3), jnp.bool_(False))
        return state, self._ts(state, params)

    def step_env(self, key, state, actions, params):
        state = state.replace(done=jnp.bool_(True))
        return state, self._ts(state, params)

    def rules_text(self, params=None, agent=0):
        return "Each player holds one card from J, Q, K and makes one move."

    def action_names(self, agent=0):
        return ["pass", "bet"]

    def render_text(self, state, agent=None, params=None):
        cards = "JQK"
        text = f"Your card: {cards[int(state.cards[agent])]}."
        if self.leak:
            text += f" Opponent's card: {cards[int(state.cards[1 - agent])]}."
        return text

    def json_view(self, state, agent, params=None):
        out = {"card": "JQK"[int(state.cards[agent])]}
        if self.leak_json:
            out["opponent_card"] = "JQK"[int(state.cards[1 - agent])]
        return out


def test_the_check_catches_a_leaking_render():
    assert render_pairs_checked(CardPeek(leak=False)) > 10
    with pytest.raises(AssertionError, match="Opponent's card"):
        render_pairs_checked(CardPeek(leak=True))
    with pytest.raises(AssertionError, match="opponent_card"):
        render_pairs_checked(CardPeek(leak=False, leak_json=True))


HIDDEN_INFO_ENVS = sorted(
    k
    for k, spec in alem.registry().items()
    if spec.text and spec.family == "games" and alem.make(k).stochastic
)


@pytest.mark.parametrize("env_id", HIDDEN_INFO_ENVS)
def test_renders_show_only_what_the_agent_observes(env_id, harness):
    h = harness(env_id)
    compared = render_pairs_checked(h.env, lambda k, p: h.reset(k), lambda k, s, a, p: h.step(k, s, a))
    if compared == 0:
        pytest.skip(f"{env_id}: no two deals gave an agent the same observation; nothing to compare")
