"""The value-based core (alem.algos.qlearning): the behaviours that define PQN, IQL, VDN and QMIX,
each checked so that a wrong implementation fails, on tiny shapes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.algos import make_q_config, make_q_learner
from alem.algos.config import LearnerConfigError
from alem.algos.mixers import QMixer, vdn
from alem.algos.td import epsilon_greedy, linear_epsilon, masked_argmax, masked_max, polyak, q_lambda_returns

TINY = dict(num_envs=4, num_steps=4, total_steps=4 * 4 * 8, hidden=(8,), batch_size=16)


def test_qmix_is_monotonic_in_every_agent_value():
    """dQ_tot/dQ_i >= 0 for random parameters, values and states (the abs() on the mixing weights)."""
    mixer = QMixer(embed=8, hyper_hidden=16)
    n, s = 3, 5

    @jax.jit
    def grads_at(key):
        k_p, k_q, k_s = jax.random.split(key, 3)
        # large initial weights too (init_scale=1): monotonicity must not rest on small weights
        params = QMixer(embed=8, hyper_hidden=16, init_scale=1.0).init(k_p, jnp.zeros((n,)), jnp.zeros((s,)))
        q = 3.0 * jax.random.normal(k_q, (256, n))
        state = 3.0 * jax.random.normal(k_s, (256, s))
        return jax.vmap(jax.grad(lambda qq, st: mixer.apply(params, qq, st)))(q, state)

    for seed in range(4):
        grads = grads_at(jax.random.key(seed))
        assert float(grads.min()) >= 0.0
        assert float(grads.max()) > 0.0  # and it does depend on the agents' values


def test_vdn_is_exactly_the_sum_of_the_acting_agents_values():
    q = jnp.array([[1.5, -2.0, 0.25], [0.0, 4.0, -1.0]])
    np.testing.assert_array_equal(vdn(q), np.array([-0.25, 3.0]))
    env = alem.make("mpe/simple_spread-v0")
    learner = make_q_learner(env, make_q_config("pqn_vdn", **TINY))
    acting = jnp.array([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(learner.team_value({}, q, acting, None), np.array([-0.25, -1.0]))


def test_q_lambda_returns_match_a_hand_computed_answer():
    gamma, lam = 0.9, 0.5
    reward = jnp.array([1.0, 0.0, 2.0])
    next_max = jnp.array([0.5, 1.0, 3.0])
    acts = jnp.ones(3, bool)
    # G2 = 2 + .9 * 3 = 4.7; G1 = .9 * (.5 * 4.7 + .5 * 1) = 2.565; G0 = 1 + .9 * (.5 * 2.565 + .5 * .5)
    g = q_lambda_returns(reward, jnp.zeros(3, bool), next_max, acts, gamma, lam)
    np.testing.assert_allclose(g, [2.37925, 2.565, 4.7], rtol=1e-6)
    # an episode ends after step 1: G1 = 0, G0 = 1 + .9 * (.5 * 0 + .5 * .5) = 1.225
    g = q_lambda_returns(reward, jnp.array([False, True, False]), next_max, acts, gamma, lam)
    np.testing.assert_allclose(g, [1.225, 0.0, 4.7], rtol=1e-6)
    # the unit waits at step 1 (another player moves): G0 = 1 + .9 * G1, no bootstrap from step 1
    g = q_lambda_returns(reward, jnp.zeros(3, bool), next_max, jnp.array([False, True, True]), gamma, lam)
    np.testing.assert_allclose(g[0], 1 + 0.9 * 2.565, rtol=1e-6)


def test_epsilon_follows_the_stated_linear_schedule():
    assert float(linear_epsilon(0, 1.0, 0.05, 1000)) == pytest.approx(1.0)
    assert float(linear_epsilon(500, 1.0, 0.05, 1000)) == pytest.approx(0.525)
    assert float(linear_epsilon(5000, 1.0, 0.05, 1000)) == pytest.approx(0.05)
    # the learner's schedule counts env steps per seed: decay over epsilon_fraction of total_steps
    env = alem.make("mpe/simple_spread-v0")
    cfg = make_q_config("pqn", num_envs=4, num_steps=5, total_steps=2000, epsilon_fraction=0.5, hidden=(8,))
    learner = make_q_learner(env, cfg)
    got = [float(learner.epsilon(jnp.int32(u))) for u in (0, 25, 50, 99)]
    assert got == pytest.approx([1.0, 0.525, 0.05, 0.05])
    assert float(learner.epsilon(jnp.int32(25), 2)) == pytest.approx(
        1.0 - 0.95 * 508 / 1000
    )  # (25 * 5 + 2) * 4 env steps


def test_masked_choices_never_pick_an_illegal_move_on_real_tic_tac_toe_positions():
    env = alem.make("tic_tac_toe-v0")
    learner = make_q_learner(env, make_q_config("pqn", **TINY))
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    masks, obs = [], []
    key = jax.random.key(1)
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    st, ts = reset(key, env.default_params)
    for _ in range(60):  # random games: positions with 9..1 legal moves, both players to move
        key, k1, k2 = jax.random.split(key, 3)
        masks.append(ts.action_mask)
        obs.append(ts.obs)
        a = jax.random.categorical(k1, jnp.where(ts.action_mask, 0.0, -jnp.inf))
        st, ts = step(k2, st, a, env.default_params)
        if bool(ts.done):
            st, ts = reset(k2, env.default_params)
    mask, obs = jnp.stack(masks), jnp.stack(obs)  # [B, 2, 9]
    # values that favour the illegal moves: an unmasked argmax would pick one every time
    q = jnp.where(mask, 0.0, 10.0) + jax.random.uniform(jax.random.key(2), mask.shape)
    acting = mask.any(-1)
    for pick in (masked_argmax(q, mask), epsilon_greedy(jax.random.key(3), q, mask, jnp.float32(0.5))):
        legal = jnp.take_along_axis(mask, pick[..., None], -1)[..., 0]
        assert bool(jnp.all(legal | ~acting))
    hidden = learner.q_net.initial_hidden((mask.shape[0], 2))
    _, acts = learner.act(state.params, hidden, obs, mask, jnp.ones(mask.shape[0], bool), jax.random.key(4))
    legal = jnp.take_along_axis(mask, acts[..., None], -1)[..., 0]
    assert bool(jnp.all(legal | ~acting))
    assert (
        float(masked_max(jnp.ones((2, 3)), jnp.zeros((2, 3), bool)).max()) == 0.0
    )  # no legal move: no value


def test_target_network_follows_at_the_stated_cadence_and_rate():
    env = alem.make("coordination-v0")
    cfg = make_q_config("vdn", **{**TINY, "num_steps": 2}, learning_starts=2, target_every=3, tau=0.5)
    learner = make_q_learner(env, cfg)
    update = jax.jit(learner.update)
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    init_target = state.target
    leaves = lambda t: [np.asarray(x) for x in jax.tree.leaves(t)]
    for _ in range(2):
        state, metrics = update(state)
        assert float(metrics["learning"]) == 1.0
        for a, b in zip(leaves(state.target), leaves(init_target), strict=True):
            np.testing.assert_array_equal(a, b)  # not yet: every 3 updates
    state, _ = update(state)
    expected = polyak(init_target, state.params, 0.5)
    for a, b in zip(leaves(state.target), leaves(expected), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert any(not np.allclose(a, b) for a, b in zip(leaves(state.target), leaves(init_target), strict=True))


def test_replay_samples_written_transitions_uniformly_and_in_order():
    env = alem.make("mpe/simple_spread-v0")
    cfg = make_q_config("iql", **{**TINY, "num_steps": 10, "batch_size": 128}, buffer_size=50)
    learner = make_q_learner(env, cfg)
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    t, e = 10, 4
    ids = (jnp.arange(t)[:, None] * 100 + jnp.arange(e)[None, :]).astype(jnp.float32)  # [T, E]
    steps = learner._step_item(state.timestep, jnp.zeros((e, 0)), jnp.zeros((e, 3)), jnp.zeros(e, bool))
    steps = jax.tree.map(lambda x: jnp.broadcast_to(x, (t, *x.shape)), steps)
    steps = steps.replace(reward=jnp.broadcast_to(ids[..., None], (t, e, 3)))
    buffer = jax.jit(learner.buffer.add)(state.buffer, jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), steps))
    sample = jax.jit(jax.vmap(learner.buffer.sample, in_axes=(None, 0)))
    out = sample(buffer, jax.random.split(jax.random.key(1), 60)).experience  # windows [60, B, 2, ...]
    first = np.asarray(out.reward[:, :, 0, 0]).ravel()
    second = np.asarray(out.reward[:, :, 1, 0]).ravel()
    written = {float(i * 100 + j) for i in range(t - 1) for j in range(e)}  # pairs need a successor
    assert set(first.tolist()) <= written
    np.testing.assert_array_equal(second, first + 100)  # the next step of the same env
    counts = np.array([np.sum(first == w) for w in sorted(written)])
    expected = first.size / len(written)
    assert counts.min() > 0.6 * expected and counts.max() < 1.4 * expected


def test_value_mixers_and_replay_are_refused_where_they_do_not_fit():
    with pytest.raises(LearnerConfigError, match="zero-sum"):
        make_q_learner(alem.make("rock_paper_scissors-v0"), make_q_config("vdn", **TINY))
    with pytest.raises(LearnerConfigError, match="do not share one goal"):
        make_q_learner(alem.make("prisoners_dilemma-v0"), make_q_config("qmix", **TINY))
    with pytest.raises(
        LearnerConfigError, match="turn-based.*sequence_length must be at least num_agents \\+ 1 = 3"
    ):
        make_q_learner(alem.make("tic_tac_toe-v0"), make_q_config("iql", **TINY, sequence_length=2))
    make_q_learner(alem.make("tic_tac_toe-v0"), make_q_config("iql", **TINY, sequence_length=3))
    # Left to its default the window is derived: an agent's next turn, or one transition.
    assert make_q_learner(alem.make("tic_tac_toe-v0"), make_q_config("iql", **TINY)).cfg.sequence_length == 3
    assert (
        make_q_learner(alem.make("prisoners_dilemma-v0"), make_q_config("iql", **TINY)).cfg.sequence_length
        == 2
    )
    assert make_q_learner(alem.make("tic_tac_toe-v0"), make_q_config("pqn", **TINY)).cfg.sequence_length == 2
    with pytest.raises(LearnerConfigError, match="box"):
        make_q_learner(
            alem.make("mpe/simple_spread-v0", continuous_actions=True), make_q_config("pqn", **TINY)
        )
    with pytest.raises(LearnerConfigError, match="no history"):
        make_q_config("qmix", recurrent=8)
    with pytest.raises(LearnerConfigError, match="burn_in"):
        make_q_config("qmix", recurrent=8, sequence_length=6, burn_in=5)
    assert alem.make("coordination-v0").cooperative and not alem.make("prisoners_dilemma-v0").cooperative
    make_q_learner(alem.make("coordination-v0"), make_q_config("qmix", **TINY))  # common payoff: fits


@pytest.mark.exhaustive  # three learner compiles (the integration tier trains pqn and qmix end to end)
@pytest.mark.parametrize("name", ["pqn", "vdn", "qmix"])  # PQN, replay, mixer (iql and pqn_vdn: their parts)
def test_every_preset_updates_to_finite_values(name):
    env = alem.make("coordination-v0")
    extra = {"learning_starts": 2} if name in ("iql", "vdn", "qmix") else {}
    learner = make_q_learner(env, make_q_config(name, **TINY, **extra))
    state, metrics = jax.jit(lambda k: learner.run(learner.init(k), 3))(jax.random.key(0))
    assert all(bool(jnp.isfinite(x).all()) for x in jax.tree.leaves(state.params))
    assert bool(jnp.isfinite(metrics["q_loss"]).all()) and float(metrics["q_loss"][-1]) > 0


@pytest.mark.exhaustive  # two recurrent learner compiles
@pytest.mark.parametrize(
    "name, extra",
    [("pqn", {}), ("qmix", {"sequence_length": 4, "burn_in": 1, "learning_starts": 4})],
)
def test_a_gru_learner_replays_its_sequences(name, extra):
    env = alem.make("coordination-v0")
    learner = make_q_learner(env, make_q_config(name, **TINY, recurrent=8, **extra))
    state, metrics = jax.jit(lambda k: learner.run(learner.init(k), 3))(jax.random.key(0))
    assert state.hidden.shape == (4, 2, 8) and bool(jnp.isfinite(metrics["q_loss"]).all())
    assert float(metrics["q_loss"][-1]) > 0  # it trained (the replay learner: after learning_starts)


@pytest.mark.exhaustive  # learns: two short training runs (about 35 s and 100 s on 2 cores)
@pytest.mark.parametrize("name", ["pqn_vdn", "vdn"])
def test_value_based_learners_beat_random_on_simple_spread(name, tmp_path):
    """300k env steps of MPE simple_spread (3 agents; random play scores about -26.3 per agent):
    the greedy policy scores at least 2 better (measured, 2 seeds: pqn_vdn -21.2 and -20.5, vdn
    -22.1 and -21.4). At 150k steps one seed's result moved by 1 between bitwise-different but
    equal programs, too close to random for a threshold."""
    import json

    from hydra import compose, initialize_config_module

    from alem.train import run

    overrides = [
        "env.id=mpe/simple_spread-v0",
        f"algo={name}",
        "algo.total_steps=307200",
        "num_seeds=1",
        "eval.num_steps=256",
    ]
    with initialize_config_module(config_module="alem.configs", version_base=None):
        cfg = compose(config_name="config", overrides=overrides)
    res = json.loads(run(cfg, tmp_path / "run").read_text())
    assert res["trained_return_mean"] > res["random_return_mean"] + 2.0, res["trained_return_mean"]


def test_in_turn_based_games_only_the_acting_agents_steps_train_its_q():
    """PQN's loss on tic-tac-toe: changing a target where its agent waits changes nothing; where
    it acts, the loss moves."""
    env = alem.make("tic_tac_toe-v0")
    learner = make_q_learner(env, make_q_config("pqn", **TINY))
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    state, steps, roll = jax.jit(learner.rollout, static_argnums=())(state, env.default_params)
    hidden0 = roll["hidden0"]
    targets = jnp.zeros(steps.reward.shape)
    loss = jax.jit(lambda t: learner.pqn_loss(state.params, steps, hidden0, t)[0])
    base = float(loss(targets))
    acting = np.asarray(steps.acting)
    assert acting.any() and (~acting).any()
    assert float(loss(jnp.where(steps.acting, targets, 100.0))) == pytest.approx(base, rel=1e-6)
    assert abs(float(loss(jnp.where(steps.acting, 100.0, targets))) - base) > 1.0


def test_a_target_is_resolved_by_the_episode_end_or_the_units_next_turn():
    from alem.algos.qlearning import resolved

    # a unit that acts every other step: steps 0, 2 resolve through the wait; the last one, whose
    # next turn is outside the window, does not; an episode end resolves wherever it falls
    done = jnp.array([False, False, False, False, False])
    next_acts = jnp.array([False, True, False, True, False])
    assert resolved(done, next_acts).tolist() == [True, True, True, True, False]
    done = jnp.array([False, False, False, True, False])
    next_acts = jnp.array([False, False, False, False, False])
    assert resolved(done, next_acts).tolist() == [True, True, True, True, False]


@pytest.fixture(scope="module")
def ttt_window():
    """An IQL learner on tic-tac-toe and windows of 3 steps from a random rollout, with one env
    where agent ``i`` acts at step ``t0`` and the opponent ends the game at ``t0 + 1``."""
    env = alem.make("tic_tac_toe-v0")
    learner = make_q_learner(env, make_q_config("iql", **{**TINY, "num_steps": 32}, sequence_length=3))
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    state, steps, _ = jax.jit(learner.rollout)(state, env.default_params)
    acting, done = np.asarray(steps.acting), np.asarray(steps.done)
    for t0 in range(acting.shape[0] - 2):
        for e in range(acting.shape[1]):
            for i in range(2):
                if acting[t0, e, i] and not acting[t0 + 1, e, i] and done[t0 + 1, e] and not done[t0, e]:
                    seq = jax.tree.map(lambda x, t=t0, k=e: x[t : t + 3, k : k + 1], steps)
                    loss = jax.jit(lambda q: learner.td_loss(state.params, state.params, q)[0])
                    return seq, i, loss
    raise AssertionError("no game ended by the opponent in the rollout")


@pytest.mark.exhaustive  # two compiles (a rollout and the windowed loss)
def test_replay_in_turn_based_games_passes_rewards_through_the_opponents_turn(ttt_window):
    seq, i, loss = ttt_window
    base = float(loss(seq))
    # the reward the opponent's winning move gives agent i trains agent i's move before it
    moved = seq.replace(reward=seq.reward.at[1, 0, i].add(5.0))
    assert abs(float(loss(moved)) - base) > 1e-3
    # the action stored for agent i while it waits is never used
    other = seq.replace(action=seq.action.at[1, 0, i].set((seq.action[1, 0, i] + 1) % 9))
    assert float(loss(other)) == pytest.approx(base, rel=1e-6)


@pytest.mark.exhaustive  # two GRU compiles
def test_recurrent_replay_does_not_train_on_its_burn_in_steps():
    env = alem.make("coordination-v0")
    cfg = make_q_config("vdn", **TINY, recurrent=8, sequence_length=4, burn_in=1)
    learner = make_q_learner(env, cfg)
    state = jax.jit(learner.init)(jax.random.key(0))  # compiled: faster than op-by-op
    state, steps, _ = jax.jit(learner.rollout)(state, env.default_params)  # [4, 4, ...]: one window per env
    loss = jax.jit(lambda q: learner.td_loss(state.params, state.params, q)[0])
    base = float(loss(steps))
    assert float(loss(steps.replace(reward=steps.reward.at[0].add(5.0)))) == pytest.approx(base, rel=1e-6)
    assert abs(float(loss(steps.replace(reward=steps.reward.at[1].add(5.0)))) - base) > 1e-3
