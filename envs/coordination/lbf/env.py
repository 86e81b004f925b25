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
  ``max_episode_steps`` steps (default 50). lbforaging reports both as ``done``
  (its ``truncated`` is always False).
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
``max_episode_steps``, ``penalty``, ``force_coop`` and ``normalize_reward``.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alem import spaces
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.errors import EnvArgumentError

__all__ = ["LBFParams", "LBFState", "LevelBasedForaging", "ACTION_NAMES"]

ACTION_NAMES = ("noop", "north", "south", "west", "east", "load")
NOOP, NORTH, SOUTH, WEST, EAST, LOAD = range(6)
# (d_row, d_col) per action; row 0 is the top (north) of the grid.
_DELTAS = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1], [0, 0]], dtype=np.int32)


@struct.dataclass
class LBFState:
    agent_pos: jax.Array  # int32 [N, 2], (row, col)
    agent_level: jax.Array  # int32 [N]
    food_pos: jax.Array  # int32 [F, 2]; meaningless where food_level == 0
    food_level: jax.Array  # int32 [F]; 0 = loaded or never placed
    food_spawned: jax.Array  # float32 [], summed food levels at reset (reward normaliser)
    step: jax.Array  # int32 [], steps taken


@struct.dataclass
class LBFParams(EnvParams):
    max_episode_steps: jax.Array  # int32 []
    penalty: jax.Array  # float32 [], paid by each agent of a failed load
    force_coop: jax.Array  # bool [], every food at the maximum level
    normalize_reward: jax.Array  # bool [], divide rewards by the food spawned


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


def _uniform_int(u: jax.Array, low, high) -> jax.Array:
    """Integers uniform in ``[low, high]`` from uniforms ``u`` in ``[0, 1)``."""
    span = jnp.asarray(high - low + 1, jnp.float32)
    return jnp.minimum(low + jnp.floor(u * span).astype(jnp.int32), high).astype(jnp.int32)


def _pick(free: jax.Array, u: jax.Array, cols: int) -> tuple[jax.Array, jax.Array]:
    """(flat index of the k-th True cell of ``free`` ``[rows * cols]``, k uniform below their
    count; whether any cell is True). Two short prefix sums (rows, then one row) instead of one
    over the whole grid, which is much slower on CPU."""
    grid = free.reshape(-1, cols).astype(jnp.int32)
    count = grid.sum()
    k = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
    per_row = grid.sum(1)
    upto = jnp.cumsum(per_row)
    r = jnp.argmax(upto > k)
    c = jnp.argmax(jnp.cumsum(grid[r]) > k - (upto[r] - per_row[r]))
    return r * cols + c, count > 0


class LevelBasedForaging(MultiAgentEnv[LBFState, LBFParams]):
    """Level-Based Foraging, step-for-step equal to lbforaging (see the module card).

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
        max_episode_steps: time limit (``truncated``; a params field).
        penalty: reward of each agent in a failed load is ``-penalty`` (a params field).
        normalize_reward: divide rewards by (loaders' summed level * total food level spawned) (a params field).
        observe_agent_levels: include agent levels in the vector observation.
        grid_observation: observe ``[3, 2*sight+1, 2*sight+1]`` planes instead of the vector.
        mask_invalid: the action mask marks invalid moves/loads illegal (else all legal).
    """

    supports_text: ClassVar[bool] = True
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
        max_episode_steps: int = 50,
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
        lowest_cap = min(3, int(num_agents)) * int(min_agent_level)
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
        if int(max_episode_steps) < 1:
            raise EnvArgumentError(f"{name}: max_episode_steps must be >= 1, got {max_episode_steps}")

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
            else min(3, int(num_agents)) * self.max_agent_level
        )
        self._default_params = LBFParams(
            max_episode_steps=jnp.int32(max_episode_steps),
            penalty=jnp.float32(penalty),
            force_coop=jnp.bool_(force_coop),
            normalize_reward=jnp.bool_(normalize_reward),
        )

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> LBFParams:
        return self._default_params

    def check_params(self, params: LBFParams) -> None:
        """The type, and where concrete: ``max_episode_steps >= 1``."""
        super().check_params(params)
        self._check_param_range(params, "max_episode_steps", 1)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._default_params.max_episode_steps)

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
    def _cells(self) -> jax.Array:
        """int32 ``[rows * cols, 2]``: every cell's (row, col), row-major."""
        return jnp.asarray(np.indices((self.rows, self.cols)).reshape(2, -1).T, jnp.int32)

    def _place_agents(self, u: jax.Array) -> jax.Array:
        """Agents one by one, each uniform among the cells not taken yet (``u``: ``[N]`` uniforms)."""
        cells = self._cells()

        def place(free, u_i):
            idx, _ = _pick(free, u_i, self.cols)  # num_agents <= rows * cols: a cell is always left
            return free.at[idx].set(False), cells[idx]

        return jax.lax.scan(place, jnp.ones(len(cells), bool), u)[1]

    def _place_food(self, u: jax.Array, agent_pos: jax.Array, levels: jax.Array):
        """Foods one by one, each uniform among the allowed cells: interior, not on an agent, not
        touching an earlier food (8-neighbourhood) or 2 cells from one in a line. A food with no
        allowed cell left is not placed (level 0)."""
        cells = self._cells()
        interior = (cells >= 1).all(-1) & (cells[:, 0] <= self.rows - 2) & (cells[:, 1] <= self.cols - 2)
        on_agent = (cells[:, None, :] == agent_pos[None]).all(-1).any(-1)

        def place(free, inputs):
            u_i, level = inputs
            idx, ok = _pick(free, u_i, self.cols)
            pos = cells[idx]
            d = jnp.abs(cells - pos)
            blocked = (d.max(-1) <= 1) | ((d.min(-1) == 0) & (d.max(-1) <= 2))
            free = free & ~(blocked & ok)
            return free, (jnp.where(ok, pos, 0), jnp.where(ok, level, 0))

        return jax.lax.scan(place, interior & ~on_agent, (u, levels))[1]

    def reset_env(self, key: jax.Array, params: LBFParams) -> tuple[LBFState, TimeStep]:
        n, f = self.num_agents, self.num_food
        # One uniform per random choice: generating random bits is most of the cost of a reset.
        u = jax.random.uniform(key, (2 * n + 2 * f,))
        u_pos, u_lvl, u_fpos, u_flvl = jnp.split(u, np.cumsum([n, n, f]))
        agent_pos = self._place_agents(u_pos)
        agent_level = _uniform_int(u_lvl, self.min_agent_level, self.max_agent_level)
        if self.max_food_level is None:
            top = jnp.sort(agent_level)[: min(3, n)].sum()
        else:
            top = jnp.int32(self.max_food_level)
        low = jnp.where(params.force_coop, top, self.min_food_level)
        levels = _uniform_int(u_flvl, low, top)
        food_pos, food_level = self._place_food(u_fpos, agent_pos, levels)
        state = LBFState(
            agent_pos=agent_pos,
            agent_level=agent_level.astype(jnp.int32),
            food_pos=food_pos,
            food_level=food_level,
            food_spawned=food_level.sum().astype(jnp.float32),
            step=jnp.int32(0),
        )
        zero = jnp.zeros((n,), jnp.float32)
        return state, self._timestep(state, params, zero, jnp.bool_(False), jnp.bool_(False))

    def _valid(self, state: LBFState) -> tuple[jax.Array, jax.Array]:
        """(valid bool [N, 6], adjacent bool [N, F]: food next to each agent)."""
        alive = state.food_level > 0
        targets = state.agent_pos[:, None, :] + jnp.asarray(_DELTAS)[None]  # [N, 6, 2]
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
        claim = state.agent_pos + jnp.asarray(_DELTAS)[actions]  # noop/load claim their own cell
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
        truncated = ~terminated & (state.step >= params.max_episode_steps)
        return state, self._timestep(state, params, reward.astype(jnp.float32), terminated, truncated)

    def _timestep(self, state, params, reward, terminated, truncated) -> TimeStep:
        return TimeStep(
            obs=self.observe(state, params),
            action_mask=self.action_mask(state, params),
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            acting=jnp.ones((self.num_agents,), dtype=bool),
            info={},
        )

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
        # No one-letter aliases: free-text replies contain stray "s"/"e" tokens ("it's").
        words = {
            NOOP: ("none", "no-op", "no op", "stay", "wait", "do nothing", "stay put", "rest"),
            NORTH: ("up", "move north", "go north", "move up", "go up"),
            SOUTH: ("down", "move south", "go south", "move down", "go down"),
            WEST: ("left", "move west", "go west", "move left", "go left"),
            EAST: ("right", "move east", "go east", "move right", "go right"),
            LOAD: ("pick up", "pickup", "collect", "forage", "load food", "collect food", "pick up food"),
        }
        return {w: a for a, ws in words.items() for w in ws}

    @staticmethod
    def _label(i: int) -> str:
        return _LETTERS[i] if i < len(_LETTERS) else f"#{i}"

    def rules_text(self, params: LBFParams | None = None, agent: int = 0) -> str:
        params = self.default_params if params is None else params
        n, r, c, s = self.num_agents, self.rows, self.cols, self.sight
        coop = bool(params.force_coop)
        pen = float(params.penalty)
        sees_all = s >= max(r, c)
        lines = [
            f"You are agent {self._label(agent)} ({self.agents[agent]}) in Level-Based Foraging, a "
            f"cooperative grid game for {n} agent{'s' if n > 1 else ''} on a {r} x {c} grid "
            f"(row 0 is the north edge, column 0 the west edge).",
            "Every agent and every food item has a level. Food is collected by agents standing next to it "
            "(north, south, west or east of it, not diagonally) that choose load in the same step: it is "
            "collected when their levels add up to at least the food's level"
            + (
                f"; if they do not, each of them loses {pen:g}."
                if pen > 0
                else "; otherwise nothing happens."
            ),
            "Food above your own level needs other agents to load it with you."
            + (" Every food item here needs the combined levels of several agents." if coop else ""),
            "When food is collected, each agent that loaded it is rewarded in proportion to its level"
            + (
                " (rewards are scaled so that all food of an episode is worth 1 in total)."
                if bool(params.normalize_reward)
                else " (the reward is its level times the food level)."
            ),
            "Actions: noop (stay), north (up), south (down), west (left), east (right), load. A move off "
            "the grid or onto food does nothing, and so does load with no food next to you. All agents "
            "move at once: when two agents try to enter the same cell neither moves, and nobody can "
            "enter the cell of an agent that stays.",
            "You see the whole grid."
            if sees_all
            else f"You only see food within {s} cell{'s' if s > 1 else ''} of you in each direction "
            "('?' marks what you cannot see).",
            f"The episode ends when all food is collected or after {int(params.max_episode_steps)} steps. "
            "The goal is to collect as much food as possible, together.",
        ]
        return "\n".join(lines)

    def _host_view(self, state: LBFState, agent: int | None):
        """Host arrays and what ``agent`` sees (everything when ``agent`` is None)."""
        pos = np.asarray(state.agent_pos)
        lvl = np.asarray(state.agent_level)
        fpos = np.asarray(state.food_pos)
        flvl = np.asarray(state.food_level)
        alive = flvl > 0
        rr, cc = np.meshgrid(np.arange(self.rows), np.arange(self.cols), indexing="ij")
        if agent is None:
            return pos, lvl, fpos, flvl, alive, np.ones(self.num_agents, bool), np.ones_like(rr, bool)
        s, me = self.sight, pos[agent]
        in_sight = (np.abs(rr - me[0]) <= s) & (np.abs(cc - me[1]) <= s)
        seen_food = alive & (np.abs(fpos - me) <= s).all(-1)
        rel = pos - np.maximum(me - s, 0)  # lbforaging's agent-visibility rule (see the card)
        seen_agents = (rel >= 0).all(-1) & (rel <= 2 * s).all(-1)
        return pos, lvl, fpos, flvl, seen_food, seen_agents, in_sight

    def render_text(self, state: LBFState, agent: int | None = None, params: LBFParams | None = None) -> str:
        params = self.default_params if params is None else params
        pos, lvl, fpos, flvl, seen_food, seen_agents, in_sight = self._host_view(state, agent)
        show_lvl = self.observe_agent_levels or agent is None

        def who(i: int) -> str:
            return self._label(i) + (str(lvl[i]) if show_lvl else "")

        grid = np.where(in_sight, ".", "?").astype(object)
        for f in np.flatnonzero(seen_food):
            grid[tuple(fpos[f])] = f"F{flvl[f]}"
        taken: set[tuple[int, int]] = set()
        for i in np.flatnonzero(seen_agents):
            cell = (int(pos[i][0]), int(pos[i][1]))
            grid[cell] = "**" if cell in taken else who(i)
            taken.add(cell)
        width = max(3, max(len(t) for t in grid.ravel()) + 1)
        head = " " * 4 + "".join(f"{j:<{width}}" for j in range(self.cols)).rstrip()
        rows = [f"{i:>3} " + "".join(f"{t:<{width}}" for t in grid[i]).rstrip() for i in range(self.rows)]

        step, limit = int(state.step), int(params.max_episode_steps)
        lines = [f"Step {step} of {limit}. Food left: {int((flvl > 0).sum())}."]
        if agent is not None:
            me = pos[agent]
            mine = f", level {lvl[agent]}," if self.observe_agent_levels else ""
            lines.append(f"You are agent {self._label(agent)}{mine} at row {me[0]}, column {me[1]}.")
        lines += [head, *rows]
        legend = "Legend: . empty, F3 food of level 3"
        legend += ", A2 agent A with level 2" if show_lvl else ", A agent A"
        legend += ", ** two agents on one cell"
        lines.append(legend + (", ? outside your sight." if agent is not None else "."))

        def where(p) -> str:
            text = f"row {p[0]}, column {p[1]}"
            if agent is None:
                return text
            dr, dc = int(p[0] - pos[agent][0]), int(p[1] - pos[agent][1])
            rel = [f"{abs(dr)} {'south' if dr > 0 else 'north'}"] if dr else []
            rel += [f"{abs(dc)} {'east' if dc > 0 else 'west'}"] if dc else []
            return f"{text} ({', '.join(rel) or 'here'})"

        shown = sorted(np.flatnonzero(seen_food), key=lambda f: (fpos[f][0], fpos[f][1]))
        foods = [f"level {flvl[f]} at {where(fpos[f])}" for f in shown]
        lines.append(("Food: " + "; ".join(foods) + ".") if foods else "No food in sight.")
        others = [i for i in np.flatnonzero(seen_agents) if i != agent]
        if others:
            desc = [
                f"{self._label(i)}" + (f" (level {lvl[i]})" if show_lvl else "") + f" at {where(pos[i])}"
                for i in others
            ]
            lines.append(("Other agents: " if agent is not None else "Agents: ") + "; ".join(desc) + ".")
        return "\n".join(lines)

    # ------------------------------------------------------------------ pixels
    def render_rgb(self, state: LBFState, params: LBFParams | None = None, cell: int = 32) -> np.ndarray:
        """uint8 ``[rows * cell, cols * cell, 3]``: food green squares, agents coloured discs, levels as digits."""
        pos, lvl, fpos, flvl, alive, _, _ = self._host_view(state, None)
        img = np.full((self.rows * cell, self.cols * cell, 3), 238, np.uint8)
        img[::cell, :] = 190
        img[:, ::cell] = 190
        yy, xx = np.mgrid[0:cell, 0:cell]
        centre = (cell - 1) / 2
        disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.42 * cell) ** 2
        for f in np.flatnonzero(alive):
            y, x = fpos[f] * cell
            m = max(2, cell // 8)
            img[y + m : y + cell - m, x + m : x + cell - m] = (70, 160, 70)
            _draw_number(img, y, x, cell, int(flvl[f]), (255, 255, 255))
        for i in range(self.num_agents):
            y, x = pos[i] * cell
            img[y : y + cell, x : x + cell][disc] = _PALETTE[i % len(_PALETTE)]
            _draw_number(img, y, x, cell, int(lvl[i]), (255, 255, 255))
        return img


# Agent labels in text; no "F", which marks food.
_LETTERS = "ABCDEGHIJKLMNOPQRSTUVWXYZ"
_PALETTE = np.array(
    [[52, 101, 164], [204, 0, 0], [245, 121, 0], [117, 80, 123], [193, 125, 17], [32, 74, 135], [164, 0, 0]],
    np.uint8,
)
# 3 x 5 pixel digits, one string of 15 bits per digit (rows top to bottom).
_DIGITS = np.array(
    [
        [int(b) for b in bits]
        for bits in (
            "111101101101111",
            "010110010010111",
            "111001111100111",
            "111001111001111",
            "101101111001001",
            "111100111001111",
            "111100111101111",
            "111001001001001",
            "111101111101111",
            "111101111001111",
        )
    ],
    bool,
).reshape(10, 5, 3)


def _draw_number(img: np.ndarray, y: int, x: int, cell: int, value: int, color) -> None:
    """Draw ``value`` centred in the cell whose top-left pixel is (y, x)."""
    text = str(value)
    scale = max(1, cell // 12)
    w = len(text) * 4 * scale - scale
    h = 5 * scale
    y0, x0 = y + (cell - h) // 2, x + (cell - w) // 2
    for k, ch in enumerate(text):
        glyph = np.kron(_DIGITS[int(ch)], np.ones((scale, scale), bool))
        gx = x0 + k * 4 * scale
        region = img[y0 : y0 + h, gx : gx + 3 * scale]
        region[glyph[: region.shape[0], : region.shape[1]]] = color
