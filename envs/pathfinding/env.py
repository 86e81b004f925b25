"""Grid multi-agent pathfinding (MAPF): one-shot, lifelong and disappear-at-goal, POGEMA-exact.

Card
----
- **Agents**: ``agent_0 .. agent_{N-1}``, one role. Each has a start cell and a goal
  (lifelong: a sequence of goals) on an ``H x W`` 4-connected grid.
- **Actions**: ``Discrete(5)`` in POGEMA's order: ``0 wait, 1 up (row-1), 2 down (row+1),
  3 left (col-1), 4 right (col+1)``. Every action is always legal (the mask is all True);
  a move into an obstacle or off the map is a wait (counted in ``obstacle_bumps``).
  Out-of-range indices follow ``illegal_action="replace"`` (they become wait).
- **Collisions** (``collision``; rules in :mod:`alem.envs.pathfinding.grid`, in the
  vocabulary of Stern et al. 2019):

  ============  ======  ==========  ===================  ==================
  system        vertex  edge/swap   following            cycle (rotation)
  ============  ======  ==========  ===================  ==================
  ``soft``      lower   forbidden   allowed              allowed
                index
                wins
  ``priority``  lower   forbidden   only behind a        forbidden
                index               lower-index leader
                wins
  ``block_both``  all   forbidden   forbidden            forbidden
                  stay
  ============  ======  ==========  ===================  ==================

  ``soft`` is the default (POGEMA's benchmark setting); ``priority`` is POGEMA's API
  default. Stopped moves into free cells are counted in ``collisions``.
- **Modes** (``mode``, stored in ``params.mode`` so one compiled program serves all
  three; POGEMA's ``on_target``):
  ``"one_shot"`` (``"nothing"``): agents stay on their goals and keep blocking; the
  episode terminates when every agent is on its goal at once, and then every agent gets
  reward 1. ``"lifelong"`` (``"restart"``): an agent on its goal after a step gets reward 1
  and its next goal (from ``params.goals`` when the task is given, cycling; otherwise a
  uniform free cell of the spawn region other than its cell); never terminates.
  ``"disappear"`` (``"finish"``): an agent that reaches its goal gets reward 1 and leaves
  the map (it stops acting and occupying cells); terminates when all have left.
  Every mode is truncated after ``params.max_steps`` steps. ``progress_reward=c`` (not
  POGEMA's; default 0) adds ``c`` times each active agent's decrease of its BFS distance to
  its goal this step (negative when it moves away): a potential-based shaping (Ng et al.
  1999), so it leaves the best policies as they are and gives each agent its own signal.
- **Observation** (``obs_type``): ``"local"`` (POGEMA's default values, as bool):
  ``[3, 2R+1, 2R+1]`` centred on the agent, R = ``obs_radius``: obstacles (outside the
  map: a one-cell obstacle ring, then free, exactly as POGEMA pads), active agents (the
  observer included) and the own goal as a one-hot cell clipped to the window border.
  ``goal_direction=True`` (not POGEMA's; for learned policies) adds a fourth ``local``
  channel: the window's cells closer (BFS distance) to the agent's goal than its own cell.
  The agents channel is every active agent's cell: POGEMA after its PR #51. POGEMA 1.4.0
  reads its own occupancy grid instead, which under ``soft`` collisions loses an agent that
  follows a higher-index agent (the leader's move clears the cell the follower just
  entered) until that agent moves again; ``pogema_occupancy=True`` reproduces 1.4.0's grid
  (only the observation changes; ``tests/envs/pathfinding/test_pogema_golden.py`` checks
  both against 1.4.0).
  ``"global"``: float32 ``[4, H, W]``: obstacles, active agents, own cell, own goal.
  ``env.global_state(state)`` is ``[3, H, W]`` flattened: obstacles, agents, goals.
- **Maps** (``map_type``): ``"random"`` (obstacles i.i.d. with ``params.density``, in jit;
  starts/goals in the largest connected component), ``"maze"`` (a perfect maze, in jit),
  ``"fixed"`` (``params.maps``, a batch of maps of one size, one picked per reset; e.g.
  the warehouse layout, POGEMA ASCII maps, MovingAI maps; see :func:`make_params`).
  Starts are distinct, goals are distinct and differ from starts, all in one component,
  so every goal is reachable. Given tasks (``starts``/``goals``) are checked host-side.
- **Info** (the same keys in every mode; final values when ``ts.done``): ``on_goal``
  ``[N]``, ``active`` ``[N]``, ``collisions`` and ``obstacle_bumps`` (episode counts), and
  POGEMA's metrics: ``ISR`` and ``CSR`` (one-shot: share of agents on goal / all on goal
  at the end; disappear: share that reached / all reached), ``SoC`` and ``makespan``
  (sum and max over agents of the step of arrival for good, ``max_steps`` for agents
  that never arrived), ``ep_length`` (one-shot: steps; disappear: mean arrival step + 1)
  and ``avg_throughput`` (goals reached / ``max_steps``; the lifelong metric). POGEMA
  reports ISR/CSR/SoC/makespan/ep_length for one-shot, ISR/CSR/ep_length for disappear
  and avg_throughput for lifelong; those agree exactly, the others are extras. POGEMA's of the
  env's mode are its ``episode_metrics`` (``python -m alem.evaluate``, training's metrics.jsonl
  and its final evaluation report their means: one definition, the one the POGEMA protocol reads).
  With ``lower_bounds=True``: ``lb_soc`` and ``lb_makespan``, the sum and max of the
  agents' BFS distances from start to (first) goal, so any policy can report
  suboptimality. SoC counts ``t + 1`` for an agent that arrived for good at step index
  ``t`` (POGEMA's definition: an agent that starts on its goal costs 1; an agent that
  leaves its goal on the very last step keeps its earlier arrival).
- **Reference**: POGEMA 1.4.0 (``on_target`` nothing/restart/finish, the three collision
  systems, default observation, metrics); golden fixtures in
  ``tests/envs/pathfinding/fixtures`` are replayed step by step. The agents channel follows
  POGEMA's fix of its PR #51 by default and 1.4.0 with ``pogema_occupancy=True``.
- **Text**: rules, ASCII view of an agent's window or of the whole grid, action names
  with aliases (stay, north/south/west/east), parser.
- **Picture** (``render_rgb``, GIFs with ``python -m alem.render``): walls dark, free
  cells light, each active agent a disc of its colour (10 colours, cycling by index),
  its goal a hollow square of the same colour (agents that left the map are not
  drawn); 16 px per cell, fewer on maps over 32
  cells so the long side stays <= 512 px (256 x 256 for the registered 16 x 16 ids).
- **Version**: v0.

Cost note: batched rollouts (:class:`~alem.wrappers.BatchedAutoReset`) compute resets only
for the envs that ended, so a reset's cost counts per episode, not per step (the plain
per-env ``AutoReset`` still pays one every step). ``lower_bounds`` adds N BFS per reset and
random maps add one connected-components pass. ``goal_direction`` and ``progress_reward``
keep each agent's distance map to its goal in the state (N BFS per reset; in lifelong mode
again on every step where some agent got a new goal).
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import PRNGKeyArray

from alem import spaces
from alem.core import MultiAgentEnv, TimeStep
from alem.envs.pathfinding import grid as G
from alem.envs.pathfinding import viewer
from alem.envs.pathfinding.generator import as_map_list, make_params, sample_instance, task_arrays
from alem.envs.pathfinding.types import (
    ACTION_ALIASES,
    DISAPPEAR,
    LIFELONG,
    MAP_TYPES,
    MODES,
    NUM_ACTIONS,
    OBS_TYPES,
    ONE_SHOT,
    POGEMA_ON_TARGET,
    PathfindingParams,
    PathfindingState,
    check_choice,
)
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = [
    "PathfindingParams",
    "PathfindingState",
    "PathfindingEnv",
    "make_params",
    "MODES",
    "POGEMA_ON_TARGET",
]


#: POGEMA's metrics per mode (what it reports for on_target nothing / finish / restart).
EPISODE_METRICS = {
    "one_shot": ("CSR", "ISR", "SoC", "makespan"),
    "disappear": ("CSR", "ISR"),
    "lifelong": ("avg_throughput",),
}


class PathfindingEnv(TextHooks, MultiAgentEnv[PathfindingState, PathfindingParams]):
    __doc__ = __doc__

    stochastic: ClassVar[bool] = True
    cooperative: ClassVar[bool] = True  # the agents share one goal (alem.core.MultiAgentEnv)

    def __init__(
        self,
        num_agents: int = 8,
        height: int = 16,
        width: int | None = None,
        *,
        mode: str = "one_shot",
        collision: str = "soft",
        map_type: str = "random",
        density: float = 0.3,
        max_steps: int = 64,
        obs_radius: int = 5,
        obs_type: str = "local",
        lower_bounds: bool = True,
        goal_sequence_len: int = 1,
        maps: Any = None,
        starts: Any = None,
        goals: Any = None,
        illegal_action: str = "replace",
        goal_direction: bool = False,
        progress_reward: float = 0.0,
        pogema_occupancy: bool = False,
    ):
        super().__init__(illegal_action=illegal_action)
        check_choice("mode", mode, MODES)
        check_choice("collision", collision, G.COLLISION_SYSTEMS)
        check_choice("map_type", map_type, MAP_TYPES)
        check_choice("obs_type", obs_type, OBS_TYPES)
        if maps is not None and map_type != "fixed":
            map_type = "fixed"
        if map_type == "fixed" and maps is None:
            raise EnvArgumentError(
                "map_type='fixed' needs maps= (an ASCII string, an [H, W] array or a list)"
            )
        if not 1 <= int(obs_radius) <= 128:
            raise EnvArgumentError(f"obs_radius must be in [1, 128], got {obs_radius}")
        if int(num_agents) < 1:
            raise EnvArgumentError(f"num_agents must be >= 1, got {num_agents}")
        if int(goal_sequence_len) < 1:
            raise EnvArgumentError(f"goal_sequence_len must be >= 1, got {goal_sequence_len}")
        if goal_direction and obs_type != "local":
            raise EnvArgumentError(
                "goal_direction=True is a channel of the local observation (obs_type='local')"
            )
        if not isinstance(pogema_occupancy, bool | np.bool_):
            raise EnvArgumentError(f"pogema_occupancy must be true or false, got {pogema_occupancy!r}")
        if pogema_occupancy and obs_type != "local":
            raise EnvArgumentError(
                "pogema_occupancy=True changes the agents channel of the local observation "
                "(obs_type='local'); POGEMA's global observation reads the agents' cells"
            )
        self.pogema_occupancy = bool(pogema_occupancy)
        if not np.isfinite(float(progress_reward)):
            raise EnvArgumentError(f"progress_reward must be a finite number, got {progress_reward!r}")
        self.goal_direction = bool(goal_direction)
        self.progress_reward = float(progress_reward)
        self._goal_dist = self.goal_direction or self.progress_reward != 0.0
        self.mode, self.collision, self.map_type, self.obs_type = mode, collision, map_type, obs_type
        # POGEMA's metrics of this mode: alem.evaluate and training's logs report their means.
        self.episode_metrics = EPISODE_METRICS[mode]
        self.obs_radius = int(obs_radius)
        self.lower_bounds = bool(lower_bounds)
        self._init = dict(density=density, max_steps=max_steps, maps=maps, starts=starts, goals=goals)
        if map_type == "fixed":
            first = as_map_list(maps)[0]
            height, width = first.shape
            if starts is not None:
                num_agents = int(np.asarray(starts).shape[-2])
            if starts is not None and goals is not None:
                goal_sequence_len = task_arrays(starts, goals, 1)[1].shape[2]
        self.height = int(height)
        self.width = int(height if width is None else width)
        if self.height < 1 or self.width < 1 or self.height * self.width < 2:
            raise EnvArgumentError(f"the map needs at least 2 cells, got {self.height} x {self.width}")
        self.goal_sequence_len = int(goal_sequence_len)
        n = int(num_agents)
        self.agents = tuple(f"agent_{i}" for i in range(n))
        self.agent_roles = np.zeros(n, dtype=np.int32)
        self.role_names = ("agent",)
        self._params = make_params(self, **self._init)

    # ------------------------------------------------------------------ spaces and params
    @property
    def default_params(self) -> PathfindingParams:
        return self._params

    def check_params(self, params: PathfindingParams) -> None:
        """The type, and where concrete: ``max_steps >= 1``, ``density`` in [0, 1], a known ``mode``.

        Maps and tasks are checked by :func:`make_params`; build params with it to change them.
        """
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)
        self._check_param_range(params, "density", 0.0, 1.0)
        self._check_param_range(params, "mode", 0, len(MODES) - 1)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._params.max_steps)

    def _obs_shape(self) -> tuple[int, ...]:
        if self.obs_type == "local":
            s = 2 * self.obs_radius + 1
            return (4 if self.goal_direction else 3, s, s)
        return (4, self.height, self.width)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        shape = self._obs_shape() if agent is not None else (self.num_agents, *self._obs_shape())
        if self.obs_type == "local":
            return spaces.Box(0, 1, shape, dtype=bool)
        return spaces.Box(0.0, 1.0, shape, dtype=jnp.float32)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        if agent is None:
            return spaces.MultiDiscrete(np.full(self.num_agents, NUM_ACTIONS))
        return spaces.Discrete(NUM_ACTIONS)

    def global_state_space(self) -> spaces.Space:
        return spaces.Box(0.0, float(self.num_agents), (3 * self.height * self.width,), dtype=jnp.float32)

    # ------------------------------------------------------------------ dynamics
    def reset_env(self, key: PRNGKeyArray, params: PathfindingParams) -> tuple[PathfindingState, TimeStep]:
        n = self.num_agents
        obstacles, spawn, starts, goal_seq, given = sample_instance(
            key,
            params,
            num_agents=n,
            height=self.height,
            width=self.width,
            map_type=self.map_type,
            goal_sequence_len=self.goal_sequence_len,
        )
        goal = goal_seq[:, 0]
        spawn_cum = jnp.cumsum(spawn.reshape(-1), dtype=jnp.int32)
        if self.lower_bounds or self._goal_dist:
            dist = G.bfs_distances(~obstacles, goal)
        if self.lower_bounds:
            lb = dist[jnp.arange(n), starts[:, 0], starts[:, 1]]
            lb_soc, lb_mk = lb.sum(), lb.max()
        else:
            lb_soc = lb_mk = jnp.int32(-1)
        r = self.obs_radius
        goal_dist = G.pad_distances(dist, r) if self._goal_dist else jnp.zeros((n, 0, 0), jnp.int32)
        state = PathfindingState(
            pos=starts.astype(jnp.int32),
            goal=goal.astype(jnp.int32),
            goal_seq=goal_seq.astype(jnp.int32),
            goal_idx=jnp.zeros((n,), jnp.int32),
            use_seq=given,
            active=jnp.ones((n,), bool),
            padded=G.pad_obstacles(obstacles, self.obs_radius),
            spawn_cum=spawn_cum,
            t=jnp.int32(0),
            solve_t=jnp.full((n,), -1, jnp.int32),
            reached=jnp.int32(0),
            collisions=jnp.int32(0),
            bumps=jnp.int32(0),
            lb_soc=jnp.asarray(lb_soc, jnp.int32),
            lb_makespan=jnp.asarray(lb_mk, jnp.int32),
            goal_dist=goal_dist,
            occupied=self._start_occupancy(starts.astype(jnp.int32), obstacles),
        )
        on_goal = jnp.all(state.pos == state.goal, axis=1)
        info = self._info(state, on_goal, state.solve_t, jnp.bool_(False), params)
        ts = TimeStep(
            obs=self.observe(state, params),
            action_mask=jnp.ones((n, NUM_ACTIONS), bool),
            reward=jnp.zeros((n,), jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            acting=state.active,
            info=info,
        )
        return state, ts

    def _start_occupancy(self, starts: jax.Array, obstacles: jax.Array) -> jax.Array:
        if not self.pogema_occupancy:
            return jnp.zeros((0, 0), bool)
        r = self.obs_radius
        shape = (obstacles.shape[0] + 2 * r, obstacles.shape[1] + 2 * r)
        return G.agent_grid(shape, starts, jnp.ones((self.num_agents,), bool), r)

    def obstacles(self, state: PathfindingState) -> jax.Array:
        """bool ``[H, W]`` obstacle map of the current instance."""
        r = self.obs_radius
        return state.padded[r : r + self.height, r : r + self.width]

    def step_env(
        self, key: PRNGKeyArray, state: PathfindingState, actions: jax.Array, params: PathfindingParams
    ) -> tuple[PathfindingState, TimeStep]:
        n = self.num_agents
        free = ~self.obstacles(state)
        pos, blocked, bumped = G.resolve_moves(state.pos, actions, state.active, free, self.collision)
        on_goal = jnp.all(pos == state.goal, axis=1)
        arrived = on_goal & state.active  # POGEMA's was_on_goal
        k = state.t  # POGEMA's metric step index
        t = state.t + 1
        truncated_now = t >= params.max_steps
        # The mode is a param (one compiled program serves all three); each rule is a select.
        one_shot, lifelong, disappear = (params.mode == m for m in (ONE_SHOT, LIFELONG, DISAPPEAR))
        all_on = jnp.all(on_goal)
        active = jnp.where(disappear, state.active & ~on_goal, state.active)
        terminated = jnp.where(one_shot, all_on, disappear & ~jnp.any(active))
        reward = jnp.where(one_shot, all_on, arrived).astype(jnp.float32) * jnp.ones((n,), jnp.float32)
        if self.progress_reward:
            r = self.obs_radius
            gained = G.cell_distance(state.goal_dist, state.pos, r) - G.cell_distance(state.goal_dist, pos, r)
            reward = reward + jnp.where(state.active, self.progress_reward * gained, 0.0)
        old = state.solve_t
        # One-shot: the arrival that lasts (reset when an agent leaves its goal); at the last
        # step POGEMA keeps the old arrival of an agent that just left. Otherwise: first arrival.
        stay_t = jnp.where(on_goal, jnp.where(old < 0, k, old), -1)
        first_t = jnp.where(arrived & (old < 0), k, old)
        solve_t = jnp.where(one_shot, stay_t, first_t)
        final_solve = jnp.where(one_shot & ~on_goal & (old >= 0), old, solve_t)
        # Lifelong: the next goal of the given sequence (cycling), or a uniform spawn cell
        # other than the current one.
        renew = lifelong & arrived
        goal_idx = state.goal_idx + renew.astype(jnp.int32)
        seq_goal = jnp.take_along_axis(
            state.goal_seq, (goal_idx % self.goal_sequence_len)[:, None, None], axis=1
        )[:, 0]
        cnt = state.spawn_cum[-1]
        u = jax.random.uniform(key, (n,))
        j = jnp.minimum(jnp.floor(u * (cnt - 1)).astype(jnp.int32), jnp.maximum(cnt - 2, 0))
        # The j-th spawn cell (0-based) is where the running count first reaches j + 1; the
        # last spawn cell stands in when the draw hits the agent's own cell.
        nth = lambda i: jnp.searchsorted(state.spawn_cum, i + 1).astype(jnp.int32)
        cell = nth(j)
        here = pos[:, 0] * self.width + pos[:, 1]
        cell = jnp.where(cell == here, nth(jnp.maximum(cnt - 1, 0)), cell)
        rnd_goal = jnp.stack([cell // self.width, cell % self.width], axis=1)
        new_goal = jnp.where(state.use_seq, seq_goal, rnd_goal)
        goal = jnp.where(renew[:, None], new_goal, state.goal)
        goal_dist = state.goal_dist
        if self._goal_dist:  # new goals, new distance maps (only on steps where some goal changed)
            goal_dist = jax.lax.cond(
                jnp.any(renew),
                lambda: jnp.where(
                    renew[:, None, None],
                    G.pad_distances(G.bfs_distances(free, goal), self.obs_radius),
                    goal_dist,
                ),
                lambda: goal_dist,
            )
        truncated = truncated_now & ~terminated
        finished = terminated | truncated
        occupied = state.occupied
        if self.pogema_occupancy:  # POGEMA 1.4.0: moves written in agent order, then hidden agents cleared
            r = self.obs_radius
            occupied = G.written_occupancy(occupied, state.pos, pos, state.active, r)
            hidden = state.active & ~active
            occupied = occupied.at[jnp.where(hidden, pos[:, 0] + r, occupied.shape[0]), pos[:, 1] + r].set(
                False, mode="drop"
            )
        new = state.replace(
            pos=pos,
            goal=goal,
            goal_idx=goal_idx,
            active=active,
            t=t,
            solve_t=solve_t,
            reached=state.reached + arrived.sum().astype(jnp.int32),
            collisions=state.collisions + blocked.sum().astype(jnp.int32),
            bumps=state.bumps + bumped.sum().astype(jnp.int32),
            goal_dist=goal_dist,
            occupied=occupied,
        )
        final_solve = jnp.where(finished, final_solve, solve_t)
        final_solve = jnp.where(finished & (final_solve < 0), k, final_solve)
        info = self._info(new, on_goal, final_solve, finished, params)
        ts = TimeStep(
            obs=self.observe(new, params),
            action_mask=jnp.ones((n, NUM_ACTIONS), bool),
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            acting=new.active,
            info=info,
        )
        return new, ts

    def _info(self, state, on_goal, solve_t, finished, params) -> dict[str, jax.Array]:
        n = self.num_agents
        cost = jnp.where(solve_t < 0, state.t, solve_t + 1)  # running value before the end
        info: dict[str, jax.Array] = {
            "on_goal": on_goal,
            "active": state.active,
            "collisions": state.collisions,
            "obstacle_bumps": state.bumps,
        }
        disappear = params.mode == DISAPPEAR
        reached = state.reached.astype(jnp.float32)
        info.update(
            ISR=jnp.where(disappear, reached / n, on_goal.mean(dtype=jnp.float32)),
            CSR=jnp.where(disappear, state.reached == n, jnp.all(on_goal)).astype(jnp.float32),
            SoC=cost.sum().astype(jnp.int32),
            makespan=cost.max().astype(jnp.int32),
            ep_length=jnp.where(disappear, cost.mean(dtype=jnp.float32), state.t.astype(jnp.float32)),
            avg_throughput=reached / params.max_steps.astype(jnp.float32),
        )
        if self.lower_bounds:
            info.update(lb_soc=state.lb_soc, lb_makespan=state.lb_makespan)
        return info

    def acting(self, state: PathfindingState, params: PathfindingParams) -> jax.Array:
        return state.active

    def observe(self, state: PathfindingState, params: PathfindingParams) -> jax.Array:
        if self.obs_type == "local":
            goal_dist = state.goal_dist if self.goal_direction else None
            agents = state.occupied if self.pogema_occupancy else None
            return G.local_observation(
                state.padded, state.pos, state.goal, state.active, self.obs_radius, goal_dist, agents
            )
        h, w, n = self.height, self.width, self.num_agents
        obst = self.obstacles(state).astype(jnp.float32)
        agents = self._agent_grid(state)
        own = jax.nn.one_hot(state.pos[:, 0] * w + state.pos[:, 1], h * w).reshape(n, h, w)
        goal = jax.nn.one_hot(state.goal[:, 0] * w + state.goal[:, 1], h * w).reshape(n, h, w)
        shared = jnp.broadcast_to(jnp.stack([obst, agents]), (n, 2, h, w))
        return jnp.concatenate([shared, own[:, None], goal[:, None]], axis=1)

    def _agent_grid(self, state: PathfindingState) -> jax.Array:
        rows = jnp.where(state.active, state.pos[:, 0], self.height)
        return (
            jnp.zeros((self.height, self.width), jnp.float32).at[rows, state.pos[:, 1]].set(1.0, mode="drop")
        )

    def global_state(self, state: PathfindingState, params: PathfindingParams | None = None) -> jax.Array:
        rows = jnp.where(state.active, state.goal[:, 0], self.height)
        goals = (
            jnp.zeros((self.height, self.width), jnp.float32).at[rows, state.goal[:, 1]].add(1.0, mode="drop")
        )
        obst = self.obstacles(state).astype(jnp.float32)
        return jnp.stack([obst, self._agent_grid(state), goals]).reshape(-1)

    # ------------------------------------------------------------------ text hooks
    def action_names(self, agent: int = 0) -> list[str]:
        return list(G.ACTION_NAMES)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return dict(ACTION_ALIASES)

    def rules_text(self, params: PathfindingParams | None = None, agent: int = 0) -> str:
        return viewer.rules_text(self, self.default_params if params is None else params, agent)

    def json_view(
        self, state: PathfindingState, agent: int, params: PathfindingParams | None = None
    ) -> dict[str, Any]:
        """See :func:`~alem.envs.pathfinding.viewer.json_view` (the schema)."""
        return viewer.json_view(self, state, agent)

    def render_text(
        self,
        state: PathfindingState,
        agent: int | None = None,
        params: PathfindingParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        # the view names no available moves: ``moves`` changes nothing
        return viewer.render_text(self, state, agent)

    # ------------------------------------------------------------------ pixels
    def render_rgb(
        self, state: PathfindingState, params: PathfindingParams | None = None, cell: int | None = None
    ) -> np.ndarray:
        """uint8 ``[H * cell, W * cell, 3]``: walls, agents as coloured discs, goals as hollow squares."""
        return viewer.render_rgb(self, state, cell)
