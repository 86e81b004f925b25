"""Shared fixtures for the games tests.

``poker_lockstep(env, spiel_game, num_games, seed, num_steps)`` (Kuhn poker, Leduc
hold'em): plays ``num_games`` random games in alem (one jitted, vmapped scan; the
player to move mostly plays a random legal action, sometimes any index in or out of
range; the other players send junk), then replays each in OpenSpiel, feeding its
chance nodes the cards alem dealt (in deal order) and an illegal move as the first
legal action, and asserts at every step: same player to move, same legal action set,
same terminal flag, every seat's observation equal to OpenSpiel's
``information_state_tensor``, ``info["illegal_action"]`` set exactly for an illegal
move of the player to move, zero rewards before the end and OpenSpiel's returns at
the end. Returns the alem trajectories for coverage checks.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest


@functools.cache
def _playouts(env, num_games: int, num_steps: int):
    # Every random number is drawn up front in a few batched calls: threefry inside a vmapped
    # scan body makes XLA compile for tens of seconds. The step key is unused by these envs.
    n, a = env.num_agents, env.num_actions

    def play(key):
        k_reset, k_u, k_junk, k_bad = jax.random.split(key, 4)
        u = jax.random.uniform(k_u, (num_games, num_steps, n))
        junk = jax.random.randint(k_junk, (num_games, num_steps, n), -3, a + 3)
        bad = jax.random.uniform(k_bad, (num_games, num_steps)) < 0.125

        def one(k, u, junk, bad):
            state, ts = env.reset(k)

            def body(carry, x):
                state, ts = carry
                u, junk, bad = x
                # The player to move: a random legal action, or (1 in 8) any index, often an
                # illegal or out-of-range one; everyone else: junk, which must be ignored.
                count = ts.action_mask.sum(-1)
                pick = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
                legal = jnp.argmax(jnp.cumsum(ts.action_mask, -1) > pick[:, None], -1).astype(jnp.int32)
                acts = jnp.where(ts.acting & ~bad, legal, junk)
                state, ts = env.step(k, state, acts)
                return (state, ts), (acts, state, ts)

            _, traj = jax.lax.scan(body, (state, ts), (u, junk, bad))
            return state, ts, traj

        return jax.vmap(one)(jax.random.split(k_reset, num_games), u, junk, bad)

    return jax.jit(play)


def _check_node(spiel, mask, acting, obs, terminated, where):
    n = spiel.num_players()
    assert bool(terminated) == spiel.is_terminal(), where
    for p in range(n):
        np.testing.assert_array_equal(obs[p], spiel.information_state_tensor(p), err_msg=where)
    if spiel.is_terminal():
        assert not acting.any() and not mask.any(), where
        return
    player = spiel.current_player()
    assert np.flatnonzero(acting).tolist() == [player], where
    assert np.flatnonzero(mask[player]).tolist() == spiel.legal_actions(), where
    assert not np.delete(mask, player, axis=0).any(), where


def lockstep(env, spiel_game, num_games: int, seed: int, num_steps: int):
    state0, ts0, (acts, states, tss) = jax.device_get(
        _playouts(env, num_games, num_steps)(jax.random.key(seed))
    )
    cards = np.asarray(state0.cards)
    n = spiel_game.num_players()
    for g in range(num_games):
        spiel = spiel_game.new_initial_state()
        dealt = iter(cards[g].tolist())

        def feed_chance(spiel=spiel, dealt=dealt):
            while spiel.is_chance_node():
                spiel.apply_action(next(dealt))

        feed_chance()
        _check_node(
            spiel, ts0.action_mask[g], ts0.acting[g], ts0.obs[g], ts0.terminated[g], f"game {g} start"
        )
        for t in range(num_steps):
            if spiel.is_terminal():
                break
            player, legal = spiel.current_player(), spiel.legal_actions()
            played = int(acts[g, t, player])
            # illegal_action="replace": an illegal move becomes the first legal action.
            illegal = played not in legal
            assert tss.info["illegal_action"][g, t].tolist() == [p == player and illegal for p in range(n)]
            spiel.apply_action(legal[0] if illegal else played)
            feed_chance()
            where = f"game {g} step {t}: {spiel.history_str()}"
            _check_node(
                spiel, tss.action_mask[g, t], tss.acting[g, t], tss.obs[g, t], tss.terminated[g, t], where
            )
            expected = np.asarray(spiel.returns()) if spiel.is_terminal() else np.zeros(spiel.num_players())
            np.testing.assert_array_equal(tss.reward[g, t], expected, err_msg=where)
        assert spiel.is_terminal(), f"game {g} did not end within {num_steps} steps"
    return state0, acts, states, tss


@pytest.fixture(scope="session")
def poker_lockstep():
    return lockstep
