"""MPE scenarios with opposing teams: ``simple_tag``, ``simple_adversary``, ``simple_push``,
``simple_world_comm``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.mpe.core import MPEEnv, MPEParams, MPEState, Scenario, at_least
from alem.envs.coordination.mpe.physics import Layout, bound_penalty, distances, drop_diagonal, pad_rows

__all__ = ["SimpleTag", "SimpleAdversary", "SimplePush", "SimpleWorldComm"]

_ADVERSARY_RGB = [0.85, 0.35, 0.35]
_GOOD_RGB = [0.35, 0.85, 0.35]


def _rel_others(ap: jax.Array) -> jax.Array:
    """``[n, n-1, 2]``: position of every other agent relative to each agent (mpe2's order)."""
    return drop_diagonal(ap[None, :, :] - ap[:, None, :])


def _good_velocities(
    vel: jax.Array, num_adv: int, seen: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """Velocities of the good agents as each agent observes them: ``[a, 2g]`` for adversaries (all
    good agents) and ``[g, 2(g-1)]`` for good agents (the others); 0 where ``seen[i, j]`` is False."""
    n, a = vel.shape[0], num_adv
    g = n - a
    block = jnp.broadcast_to(vel[None, a:], (n, g, 2))  # [observer, good agent, 2]
    if seen is not None:
        block = jnp.where(seen[:, a:, None], block, 0.0)
    return block[:a].reshape(a, -1), drop_diagonal(block[a:]).reshape(g, -1)


class SimpleTag(MPEEnv):
    """MPE ``simple_tag``: slower predators (adversaries) chase faster prey among obstacles.

    Card
    ----
    - **Agents**: ``adversary_0 .. adversary_{a-1}`` (role ``adversary``; radius 0.075, accel 3,
      max speed 1.0), then ``agent_0 .. agent_{g-1}`` (role ``good``; radius 0.05, accel 4, max
      speed 1.3). Defaults ``num_adversaries=3``, ``num_good=1``, ``num_obstacles=2`` (radius 0.2).
    - **Actions**: ``Discrete(5)`` no-op/left/right/down/up, or ``Box(0, 1, (5,))``.
    - **Observation**: ``[self_vel(2), self_pos(2), obstacle_rel_pos(2o), other_rel_pos(2(n-1)),
      other_good_vel(2k)]`` with ``k`` the good agents other than oneself (adversaries 16, good 14
      by default; padded to the larger with zeros).
    - **Rewards**: a good agent gets ``-10`` per adversary touching it and ``-sum_xy bound(|x|)``
      for leaving the arena (0 below 0.9, ``10 (x - 0.9)`` to 1, then ``min(exp(2x - 2), 10)``);
      every adversary gets ``+10`` per touching (adversary, good) pair.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: agents uniform in ``[-1, 1]^2``, obstacles in ``[-0.9, 0.9]^2``.
    - **Reference**: mpe2 1.1.1 ``simple_tag_v3``.
    - **Version**: v0.
    """

    def __init__(self, num_good: int = 1, num_adversaries: int = 3, num_obstacles: int = 2, **options: Any):
        at_least(
            "SimpleTag",
            num_good=(num_good, 1),
            num_adversaries=(num_adversaries, 1),
            num_obstacles=(num_obstacles, 0),
        )
        self.num_good, self.num_adversaries = int(num_good), int(num_adversaries)
        self._num_obstacles = int(num_obstacles)
        super().__init__(**options)

    def scenario(self) -> Scenario:
        g, a, o = self.num_good, self.num_adversaries, self._num_obstacles
        n = g + a
        is_adv = np.arange(n) < a
        layout = Layout.build(
            np.where(is_adv, 0.075, 0.05),
            [0.2] * o,
            dim_c=2,
            landmark_collide=True,
            accel=np.where(is_adv, 3.0, 4.0),
            max_speed=np.where(is_adv, 1.0, 1.3),
            landmark_spawn=0.9,
        )
        base = 4 + 2 * o + 2 * (n - 1)
        return Scenario(
            layout,
            [f"adversary_{i}" for i in range(a)] + [f"agent_{i}" for i in range(g)],
            np.where(is_adv, 0, 1),
            ["adversary", "good"],
            [base + 2 * g] * a + [base + 2 * (g - 1)] * g,
        )

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        n, a = self.num_agents, self.num_adversaries
        ap, vel = state.pos[:n], state.vel[:n]
        rel_o = (state.pos[n:][None] - ap[:, None]).reshape(n, -1)
        rel_a = _rel_others(ap).reshape(n, -1)
        common = jnp.concatenate([vel, ap, rel_o, rel_a], axis=-1)
        vel_adv, vel_good = _good_velocities(vel, a)
        adv = jnp.concatenate([common[:a], vel_adv], axis=-1)
        good = jnp.concatenate([common[a:], vel_good], axis=-1)
        return pad_rows([adv, good], self.obs_width)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        a = self.num_adversaries
        ap = state.pos[: self.num_agents]
        touch = distances(ap[:a], ap[a:]) < 0.125  # [adv, good], radii 0.075 + 0.05
        caught = jnp.sum(touch, axis=0).astype(jnp.float32)  # per good agent
        good = -10.0 * caught - jnp.sum(bound_penalty(jnp.abs(ap[a:])), axis=-1)
        adv = jnp.full((a,), 10.0) * jnp.sum(touch).astype(jnp.float32)
        return jnp.concatenate([adv, good])

    def entity_colors(self, state: MPEState) -> np.ndarray:
        a, g = self.num_adversaries, self.num_good
        o = self.layout.num_landmarks
        return np.array([_ADVERSARY_RGB] * a + [_GOOD_RGB] * g + [[0.25, 0.25, 0.25]] * o)


class SimpleAdversary(MPEEnv):
    """MPE ``simple_adversary``: good agents know the goal landmark and must hide it from an adversary.

    Card
    ----
    - **Agents**: ``adversary_0`` (role ``adversary``), ``agent_0 .. agent_{N-1}`` (role ``good``);
      N landmarks (``N=2`` by default), one of them the goal. Nobody collides.
    - **Actions**: ``Discrete(5)`` no-op/left/right/down/up, or ``Box(0, 1, (5,))``.
    - **Observation**: good ``[goal_rel_pos(2), landmark_rel_pos(2N), other_rel_pos(2N)]``;
      adversary ``[landmark_rel_pos(2N), other_rel_pos(2N)]`` (padded with zeros).
    - **Rewards**: adversary ``-|p_adv - p_goal|``; good agents (shared)
      ``-min_good |p_good - p_goal| + |p_adv - p_goal|``.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: positions uniform in ``[-1, 1]^2``; goal landmark uniform (``state.goal[0]``).
    - **Reference**: mpe2 1.1.1 ``simple_adversary_v3``.
    - **Version**: v0.
    """

    num_goals = 1

    def __init__(self, num_good: int = 2, **options: Any):
        at_least("SimpleAdversary", num_good=(num_good, 1))
        self.num_good = int(num_good)
        super().__init__(**options)

    def scenario(self) -> Scenario:
        g = self.num_good
        layout = Layout.build([0.15] * (g + 1), [0.08] * g, dim_c=2, agent_collide=False)
        return Scenario(
            layout,
            ["adversary_0"] + [f"agent_{i}" for i in range(g)],
            [0] + [1] * g,
            ["adversary", "good"],
            [4 * g] + [4 * g + 2] * g,
        )

    def sample_goals(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (1,), 0, self.layout.num_landmarks, jnp.int32)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        n = self.num_agents
        ap = state.pos[:n]
        rel_l = (state.pos[n:][None] - ap[:, None]).reshape(n, -1)
        rel_a = _rel_others(ap).reshape(n, -1)
        goal_rel = state.pos[n + state.goal[0]][None] - ap[1:]
        adv = jnp.concatenate([rel_l[:1], rel_a[:1]], axis=-1)
        good = jnp.concatenate([goal_rel, rel_l[1:], rel_a[1:]], axis=-1)
        return pad_rows([adv, good], self.obs_width)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        n = self.num_agents
        goal = state.pos[n + state.goal[0]]
        d = jnp.sqrt(jnp.sum((state.pos[:n] - goal) ** 2, axis=-1))
        good = -jnp.min(d[1:]) + d[0]
        return jnp.concatenate([-d[:1], jnp.broadcast_to(good, (n - 1,))])

    def entity_colors(self, state: MPEState) -> np.ndarray:
        n, g = self.num_agents, self.layout.num_landmarks
        lm = np.tile([0.15, 0.15, 0.15], (g, 1))
        lm[int(np.asarray(state.goal)[0])] = [0.15, 0.65, 0.15]
        return np.concatenate([[_ADVERSARY_RGB], np.tile([0.35, 0.35, 0.85], (n - 1, 1)), lm])


class SimplePush(MPEEnv):
    """MPE ``simple_push``: a good agent goes to its goal landmark; an adversary pushes it away.

    Card
    ----
    - **Agents**: ``adversary_0`` (role ``adversary``), ``agent_0`` (role ``good``); 2 landmarks.
      The agents collide with each other.
    - **Actions**: ``Discrete(5)`` no-op/left/right/down/up, or ``Box(0, 1, (5,))``.
    - **Observation**: good ``[self_vel(2), goal_rel_pos(2), own_color(3), landmark_rel_pos(4),
      landmark_colors(6), other_rel_pos(2)]`` (19; the colours tell which landmark is the goal);
      adversary ``[self_vel(2), landmark_rel_pos(4), other_rel_pos(2)]`` (8, padded to 19).
    - **Rewards**: good ``-|p_good - p_goal|``; adversary ``|p_good - p_goal| - |p_adv - p_goal|``.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: positions uniform in ``[-1, 1]^2``; goal landmark uniform (``state.goal[0]``).
    - **Reference**: mpe2 1.1.1 ``simple_push_v3``.
    - **Version**: v0.
    """

    num_goals = 1
    _LANDMARK_RGB = np.array([[0.1, 0.9, 0.1], [0.1, 0.1, 0.9]], np.float32)

    def scenario(self) -> Scenario:
        layout = Layout.build([0.05] * 2, [0.05] * 2, dim_c=2, agent_collide=True)
        return Scenario(layout, ["adversary_0", "agent_0"], [0, 1], ["adversary", "good"], [8, 19])

    def _good_color(self, goal: jax.Array) -> jax.Array:
        return 0.25 + 0.5 * jax.nn.one_hot(goal + 1, 3, dtype=jnp.float32)

    def sample_goals(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (1,), 0, 2, jnp.int32)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        pos, vel = state.pos, state.vel
        rel_l = pos[2:][None] - pos[:2, None]  # [2 agents, 2 landmarks, 2]
        adv = jnp.concatenate([vel[0], rel_l[0].reshape(-1), pos[1] - pos[0]])
        good = jnp.concatenate(
            [
                vel[1],
                pos[2 + state.goal[0]] - pos[1],
                self._good_color(state.goal[0]),
                rel_l[1].reshape(-1),
                jnp.asarray(self._LANDMARK_RGB).reshape(-1),
                pos[0] - pos[1],
            ]
        )
        return pad_rows([adv[None], good[None]], 19)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        goal = state.pos[2 + state.goal[0]]
        d = jnp.sqrt(jnp.sum((state.pos[:2] - goal) ** 2, axis=-1))
        return jnp.stack([d[1] - d[0], -d[1]])

    def entity_colors(self, state: MPEState) -> np.ndarray:
        good = np.asarray(self._good_color(jnp.asarray(state.goal)[0]))
        return np.concatenate([[[0.75, 0.25, 0.25]], good[None], self._LANDMARK_RGB])


class SimpleWorldComm(MPEEnv):
    """MPE ``simple_world_comm``: simple_tag with food, forests that hide agents, and a leader
    adversary who sees everyone and talks to the other adversaries.

    Card
    ----
    - **Agents**: ``leadadversary_0`` (role ``leader``; speaks 4 words), ``adversary_0 ..``
      (role ``adversary``; radius 0.075, accel 3, max speed 1.0), ``agent_0 ..`` (role ``good``;
      radius 0.045, accel 4, max speed 1.3). Defaults: 4 adversaries including the leader,
      2 good, 1 obstacle (radius 0.2), 2 food (0.03), 2 forests (0.3).
    - **Actions**: leader ``Discrete(20)`` = ``move + 5 * word`` (others' 5..19 are illegal in the
      mask), others ``Discrete(5)``; continuous: leader ``Box(0, 1, (9,))`` (move then message),
      others ``Box(0, 1, (5,))``.
    - **Observation**: adversaries and leader ``[self_vel, self_pos, landmark_rel_pos(2L),
      other_rel_pos(2(n-1)), good_vel(2g), in_forest(F), leader_comm(4)]`` (34); good agents
      ``[self_vel, self_pos, landmark_rel_pos, other_rel_pos, in_forest(F),
      other_good_vel(2(g-1))]`` (28, padded to 34). ``in_forest`` is +1/-1 per forest. Another
      agent's position (and velocity) reads 0 unless both are in one forest, or neither is in
      any forest, or the observer is the leader.
    - **Rewards**: good ``-5`` per touching adversary, ``-2 sum_xy bound(|x|)`` (see simple_tag),
      ``+2`` per food it touches, ``-0.05 min_food |p - p_food|``; adversaries and leader
      ``+5`` per touching (good, adversary) pair and ``-0.1 min_good |p - p_good|``.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: agents uniform in ``[-1, 1]^2``, every landmark in ``[-0.9, 0.9]^2``.
    - **Reference**: mpe2 1.1.1 ``simple_world_comm_v3``.
    - **Version**: v0.
    """

    def __init__(
        self,
        num_good: int = 2,
        num_adversaries: int = 4,
        num_obstacles: int = 1,
        num_food: int = 2,
        num_forests: int = 2,
        **options: Any,
    ):
        at_least(
            "SimpleWorldComm",
            num_good=(num_good, 1),
            num_adversaries=(num_adversaries, 1),
            num_obstacles=(num_obstacles, 0),
            num_food=(num_food, 1),
            num_forests=(num_forests, 0),
        )
        self.num_good, self.num_adversaries = int(num_good), int(num_adversaries)
        self._counts = (int(num_obstacles), int(num_food), int(num_forests))
        super().__init__(**options)

    def scenario(self) -> Scenario:
        g, a = self.num_good, self.num_adversaries
        o, f, w = self._counts
        n = g + a
        is_adv = np.arange(n) < a
        layout = Layout.build(
            np.where(is_adv, 0.075, 0.045),
            [0.2] * o + [0.03] * f + [0.3] * w,
            dim_c=4,
            landmark_collide=[True] * o + [False] * (f + w),
            silent=np.arange(n) > 0,
            accel=np.where(is_adv, 3.0, 4.0),
            max_speed=np.where(is_adv, 1.0, 1.3),
            landmark_spawn=0.9,
        )
        base = 4 + 2 * (o + f + w) + 2 * (n - 1) + w
        return Scenario(
            layout,
            ["leadadversary_0"] + [f"adversary_{i}" for i in range(a - 1)] + [f"agent_{i}" for i in range(g)],
            [0] + [1] * (a - 1) + [2] * g,
            ["leader", "adversary", "good"],
            [base + 2 * g + 4] * a + [base + 2 * (g - 1)] * g,
        )

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        n, a = self.num_agents, self.num_adversaries
        o, f, w = self._counts
        ap, vel = state.pos[:n], state.vel[:n]
        size = self.layout.size
        forests = state.pos[n + o + f :]
        inf = distances(ap, forests) < jnp.asarray(size[:n, None] + 0.3)  # [n, F]: agent in forest
        outside = ~jnp.any(inf, axis=-1)
        shared = jnp.any(inf[:, None, :] & inf[None, :, :], axis=-1)  # [i, j]: in one forest together
        seen = (
            shared | (outside[:, None] & outside[None, :]) | (np.arange(n) == 0)[:, None]
        )  # leader sees all
        rel_a = jnp.where(drop_diagonal(seen)[..., None], _rel_others(ap), 0.0).reshape(n, -1)
        vel_adv, vel_good = _good_velocities(vel, a, seen)
        rel_l = (state.pos[n:][None] - ap[:, None]).reshape(n, -1)
        in_forest = jnp.where(inf, 1.0, -1.0)
        common = jnp.concatenate([vel, ap, rel_l, rel_a], axis=-1)
        leader_comm = jnp.broadcast_to(state.comm[0], (a, self.layout.dim_c))
        adv = jnp.concatenate([common[:a], vel_adv, in_forest[:a], leader_comm], axis=-1)
        good = jnp.concatenate([common[a:], in_forest[a:], vel_good], axis=-1)
        return pad_rows([adv, good], self.obs_width)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        n, a = self.num_agents, self.num_adversaries
        o, f, _ = self._counts
        ap = state.pos[:n]
        d_ag = distances(ap[:a], ap[a:])  # [adv, good]
        touch = d_ag < 0.12  # radii 0.075 + 0.045
        food_d = distances(ap[a:], state.pos[n + o : n + o + f])  # [good, food]
        good = (
            -5.0 * jnp.sum(touch, axis=0)
            - 2.0 * jnp.sum(bound_penalty(jnp.abs(ap[a:])), axis=-1)
            + 2.0 * jnp.sum(food_d < 0.075, axis=-1)  # radii 0.045 + 0.03
            - 0.05 * jnp.min(food_d, axis=-1)
        )
        adv = -0.1 * jnp.min(d_ag, axis=-1) + 5.0 * jnp.sum(touch)
        return jnp.concatenate([adv, good]).astype(jnp.float32)

    def entity_colors(self, state: MPEState) -> np.ndarray:
        a, g = self.num_adversaries, self.num_good
        o, f, w = self._counts
        agents = np.array([[0.95, 0.45, 0.45]] * a + [[0.45, 0.95, 0.45]] * g)
        agents[0] -= 0.3
        lms = [[0.25, 0.25, 0.25]] * o + [[0.15, 0.15, 0.65]] * f + [[0.6, 0.9, 0.6]] * w
        return np.concatenate([agents, np.array(lms).reshape(-1, 3)])
