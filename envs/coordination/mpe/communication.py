"""MPE scenarios about talking: ``simple_reference``, ``simple_speaker_listener``, ``simple_crypto``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.mpe.core import MPEEnv, MPEParams, MPEState, Scenario
from alem.envs.coordination.mpe.physics import Layout, pad_rows

__all__ = ["SimpleReference", "SimpleSpeakerListener", "SimpleCrypto"]

_REFERENCE_COLORS = np.array([[0.75, 0.25, 0.25], [0.25, 0.75, 0.25], [0.25, 0.25, 0.75]], np.float32)
_LISTENER_COLORS = np.array([[0.65, 0.15, 0.15], [0.15, 0.65, 0.15], [0.15, 0.15, 0.65]], np.float32)


class SimpleReference(MPEEnv):
    """MPE ``simple_reference``: two agents each know where the *other* should go and must say it.

    Card
    ----
    - **Agents**: ``agent_0``, ``agent_1``; 3 landmarks. One role.
    - **Actions**: discrete ``Discrete(50)`` = ``move + 5 * word`` (move in no-op/left/right/
      down/up, word in 0..9); continuous ``Box(0, 1, (15,))`` = 5 move entries then the
      10-dim message.
    - **Observation**: ``[self_vel(2), landmark_rel_pos(6), goal_color(3), other_comm(10)]``
      (21): ``goal_color`` is the colour of the landmark the *other* agent must reach.
    - **Rewards**: ``r_i = -|p_other - p_goal_i|``; each agent gets
      ``mean(r) * (1 - local_ratio) + r_i * local_ratio`` (``params.local_ratio``, default 0.5).
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: positions uniform in ``[-1, 1]^2``; each agent's goal landmark uniform.
      ``state.goal[i]`` is the landmark agent ``i`` wants the other to reach.
    - **Reference**: mpe2 1.1.1 ``simple_reference_v3``.
    - **Version**: v0.
    """

    cooperative = True  # the agents share one goal (alem.core.MultiAgentEnv)

    num_goals = 2

    uses_local_ratio = True

    def scenario(self) -> Scenario:
        layout = Layout.build([0.05] * 2, [0.05] * 3, dim_c=10, agent_collide=False, silent=False)
        return Scenario(layout, ["agent_0", "agent_1"], [0, 0], ["agent"], [21, 21])

    def sample_goals(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (2,), 0, 3, jnp.int32)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        ap, lp = state.pos[:2], state.pos[2:]
        rel_l = (lp[None, :, :] - ap[:, None, :]).reshape(2, -1)
        color = jnp.asarray(_REFERENCE_COLORS)[state.goal]
        return jnp.concatenate([state.vel[:2], rel_l, color, state.comm[::-1]], axis=-1)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        target = state.pos[2 + state.goal]  # [2, 2]: agent i's goal landmark
        d = state.pos[1::-1] - target  # the other agent must reach it
        r = -jnp.sqrt(jnp.sum(d * d, axis=-1))
        lr = params.local_ratio
        return jnp.mean(r) * (1.0 - lr) + r * lr

    def entity_colors(self, state: MPEState) -> np.ndarray:
        goal = np.asarray(state.goal)
        # Each agent is drawn in the colour of the landmark it must reach (agent_0's goal is set by agent_1).
        agents = _REFERENCE_COLORS[goal[::-1]]
        return np.concatenate([agents, _REFERENCE_COLORS])


class SimpleSpeakerListener(MPEEnv):
    """MPE ``simple_speaker_listener``: an immobile speaker names the goal, a mute listener goes there.

    Card
    ----
    - **Agents**: ``speaker_0`` (role ``speaker``), ``listener_0`` (role ``listener``); 3 landmarks.
    - **Actions**: speaker ``Discrete(3)`` words, listener ``Discrete(5)`` moves (padded to 5:
      the speaker's actions 3 and 4 are illegal in the mask); continuous: speaker ``Box(0, 1, (3,))``
      message, listener ``Box(0, 1, (5,))`` move.
    - **Observation**: speaker ``[goal_color(3)]``; listener ``[self_vel(2), landmark_rel_pos(6),
      speaker_comm(3)]`` (11). Padded to 11; padding is 0.
    - **Rewards**: both get ``-|p_listener - p_goal|^2``.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: positions uniform in ``[-1, 1]^2``; goal landmark uniform (``state.goal[0]``).
    - **Reference**: mpe2 1.1.1 ``simple_speaker_listener_v4``.
    - **Version**: v0.
    """

    cooperative = True  # the agents share one goal (alem.core.MultiAgentEnv)

    num_goals = 1

    def scenario(self) -> Scenario:
        layout = Layout.build(
            [0.075] * 2,
            [0.04] * 3,
            dim_c=3,
            agent_movable=[False, True],
            agent_collide=False,
            silent=[False, True],
        )
        return Scenario(layout, ["speaker_0", "listener_0"], [0, 1], ["speaker", "listener"], [3, 11])

    def sample_goals(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, (1,), 0, 3, jnp.int32)

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        speaker = jnp.asarray(_LISTENER_COLORS)[state.goal]  # [1, 3]
        rel_l = (state.pos[2:] - state.pos[1]).reshape(1, -1)
        listener = jnp.concatenate([state.vel[1:2], rel_l, state.comm[:1]], axis=-1)
        return pad_rows([speaker, listener], 11)

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        d = state.pos[1] - state.pos[2 + state.goal[0]]
        return jnp.broadcast_to(-jnp.sum(d * d), (2,))

    def entity_colors(self, state: MPEState) -> np.ndarray:
        goal = int(np.asarray(state.goal)[0])
        listener = _LISTENER_COLORS[goal] + 0.45
        return np.concatenate([[[0.25, 0.25, 0.25], listener], _LISTENER_COLORS])


class SimpleCrypto(MPEEnv):
    """MPE ``simple_crypto``: Alice sends Bob a message encrypted with a shared key; Eve listens in.

    Card
    ----
    - **Agents**: ``eve_0`` (role ``adversary``), ``bob_0`` (``listener``), ``alice_0``
      (``speaker``). Nobody moves; 2 landmarks define the two possible messages/keys
      (one-hot vectors of length 4).
    - **Actions**: every agent says one of 4 words: ``Discrete(4)``, or a ``Box(0, 1, (4,))``
      message with ``continuous_actions=True``.
    - **Observation**: alice ``[goal(4), key(4)]``, bob ``[key(4), alice_comm(4)]``, eve
      ``[alice_comm(4)]`` (padded to 8 with zeros).
    - **Rewards**: with ``g`` the goal vector and ``c_x`` each agent's last message (a message
      of all zeros is ignored): Eve ``-|c_eve - g|^2``; Alice and Bob
      ``-|c_bob - g|^2 + |c_eve - g|^2``.
    - **Episode**: exactly ``max_steps`` (default 25) steps, then ``truncated``.
    - **Reset**: goal and key independent and uniform over the 2 landmarks (``state.goal`` =
      ``[goal, key]``); positions uniform in ``[-1, 1]^2`` (unused).
    - **Reference**: mpe2 1.1.1 ``simple_crypto_v3``.
    - **Version**: v0.
    """

    num_goals = 2

    def scenario(self) -> Scenario:
        layout = Layout.build(
            [0.05] * 3, [0.05] * 2, dim_c=4, agent_movable=False, agent_collide=False, silent=False
        )
        return Scenario(
            layout, ["eve_0", "bob_0", "alice_0"], [0, 1, 2], ["adversary", "listener", "speaker"], [4, 8, 8]
        )

    def sample_goals(self, key: jax.Array) -> jax.Array:
        return jax.random.bernoulli(key, 0.5, (2,)).astype(jnp.int32)  # goal and key: fair coins

    def observe(self, state: MPEState, params: MPEParams) -> jax.Array:
        goal, key = jax.nn.one_hot(state.goal, 4, dtype=jnp.float32)
        alice = state.comm[2]
        rows = jnp.stack(
            [
                jnp.concatenate([alice, jnp.zeros(4)]),
                jnp.concatenate([key, alice]),
                jnp.concatenate([goal, key]),
            ]
        )
        return rows

    def rewards(self, state: MPEState, params: MPEParams) -> jax.Array:
        goal = jax.nn.one_hot(state.goal[0], 4, dtype=jnp.float32)
        err = jnp.sum((state.comm - goal) ** 2, axis=-1)  # [3]
        spoke = jnp.any(state.comm != 0.0, axis=-1)
        eve = jnp.where(spoke[0], err[0], 0.0)
        bob = jnp.where(spoke[1], err[1], 0.0)
        good = eve - bob
        return jnp.stack([-eve, good, good])

    def entity_colors(self, state: MPEState) -> np.ndarray:
        goal = int(np.asarray(state.goal)[0])
        bob = np.zeros(3)
        bob[goal] = 1.0
        return np.array([[0.75, 0.25, 0.25], bob, [0.25, 0.25, 0.25], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
