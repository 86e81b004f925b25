"""MPE navigation scenarios: ``simple`` (one agent, one landmark) and ``simple_spread`` (cover N landmarks)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.mpe.core import MPEEnv, MPEParams, MPEState, Scenario, at_least
from alem.envs.coordination.mpe.physics import Layout, distances, drop_diagonal

__all__ = ["Simple", "SimpleSpread"]


class Simple(MPEEnv):
    """MPE ``simple``: one agent moves to one landmark (a single-agent debugging task).

    Card
    ----
    - **Agents**: ``agent_0``. One role.
    - **Actions**: ``Discrete(5)`` no-op/left/right/down/up, or with ``continuous_actions=True``
      a ``Box(0, 1, (5,))`` (force ``(a2 - a1, a4 - a3) * 5``).
    - **Observation**: ``[self_vel(2), landmark_rel_pos(2)]`` (4).
    - **Rewards**: ``-|p_agent - p_landmark|^2`` after each step.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``; never ``terminated``.
    - **Reset**: agent and landmark uniform in ``[-1, 1]^2``, velocities 0.
    - **Reference**: mpe2 1.1.1 ``simple_v3`` (obs, rewards, truncation checked step by step).
    - **Version**: v0.
    """

    cooperative = True  # the agents share one goal (alem.core.MultiAgentEnv)

    def scenario(self) -> Scenario:
        layout = Layout.build([0.05], [0.05], dim_c=0, agent_collide=False)
        return Scenario(layout, ["agent_0"], [0], ["agent"], [4])

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        return jnp.concatenate([state.vel[:1], state.pos[1:2] - state.pos[:1]], axis=-1)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        d = state.pos[0] - state.pos[1]
        return -jnp.sum(d * d)[None]

    def entity_colors(self, state: MPEState) -> np.ndarray:
        return np.array([[0.25, 0.25, 0.25], [0.75, 0.25, 0.25]])


class SimpleSpread(MPEEnv):
    """MPE ``simple_spread``: N agents cover N landmarks without bumping into each other.

    Card
    ----
    - **Agents**: ``agent_0 .. agent_{N-1}`` (``num_agents=3``; N landmarks). One role.
    - **Actions**: ``Discrete(5)`` no-op/left/right/down/up, or ``Box(0, 1, (5,))`` with
      ``continuous_actions=True``. Agents are silent.
    - **Observation**: ``[self_vel(2), self_pos(2), landmark_rel_pos(2N), other_rel_pos(2(N-1)),
      other_comm(2(N-1))]`` (``6N``; ``other_comm`` is always 0: agents are silent, kept for
      mpe2's layout).
    - **Rewards**: ``global * (1 - local_ratio) + local * local_ratio`` with
      ``global = -sum_landmarks min_agents |p_a - p_l|`` (shared) and ``local = -(number of other
      agents overlapping this one)`` (radius 0.15 each). ``params.local_ratio`` defaults to 0.5.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``; never
      ``terminated``. Unlike JaxMARL (26 transitions for ``max_steps=25``, logged returns
      multiplied by N), alem runs 25 transitions and reports each agent's own return.
    - **Reset**: agents and landmarks uniform in ``[-1, 1]^2``, velocities 0.
    - **Physics**: agents collide (soft contact force), landmarks do not.
    - **Reference**: mpe2 1.1.1 ``simple_spread_v3`` (obs, rewards, truncation checked step by step).
    - **Version**: v0.
    """

    cooperative = True  # the agents share one goal (alem.core.MultiAgentEnv)

    uses_local_ratio = True

    def __init__(self, num_agents: int = 3, **options: Any):
        at_least("SimpleSpread", num_agents=(num_agents, 2))
        self._n = int(num_agents)
        super().__init__(**options)

    def scenario(self) -> Scenario:
        n = self._n
        layout = Layout.build([0.15] * n, [0.05] * n, dim_c=2, agent_collide=True)
        return Scenario(layout, [f"agent_{i}" for i in range(n)], [0] * n, ["agent"], [6 * n] * n)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        n = self.num_agents
        ap, lp = state.pos[:n], state.pos[n:]
        rel_l = (lp[None, :, :] - ap[:, None, :]).reshape(n, -1)
        rel_o = drop_diagonal(ap[None, :, :] - ap[:, None, :]).reshape(n, -1)  # [i, j]: p_j - p_i
        comm_o = jnp.zeros((n, 2 * (n - 1)), jnp.float32)  # the others' messages: silent, always 0
        return jnp.concatenate([state.vel[:n], ap, rel_l, rel_o, comm_o], axis=-1)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        n = self.num_agents
        ap, lp = state.pos[:n], state.pos[n:]
        glob = -jnp.sum(jnp.min(distances(ap, lp), axis=0))
        d = distances(ap, ap)
        hit = (d < 0.3) & ~np.eye(n, dtype=bool)  # radius 0.15 + 0.15
        local = -jnp.sum(hit, axis=1).astype(jnp.float32)
        lr = params.local_ratio
        return glob * (1.0 - lr) + local * lr

    def entity_colors(self, state: MPEState) -> np.ndarray:
        n = self.num_agents
        return np.array([[0.35, 0.35, 0.85]] * n + [[0.25, 0.25, 0.25]] * n)
