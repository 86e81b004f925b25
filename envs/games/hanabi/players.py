"""The rule-based Hanabi partner: a traced function of one env's state, and its arena player."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alem.envs.games.hanabi.env import Hanabi
from alem.envs.games.hanabi.types import HanabiState
from alem.players import Player, Turn

__all__ = ["rule_actions", "RulePlayer"]


def rule_actions(env: Hanabi, state: HanabiState) -> jax.Array:
    """The rule-based player's move for the player to move in ``state`` (one env, traced).

    It reads only what that player may see (other hands, its own hint knowledge, the
    board), in this order of preference:

    1. play a card its knowledge proves playable (every card still possible fits a firework);
    2. with a token, hint the next player about a playable card they do not fully know
       (the rank when it is unknown to them, else the colour);
    3. discard a card its knowledge proves useless (every possible card is already played),
       else its oldest card without any hint, else its oldest card;
    4. otherwise hint the next player's oldest card's rank (always legal with a token).

    Anything illegal falls back to the lowest legal move.
    """
    P, H, C, R = env.num_players, env.hand_size, env.colours, env.ranks
    p = state.player
    fw = state.fireworks
    ids = jnp.arange(C * R)
    playable_id = fw[ids // R] == ids % R
    useless_id = ids % R < fw[ids // R]
    held = state.hands[p] >= 0
    possible = (state.colour_plausible[p][:, :, None] & state.rank_plausible[p][:, None, :]).reshape(H, C * R)
    known_playable = held & possible.any(1) & ~(possible & ~playable_id).any(1)
    known_useless = held & possible.any(1) & ~(possible & ~useless_id).any(1)
    hinted = (state.colour_hinted[p] >= 0) | (state.rank_hinted[p] >= 0)

    q = (p + 1) % P
    theirs = state.hands[q]
    their_playable = (theirs >= 0) & playable_id[jnp.maximum(theirs, 0)]
    unknown = (state.colour_hinted[q] < 0) | (state.rank_hinted[q] < 0)
    to_hint = their_playable & unknown
    s = jnp.argmax(to_hint)
    card = jnp.maximum(theirs[s], 0)
    hint_rank = state.rank_hinted[q, s] < 0
    # Action ids of "hint rank/colour to the next player" (target offset 1).
    rank_move = 2 * H + (P - 1) * C + card % R
    colour_move = 2 * H + card // R
    hint = jnp.where(hint_rank, rank_move, colour_move)
    discard = jnp.where(
        known_useless.any(),
        jnp.argmax(known_useless),
        jnp.where((held & ~hinted).any(), jnp.argmax(held & ~hinted), 0),
    )
    can_hint = state.info_tokens > 0
    can_discard = state.info_tokens < env.max_info
    fallback_hint = 2 * H + (P - 1) * C + jnp.maximum(theirs[0], 0) % R
    action = jnp.where(
        known_playable.any(),
        H + jnp.argmax(known_playable),
        jnp.where(
            can_hint & to_hint.any(),
            hint,
            jnp.where(can_discard, discard, jnp.where(can_hint, fallback_hint, H)),
        ),
    ).astype(jnp.int32)
    mask = env.action_mask(state, env.default_params)[p]
    return jnp.where(mask[action], action, jnp.argmax(mask)).astype(jnp.int32)


class RulePlayer(Player):
    """The rule-based Hanabi partner of :func:`rule_actions` as an arena player (``rule``)."""

    name = "rule"

    def __init__(self, env=None):
        del env

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        del key
        env = turn.env
        return jax.vmap(lambda s: rule_actions(env, s))(turn.state)
