"""RWARE's observation encoders: rware's ``flattened`` vector (own features and the sensor
square around each robot), its ``image`` layers (each robot's window of the chosen global
layers, optionally turned to the robot's heading) and ``image_dict`` (image plus features)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alem.envs.coordination.rware.types import RwareParams, RwareState

__all__ = ["RwareObserver"]


class RwareObserver:
    """The observation half of :class:`~alem.envs.coordination.rware.env.Warehouse` (a mixin: it
    reads the env's layout, sizes, tables and ``_grids``)."""

    def observe(self, state: RwareState, params: RwareParams) -> jax.Array:
        if self.observation_type == "flattened":
            return self._flat_obs(state)
        image = self._image_obs(state)
        if self.observation_type == "image":
            return image
        return jnp.concatenate([image.reshape(self.num_agents, -1), self._features(state)], -1)

    def _self_features(self, state: RwareState) -> tuple[jax.Array, jax.Array, jax.Array]:
        r, c = state.agent_pos[:, 0], state.agent_pos[:, 1]
        on_highway = jnp.asarray(self.layout.highway)[r, c].astype(jnp.float32)
        loaded = (state.carrying >= 0).astype(jnp.float32)
        return jax.nn.one_hot(state.agent_dir, 4, dtype=jnp.float32), on_highway, loaded

    def _features(self, state: RwareState) -> jax.Array:
        direction, on_highway, loaded = self._self_features(state)
        return jnp.concatenate([direction, on_highway[:, None], loaded[:, None]], -1)

    def _flat_obs(self, state: RwareState) -> jax.Array:
        n, s = self.num_agents, self.sensor_range
        agent_grid, shelf_grid = self._grids(state.agent_pos, state.shelf_pos)
        requested = jnp.zeros((self.num_shelves + 1,), jnp.float32).at[state.request_queue + 1].set(1.0)
        who = agent_grid - 1
        has_agent = who >= 0
        their_dir = jnp.where(has_agent, state.agent_dir[jnp.maximum(who, 0)], 0)
        per_cell = [has_agent[:, None].astype(jnp.float32), jax.nn.one_hot(their_dir, 4, dtype=jnp.float32)]
        if self.msg_bits:
            per_cell.append(jnp.where(has_agent[:, None], state.message[jnp.maximum(who, 0)], 0.0))
        per_cell += [(shelf_grid > 0)[:, None].astype(jnp.float32), requested[shelf_grid][:, None]]
        cells = jnp.concatenate(per_cell, -1).reshape(self.rows, self.cols, -1)
        # Outside the grid: all zeros (rware pads its id grids with 0, read as "empty").
        empty = jnp.zeros((cells.shape[-1],), jnp.float32).at[1].set(1.0)
        padded = jnp.pad(cells, ((s, s), (s, s), (0, 0)))
        border = jnp.pad(jnp.zeros((self.rows, self.cols), bool), s, constant_values=True)
        padded = jnp.where(border[..., None], empty, padded)
        w = 2 * s + 1

        def view(p):
            return jax.lax.dynamic_slice(padded, (p[0], p[1], 0), (w, w, cells.shape[-1])).reshape(-1)

        sensors = jax.vmap(view)(state.agent_pos)
        direction, on_highway, loaded = self._self_features(state)
        x = jnp.asarray(self._x_table)[state.agent_pos[:, 1]]
        y = jnp.asarray(self._y_table)[state.agent_pos[:, 0]]
        own = jnp.concatenate([x[:, None], y[:, None], loaded[:, None], direction, on_highway[:, None]], -1)
        return jnp.concatenate([own, sensors], -1).reshape(n, -1)

    def _global_layers(self, state: RwareState) -> jax.Array:
        h, w = self.rows, self.cols
        agent_grid, shelf_grid = self._grids(state.agent_pos, state.shelf_pos)
        r, c = state.agent_pos[:, 0], state.agent_pos[:, 1]
        out = []
        for name in self.image_layers:
            if name == "shelves":
                layer = (shelf_grid > 0).reshape(h, w).astype(jnp.float32)
            elif name == "requests":
                q = state.shelf_pos[state.request_queue]
                layer = jnp.zeros((h, w), jnp.float32).at[q[:, 0], q[:, 1]].set(1.0)
            elif name == "agents":
                layer = (agent_grid > 0).reshape(h, w).astype(jnp.float32)
            elif name == "agent_direction":  # rware indexes [x, y] here
                layer = (
                    jnp.zeros((h, w), jnp.float32)
                    .at[c, r]
                    .set((state.agent_dir + 1).astype(jnp.float32), mode="drop")
                )
            elif name == "agent_load":  # rware indexes [x, y] here
                loaded = jnp.where(state.carrying >= 0, 1.0, 0.0)
                layer = jnp.zeros((h, w), jnp.float32).at[c, r].max(loaded, mode="drop")
            elif name == "goals":
                g = self.layout.goals
                layer = jnp.zeros((h, w), jnp.float32).at[g[:, 0], g[:, 1]].set(1.0)
            else:  # accessible
                layer = jnp.ones((h, w), jnp.float32).at[r, c].set(0.0)
            out.append(layer)
        return jnp.stack(out)

    def _image_obs(self, state: RwareState) -> jax.Array:
        s, w = self.sensor_range, 2 * self.sensor_range + 1
        padded = jnp.pad(self._global_layers(state), ((0, 0), (s, s), (s, s)))
        num = len(self.image_layers)

        def view(p, d):
            img = jax.lax.dynamic_slice(padded, (0, p[0], p[1]), (num, w, w))
            if not self.image_directional:
                return img
            turns = jnp.stack([jnp.rot90(img, k, axes=(1, 2)) for k in range(4)])
            k = jnp.array([0, 2, 3, 1])[d]  # up, down, left, right -> np.rot90 turns
            return turns[k]

        return jax.vmap(view)(state.agent_pos, state.agent_dir)
