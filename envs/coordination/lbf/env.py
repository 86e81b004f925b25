"""Level-Based Foraging: the env (spaces, dynamics, observations); its card is on the class.

Reset-side layouts are drawn by :mod:`~alem.envs.coordination.lbf.generator`, text and RGB
output come from :mod:`~alem.envs.coordination.lbf.viewer`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv, TimeStep
from alem.envs.coordination.lbf import viewer
from alem.envs.coordination.lbf.generator import LBFGenerator
from alem.envs.coordination.lbf.types import (
    ACTION_ALIASES,
    ACTION_DELTAS,
    ACTION_NAMES,
    COOP_AGENTS,
    LOAD,
    NOOP,
    LBFParams,
    LBFState,
)
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = ["LBFParams", "LBFState", "LevelBasedForaging", "ACTION_NAMES"]

#: Default time limit (lbforaging's ``max_episode_steps`` default).
DEFAULT_MAX_STEPS = 50


def _int_pair(value: int | tuple[int, int], name: str) -> tuple[int, int]:
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    try:
        a, b = value
        return int(a), int(b)
    except (TypeError, ValueError):
        raise EnvArgumentError(
            f"LevelBasedForaging: {name} must be an int or (rows, cols), got {value!r}"
        ) from None


class LevelBasedForaging(TextHooks, MultiAgentEnv[LBFState, LBFParams]):
    """Level-Based Foraging (LBF): agents with levels cooperate to load food of higher levels.

    Card
    ----
    - **Agents**: ``agent_0 .. agent_{N-1}`` on a ``rows x cols`` grid, each with a
      level drawn uniformly from ``[min_agent_level, max_agent_level]`` at reset.
      One role (``forager``).
    - **Food**: up to ``num_food`` items with levels, never on the border rows and
      columns and spaced so that no two food items touch (not even diagonally) or sit
      two cells apart in a straight line; hence every cell is next to at most one food.
      Food levels are uniform in ``[min_food_level, max_food_level]``; with
      ``max_food_level=None`` the upper bound is the sum of the (up to) three lowest
      agent levels of the episode, and ``force_coop`` sets every food to that upper
      bound. Agents are placed first, uniformly on distinct cells; each food is then
      placed uniformly among the cells still allowed (lbforaging's rejection sampler
      draws from the same distribution; it gives up after 1000 tries, alem only when
      no allowed cell is left).
    - **Actions**: ``Discrete(6)``: 0 ``noop``, 1 ``north`` (row - 1), 2 ``south``,
      3 ``west`` (column - 1), 4 ``east``, 5 ``load``. A move off the grid or onto
      food, and ``load`` with no food next to the agent, are invalid and act as
      ``noop`` (lbforaging's rule). With ``mask_invalid=True`` (default) the action
      mask is lbforaging's set of valid actions, so a masked action is replaced by
      ``noop`` (action 0) and flagged in ``info["illegal_action"]``; with
      ``mask_invalid=False`` every action is legal and invalid ones silently do
      nothing, as in EPyMARL's LBF wrapper.
    - **Moves**: simultaneous. Every agent claims a cell (its target, or its own
      cell for ``noop``/``load``/an invalid move); an agent moves only when no other
      agent claims the same cell. So two agents entering one cell both stay, an agent
      cannot enter the cell of an agent that stays, two agents may swap cells, and an
      agent may follow one that leaves. As in lbforaging, an agent can end on the cell
      of an agent whose own move was blocked; such agents share the cell until one
      leaves.
    - **Loading**: every food next to (4-neighbourhood) at least one agent that
      chose a valid ``load`` is loaded when the summed levels of those loading agents
      reach the food level; the food disappears.
    - **Rewards**: on a successful load, each loading agent ``i`` gets
      ``level_i * food_level / (sum of loading levels * total food level spawned)``
      with ``normalize_reward`` (default), so the agents' rewards over a whole episode
      sum to at most 1; without it, ``level_i * food_level`` (lbforaging's rule).
      Loading agents of a failed load get ``-penalty`` (default 0).
    - **Observation** (``grid_observation=False``, default): lbforaging's vector,
      ``float32 [3 * num_food + 3 * N]`` (``2 * N`` for the agents when
      ``observe_agent_levels=False``): first one ``(row, col, level)`` triple per food
      the agent sees (``|d_row| <= sight`` and ``|d_col| <= sight``), in row-major
      order, then ``(row, col, level)`` for the agent itself followed by the other
      agents it sees in index order; empty slots are ``(-1, -1, 0)``. Coordinates are
      relative to the top-left corner of the agent's view, ``max(pos - sight, 0)``.
      lbforaging's agent-visibility test reaches up to ``2 * sight`` cells below or
      right of that corner, so near the top or left border agents see other agents
      further away than food; alem reproduces this.
      With ``grid_observation=True``: ``float32 [3, 2*sight+1, 2*sight+1]`` planes
      centred on the agent: agent levels (1 without levels; the highest-index agent
      where two share a cell), food levels, and free cells (1 inside the grid with no
      agent or food).
    - **Global state** (``env.global_state``): ``float32 [3 * N + 3 * num_food]``,
      absolute ``(row, col, level)`` of every agent, then of every food
      (``(-1, -1, 0)`` once loaded or never placed).
    - **Termination**: ``terminated`` when no food is left; ``truncated`` after
      ``max_steps`` steps (default 50; lbforaging's ``max_episode_steps``, accepted as an
      alias). lbforaging reports both as ``done`` (its ``truncated`` is always False).
    - **Reference**: ``lbforaging`` 2.0.0 (``lbforaging.foraging.ForagingEnv``, the
      EPyMARL LBF): positions, levels, food, rewards, dones, valid actions and the
      vector and grid observations are checked step by step against it
      (tests/envs/coordination/test_lbf.py). Registered ids and their lbforaging
      names: ``lbf-v0`` = ``Foraging-8x8-2p-2f-v3``, ``lbf_8x8_2p_2f_coop-v0`` =
      ``Foraging-8x8-2p-2f-coop-v3``, ``lbf_2s_10x10_3p_3f-v0`` =
      ``Foraging-2s-10x10-3p-3f-v3``.
    - **Text**: rules, an ASCII grid with levels limited to the agent's sight,
      action names with aliases (``up``, ``stay``, ``pick up``, ...), parser.
    - **Version**: v0.

    Static (shape-changing) options are constructor arguments; ``params`` holds
    ``max_steps``, ``penalty``, ``force_coop`` and ``normalize_reward``.

    Args:
        grid_size: ``n`` for an ``n x n`` grid, or ``(rows, cols)``; at least 3 x 3.
        num_agents: number of agents.
        num_food: number of food items placed at reset (fewer if no allowed cell is left).
        min_agent_level, max_agent_level: range of agent levels.
        min_food_level: lowest food level (>= 1).
        max_food_level: highest food level; ``None`` (lbforaging's default) uses the sum
            of the (up to) three lowest agent levels of the episode.
        sight: view radius; ``None`` sees the whole grid (lbforaging's ``sight=grid size``).
        force_coop: every food at the maximum level (a params field).
        max_steps: time limit (``truncated``; a params field); default 50.
        max_episode_steps: lbforaging's name for ``max_steps``, accepted as an alias;
            passing both is an error.
        penalty: reward of each agent in a failed load is ``-penalty`` (a params field).
        normalize_reward: divide rewards by (loaders' summed level * total food level spawned) (a params field).
        observe_agent_levels: include agent levels in the vector observation.
        grid_observation: observe ``[3, 2*sight+1, 2*sight+1]`` planes instead of the vector.
        mask_invalid: the action mask marks invalid moves/loads illegal (else all legal).
    """

    cooperative: ClassVar[bool] = True  # the agents share one goal (alem.core.MultiAgentEnv)

    stochastic: ClassVar[bool] = True  # layouts and levels are drawn at reset

    def __init__(
        self,
        grid_size: int | tuple[int, int] = 8,
        num_agents: int = 2,
        num_food: int = 2,
        *,
        min_agent_level: int = 1,
        max_agent_level: int = 2,
        min_food_level: int = 1,
        max_food_level: int | None = None,
        sight: int | None = None,
        force_coop: bool = False,
        max_steps: int | None = None,
        max_episode_steps: int | None = None,
        penalty: float = 0.0,
        normalize_reward: bool = True,
        observe_agent_levels: bool = True,
        grid_observation: bool = False,
        mask_invalid: bool = True,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        rows, cols = _int_pair(grid_size, "grid_size")
        name = "LevelBasedForaging"
        if rows < 3 or cols < 3:
            raise EnvArgumentError(f"{name}: grid_size must be at least 3 x 3 (food avoids the border)")
        if not 1 <= int(num_agents) <= rows * cols:
            raise EnvArgumentError(f"{name}: num_agents must be in [1, {rows * cols}], got {num_agents}")
        if int(num_food) < 1:
            raise EnvArgumentError(f"{name}: num_food must be >= 1, got {num_food}")
        if not 1 <= int(min_agent_level) <= int(max_agent_level):
            raise EnvArgumentError(
                f"{name}: need 1 <= min_agent_level <= max_agent_level, got {min_agent_level}, {max_agent_level}"
            )
        lowest_cap = min(COOP_AGENTS, int(num_agents)) * int(min_agent_level)
        top = lowest_cap if max_food_level is None else int(max_food_level)
        if not 1 <= int(min_food_level) <= top:
            raise EnvArgumentError(
                f"{name}: need 1 <= min_food_level <= max_food_level (with max_food_level=None the "
                f"maximum can be as low as {lowest_cap}), got min_food_level={min_food_level}, "
                f"max_food_level={max_food_level}"
            )
        sight = max(rows, cols) if sight is None else int(sight)
        if sight < 1:
            raise EnvArgumentError(f"{name}: sight must be >= 1 (or None for the whole grid), got {sight}")
        if max_steps is not None and max_episode_steps is not None:
            raise EnvArgumentError(
                f"{name}: pass max_steps or its alias max_episode_steps (lbforaging's name), not both; "
                f"got max_steps={max_steps}, max_episode_steps={max_episode_steps}"
            )
        # Errors name the keyword the caller used.
        steps_kw, steps = (
            ("max_episode_steps", max_episode_steps)
            if max_episode_steps is not None
            else ("max_steps", max_steps)
        )
        steps = DEFAULT_MAX_STEPS if steps is None else steps
        if int(steps) < 1:
            raise EnvArgumentError(f"{name}: {steps_kw} must be >= 1, got {steps}")

        self.rows, self.cols = rows, cols
        self.num_food = int(num_food)
        self.min_agent_level, self.max_agent_level = int(min_agent_level), int(max_agent_level)
        self.min_food_level = int(min_food_level)
        self.max_food_level = None if max_food_level is None else int(max_food_level)
        self.sight = sight
        self.observe_agent_levels = bool(observe_agent_levels)
        self.grid_observation = bool(grid_observation)
        self.mask_invalid = bool(mask_invalid)
        self.agents = tuple(f"agent_{i}" for i in range(int(num_agents)))
        self.agent_roles = np.zeros(int(num_agents), dtype=np.int32)
        self.role_names = ("forager",)
        # Bound of any food level (lbforaging's observation-space bound).
        self.food_level_bound = (
            self.max_food_level
            if self.max_food_level is not None
            else min(COOP_AGENTS, int(num_agents)) * self.max_agent_level
        )
        self.generator = LBFGenerator(
            rows=rows,
            cols=cols,
            num_agents=int(num_agents),
            num_food=self.num_food,
            min_agent_level=self.min_agent_level,
            max_agent_level=self.max_agent_level,
            min_food_level=self.min_food_level,
            max_food_level=self.max_food_level,
        )
        self._default_params = LBFParams(
            max_steps=jnp.int32(steps),
            penalty=jnp.float32(penalty),
            force_coop=jnp.bool_(force_coop),
            normalize_reward=jnp.bool_(normalize_reward),
        )

    # ------------------------------------------------------------------ description
    def check_params(self, params: LBFParams) -> None:
        """The type, and where concrete: ``max_steps >= 1``."""
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._default_params.max_steps)

    def _one_obs_space(self) -> spaces.Box:
        n, f = self.num_agents, self.num_food
        if self.grid_observation:
            w = 2 * self.sight + 1
            agent_top = self.max_agent_level if self.observe_agent_levels else 1
            high = np.stack(
                [np.full((w, w), agent_top), np.full((w, w), self.food_level_bound), np.ones((w, w))]
            )
            return spaces.Box(np.zeros_like(high), high)
        per_agent = 3 if self.observe_agent_levels else 2
        food_high = np.tile([self.rows - 1, self.cols - 1, self.food_level_bound], f)
        agent_high = np.tile([self.rows - 1, self.cols - 1, self.max_agent_level][:per_agent], n)
        food_low = np.tile([-1, -1, 0], f)
        agent_low = np.tile([-1, -1, 0][:per_agent], n)
        return spaces.Box(np.concatenate([food_low, agent_low]), np.concatenate([food_high, agent_high]))

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = self._one_obs_space()
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(len(ACTION_NAMES))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def global_state_space(self) -> spaces.Space:
        n, f = self.num_agents, self.num_food
        high = np.concatenate(
            [
                np.tile([self.rows - 1, self.cols - 1, self.max_agent_level], n),
                np.tile([self.rows - 1, self.cols - 1, self.food_level_bound], f),
            ]
        )
        low = np.concatenate([np.tile([0, 0, 1], n), np.tile([-1, -1, 0], f)])
        return spaces.Box(low, high)

    # ------------------------------------------------------------------ dynamics
    def reset_env(self, key: jax.Array, params: LBFParams) -> tuple[LBFState, TimeStep]:
        state = self.generator(key, params)
        zero = jnp.zeros((self.num_agents,), jnp.float32)
        return state, self.timestep(state, params, zero)

    def _valid(self, state: LBFState) -> tuple[jax.Array, jax.Array]:
        """(valid bool [N, 6], adjacent bool [N, F]: food next to each agent)."""
        alive = state.food_level > 0
        targets = state.agent_pos[:, None, :] + jnp.asarray(ACTION_DELTAS)[None]  # [N, 6, 2]
        inside = (
            (targets[..., 0] >= 0)
            & (targets[..., 0] < self.rows)
            & (targets[..., 1] >= 0)
            & (targets[..., 1] < self.cols)
        )
        onto_food = ((targets[:, :, None, :] == state.food_pos[None, None]).all(-1) & alive).any(-1)
        d = jnp.abs(state.agent_pos[:, None, :] - state.food_pos[None]).sum(-1)
        adjacent = (d == 1) & alive[None]
        move = inside & ~onto_food
        valid = move.at[:, NOOP].set(True).at[:, LOAD].set(adjacent.any(-1))
        return valid, adjacent

    def action_mask(self, state: LBFState, params: LBFParams) -> jax.Array:
        if not self.mask_invalid:
            return jnp.ones((self.num_agents, len(ACTION_NAMES)), dtype=bool)
        return self._valid(state)[0]

    def step_env(self, key, state: LBFState, actions: jax.Array, params: LBFParams):
        valid, adjacent = self._valid(state)
        actions = jnp.where(jnp.take_along_axis(valid, actions[:, None], 1)[:, 0], actions, NOOP)
        claim = state.agent_pos + jnp.asarray(ACTION_DELTAS)[actions]  # noop/load claim their own cell
        claimed_by = (claim[:, None, :] == claim[None, :, :]).all(-1).sum(-1)
        agent_pos = jnp.where((claimed_by == 1)[:, None], claim, state.agent_pos)

        # Loaders never move, so adjacency before the move is adjacency after it.
        group = (actions == LOAD)[:, None] & adjacent  # [N, F]
        lvl = state.agent_level
        group_level = (group * lvl[:, None]).sum(0)  # [F]
        success = group.any(0) & (group_level >= state.food_level)  # [F]
        # lbforaging: level * food, divided by (group level * food spawned) when normalising;
        # exact integers with one rounding.
        num = (lvl[:, None] * state.food_level[None]).astype(jnp.float32)
        den = jnp.where(
            params.normalize_reward, jnp.maximum(group_level, 1).astype(jnp.float32) * state.food_spawned, 1.0
        )
        reward = jnp.where(group & success[None], num / den[None], 0.0).sum(-1)
        failed = (group & ~success[None]).any(-1)
        reward = reward - params.penalty * failed

        food_level = jnp.where(success, 0, state.food_level)
        state = state.replace(agent_pos=agent_pos, food_level=food_level, step=state.step + 1)
        terminated = ~(food_level > 0).any()
        truncated = ~terminated & (state.step >= params.max_steps)
        return state, self.timestep(state, params, reward, terminated=terminated, truncated=truncated)

    # ------------------------------------------------------------------ observations
    def observe(self, state: LBFState, params: LBFParams) -> jax.Array:
        if self.grid_observation:
            return self._grid_obs(state)
        return self._vector_obs(state)

    def _vector_obs(self, state: LBFState) -> jax.Array:
        n, s = self.num_agents, self.sight
        pos, fpos = state.agent_pos, state.food_pos
        origin = jnp.maximum(pos - s, 0)  # [N, 2], top-left of each agent's view

        # Food: inside the (clipped) square of radius `sight`, in row-major order.
        alive = state.food_level > 0
        sees_food = (jnp.abs(fpos[None] - pos[:, None]) <= s).all(-1) & alive[None]  # [N, F]
        key = fpos[:, 0] * self.cols + fpos[:, 1]
        before = sees_food[:, None, :] & (key[None, None, :] < key[None, :, None])  # [N, F, F']
        food_slot = jnp.where(sees_food, before.sum(-1), -1)  # [N, F]
        food_rel = fpos[None] - origin[:, None]  # [N, F, 2]
        food_vals = jnp.concatenate(
            [food_rel, jnp.broadcast_to(state.food_level, (n, self.num_food))[..., None]], -1
        )
        food_obs = self._pack(food_slot, food_vals, self.num_food)

        # Agents: self first, then the others it sees, in index order.
        rel = pos[None] - origin[:, None]  # [N(viewer), N(seen), 2]
        sees = (rel >= 0).all(-1) & (rel <= 2 * s).all(-1)
        others = sees & ~jnp.eye(n, dtype=bool)
        earlier = jnp.tril(jnp.ones((n, n), dtype=bool), -1)  # earlier[j, k]: k < j
        rank = 1 + (others[:, None, :] & earlier[None]).sum(-1)  # [N, N]
        slot = jnp.where(jnp.eye(n, dtype=bool), 0, jnp.where(others, rank, -1))
        vals = rel
        if self.observe_agent_levels:
            vals = jnp.concatenate([rel, jnp.broadcast_to(state.agent_level, (n, n))[..., None]], -1)
        agent_obs = self._pack(slot, vals, n)
        return jnp.concatenate([food_obs.reshape(n, -1), agent_obs.reshape(n, -1)], -1).astype(jnp.float32)

    @staticmethod
    def _pack(slot: jax.Array, vals: jax.Array, num_slots: int) -> jax.Array:
        """Per viewer, put item ``j`` in slot ``slot[j]`` (-1: unseen); empty slots are (-1, -1, 0)."""
        onehot = slot[..., None] == jnp.arange(num_slots)  # [N, items, slots]
        packed = jnp.einsum("nis,nid->nsd", onehot.astype(jnp.int32), vals)
        empty = jnp.array([-1, -1, 0][: vals.shape[-1]], jnp.int32)
        return jnp.where(onehot.any(1)[..., None], packed, empty)

    def _layers(self, state: LBFState) -> jax.Array:
        """int32 [3, rows, cols] planes: agent level (or 1), food level, free cell."""
        rows, cols, n = self.rows, self.cols, self.num_agents
        r, c = state.agent_pos[:, 0], state.agent_pos[:, 1]
        # Where agents share a cell the highest index is drawn (lbforaging writes them in order).
        who = jnp.full((rows, cols), -1, jnp.int32).at[r, c].max(jnp.arange(n, dtype=jnp.int32))
        value = state.agent_level if self.observe_agent_levels else jnp.ones((n,), jnp.int32)
        agents = jnp.where(who >= 0, value[jnp.maximum(who, 0)], 0)
        alive = state.food_level > 0
        fr = jnp.where(alive, state.food_pos[:, 0], rows)  # loaded food goes out of range: dropped
        food = (
            jnp.zeros((rows, cols), jnp.int32).at[fr, state.food_pos[:, 1]].set(state.food_level, mode="drop")
        )
        free = ((who < 0) & (food == 0)).astype(jnp.int32)
        return jnp.stack([agents, food, free])

    def _grid_obs(self, state: LBFState) -> jax.Array:
        s, w = self.sight, 2 * self.sight + 1
        padded = jnp.pad(self._layers(state), ((0, 0), (s, s), (s, s)))  # outside: 0 everywhere

        def view(p):
            return jax.lax.dynamic_slice(padded, (0, p[0], p[1]), (3, w, w))

        return jax.vmap(view)(state.agent_pos).astype(jnp.float32)

    def global_state(self, state: LBFState, params: LBFParams | None = None) -> jax.Array:
        agents = jnp.concatenate([state.agent_pos, state.agent_level[:, None]], -1)
        alive = (state.food_level > 0)[:, None]
        food = jnp.where(
            alive, jnp.concatenate([state.food_pos, state.food_level[:, None]], -1), jnp.array([-1, -1, 0])
        )
        return jnp.concatenate([agents.reshape(-1), food.reshape(-1)]).astype(jnp.float32)

    # ------------------------------------------------------------------ text
    def action_names(self, agent: int = 0) -> list[str]:
        return list(ACTION_NAMES)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return dict(ACTION_ALIASES)

    def rules_text(self, params: LBFParams | None = None, agent: int = 0) -> str:
        return viewer.rules_text(self, self.default_params if params is None else params, agent)

    def json_view(self, state: LBFState, agent: int, params: LBFParams | None = None) -> dict[str, Any]:
        """See :func:`~alem.envs.coordination.lbf.viewer.json_view` (the schema)."""
        return viewer.json_view(self, state, agent, self.default_params if params is None else params)

    def render_text(
        self,
        state: LBFState,
        agent: int | None = None,
        params: LBFParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        # directions in the view locate food and agents; no available moves to leave out
        return viewer.render_text(self, state, agent, self.default_params if params is None else params)

    # ------------------------------------------------------------------ pixels
    def render_rgb(self, state: LBFState, params: LBFParams | None = None, cell: int = 32) -> np.ndarray:
        """uint8 ``[rows * cell, cols * cell, 3]``: food green squares, agents coloured discs, levels as digits."""
        return viewer.render_rgb(self, state, cell)
