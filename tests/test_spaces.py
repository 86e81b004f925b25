import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem import spaces


def test_discrete_sample_and_contains():
    sp = spaces.Discrete(4)
    xs = jax.vmap(sp.sample)(jax.random.split(jax.random.key(0), 2000))
    assert xs.dtype == jnp.int32 and set(np.unique(xs).tolist()) == {0, 1, 2, 3}
    assert bool(sp.contains(jnp.int32(3))) and not bool(sp.contains(jnp.int32(4)))
    assert not bool(sp.contains(jnp.int32(-1)))
    assert not bool(sp.contains(jnp.float32(1.0))), "floats are not discrete actions"
    assert not bool(sp.contains(jnp.zeros((2,), jnp.int32))), "wrong shape"


def test_multidiscrete_per_entry_bounds():
    sp = spaces.MultiDiscrete([2, 5])
    xs = jax.vmap(sp.sample)(jax.random.split(jax.random.key(1), 1000))
    assert xs.shape == (1000, 2)
    assert xs[:, 0].max() == 1 and xs[:, 1].max() == 4 and xs.min() == 0
    assert bool(sp.contains(jnp.array([1, 4]))) and not bool(sp.contains(jnp.array([2, 0])))


def test_box_bounds_nan_and_unbounded_sampling():
    sp = spaces.Box(-1.0, 1.0, (3,))
    x = jax.vmap(sp.sample)(jax.random.split(jax.random.key(2), 500))
    assert bool(jnp.all(jax.vmap(sp.contains)(x)))
    assert not bool(sp.contains(jnp.array([0.0, 0.0, jnp.nan])))
    assert not bool(sp.contains(jnp.array([0.0, 2.0, 0.0])))
    half = spaces.Box(np.array([0.0, -np.inf]), np.array([np.inf, 5.0]))
    y = jax.vmap(half.sample)(jax.random.split(jax.random.key(3), 500))
    assert bool(jnp.all(y[:, 0] >= 0)) and bool(jnp.all(y[:, 1] <= 5))


def test_contains_is_jittable():
    sp = spaces.Box(0.0, 1.0, (2, 2))
    assert bool(jax.jit(sp.contains)(jnp.full((2, 2), 0.5)))


def test_stack_per_agent_spaces():
    st = spaces.stack([spaces.Discrete(3), spaces.Discrete(5)])
    assert isinstance(st, spaces.MultiDiscrete) and st.nvec.tolist() == [3, 5]
    b = spaces.stack([spaces.Box(0.0, 1.0, (2,)), spaces.Box(-1.0, 2.0, (2,))])
    assert b.shape == (2, 2) and b.low[1].tolist() == [-1.0, -1.0] and b.high[0].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="one shape"):
        spaces.stack([spaces.Box(0.0, 1.0, (2,)), spaces.Box(0.0, 1.0, (3,))])
    with pytest.raises(TypeError, match="one kind"):
        spaces.stack([spaces.Discrete(2), spaces.Box(0.0, 1.0, (1,))])


def test_bad_space_definitions():
    with pytest.raises(ValueError, match="n >= 1"):
        spaces.Discrete(0)
    with pytest.raises(ValueError, match="low <= high"):
        spaces.Box(1.0, 0.0, (1,))
