"""Matrix games: tables against OpenSpiel and the literature, dynamics, params, text."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.games.matrix import MatrixGame

pyspiel = pytest.importorskip("pyspiel")

OPENSPIEL = {
    "stag_hunt": "matrix_sh",
    "chicken": "matrix_cd",
    "matching_pennies": "matrix_mp",
    "rock_paper_scissors": "matrix_rps",
    "battle_of_the_sexes": "matrix_bos",
    "coordination": "matrix_coordination",
}


def pure_nash(table: np.ndarray) -> set[tuple[int, int]]:
    """Pure Nash equilibria of a 2-player game [2, A, A] (independent of alem's code)."""
    row, col = table
    return {
        (i, j)
        for i in range(row.shape[0])
        for j in range(row.shape[1])
        if row[i, j] >= row[:, j].max() and col[i, j] >= col[i, :].max()
    }


def env_table(env_id: str, **kwargs) -> np.ndarray:
    """Payoffs observed by stepping the env through every joint action."""
    env = alem.make(env_id, **kwargs)
    a = env.num_actions
    state, _ = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    out = np.zeros((env.num_agents,) + (a,) * env.num_agents, np.float32)
    for joint in itertools.product(range(a), repeat=env.num_agents):
        _, ts = step(jax.random.key(1), state, jnp.array(joint))
        out[(slice(None), *joint)] = np.asarray(ts.reward)
    return out


@pytest.mark.parametrize("name", sorted(OPENSPIEL))
def test_tables_match_openspiel(name):
    game = pyspiel.load_matrix_game(OPENSPIEL[name])
    expected = np.stack([game.row_utilities(), game.col_utilities()]).astype(np.float32)
    np.testing.assert_array_equal(env_table(f"{name}-v0"), expected)
    names = [game.row_action_name(i).lower() for i in range(game.num_rows())]
    if name != "coordination":
        assert alem.make(f"{name}-v0").action_names() == names


def test_prisoners_dilemma_is_axelrods_and_strategically_like_openspiel():
    t = env_table("prisoners_dilemma-v0")
    r_, s_, t_, p_ = t[0, 0, 0], t[0, 0, 1], t[0, 1, 0], t[0, 1, 1]
    assert (r_, s_, t_, p_) == (3, 0, 5, 1)
    assert t_ > r_ > p_ > s_ and 2 * r_ > t_ + s_
    np.testing.assert_array_equal(t[1], t[0].T)  # symmetric
    ref = pyspiel.load_matrix_game("matrix_pd")
    ref_t = np.stack([ref.row_utilities(), ref.col_utilities()])
    assert pure_nash(t) == pure_nash(ref_t) == {(1, 1)}


@pytest.mark.parametrize(
    "env_id, equilibria",
    [
        ("stag_hunt-v0", {(0, 0), (1, 1)}),
        ("chicken-v0", {(0, 1), (1, 0)}),
        ("matching_pennies-v0", set()),
        ("rock_paper_scissors-v0", set()),
        ("battle_of_the_sexes-v0", {(0, 0), (1, 1)}),
        ("climbing-v0", {(0, 0), (1, 1)}),
        ("penalty-v0", {(0, 0), (1, 1), (2, 2)}),
    ],
)
def test_pure_equilibria(env_id, equilibria):
    assert pure_nash(env_table(env_id)) == equilibria


def test_climbing_and_penalty_tables_from_claus_boutilier():
    np.testing.assert_array_equal(env_table("climbing-v0")[0], [[11, -30, 0], [-30, 7, 6], [0, 0, 5]])
    pen = env_table("penalty-v0", k=-50.0)
    np.testing.assert_array_equal(pen[0], [[10, 0, -50], [0, 2, 0], [-50, 0, 10]])
    np.testing.assert_array_equal(pen[0], pen[1])


def test_zero_sum_games_sum_to_zero():
    for name in ("matching_pennies-v0", "rock_paper_scissors-v0"):
        assert np.all(env_table(name).sum(0) == 0)


def test_coordination_size_is_configurable():
    t = env_table("coordination-v0", num_actions=4)
    np.testing.assert_array_equal(t[0], np.eye(4))
    assert alem.make("coordination-v0", num_actions=4).action_names()[3] == "option_3"


def test_history_observation_is_ego_centric_one_hot():
    env = alem.make("iterated_prisoners_dilemma-v0", history_len=2)
    state, ts = env.reset(jax.random.key(0))
    none = [1, 0, 0]
    np.testing.assert_array_equal(ts.obs[0], none * 4)
    state, ts = env.step(jax.random.key(1), state, jnp.array([0, 1]))  # player 0 C, player 1 D
    c, d = [0, 1, 0], [0, 0, 1]
    np.testing.assert_array_equal(ts.obs[0], c + d + none + none)
    np.testing.assert_array_equal(ts.obs[1], d + c + none + none)
    state, ts = env.step(jax.random.key(2), state, jnp.array([1, 1]))
    np.testing.assert_array_equal(ts.obs[0], d + d + c + d)
    fixed = alem.make("iterated_prisoners_dilemma-v0", ego_centric=False)
    s, _ = fixed.reset(jax.random.key(0))
    _, ts = fixed.step(jax.random.key(1), s, jnp.array([0, 1]))
    np.testing.assert_array_equal(ts.obs[0], ts.obs[1])


def test_horizon_terminates_or_truncates():
    for trunc in (False, True):
        env = alem.make("iterated_stag_hunt-v0", num_rounds=3, truncate_at_horizon=trunc)
        state, ts = env.reset(jax.random.key(0))
        flags = []
        for t in range(3):
            state, ts = env.step(jax.random.key(t), state, jnp.array([0, 0]))
            flags.append((bool(ts.terminated), bool(ts.truncated)))
        assert flags[:2] == [(False, False)] * 2
        assert flags[2] == ((False, True) if trunc else (True, False))


def test_continue_prob_gives_geometric_lengths():
    env = alem.make("iterated_prisoners_dilemma-v0", num_rounds=10_000, continue_prob=0.8)
    assert env.stochastic and not alem.make("iterated_prisoners_dilemma-v0").stochastic
    params = env.default_params

    def length(key):
        state, ts = env.reset(key, params)

        def body(c, k):
            state, alive, n = c
            state, ts = env.step(k, state, jnp.array([0, 0]), params)
            return (state, alive & ~ts.done, n + alive), None

        (_, _, n), _ = jax.lax.scan(body, (state, jnp.bool_(True), 0), jax.random.split(key, 200))
        return n

    lengths = jax.jit(jax.vmap(length))(jax.random.split(jax.random.key(0), 4000))
    # Geometric with success prob 0.2: mean 5, std sqrt(0.8)/0.2 ~ 4.47 -> s.e. 0.07.
    assert abs(float(lengths.mean()) - 5.0) < 0.3


def test_vmap_over_payoff_params():
    env = alem.make("penalty-v0")
    ks = jnp.array([-100.0, -10.0, 0.0])
    tables = jax.vmap(lambda k: env.default_params.payoffs.at[:, 0, 2].set(k).at[:, 2, 0].set(k))(ks)
    params = jax.vmap(lambda p: env.default_params.replace(payoffs=p))(tables)
    keys = jax.random.split(jax.random.key(0), 3)
    state, _ = jax.jit(jax.vmap(env.reset))(keys, params)
    acts = jnp.tile(jnp.array([0, 2]), (3, 1))
    _, ts = jax.jit(jax.vmap(env.step))(keys, state, acts, params)
    np.testing.assert_array_equal(ts.reward[:, 0], ks)


def test_public_goods_payoffs():
    env = alem.make("public_goods-v0", num_agents=4, multiplier=2.0, endowment=1.0)
    state, _ = env.reset(jax.random.key(0))
    _, ts = env.step(jax.random.key(1), state, jnp.array([1, 1, 0, 0]))
    # pot 2 * 2 = 4 shared by 4 -> 1 each; keepers also keep their 1.
    assert ts.reward.tolist() == [1.0, 1.0, 2.0, 2.0]
    _, all_c = env.step(jax.random.key(1), state, jnp.ones(4, jnp.int32))
    _, all_k = env.step(jax.random.key(1), state, jnp.zeros(4, jnp.int32))
    assert all_c.reward.tolist() == [2.0] * 4 and all_k.reward.tolist() == [1.0] * 4
    assert env.observation_space().shape == (4, 1 * 4 * 3)


def test_custom_three_player_game():
    rng = np.random.default_rng(0)
    table = rng.integers(-3, 4, size=(3, 2, 2, 2)).astype(np.float32)
    env = MatrixGame("custom", payoffs=table)
    assert env.num_agents == 3 and env.action_names() == ["a", "b"]
    state, _ = env.reset(jax.random.key(0))
    _, ts = env.step(jax.random.key(0), state, jnp.array([1, 0, 1]))
    np.testing.assert_array_equal(ts.reward, table[:, 1, 0, 1])
    with pytest.raises(alem.EnvArgumentError, match=r"\[N, A, ..., A\]"):
        MatrixGame("custom", payoffs=np.zeros((3, 2, 2)))
    with pytest.raises(alem.EnvArgumentError, match="only accepted with game='custom'"):
        MatrixGame("stag_hunt", payoffs=table)


def test_text_hooks_describe_payoffs_and_history():
    env = alem.make("iterated_chicken-v0", num_rounds=5)
    rules = env.rules_text(agent=1)
    assert "You are player 1" in rules and "up to 5 rounds" in rules
    assert "you play dare and player 0 plays chicken: you get 4, player 0 gets 1." in rules
    state, _ = env.reset(jax.random.key(0))
    state, _ = env.step(jax.random.key(0), state, jnp.array([0, 1]))
    view = env.render_text(state, agent=1)
    assert "Round 2 of 5" in view and "you played chicken, player 0 played dare" in view
    assert "Your total payoff so far: 1" in view
    img = env.render_rgb(state)
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
