"""Adapters between gymnax (1.0) and alem, in both directions.

- :class:`FromGymnax` turns a gymnax ``Environment`` into a one-agent alem
  :class:`~alem.core.MultiAgentEnv`, so single-agent benchmarks such as
  CartPole can drive alem's learners unchanged.
- :class:`ToGymnax` turns a one-agent alem env into a gymnax ``Environment``,
  so gymnax tooling (PureJaxRL-style training loops, gymnax wrappers) can run it.

Both keep gymnax 1.0's split of episode ends: ``terminated`` is the env's own
terminal condition (from ``step_env``), ``truncated`` is the time limit
(``is_truncated(state, params)``, evaluated on the post-step state). They are
computed independently, exactly as ``gymnax.environments.environment.Environment.step``
does, so both can be True on the same step; treat ``terminated`` as
authoritative (no bootstrap) in that case. Neither adapter auto-resets: alem's
auto-reset is a separate wrapper, and gymnax's public ``step`` resets on top of
:meth:`ToGymnax.step_env`.

``ToGymnax(FromGymnax(env))`` reproduces ``env`` exactly (observations, rewards,
both end flags and the ``step_env`` info), for the same keys and actions.
"""

from __future__ import annotations

import functools
import math
from typing import Any, ClassVar

from alem.extras import require

require("gymnax", "alem.interop.gymnax")

import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments import environment as gx_env
from gymnax.environments import spaces as gx_spaces
from jaxtyping import Array, PRNGKeyArray

from alem import spaces, struct
from alem.core import MultiAgentEnv, TimeStep
from alem.errors import EnvArgumentError

__all__ = [
    "FromGymnax",
    "FromGymnaxParams",
    "FromGymnaxState",
    "ToGymnax",
    "ToGymnaxState",
    "from_gymnax_space",
    "GYMNAX_DRAWINGS",
    "make_gymnax",
    "to_gymnax_space",
]


# ---------------------------------------------------------------------------- spaces
def _shape_tuple(shape: Any) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def from_gymnax_space(space: gx_spaces.Space, what: str = "space") -> spaces.Space:
    """Convert a gymnax ``Discrete``/``Box`` space to the alem space of the same meaning.

    Bounds must be concrete (build the gymnax space from concrete params, not tracers).

    Raises:
        EnvArgumentError: for any other gymnax space (``Dict``, ``Tuple``, ...).
    """
    if isinstance(space, gx_spaces.Discrete):
        return spaces.Discrete(int(space.n), dtype=space.dtype)
    if isinstance(space, gx_spaces.Box):
        shape = _shape_tuple(space.shape)
        low = np.broadcast_to(np.asarray(space.low, dtype=np.float64), shape)
        high = np.broadcast_to(np.asarray(space.high, dtype=np.float64), shape)
        return spaces.Box(low, high, shape, dtype=np.dtype(space.dtype))
    raise EnvArgumentError(
        f"cannot convert the gymnax {what} {type(space).__name__} ({space!r}) to an alem space; "
        "only gymnax Discrete and Box spaces are supported"
    )


def to_gymnax_space(space: spaces.Space, what: str = "space") -> gx_spaces.Space:
    """Convert an alem ``Discrete``/``Box`` space (one agent's) back to a gymnax space.

    Raises:
        EnvArgumentError: for any other alem space (e.g. ``MultiDiscrete``).
    """
    if isinstance(space, spaces.Discrete):
        return gx_spaces.Discrete(space.n, dtype=space.dtype)
    if isinstance(space, spaces.Box):
        bound_dtype = space.dtype if np.issubdtype(space.dtype, np.floating) else np.float32
        low = np.asarray(space.low, dtype=bound_dtype)
        high = np.asarray(space.high, dtype=bound_dtype)
        return gx_spaces.Box(low, high, tuple(space.shape), dtype=space.dtype)
    raise EnvArgumentError(
        f"cannot convert the alem {what} {space!r} to a gymnax space; "
        "only alem Discrete and Box spaces are supported"
    )


# ---------------------------------------------------------------------------- gymnax -> alem
@struct.dataclass
class FromGymnaxParams:
    """alem params of a :class:`FromGymnax` env: the wrapped gymnax params (a pytree, vmappable)."""

    gymnax: Any


@struct.dataclass
class FromGymnaxState:
    """State of a :class:`FromGymnax` env.

    Attributes:
        env_state: the gymnax env state.
        obs: the gymnax observation of ``env_state`` (without the agent axis). It is
            stored because gymnax 1.0 observations may depend on a key and on the last
            action (``Environment.observe(key, state, action, params)``), so they cannot
            in general be recomputed from the state alone.
    """

    env_state: Any
    obs: Array


class FromGymnax(MultiAgentEnv[FromGymnaxState, FromGymnaxParams]):
    """A gymnax ``Environment`` as a one-agent alem env (``agents=("agent_0",)``).

    Use it to train alem's learners on single-agent gymnax benchmarks (CartPole,
    MinAtar, bsuite, ...). The transition is gymnax's raw ``step_env`` with the
    same key; nothing is reset automatically (wrap it in alem's auto-reset).

    - **Observation**: the gymnax observation with a leading agent axis, ``[1, ...]``,
      unchanged otherwise (same values and dtype; where gymnax declares another dtype
      than its observations have, the alem space takes the observations' dtype).
    - **Actions**: discrete gymnax envs take int ``[1]``; continuous ones (gymnax
      ``Box`` action space of shape ``s``) set ``continuous_actions=True`` and take
      float ``[1, d]`` with ``d = prod(s)``, reshaped to ``s`` for gymnax. alem's
      illegal-action policy applies first: an out-of-range discrete index becomes
      0, an out-of-range continuous action is clipped to the bounds, and
      ``info["illegal_action"]`` is set.
    - **Reward**: float32 ``[1]``; 0 after reset.
    - **terminated**: the ``done`` flag returned by gymnax ``step_env`` (the env's
      own terminal condition).
    - **truncated**: ``gymnax_env.is_truncated(next_state, params)`` (the time limit),
      computed independently of ``terminated`` exactly as gymnax 1.0's ``step`` does;
      both may be True on the same step.
    - **action_mask**: all True, ``[1, A]`` (``[1, d]`` for continuous actions);
      **acting**: ``[True]``.
    - **info**: the ``info`` dict of gymnax ``step_env`` (e.g. ``"discount"``), cast to
      a fixed dtype; after ``reset`` its entries are zeros of the same shape.
    - **params**: :class:`FromGymnaxParams` wrapping the gymnax params, so a batch of
      gymnax params can be vmapped over. Spaces are built once from the params given
      at construction (gymnax spaces may depend on params; alem's are static).
    - **Picture** (``render_rgb``): drawn for the gymnax envs in :data:`GYMNAX_DRAWINGS`:
      CartPole-v1 (300 x 200 px: the track with its ``x_threshold`` ends, the cart at ``x``,
      the pole at ``theta``) and Pendulum-v1 (200 x 200 px: the rod from the pivot at
      ``theta``, 0 upright, and the last torque as a bar); any other gymnax env raises
      ``NotImplementedError`` naming it.

    Args:
        gymnax_env: the gymnax environment.
        gymnax_params: its params (default: ``gymnax_env.default_params``).
        illegal_action: alem's illegal-action mode (only ``"replace"``).
    """

    cooperative: ClassVar[bool] = True  # the agents share one goal (alem.core.MultiAgentEnv)

    supports_text: ClassVar[bool] = False
    stochastic: ClassVar[bool] = True

    def __init__(
        self,
        gymnax_env: gx_env.Environment,
        gymnax_params: Any = None,
        *,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        if not isinstance(gymnax_env, gx_env.Environment):
            raise EnvArgumentError(
                f"FromGymnax needs a gymnax.environments.environment.Environment, "
                f"got {type(gymnax_env).__name__}"
            )
        self.gymnax_env = gymnax_env
        params = gymnax_env.default_params if gymnax_params is None else gymnax_params
        self._default_params = FromGymnaxParams(gymnax=params)
        self.id = f"gymnax/{gymnax_env.name}"
        self.agents = ("agent_0",)
        self.agent_roles = np.zeros(1, dtype=np.int32)
        self.role_names = ("agent",)

        self._obs_space = self._true_obs_space(
            from_gymnax_space(gymnax_env.observation_space(params), "observation space"), params
        )
        gx_action_space = gymnax_env.action_space(params)
        act = from_gymnax_space(gx_action_space, "action space")
        # Set per instance: each wrapped gymnax env decides for itself.
        self.continuous_actions = isinstance(act, spaces.Box)
        if isinstance(act, spaces.Box):
            self._gx_action_shape = act.shape
            d = math.prod(act.shape)
            act = spaces.Box(act.low.reshape(d), act.high.reshape(d), (d,), dtype=act.dtype)
            self._mask_width = d
        else:
            self._gx_action_shape = ()
            self._mask_width = act.n
        self._gx_action_dtype = np.dtype(gx_action_space.dtype)
        self._act_space = act

    def _true_obs_space(self, space: spaces.Space, params: Any) -> spaces.Space:
        """``space`` with the dtype (and shape) of the observations the env really returns.

        Some gymnax envs declare a dtype their observations do not have (e.g. Catch
        declares int32 and returns float32); observations are passed on unchanged, so
        the alem space follows them.
        """
        obs = jax.eval_shape(lambda: self.gymnax_env.reset_env(jax.random.key(0), params)[0])
        if not isinstance(obs, jax.ShapeDtypeStruct):
            raise EnvArgumentError(f"{self.id}: gymnax observations must be one array, got {obs!r}")
        if isinstance(space, spaces.Discrete):
            if obs.shape != () or not np.issubdtype(obs.dtype, np.integer):
                raise EnvArgumentError(
                    f"{self.id}: Discrete observation space but observations of shape {obs.shape} "
                    f"and dtype {obs.dtype}"
                )
            return spaces.Discrete(space.n, dtype=obs.dtype)
        assert isinstance(space, spaces.Box)
        if space.shape == obs.shape and space.dtype == obs.dtype:
            return space
        try:
            low = np.broadcast_to(space.low, obs.shape)
            high = np.broadcast_to(space.high, obs.shape)
        except ValueError:
            raise EnvArgumentError(
                f"{self.id}: the gymnax observation space has shape {space.shape}, "
                f"but observations have shape {obs.shape}"
            ) from None
        return spaces.Box(low, high, obs.shape, dtype=obs.dtype)

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> FromGymnaxParams:
        return self._default_params

    def check_params(self, params: FromGymnaxParams) -> None:
        """The type, and where concrete: the gymnax time limit ``max_steps_in_episode >= 1``."""
        super().check_params(params)
        if hasattr(params.gymnax, "max_steps_in_episode"):
            self._check_param_range(params, "gymnax.max_steps_in_episode", 1)

    def _check_agent(self, agent: int | None) -> None:
        if agent is not None and agent not in (0, -1):
            raise IndexError(f"{self.id} has one agent (index 0); got agent={agent}")

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        self._check_agent(agent)
        return self._obs_space if agent is not None else spaces.stack([self._obs_space])

    def action_space(self, agent: int | None = None) -> spaces.Space:
        self._check_agent(agent)
        return self._act_space if agent is not None else spaces.stack([self._act_space])

    def global_state_space(self) -> spaces.Space:
        if isinstance(self._obs_space, spaces.Discrete):
            return spaces.MultiDiscrete([self._obs_space.n], dtype=self._obs_space.dtype)
        return super().global_state_space()

    def action_mask(self, state: FromGymnaxState, params: FromGymnaxParams) -> jax.Array:
        return jnp.ones((1, self._mask_width), dtype=bool)

    def observe(self, state: FromGymnaxState, params: FromGymnaxParams) -> jax.Array:
        """The stored gymnax observation with the agent axis, ``[1, ...]``."""
        return jnp.asarray(state.obs)[None]

    # ------------------------------------------------------------------ dynamics
    def _gymnax_action(self, actions: jax.Array) -> jax.Array:
        if self.continuous_actions:
            return actions[0].reshape(self._gx_action_shape).astype(self._gx_action_dtype)
        return actions[0].astype(self._gx_action_dtype)

    @functools.cached_property
    def _info_struct(self) -> dict[str, Any]:
        """Shape/dtype structure of gymnax ``step_env``'s info (traced once, abstractly)."""
        env, params = self.gymnax_env, self._default_params.gymnax

        def one_step() -> Any:
            key = jax.random.key(0)
            _, state = env.reset_env(key, params)
            action = jnp.zeros(self._gx_action_shape, self._gx_action_dtype)
            return env.step_env(key, state, action, params)[4]

        info = jax.eval_shape(one_step)
        if not isinstance(info, dict):
            raise EnvArgumentError(
                f"{self.id}: gymnax step_env returned a non-dict info ({type(info).__name__})"
            )
        if "illegal_action" in info:
            raise EnvArgumentError(f"{self.id}: gymnax info key 'illegal_action' clashes with alem's")
        return info

    def _cast_info(self, info: dict[str, Any]) -> dict[str, Any]:
        def cast(s: jax.ShapeDtypeStruct, x: Any) -> jax.Array:
            return jnp.asarray(x).astype(s.dtype).reshape(s.shape)

        return jax.tree.map(cast, self._info_struct, info)

    def _timestep(
        self, obs: Any, reward: jax.Array, terminated: jax.Array, truncated: jax.Array, info: dict[str, Any]
    ) -> TimeStep:
        return TimeStep(
            obs=jnp.asarray(obs)[None],
            action_mask=jnp.ones((1, self._mask_width), dtype=bool),
            reward=jnp.asarray(reward, dtype=jnp.float32).reshape(1),
            terminated=jnp.asarray(terminated).astype(bool).reshape(()),
            truncated=jnp.asarray(truncated).astype(bool).reshape(()),
            acting=jnp.ones((1,), dtype=bool),
            info=info,
        )

    def reset_env(self, key: PRNGKeyArray, params: FromGymnaxParams) -> tuple[FromGymnaxState, TimeStep]:
        obs, env_state = self.gymnax_env.reset_env(key, params.gymnax)
        info = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), self._info_struct)
        false = jnp.bool_(False)
        ts = self._timestep(obs, jnp.zeros((1,), jnp.float32), false, false, info)
        return FromGymnaxState(env_state=env_state, obs=obs), ts

    def step_env(
        self, key: PRNGKeyArray, state: FromGymnaxState, actions: jax.Array, params: FromGymnaxParams
    ) -> tuple[FromGymnaxState, TimeStep]:
        obs, env_state, reward, terminated, info = self.gymnax_env.step_env(
            key, state.env_state, self._gymnax_action(actions), params.gymnax
        )
        truncated = self.gymnax_env.is_truncated(env_state, params.gymnax)
        ts = self._timestep(obs, reward, terminated, truncated, self._cast_info(info))
        return FromGymnaxState(env_state=env_state, obs=obs), ts

    # ------------------------------------------------------------------ pixels
    def render_rgb(self, state: FromGymnaxState, params: FromGymnaxParams | None = None) -> np.ndarray:
        """uint8 ``[H, W, 3]`` picture of the gymnax state, for the envs in :data:`GYMNAX_DRAWINGS`.

        Raises:
            NotImplementedError: for any other gymnax env.
        """
        draw = GYMNAX_DRAWINGS.get(self.gymnax_env.name)
        if draw is None:
            raise NotImplementedError(
                f"{self.id} has no RGB rendering: alem draws only the gymnax envs "
                f"{sorted(GYMNAX_DRAWINGS)}, not {self.gymnax_env.name}"
            )
        params = self.default_params if params is None else params
        return draw(state.env_state, params.gymnax)


# ---------------------------------------------------------------------------- pictures
def _segment(img: np.ndarray, p: tuple[float, float], q: tuple[float, float], width: float, colour) -> None:
    """Paint the segment from ``p`` to ``q`` (``(x, y)`` pixels) ``width`` pixels thick, round ends."""
    yy, xx = np.mgrid[0 : img.shape[0], 0 : img.shape[1]]
    (px, py), (qx, qy) = p, q
    dx, dy = qx - px, qy - py
    t = np.clip(((xx - px) * dx + (yy - py) * dy) / max(dx * dx + dy * dy, 1e-9), 0.0, 1.0)
    img[(xx - px - t * dx) ** 2 + (yy - py - t * dy) ** 2 <= (width / 2) ** 2] = colour


def _draw_cartpole(state: Any, params: Any) -> np.ndarray:
    """300 x 200: track, cart at ``x`` (the track spans ``+-x_threshold``), pole at ``theta``."""
    h, w = 200, 300
    img = np.full((h, w, 3), 255, np.uint8)
    scale = w / (2 * float(params.x_threshold))
    mid = (w - 1) / 2  # pixel centres: the picture is symmetric about x = 0
    track_y = 140
    img[track_y, :] = 0
    img[track_y - 6 : track_y + 6, [0, w - 1]] = (200, 0, 0)  # the termination bounds, +-x_threshold
    cx = mid + float(state.x) * scale
    cart_w, cart_h = 30, 18
    img[track_y - cart_h // 2 : track_y + cart_h // 2, np.abs(np.arange(w) - cx) <= cart_w / 2] = 0
    axle = (cx, track_y - cart_h / 2)
    pole = 2 * float(params.length) * scale  # gymnax's length is half the pole
    theta = float(state.theta)  # positive: leaning right (towards +x)
    tip = (axle[0] + pole * math.sin(theta), axle[1] - pole * math.cos(theta))
    _segment(img, axle, tip, 8, (202, 152, 101))
    _segment(img, axle, axle, 6, (129, 132, 203))
    return img


def _draw_pendulum(state: Any, params: Any) -> np.ndarray:
    """200 x 200: the rod from the pivot at ``theta`` (0 upright, counter-clockwise positive) and the
    last torque as a bar from the centre at the bottom (right: positive)."""
    n = 200
    img = np.full((n, n, 3), 255, np.uint8)
    c, rod = n / 2, 0.4 * n
    theta = float(state.theta)
    end = (c - rod * math.sin(theta), c - rod * math.cos(theta))
    _segment(img, (c, c), end, 14, (204, 77, 77))
    _segment(img, (c, c), (c, c), 6, (0, 0, 0))
    u = float(np.clip(float(state.last_u) / float(params.max_torque), -1.0, 1.0))
    x0, x1 = sorted((int(c), int(round(c + u * 0.45 * n))))
    img[n - 14 : n - 6, x0 : max(x1, x0 + 1)] = (60, 60, 60)
    return img


#: gymnax env name -> ``draw(gymnax_state, gymnax_params) -> uint8 [H, W, 3]`` (host-side NumPy).
GYMNAX_DRAWINGS: dict[str, Any] = {"CartPole-v1": _draw_cartpole, "Pendulum-v1": _draw_pendulum}


def make_gymnax(name: str, **kwargs: Any) -> FromGymnax:
    """``gymnax.make(name, **kwargs)`` wrapped as a one-agent alem env (see :class:`FromGymnax`).

    ``render_rgb`` draws CartPole-v1 (track, cart, pole) and Pendulum-v1 (rod, torque); other
    gymnax envs raise ``NotImplementedError`` there.
    """
    import gymnax  # importable: the module checked its extra on import

    env, params = gymnax.make(name, **kwargs)
    return FromGymnax(env, params)


# ---------------------------------------------------------------------------- alem -> gymnax
@struct.dataclass
class ToGymnaxState(gx_env.EnvState):
    """State of a :class:`ToGymnax` env.

    Attributes:
        time: steps taken since the last reset (gymnax convention).
        env_state: the alem env state.
        terminated: the alem ``terminated`` flag of the last transition.
        truncated: the alem ``truncated`` flag of the last transition (what
            :meth:`ToGymnax.is_truncated` returns).
    """

    time: Any
    env_state: Any
    terminated: Array
    truncated: Array


class ToGymnax(gx_env.Environment[ToGymnaxState, Any]):
    """A single-agent alem env as a gymnax ``Environment``.

    Use it to run a one-agent alem env with gymnax tooling. The agent axis is
    dropped: actions are scalars (discrete) or ``[d]`` floats (continuous),
    observations and rewards lose their leading ``[1]``.

    - ``step_env(key, state, action, params)`` is alem's public ``step`` (with its
      checks and illegal-action policy) and returns ``(obs, state, reward,
      terminated, info)`` with alem's ``terminated`` and ``info``.
    - ``is_truncated(state, params)`` returns alem's ``truncated`` flag of the last
      transition (stored in the state), so gymnax's ``step`` reports ``terminated``
      and ``truncated`` exactly as alem does and auto-resets on either.
    - ``default_params`` are the alem env's params; spaces are alem's agent-0 spaces
      converted to gymnax ``Discrete``/``Box``.

    Raises:
        EnvArgumentError: if the alem env has more than one agent, or spaces that
            gymnax cannot express.
    """

    def __init__(self, alem_env: MultiAgentEnv):
        super().__init__()
        n = alem_env.num_agents
        if n != 1:
            raise EnvArgumentError(
                f"ToGymnax needs a single-agent alem env, but {alem_env.id} has num_agents={n} "
                f"(agents={list(alem_env.agents)})"
            )
        self.alem_env = alem_env
        self._obs_space = to_gymnax_space(alem_env.observation_space(0), "observation space")
        self._act_space = to_gymnax_space(alem_env.action_space(0), "action space")
        self._alem_action_shape = (1, *alem_env.action_space(0).shape)

    @property
    def default_params(self) -> Any:
        return self.alem_env.default_params

    def _alem_actions(self, action: int | float | jax.Array) -> jax.Array:
        a = jnp.asarray(action)
        if a.size == math.prod(self._alem_action_shape):
            return a.reshape(self._alem_action_shape)
        return a[None]  # wrong size: let alem's check name the expected shape

    def reset_env(self, key: jax.Array, params: Any) -> tuple[Any, ToGymnaxState]:
        env_state, ts = self.alem_env.reset(key, params)
        state = ToGymnaxState(
            time=jnp.int32(0), env_state=env_state, terminated=ts.terminated, truncated=ts.truncated
        )
        return ts.obs[0], state

    def step_env(
        self, key: jax.Array, state: ToGymnaxState, action: int | float | jax.Array, params: Any
    ) -> tuple[Any, ToGymnaxState, jax.Array, jax.Array, dict[Any, Any]]:
        env_state, ts = self.alem_env.step(key, state.env_state, self._alem_actions(action), params)
        new_state = ToGymnaxState(
            time=state.time + 1, env_state=env_state, terminated=ts.terminated, truncated=ts.truncated
        )
        return ts.obs[0], new_state, ts.reward[0], ts.terminated, dict(ts.info)

    def get_obs(self, state: ToGymnaxState, params: Any = None, key: jax.Array | None = None) -> jax.Array:
        params = self.default_params if params is None else params
        return self.alem_env.observe(state.env_state, params)[0]

    def is_truncated(self, state: ToGymnaxState, params: Any) -> jax.Array:
        return state.truncated

    def is_terminated(self, state: ToGymnaxState, params: Any) -> jax.Array:
        return state.terminated

    @property
    def name(self) -> str:
        return self.alem_env.id

    @property
    def num_actions(self) -> int:
        space = self._act_space
        return int(space.n) if isinstance(space, gx_spaces.Discrete) else math.prod(space.shape)

    def action_space(self, params: Any = None) -> gx_spaces.Space:
        return self._act_space

    def observation_space(self, params: Any = None) -> gx_spaces.Space:
        return self._obs_space
