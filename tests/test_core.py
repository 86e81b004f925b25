"""Bad input to the env API gives clear errors or the documented behaviour."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.core import TimeStep


@pytest.fixture(scope="module")
def env():
    return alem.make("iterated_rock_paper_scissors-v0")


def test_timestep_done_combines_flags():
    ts = TimeStep(
        obs=jnp.zeros((1, 1)),
        action_mask=jnp.ones((1, 1), bool),
        reward=jnp.zeros(1),
        terminated=jnp.bool_(False),
        truncated=jnp.bool_(True),
        acting=jnp.ones(1, bool),
    )
    assert bool(ts.done)


def test_actions_from_python_lists_and_numpy_work(env):
    state, _ = env.reset(jax.random.key(0))
    _, a = env.step(jax.random.key(1), state, [0, 2])
    _, b = env.step(jax.random.key(1), state, np.array([0, 2], dtype=np.int64))
    np.testing.assert_array_equal(a.reward, b.reward)
    assert a.reward.tolist() == [1.0, -1.0]  # rock (player 0) beats scissors


def test_batched_actions_without_vmap_get_a_hint(env):
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(alem.ActionError, match=r"shape \(2,\).*got dtype int32 and shape \(4, 2\).*vmap"):
        env.step(jax.random.key(1), state, jnp.zeros((4, 2), jnp.int32))


def test_float_and_string_actions_rejected(env):
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(alem.ActionError, match="integer array"):
        env.step(jax.random.key(1), state, jnp.array([0.0, 1.0]))
    with pytest.raises(alem.ActionError):
        env.step(jax.random.key(1), state, ["rock", "paper"])


def test_bad_key_and_params_named(env):
    with pytest.raises(alem.EnvArgumentError, match="`key` must be a PRNG key"):
        env.reset(0)
    with pytest.raises(alem.EnvArgumentError, match="params must be a MatrixGameParams"):
        env.reset(jax.random.key(0), {"payoffs": 1})


def test_raw_uint32_keys_accepted(env):
    s1, t1 = env.reset(jax.random.PRNGKey(0))
    s2, t2 = env.reset(jax.random.key(0))
    np.testing.assert_array_equal(t1.obs, t2.obs)


def test_batch_of_keys_without_vmap_named(env):
    state, _ = env.reset(jax.random.key(0))
    typed = jax.random.split(jax.random.key(0), 4)
    raw = jax.random.split(jax.random.PRNGKey(0), 4)
    # Rock-paper-scissors never draws from the key, so a key batch used to pass silently.
    for keys in (typed, raw, typed.reshape(2, 2)):
        with pytest.raises(alem.EnvArgumentError, match=r"reset: `key` must be one PRNG key per call.*vmap"):
            env.reset(keys)
        with pytest.raises(alem.EnvArgumentError, match=r"step: `key` must be one PRNG key per call.*vmap"):
            env.step(keys, state, [0, 1])
    with pytest.raises(alem.EnvArgumentError, match="batch shape"):
        jax.jit(env.reset)(typed)  # the shape is static, so jit catches it at trace time too
    with pytest.raises(alem.EnvArgumentError, match="must be a PRNG key from"):
        env.reset(jnp.zeros((3,), jnp.uint32))  # not a key at all: the old message


@pytest.mark.parametrize(
    "actions, shown",
    [
        (np.array([2**32 + 1, 0], np.int64), r"action 4294967297 \(dtype int64\)"),  # would wrap to 1
        (np.array([0, -(2**32) + 2], np.int64), r"action -4294967294 \(dtype int64\)"),  # would wrap to 2
        (np.array([2**32, 0], np.uint64), r"action 4294967296 \(dtype uint64\)"),
        (np.array([2**31, 0], np.uint32), r"action 2147483648 \(dtype uint32\)"),
        ([2**32 + 1, 0], r"action 4294967297 \(dtype int64\)"),
        ([2**70, 0], r"action 1180591620717411303424 \(Python int\)"),
    ],
)
def test_actions_beyond_int32_raise_instead_of_wrapping(env, actions, shown):
    state, _ = env.reset(jax.random.key(0))
    with pytest.raises(alem.ActionError, match=shown + r" is outside the int32 range"):
        env.step(jax.random.key(1), state, actions)


def test_int64_actions_within_int32_and_traced_actions_still_work(env):
    state, _ = env.reset(jax.random.key(0))
    _, ts = env.step(jax.random.key(1), state, np.array([2**31 - 1, 1], np.int64))
    assert ts.info["illegal_action"].tolist() == [True, False]  # out of range but representable: replaced
    _, ts = jax.jit(lambda s, a, b: env.step(jax.random.key(1), s, [a, b]))(state, 0, 2)
    assert ts.reward.tolist() == [1.0, -1.0]


def test_check_params_names_field_value_and_range(env):
    params = env.default_params
    env.check_params(params)
    with pytest.raises(alem.EnvArgumentError, match="params must be a MatrixGameParams"):
        env.check_params({"payoffs": 1})
    cases = [
        (dict(num_rounds=jnp.int32(-3)), r"params\.num_rounds=-3 is out of range; it must be >= 1"),
        (dict(num_rounds=0), r"params\.num_rounds=0 is out of range"),  # a Python int from .replace()
        (dict(continue_prob=jnp.float32(0.0)), r"params\.continue_prob=0\.0 .* must be in \(0\.0, 1\.0\]"),
        (dict(continue_prob=np.float32(1.5)), r"params\.continue_prob=1\.5"),
    ]
    for change, match in cases:
        bad = params.replace(**change)
        with pytest.raises(alem.EnvArgumentError, match=match):
            env.check_params(bad)
        with pytest.raises(alem.EnvArgumentError, match=match):
            env.reset(jax.random.key(0), bad)
        state, _ = env.reset(jax.random.key(0))
        with pytest.raises(alem.EnvArgumentError, match=match):
            env.step(jax.random.key(0), state, [0, 1], bad)


def test_check_params_leaves_traced_params_alone(env):
    """Inside jit the values are unknown on the host: only the type is checked (no tracer error)."""
    bad = env.default_params.replace(continue_prob=jnp.float32(0.0))
    _, ts = jax.jit(env.reset)(jax.random.key(0), bad)
    assert ts.obs.shape[0] == 2
    # A vmap over a batch of params traces them too; the single bad value is not seen.
    batch = jax.tree.map(lambda x: jnp.stack([x, x]), bad)
    _, ts = jax.vmap(env.reset, (None, 0))(jax.random.key(0), batch)
    assert ts.obs.shape[:2] == (2, 2)


def test_out_of_range_is_replaced_under_jit_and_vmap(env):
    state, _ = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), 3))
    acts = jnp.array([[0, 1], [99, 1], [0, -5]], jnp.int32)
    _, ts = jax.jit(jax.vmap(env.step))(jax.random.split(jax.random.key(1), 3), state, acts)
    assert ts.info["illegal_action"].tolist() == [[False, False], [True, False], [False, True]]
    # replaced by action 0 (rock): row 1 is rock vs paper, row 2 rock vs rock
    assert ts.reward.tolist() == [[-1.0, 1.0], [-1.0, 1.0], [0.0, 0.0]]


def test_unsupported_illegal_action_mode(env):
    with pytest.raises(alem.EnvArgumentError, match="illegal_action='lose' is not supported"):
        alem.make("prisoners_dilemma-v0", illegal_action="lose")


def test_parse_action_variants(env):
    assert env.parse_action("Paper!") == 1
    assert env.parse_action("I choose scissors.") == 2
    assert env.parse_action("My move: rock") == 0
    assert env.parse_action("r") == 0
    assert env.parse_action("2") == 2
    assert env.parse_action("action 1") == 1
    assert env.parse_action("7") is None
    assert env.parse_action("rock or paper") is None, "ambiguous replies are not guessed"
    assert env.parse_action("") is None


def test_illegal_action_hooks_are_public_extension_points():
    """``step`` calls the public ``sanitize_actions`` and ``apply_illegal_policy`` of a subclass."""
    from alem.envs.games.matrix import MatrixGame

    class LastLegal(MatrixGame):
        def sanitize_actions(self, state, actions, params):
            safe, illegal = super().sanitize_actions(state, actions, params)
            return jnp.where(illegal, 2, safe), illegal  # scissors instead of rock

        def apply_illegal_policy(self, state, ts, illegal, params):
            return state, ts.replace(reward=jnp.where(illegal, -10.0, ts.reward))

    game = LastLegal(game="rock_paper_scissors")
    state, _ = game.reset(jax.random.key(0))
    _, ts = game.step(jax.random.key(1), state, jnp.array([99, 1], jnp.int32))
    assert ts.info["illegal_action"].tolist() == [True, False]
    assert ts.reward.tolist() == [-10.0, -1.0]  # scissors beat paper, then the penalty
    assert "sanitize_actions" in (alem.MultiAgentEnv.__doc__ or "")
    assert "apply_illegal_policy" in (alem.MultiAgentEnv.__doc__ or "")


def test_the_contract_builds_the_timestep_and_the_forfeit():
    """Every env used to write its own _timestep() and its own "lose" selection: the base class
    builds the TimeStep from observe / action_mask / acting, and "lose" through forfeit()."""
    import inspect

    import alem.envs.coordination.lbf.env as lbf
    import alem.envs.games.board as board
    import alem.envs.games.hanabi.env as hanabi
    import alem.envs.games.liars_dice as liars
    import alem.envs.games.poker as poker

    for module in (lbf, board, hanabi, liars, poker):
        text = inspect.getsource(module)
        assert "def _timestep" not in text and "TimeStep(" not in text, module.__name__
    for cls in (board.BoardGame, hanabi.Hanabi, liars.LiarsDice, poker.PokerEnv):
        assert "apply_illegal_policy" not in vars(cls) and "forfeit" in vars(cls), cls.__name__
        assert "sanitize_actions" not in vars(cls), cls.__name__  # a no-move substitute: forfeit_move
    # tic-tac-toe, "lose": X plays the centre, O plays the occupied centre and loses at once
    env = alem.make("tic_tac_toe-v0", illegal_action="lose")
    state, ts = env.reset(jax.random.key(0))
    state, ts = env.step(jax.random.key(1), state, jnp.array([4, 0]))
    state, ts = env.step(jax.random.key(2), state, jnp.array([0, 4]))
    assert (
        bool(ts.terminated)
        and ts.reward.tolist() == [1.0, -1.0]
        and ts.info["illegal_action"].tolist() == [False, True]
    )
    assert int(state.board.sum()) == 1 and int(state.winner) == 0  # the substitute move was taken back


def test_the_contract_gives_default_params_from_what_the_constructor_set():
    """Seven envs wrote the same ``default_params`` property returning ``self._default_params``;
    the base class serves it, and an env that sets neither is told which two ways it has."""
    from alem.core import MultiAgentEnv

    env = alem.make("lbf_8x8_2p_2f_coop-v0")
    assert "default_params" not in type(env).__dict__ and env.default_params is env._default_params
    assert env.default_params.max_steps == 50

    class Bare(MultiAgentEnv):
        pass

    with pytest.raises(NotImplementedError, match="sets no self._default_params"):
        Bare.default_params.fget(object.__new__(Bare))
