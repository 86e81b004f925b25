"""BatchedAutoReset: same transitions as vmapped AutoReset, exact start-state distribution, no shared draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import alem
from alem import spaces, struct
from alem.core import MultiAgentEnv, TimeStep
from alem.errors import EnvArgumentError
from alem.rollout import random_legal_actions
from alem.wrappers import AutoReset, BatchedAutoReset, EpisodeStats, FlattenObs, NormalizeObs, Wrapper

E = 24


def _trees_equal(a, b) -> bool:
    return all(jax.tree.leaves(jax.tree.map(lambda x, y: bool(jnp.array_equal(x, y)), a, b)))


class _RoundsOnly(Wrapper):
    """Hides ``fixed_start`` so BatchedAutoReset serves the board games in rounds of K resets."""

    fixed_start = False


@pytest.mark.parametrize("env_id", ["tic_tac_toe-v0", "connect_four-v0"])
@pytest.mark.parametrize(
    "rounds", [pytest.param(True, marks=pytest.mark.exhaustive), False], ids=["rounds", "fixed_start"]
)
def test_equals_vmapped_autoreset_when_reset_is_deterministic(env_id, rounds):
    """Board games start from one state, so any K (and the fixed-start shortcut) must give
    vmap(AutoReset)'s exact transitions, episode statistics included (the reset swaps only the
    innermost state in)."""
    env = alem.make(env_id)
    assert env.fixed_start
    params = env.default_params
    plain = EpisodeStats(AutoReset(env))
    plain_step = jax.jit(jax.vmap(plain.step, (0, 0, 0, None)))
    for k in (1, 5, E) if rounds else (None,):
        batch = BatchedAutoReset(EpisodeStats(_RoundsOnly(env) if rounds else env), E, k)
        step = jax.jit(batch.step)
        sb, tb = batch.reset(jax.random.key(0), params)
        sa, ta = jax.vmap(plain.reset, (0, None))(jax.random.split(jax.random.key(0), E), params)
        assert _trees_equal((sb, tb), (sa, ta))
        finished = 0
        for t in range(30):
            act = random_legal_actions(jax.random.key(1000 + t), tb.action_mask)
            sb, tb = step(jax.random.key(t), sb, act, params)
            sa, ta = plain_step(jax.random.split(jax.random.key(t), E), sa, act, params)
            assert _trees_equal((sb, tb), (sa, ta)), f"K={k}, step {t}"
            finished += int(tb.info["episode_done"].sum())
        assert finished > E  # several rounds of resets happened, more than K at once for small K


@struct.dataclass
class _Draw:
    uid: jax.Array  # uint32 [2]: 64 random bits drawn by reset
    t: jax.Array


class CoinFlipEnv(MultiAgentEnv):
    """Test env: reset draws 64 random bits; each step ends the episode with probability 1/2."""

    def __init__(self):
        super().__init__()
        self.agents = ("a",)
        self.agent_roles = np.zeros(1, np.int32)
        self.role_names = ("a",)

    default_params = property(lambda self: alem.EnvParams())

    def observation_space(self, agent=None):
        one = spaces.Box(0, 2**32 - 1, (2,), dtype=jnp.uint32)
        return one if agent is not None else spaces.stack([one])

    def action_space(self, agent=None):
        one = spaces.Discrete(1)
        return one if agent is not None else spaces.stack([one])

    def reset_env(self, key, params):
        s = _Draw(jax.random.bits(key, (2,), jnp.uint32), jnp.int32(0))
        return s, self._ts(s, jnp.float32(0), jnp.bool_(False))

    def step_env(self, key, state, actions, params):
        s = state.replace(t=state.t + 1)
        return s, self._ts(s, jnp.float32(1), jax.random.bernoulli(key))

    def _ts(self, s, r, end):
        return TimeStep(
            s.uid[None], jnp.ones((1, 1), bool), jnp.full((1,), r), end, jnp.bool_(False), jnp.ones(1, bool)
        )


@pytest.mark.parametrize("k", [1, 4, 32, 64])
def test_every_ended_env_gets_its_own_fresh_draw(k):
    """Half the batch ends per step on average, far more than K for small K: every env that ended
    must start a new episode (t = 0) from a draw no other env received in that step or before,
    and the envs that did not end keep their state. K = 64 = N is the loop-free path (a fresh
    episode for every env, kept where one ended)."""
    env = CoinFlipEnv()
    n = 64
    batch = BatchedAutoReset(EpisodeStats(env), n, k)
    step = jax.jit(batch.step)
    state, ts = batch.reset(jax.random.key(0), None)
    seen = {tuple(u) for u in np.asarray(ts.obs[:, 0])}
    assert len(seen) == n
    for t in range(20):
        before = np.asarray(state.env_state.uid)
        state, ts = step(jax.random.key(t + 1), state, jnp.zeros((n, 1), jnp.int32), None)
        done = np.asarray(ts.done)
        uid, steps = np.asarray(state.env_state.uid), np.asarray(state.env_state.t)
        assert done.sum() > k or k >= 32
        np.testing.assert_array_equal(uid[~done], before[~done])
        np.testing.assert_array_equal(steps[done], 0)
        np.testing.assert_array_equal(np.asarray(ts.obs[:, 0]), uid)  # obs is the fresh episode's
        np.testing.assert_array_equal(np.asarray(ts.info["final_obs"][:, 0])[done], before[done])
        fresh = [tuple(u) for u in uid[done]]
        assert len(set(fresh)) == len(fresh), "two envs received the same reset draw"
        assert not seen & set(fresh), "a reset draw was reused from an earlier step"
        seen |= set(fresh)


def _fresh_starts(env, n, steps, k, pick):
    """``pick(state)`` of every fresh episode handed out by BatchedAutoReset over ``steps`` steps."""
    batch = BatchedAutoReset(env, n, k)
    params = env.default_params

    @jax.jit
    def run(key):
        state, ts = batch.reset(key, params)

        def body(carry, key):
            state, ts = carry
            ka, ks = jax.random.split(key)
            state, ts = batch.step(ks, state, random_legal_actions(ka, ts.action_mask), params)
            return (state, ts), (jax.vmap(pick)(state), ts.done)

        _, out = jax.lax.scan(body, (state, ts), jax.random.split(key, steps))
        return out

    values, done = run(jax.random.key(7))
    return np.asarray(values)[np.asarray(done)]


def _chi2_against_reset(env, pick, k, n=256, steps=40):
    fresh = _fresh_starts(env, n, steps, k, pick)
    states, _ = jax.vmap(env.reset, (0, None))(
        jax.random.split(jax.random.key(99), len(fresh)), env.default_params
    )
    plain = np.asarray(jax.vmap(pick)(states))
    cats = sorted({tuple(np.atleast_1d(x)) for x in np.concatenate([fresh, plain])})
    index = {c: i for i, c in enumerate(cats)}
    table = np.zeros((2, len(cats)))
    for row, sample in enumerate((fresh, plain)):
        for x in sample:
            table[row, index[tuple(np.atleast_1d(x))]] += 1
    return len(fresh), stats.chi2_contingency(table).pvalue


@pytest.mark.parametrize(
    ("env_id", "pick"),
    [
        ("kuhn_poker-v0", lambda s: s.cards),  # 6 ordered deals
        pytest.param(
            "leduc_holdem-v0", lambda s: s.cards[:2] // 2, marks=pytest.mark.exhaustive
        ),  # private ranks, 9 pairs
        pytest.param("liars_dice-v0", lambda s: s.dice[:, 0], marks=pytest.mark.exhaustive),  # 36 dice pairs
    ],
)
@pytest.mark.parametrize("k", [8, 256], ids=["rounds", "every_env"])
def test_start_state_distribution_is_that_of_reset(env_id, pick, k):
    """Chi-square (homogeneity) of the deals handed to ended envs against plain ``reset`` draws;
    K = 8 for 256 envs, so most steps need more than one round; K = 256, the loop-free path."""
    env = alem.make(env_id)
    count, p = _chi2_against_reset(env, pick, k=k)
    assert count > 1000
    assert p > 1e-3, f"{env_id}: reset distribution differs from env.reset (p = {p:.2g})"


@pytest.mark.exhaustive  # the default run's budget
def test_chi_square_detects_a_biased_reset():
    """The test above can fail: handing every ended env the same fresh deal is caught."""
    env = alem.make("kuhn_poker-v0")
    biased = _fresh_starts(env, 256, 40, 8, lambda s: s.cards[0] * 0)  # everything in one category
    plain = np.asarray(
        jax.vmap(lambda k: env.reset(k)[0].cards[0])(jax.random.split(jax.random.key(1), 2000))
    )
    table = np.array([[len(biased), 0, 0], [(plain == c).sum() for c in range(3)]])
    assert stats.chi2_contingency(table).pvalue < 1e-6


def test_fresh_episodes_under_an_outer_vmap_over_seeds():
    """Seeds vmapped around the batch (as the learners do): each seed's envs stay independent."""
    env = CoinFlipEnv()
    batch = BatchedAutoReset(env, 16, 2)

    def run(key):
        state, ts = batch.reset(key, None)
        state, ts = batch.step(jax.random.fold_in(key, 1), state, jnp.zeros((16, 1), jnp.int32), None)
        return state.uid, ts.done

    uids, done = jax.jit(jax.vmap(run))(jax.random.split(jax.random.key(3), 4))
    assert np.asarray(done).any()
    for s, key in enumerate(jax.random.split(jax.random.key(3), 4)):
        np.testing.assert_array_equal(np.asarray(uids[s]), np.asarray(run(key)[0]))
    flat = [tuple(x) for x in np.asarray(uids).reshape(-1, 2).tolist()]
    assert len(set(flat)) == len(flat)


def test_observation_transforms_apply_to_fresh_episodes():
    env = alem.make("tic_tac_toe-v0")
    batch = BatchedAutoReset(FlattenObs(env), 4, 1)
    state, ts = batch.reset(jax.random.key(0), None)
    assert ts.obs.shape == (4, 2, 27) and ts.info["final_obs"].shape == (4, 2, 27)
    for t in range(9):
        state, ts = batch.step(
            jax.random.key(t), state, random_legal_actions(jax.random.key(t), ts.action_mask)
        )
    assert ts.obs.shape == (4, 2, 27)


def test_bad_stacks_and_sizes_are_refused():
    env = alem.make("tic_tac_toe-v0")
    with pytest.raises(EnvArgumentError, match="AutoReset"):
        BatchedAutoReset(EpisodeStats(AutoReset(env)), 8)
    with pytest.raises(EnvArgumentError, match="NormalizeObs"):
        BatchedAutoReset(NormalizeObs(FlattenObs(env)), 8)
    with pytest.raises(EnvArgumentError, match="resets_per_step"):
        BatchedAutoReset(env, 8, 9)
    with pytest.raises(EnvArgumentError, match="resets_per_step"):
        BatchedAutoReset(env, 8, 0)
    with pytest.raises(EnvArgumentError, match="num_envs"):
        BatchedAutoReset(env, 0)


@pytest.mark.parametrize(
    ("env_id", "num_envs"), [("tic_tac_toe-v0", 100), ("kuhn_poker-v0", 1024), ("mpe/simple-v0", 4096)]
)
def test_default_round_covers_the_usual_number_of_ended_envs(env_id, num_envs):
    """The default K is at least the mean number of envs ending per step plus three standard
    deviations (binomial), measured here from a random rollout, and one-shot games get K = N."""
    env = alem.make(env_id)
    k = BatchedAutoReset(env, num_envs).resets_per_step
    ends = _fresh_starts(env, 256, 60, 256, lambda s: jnp.zeros(()))
    rate = len(ends) / (256 * 60)
    mean, sd = num_envs * rate, np.sqrt(num_envs * rate * (1 - rate))
    assert mean + 2.5 * sd <= k <= min(num_envs, 1.5 * mean + 4 * sd + 1)
    assert BatchedAutoReset(alem.make("prisoners_dilemma-v0"), 64).resets_per_step == 64


@pytest.mark.parametrize("env_id", ["kuhn_poker-v0", "leduc_holdem-v0", "mpe/simple_spread-v0"])
def test_cheap_resets_take_the_loop_free_path_on_accelerators_only(env_id):
    """On a GPU/TPU an env with ``cheap_reset`` gets K = N (no data-dependent loop); on CPU the
    served rounds stay (fewer resets); an env without it keeps the rounds everywhere."""
    from alem.wrappers.autoreset import default_resets_per_step

    env = alem.make(env_id)
    assert env.cheap_reset
    hint = env.episode_steps_hint
    assert default_resets_per_step(4096, hint, True, backend="gpu") == 4096
    assert default_resets_per_step(4096, hint, True, backend="tpu") == 4096
    assert default_resets_per_step(4096, hint, True, backend="cpu") == default_resets_per_step(4096, hint)
    assert default_resets_per_step(4096, hint, True, backend="cpu") < 4096
    # On CPU, only episodes this short in batches this large skip the loop (measured on Kuhn).
    assert (default_resets_per_step(16384, hint, True, backend="cpu") == 16384) == (env.id == "kuhn_poker-v0")
    pathfinding = alem.make("pathfinding-v0")
    assert not pathfinding.cheap_reset
    assert default_resets_per_step(4096, pathfinding.episode_steps_hint, False, backend="gpu") < 4096
    # The env's own flag reaches BatchedAutoReset through wrappers (this process runs on CPU).
    assert EpisodeStats(env).cheap_reset
    assert BatchedAutoReset(EpisodeStats(env), 4096).resets_per_step == default_resets_per_step(4096, hint)
