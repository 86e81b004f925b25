"""The MPE env base class shared by every scenario: state, params, spaces, actions, rendering.

The world's entities and their physics are in :mod:`alem.envs.coordination.mpe.physics`;
each scenario module subclasses :class:`MPEEnv` with its observations and rewards.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.envs.coordination.mpe.physics import Layout, physics_step
from alem.errors import EnvArgumentError

__all__ = ["MPEState", "MPEParams", "MPEEnv", "Scenario", "MOVES", "DEFAULT_MAX_STEPS"]

#: A movable agent's moves (mpe2's order), and their indices.
MOVES = ("no-op", "left", "right", "down", "up")
NOOP, LEFT, RIGHT, DOWN, UP = range(len(MOVES))
NUM_MOVES = len(MOVES)
#: Episode length in steps of every scenario unless ``max_steps`` says otherwise (mpe2's default).
DEFAULT_MAX_STEPS = 25


@struct.dataclass
class MPEState:
    """One world: ``pos``/``vel`` float32 ``[E, 2]``, ``comm`` float32 ``[A, dim_c]``,
    ``goal`` int32 ``[G]`` (scenario-specific landmark indices), ``step`` int32 ``[]``."""

    pos: jax.Array
    vel: jax.Array
    comm: jax.Array
    goal: jax.Array
    step: jax.Array


@struct.dataclass
class MPEParams(EnvParams):
    """``max_steps``: episode length in steps (truncation; mpe2's ``max_cycles``);
    ``local_ratio``: weight of each agent's local reward against the shared one (used by
    simple_spread and simple_reference)."""

    max_steps: jax.Array
    local_ratio: jax.Array


@dataclasses.dataclass(frozen=True)
class Scenario:
    """What a scenario builds: its world's entities and the agents in it (``roles[i]`` indexes
    ``role_names``; ``obs_dims[i]`` is agent i's real observation width)."""

    layout: Layout
    agents: Sequence[str]
    roles: Sequence[int]
    role_names: Sequence[str]
    obs_dims: Sequence[int]


def at_least(scenario: str, **counts: tuple[int, int]) -> None:
    """Refuse a count below its minimum: ``at_least("SimpleTag", num_good=(value, 1))``."""
    for name, (value, low) in counts.items():
        if int(value) < low:
            raise EnvArgumentError(f"{scenario}: {name} must be >= {low}, got {value}")


class MPEEnv(MultiAgentEnv[MPEState, MPEParams]):
    """Shared machinery of the MPE scenarios (see :mod:`alem.envs.coordination.mpe`).

    One constructor for every scenario: it takes the options all of them share
    (``continuous_actions``, ``max_steps``/``max_cycles``, ``illegal_action``, and ``local_ratio``
    where ``uses_local_ratio``) and builds the world :meth:`scenario` describes. A scenario with
    counts of its own (``num_good`` ...) checks and stores them in its ``__init__``, then calls
    ``super().__init__(**options)``; the class's signature (what :func:`alem.make` checks keywords
    against, and what ``help`` shows) is its own counts followed by the shared options.
    Subclasses implement :meth:`scenario`, :meth:`observe`, :meth:`rewards`,
    :meth:`entity_colors` and, where goals are sampled, :meth:`sample_goals`.

    Actions (mpe2's encoding): a movable agent's move is one of ``no-op, left, right, down,
    up``; an agent that speaks picks one of ``dim_c`` words. Discrete: a movable speaker has
    ``5 * dim_c`` actions ``move + 5 * word``, a silent mover 5, an immovable speaker
    ``dim_c``; padded actions are illegal in the mask. Continuous (``continuous_actions=True``):
    a vector in ``[0, 1]``, ``[noop, left, right, down, up]`` (force ``right - left``,
    ``up - down``) followed by the ``dim_c`` message, or only the message for immovable agents;
    padded dimensions are ignored and masked False.

    Horizon: every scenario takes ``max_steps`` (default 25), the keyword alem's other envs
    use; ``max_cycles``, mpe2's name for it, is accepted as an alias (not both at once).
    """

    stochastic: ClassVar[bool] = True  # reset draws positions and goals; steps draw nothing
    cheap_reset: ClassVar[bool] = True  # a few uniform draws and the observation
    version: ClassVar[int] = 0

    #: Whether the rewards read ``params.local_ratio`` (simple_spread, simple_reference); the
    #: other scenarios refuse the keyword.
    uses_local_ratio: ClassVar[bool] = False

    layout: Layout
    obs_dims: tuple[int, ...]
    num_goals: int = 0

    def __init__(
        self,
        *,
        continuous_actions: bool = False,
        max_steps: int | None = None,
        max_cycles: int | None = None,
        local_ratio: float | None = None,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        name = type(self).__name__
        if local_ratio is None:
            local_ratio = 0.5
        elif not self.uses_local_ratio:
            raise EnvArgumentError(f"{name}: local_ratio is not read by this scenario's rewards")
        scenario = self.scenario()
        if max_steps is not None and max_cycles is not None:
            raise EnvArgumentError(
                f"{name}: pass max_steps or max_cycles (mpe2's name for it), not both; "
                f"got max_steps={max_steps} and max_cycles={max_cycles}"
            )
        key, max_steps = ("max_cycles", max_cycles) if max_cycles is not None else ("max_steps", max_steps)
        max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
        if int(max_steps) < 1:
            raise EnvArgumentError(f"{name}: {key} must be >= 1, got {max_steps}")
        if not 0.0 <= float(local_ratio) <= 1.0:
            raise EnvArgumentError(f"{name}: local_ratio must be in [0, 1], got {local_ratio}")
        self.layout = layout = scenario.layout
        self.agents = tuple(scenario.agents)
        self.agent_roles = np.asarray(scenario.roles, dtype=np.int32)
        self.role_names = tuple(scenario.role_names)
        self.obs_dims = tuple(int(d) for d in scenario.obs_dims)
        self.obs_width = max(self.obs_dims)
        self.continuous_actions = bool(continuous_actions)
        self._max_steps = int(max_steps)
        self._local_ratio = float(local_ratio)
        a, c = layout.num_agents, layout.dim_c
        mov = layout.movable[:a]
        speaks = ~layout.silent & (c > 0)
        self._speaks = speaks
        if self.continuous_actions:
            self._act_dims = np.where(mov, NUM_MOVES, 0) + np.where(speaks, c, 0)
        else:
            self._act_dims = np.where(mov, NUM_MOVES, 1) * np.where(speaks, c, 1)
        width = int(self._act_dims.max())
        self._act_mask = np.arange(width)[None, :] < self._act_dims[:, None]
        # Flat positions of the real (unpadded) observation entries, for global_state.
        self._obs_real = np.flatnonzero(
            np.arange(self.obs_width)[None, :] < np.asarray(self.obs_dims)[:, None]
        )

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> MPEParams:
        return MPEParams(max_steps=jnp.int32(self._max_steps), local_ratio=jnp.float32(self._local_ratio))

    def check_params(self, params: MPEParams) -> None:
        """The type, and where concrete: ``max_steps >= 1`` and ``local_ratio`` in [0, 1]."""
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)
        self._check_param_range(params, "local_ratio", 0.0, 1.0)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._max_steps)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        """Real entries are unbounded; padded entries (beyond ``obs_dims[i]``) are always 0."""
        real = np.arange(self.obs_width)[None, :] < np.asarray(self.obs_dims)[:, None]
        low = np.where(real, -np.inf, 0.0)
        high = np.where(real, np.inf, 0.0)
        if agent is not None:
            return spaces.Box(low[agent], high[agent])
        return spaces.Box(low, high)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        n = self.num_agents
        if self.continuous_actions:
            if agent is not None:
                return spaces.Box(0.0, 1.0, (int(self._act_dims[agent]),))
            return spaces.Box(0.0, 1.0, (n, self._act_mask.shape[1]))
        if agent is not None:
            return spaces.Discrete(int(self._act_dims[agent]))
        return spaces.MultiDiscrete(self._act_dims)

    def global_state_space(self) -> spaces.Space:
        return spaces.Box(-np.inf, np.inf, (int(sum(self.obs_dims)),))

    def global_state(self, state: MPEState, params: MPEParams | None = None) -> jax.Array:
        """Every agent's true observation, concatenated in agent order (= mpe2's ``state()``)."""
        params = self.default_params if params is None else params
        flat = self.observe(state, params).reshape(-1)
        return flat if self._obs_real.size == flat.size else flat[self._obs_real]

    def action_mask(self, state: MPEState, params: MPEParams) -> jax.Array:
        return jnp.asarray(self._act_mask)

    def sanitize_actions(
        self, state: MPEState, actions: jax.Array, params: MPEParams
    ) -> tuple[jax.Array, jax.Array]:
        """The base class's rule (an illegal action becomes the first legal one, 0) for a mask
        that never changes: elementwise range checks instead of a gather from the mask."""
        if self.continuous_actions:
            return super().sanitize_actions(state, actions, params)
        legal = (actions >= 0) & (actions < jnp.asarray(self._act_dims, actions.dtype))
        return jnp.where(legal, actions, 0), ~legal

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__signature__ = _constructor_signature(cls)

    # ------------------------------------------------------------------ scenario hooks
    def scenario(self) -> Scenario:
        """The world and its agents, from the counts ``__init__`` stored."""
        raise NotImplementedError

    def sample_goals(self, key: jax.Array) -> jax.Array:
        """int32 ``[num_goals]`` goal/landmark assignments drawn at reset."""
        return jnp.zeros((0,), jnp.int32)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        raise NotImplementedError

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        """float32 ``[A]`` rewards of the world after a physics step."""
        raise NotImplementedError

    def entity_colors(self, state: MPEState) -> np.ndarray:
        """RGB in ``[0, 1]``, ``[E, 3]``, for rendering (host NumPy, unbatched state)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ dynamics
    def reset_env(self, key: jax.Array, params: MPEParams) -> tuple[MPEState, TimeStep]:
        lay = self.layout
        # Reset runs every step under the per-env AutoReset: no key split when there are no goals to draw.
        k_pos, k_goal = jax.random.split(key) if self.num_goals else (key, None)
        u = jax.random.uniform(k_pos, (lay.num_entities, 2), jnp.float32, -1.0, 1.0)
        pos = u if (lay.spawn == 1.0).all() else u * jnp.asarray(lay.spawn)[:, None]
        state = MPEState(
            pos=pos,
            vel=jnp.zeros_like(pos),
            comm=jnp.zeros((lay.num_agents, lay.dim_c), jnp.float32),
            goal=self.sample_goals(k_goal) if self.num_goals else jnp.zeros((0,), jnp.int32),
            step=jnp.int32(0),
        )
        reward = jnp.zeros((lay.num_agents,), jnp.float32)
        return state, self.timestep(state, params, reward)

    def decode_actions(self, actions: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Action force ``[A, 2]`` (already times ``accel``) and message ``[A, dim_c]``."""
        lay = self.layout
        a, c = lay.num_agents, lay.dim_c
        mov = lay.movable[:a]
        speaks = self._speaks
        if self.continuous_actions:
            if mov.any():
                ux = actions[:, 2] - actions[:, 1]
                uy = actions[:, 4] - actions[:, 3]
                u = jnp.stack([ux, uy], axis=-1)
            else:
                u = jnp.zeros((a, 2), jnp.float32)
            parts = []
            if (mov & speaks).any():
                parts.append((mov, actions[:, NUM_MOVES : NUM_MOVES + c]))
            if (~mov & speaks).any():
                parts.append((~mov, actions[:, :c]))
            comm = jnp.zeros((a, c), jnp.float32)
            for where, value in parts:
                comm = jnp.where(where[:, None], value, comm)
        else:
            both = mov & speaks
            move = jnp.where(both, actions % NUM_MOVES, actions) if both.any() else actions
            word = jnp.where(both, actions // NUM_MOVES, actions) if both.any() else actions
            ux = (move == RIGHT).astype(jnp.float32) - (move == LEFT).astype(jnp.float32)
            uy = (move == UP).astype(jnp.float32) - (move == DOWN).astype(jnp.float32)
            u = jnp.stack([ux, uy], axis=-1)
            comm = jax.nn.one_hot(word, c, dtype=jnp.float32) if c > 0 else jnp.zeros((a, 0), jnp.float32)
        if speaks.all():
            pass
        elif speaks.any():
            comm = jnp.where(speaks[:, None], comm, 0.0)
        else:
            comm = jnp.zeros((a, c), jnp.float32)
        u = u * jnp.asarray(lay.accel)[:, None]
        return u, comm

    def step_env(
        self, key: jax.Array, state: MPEState, actions: jax.Array, params: MPEParams
    ) -> tuple[MPEState, TimeStep]:
        u, comm = self.decode_actions(actions)
        # A run-time zero (the step counter is never negative) for bit-reproducible arithmetic.
        zero = jax.lax.shift_right_logical(state.step, 31).astype(jnp.uint32)
        pos, vel = physics_step(self.layout, state.pos, state.vel, u, zero)
        state = state.replace(pos=pos, vel=vel, comm=comm, step=state.step + 1)
        reward = self.rewards(state, params).astype(jnp.float32)
        return state, self.timestep(state, params, reward, truncated=state.step >= params.max_steps)

    # ------------------------------------------------------------------ rendering
    def render_rgb(self, state: MPEState, params: MPEParams | None = None, size: int = 256) -> np.ndarray:
        """uint8 ``[size, size, 3]`` picture of one (unbatched) state: white arena, entities as
        outlined discs (landmarks below agents), ``y`` up; the view covers ``[-1, 1]^2`` and
        widens to keep every entity in sight. Each speaking agent's last message is a row of
        ``dim_c`` cells in the top-left corner (light grey = 0, black = 1)."""
        pos = np.asarray(state.pos, dtype=np.float64)
        if pos.ndim != 2:
            raise EnvArgumentError(
                f"{self.id}.render_rgb: pass one state, not a batch (pos shape {pos.shape})"
            )
        radius = self.layout.size.astype(np.float64)
        colors = np.clip(np.asarray(self.entity_colors(state), dtype=np.float64), 0.0, 1.0)
        extent = max(1.0, float(np.max(np.abs(pos) + radius[:, None]))) * 1.05
        scale = size / (2.0 * extent)
        centers = np.empty_like(pos)
        centers[:, 0] = (pos[:, 0] + extent) * scale
        centers[:, 1] = (extent - pos[:, 1]) * scale
        yy, xx = np.mgrid[0:size, 0:size] + 0.5
        img = np.full((size, size, 3), 255.0)
        a = self.layout.num_agents
        order = list(range(a, len(pos))) + list(range(a))
        for e in order:
            r = max(radius[e] * scale, 1.5)
            d = np.hypot(xx - centers[e, 0], yy - centers[e, 1])
            img[d <= r] = colors[e] * 255.0
            img[(d <= r) & (d > r - 1.2)] = 0.0
        speakers = np.flatnonzero(self._speaks)
        if speakers.size:
            comm = np.clip(np.asarray(state.comm, dtype=np.float64), 0.0, 1.0)
            cell = max(size // 40, 2)
            for row, k in enumerate(speakers):
                for j, value in enumerate(comm[k]):
                    y0, x0 = cell + row * (cell + 2), cell + j * (cell + 1)
                    img[y0 : y0 + cell, x0 : x0 + cell] = 225.0 * (1.0 - value)  # light grey = 0
        return img.astype(np.uint8)


def _constructor_signature(cls: type[MPEEnv]) -> inspect.Signature:
    """A scenario's own counts, then the shared options it reads (``local_ratio`` only where
    ``uses_local_ratio``, shown with its effective default)."""
    base = inspect.signature(MPEEnv.__init__).parameters
    own = [
        p
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self" and p.name not in base and p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    shared = []
    for p in base.values():
        if p.name == "self":
            continue
        if p.name == "local_ratio":
            if not cls.uses_local_ratio:
                continue
            p = p.replace(annotation="float", default=0.5)
        shared.append(p)
    return inspect.Signature(own + shared)
