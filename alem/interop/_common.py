"""Shared pieces of the PettingZoo and Gymnasium adapters: spaces, seeding, compiled steps.

Seeding convention (both adapters): ``reset(seed=s)`` starts a key chain at
``jax.random.key(s)`` and reseeds the adapter's ``np_random`` with ``s``;
``reset()`` without a seed starts the chain at ``jax.random.key(k)`` with ``k``
drawn from ``np_random`` (seeded from OS entropy if no seed was ever given), so
``reset(seed=s)`` followed by unseeded resets is reproducible. Every call then
splits the chain once: ``key, sub = jax.random.split(key)``; the env's ``reset``
(or ``step``) gets ``sub``. :func:`episode_keys` reproduces the chain, so a pure
alem rollout with the same actions gives the same episode.
"""

from __future__ import annotations

import importlib.util
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv
from alem.errors import DependencyNotInstalled

__all__ = ["checked_action", "episode_keys", "require", "to_gymnasium_space", "from_gymnasium_space"]

_SEED_BOUND = 2**31 - 1


def require(module: str, requirement: str) -> None:
    """Raise :class:`DependencyNotInstalled` with an install hint when ``module`` is missing."""
    if importlib.util.find_spec(module) is None:
        raise DependencyNotInstalled(
            f'alem.interop needs {module} ({requirement}), part of the "interop" extra: '
            'pip install "alem[interop]"'
        )


def episode_keys(seed: int) -> Iterator[jax.Array]:
    """The keys an adapter hands to ``env.reset`` and then to each ``env.step`` after ``reset(seed=seed)``."""
    key = jax.random.key(seed)
    while True:
        key, sub = jax.random.split(key)
        yield sub


# ---------------------------------------------------------------------------- spaces
def checked_action(space: Any, action: Any, where: str) -> np.ndarray:
    """``action`` as an array of the gymnasium ``space``; ``ValueError`` naming ``where`` (env id and
    agent) when it is outside it (``space.contains``: an index out of range or not an integer, a
    vector of the wrong shape, out of bounds or not finite).

    An action inside the space that the mask forbids is the env's business: it becomes the first
    legal action and is counted illegal (:meth:`alem.MultiAgentEnv.sanitize_actions`).
    """
    arr = np.asarray(action)
    if arr.shape == (1,) and len(getattr(space, "shape", ()) or ()) == 0:
        arr = arr.reshape(())  # a one-element array for a Discrete space: accepted as its element
    if arr.dtype.kind == "f" and getattr(space, "dtype", None) is not None and space.dtype.kind == "f":
        arr = arr.astype(space.dtype)  # float64 vectors for a float32 Box
    if not space.contains(arr):
        shown = repr(action) if arr.size <= 8 else f"an array of shape {arr.shape}"
        raise ValueError(f"{where}: action {shown} is not in the action space {space}")
    return arr


def to_gymnasium_space(space: spaces.Space) -> Any:
    """The ``gymnasium.spaces`` equivalent of an alem space (Discrete, MultiDiscrete, Box)."""
    from gymnasium import spaces as gs

    if isinstance(space, spaces.Discrete):
        return gs.Discrete(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return gs.MultiDiscrete(space.nvec)
    if isinstance(space, spaces.Box):
        dtype = np.dtype(space.dtype)
        low, high = np.broadcast_to(space.low, space.shape), np.broadcast_to(space.high, space.shape)
        if dtype == np.bool_:
            return gs.Box(0, 1, space.shape, dtype=np.bool_)
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            low = np.clip(np.nan_to_num(low, neginf=info.min), info.min, info.max)
            high = np.clip(np.nan_to_num(high, posinf=info.max), info.min, info.max)
        return gs.Box(low.astype(dtype), high.astype(dtype), space.shape, dtype=dtype)
    raise TypeError(f"no gymnasium equivalent of the alem space {space!r}")


def from_gymnasium_space(space: Any) -> spaces.Space:
    """The alem equivalent of a gymnasium ``Discrete``/``MultiDiscrete``/``Box`` space.

    A ``Dict`` with an ``"observation"`` entry (PettingZoo's classic games) converts to that entry.
    """
    from gymnasium import spaces as gs

    if isinstance(space, gs.Dict) and "observation" in space.spaces:
        return from_gymnasium_space(space["observation"])
    if isinstance(space, gs.Discrete):
        if int(space.start) != 0:
            raise TypeError(f"only Discrete spaces starting at 0 are supported, got {space!r}")
        return spaces.Discrete(int(space.n))
    if isinstance(space, gs.MultiDiscrete):
        return spaces.MultiDiscrete(space.nvec)
    if isinstance(space, gs.Box):
        return spaces.Box(space.low, space.high, space.shape, dtype=space.dtype)
    raise TypeError(f"no alem equivalent of the gymnasium space {space!r}")


def true_obs_shape(env: MultiAgentEnv, agent: int) -> tuple[int, ...]:
    """Agent ``agent``'s unpadded observation shape (envs with ``obs_dims`` pad 1-D observations)."""
    shape = tuple(env.observation_space(agent).shape)
    dims = getattr(env, "obs_dims", None)
    if dims is not None and len(shape) == 1:
        return (int(dims[agent]),)
    return shape


def true_obs_space(env: MultiAgentEnv, agent: int) -> spaces.Space:
    """Agent ``agent``'s observation space without the padding of heterogeneous agents."""
    space = env.observation_space(agent)
    shape = true_obs_shape(env, agent)
    if shape == tuple(space.shape):
        return space
    low = np.broadcast_to(space.low, space.shape)[: shape[0]]
    high = np.broadcast_to(space.high, space.shape)[: shape[0]]
    return spaces.Box(low, high, shape, dtype=space.dtype)


# ---------------------------------------------------------------------------- compiled steps
_COMPILED: weakref.WeakKeyDictionary[MultiAgentEnv, tuple[Callable, Callable]] = weakref.WeakKeyDictionary()

#: The host-visible fields of a timestep, in the order the compiled functions return them.
FIELDS = ("obs", "action_mask", "reward", "terminated", "truncated", "acting")


def strong_types(tree: Any) -> Any:
    """``tree`` without weak types, so that a state from ``reset`` and one from ``step`` have the same
    types and the jitted ``step`` compiles once (gymnax states hold weakly typed scalars after reset)."""

    def strong(x: Any) -> Any:
        x = jnp.asarray(x)
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return x
        return jnp.asarray(x, dtype=x.dtype)

    return jax.tree.map(strong, tree)


def compiled(env: MultiAgentEnv) -> tuple[Callable, Callable]:
    """``(reset, step)``, jitted once per env object and shared by every adapter of it.

    ``reset(key, params) -> (key, state, fields)`` and
    ``step(key, state, actions, params) -> (key, state, fields)``, where ``fields``
    is the tuple :data:`FIELDS` of the timestep and ``key`` the rest of the chain.
    """
    if env in _COMPILED:
        return _COMPILED[env]

    def reset(key, params):
        key, sub = jax.random.split(key)
        state, ts = env.reset(sub, params)
        return key, strong_types(state), tuple(getattr(ts, f) for f in FIELDS)

    def step(key, state, actions, params):
        key, sub = jax.random.split(key)
        state, ts = env.step(sub, state, actions, params)
        return key, strong_types(state), tuple(getattr(ts, f) for f in FIELDS)

    fns = (jax.jit(reset), jax.jit(step))
    _COMPILED[env] = fns
    return fns


class Session:
    """One running episode of an alem env on the device, driven from the host.

    Holds the key chain, the env state (on the device) and the last timestep's
    fields as NumPy arrays (one device-to-host transfer per call).
    """

    def __init__(self, env: MultiAgentEnv, params: Any = None):
        self.env = env
        self.params = env.default_params if params is None else params
        if params is not None:
            env.check_params(params)
        self._reset, self._step = compiled(env)
        self.np_random: np.random.Generator | None = None
        self.key: jax.Array | None = None
        self.state: Any = None
        self.ts: dict[str, np.ndarray] = {}

    def reset(self, seed: int | None) -> dict[str, np.ndarray]:
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
            key = jax.random.key(int(seed))
        else:
            if self.np_random is None:
                self.np_random = np.random.default_rng()
            key = jax.random.key(int(self.np_random.integers(_SEED_BOUND)))
        self.key, self.state, fields = self._reset(key, self.params)
        return self._host(fields)

    def step(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        if self.state is None:
            raise RuntimeError(f"{self.env.id}: call reset() before step()")
        self.key, self.state, fields = self._step(self.key, self.state, jnp.asarray(actions), self.params)
        return self._host(fields)

    def _host(self, fields: tuple) -> dict[str, np.ndarray]:
        self.ts = dict(zip(FIELDS, jax.device_get(fields), strict=True))
        return self.ts


def env_from(env: Any, kwargs: dict[str, Any]) -> MultiAgentEnv:
    """``env`` itself (an alem env object, then ``kwargs`` must be empty) or ``alem.make(env, **kwargs)``."""
    if isinstance(env, MultiAgentEnv):
        if kwargs:
            raise TypeError(f"keyword arguments {sorted(kwargs)} need an env id, not an env object")
        return env
    import alem

    return alem.make(env, **kwargs)


def render_modes(env: MultiAgentEnv) -> list[str]:
    """The render modes an alem env offers: ``rgb_array`` (it overrides ``render_rgb``), ``ansi`` (text)."""
    modes = []
    if type(env).render_rgb is not MultiAgentEnv.render_rgb:
        modes.append("rgb_array")
    if env.supports_text:
        modes.append("ansi")
    return modes
