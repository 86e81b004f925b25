"""The particle world's physics, shared by every MPE scenario: the entity layout and one step.

A world holds ``E = A + L`` circular entities, agents first, then landmarks. Their
positions and velocities are two ``[E, 2]`` arrays; everything that never changes
during an episode (sizes, which entities move or collide, accelerations, speed limits,
which agents speak) is a static NumPy :class:`Layout` on the env object.

One physics step (the same update as mpe2's ``World.step``; mpe2 has no noise in these
scenarios, so the step is deterministic):

1. action forces ``u * accel`` on movable agents;
2. contact forces between every pair of colliding entities,
   ``F_ab = contact_force * (p_a - p_b) / |p_a - p_b| * k * softplus((r_a + r_b - |p_a - p_b|) / k)``
   with ``k = contact_margin``, added to ``a`` and subtracted from ``b`` where they move;
3. ``p += v * dt`` (the old velocity), ``v = v * (1 - damping) + F / m * dt``, then ``v`` is
   rescaled to ``max_speed`` where faster.

All pairwise work is one ``[C, C]`` array over the ``C`` colliding entities (a static
subset), so nothing loops over agents inside ``jit``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Layout", "physics_step", "bound_penalty", "distances", "drop_diagonal", "pad_rows"]

DT = 0.1
DAMPING = 0.25
CONTACT_FORCE = 1e2
CONTACT_MARGIN = 1e-3
DEFAULT_ACCEL = 5.0


@dataclasses.dataclass(frozen=True, eq=False)
class Layout:
    """Static description of a world's entities (NumPy; agents first, then landmarks).

    Attributes:
        num_agents: ``A``.
        dim_c: length of the communication vector (0: nobody speaks).
        size: ``[E]`` radii.
        movable: ``[E]`` which entities integrate forces.
        collide: ``[E]`` which entities push each other.
        silent: ``[A]`` agents that cannot speak.
        accel: ``[A]`` action force multiplier ("sensitivity").
        max_speed: ``[E]`` speed limit (``inf``: none).
        spawn: ``[E]`` half-width of the uniform square each entity starts in.
    """

    num_agents: int
    dim_c: int
    size: np.ndarray
    movable: np.ndarray
    collide: np.ndarray
    silent: np.ndarray
    accel: np.ndarray
    max_speed: np.ndarray
    spawn: np.ndarray

    @classmethod
    def build(
        cls,
        agent_size: Sequence[float],
        landmark_size: Sequence[float],
        *,
        dim_c: int,
        agent_movable: Sequence[bool] | bool = True,
        agent_collide: Sequence[bool] | bool = True,
        landmark_collide: Sequence[bool] | bool = False,
        silent: Sequence[bool] | bool = True,
        accel: Sequence[float] | float = DEFAULT_ACCEL,
        max_speed: Sequence[float] | float = np.inf,
        landmark_spawn: float = 1.0,
    ) -> Layout:
        a, n_l = len(agent_size), len(landmark_size)

        def per_agent(x: Any, dtype: Any) -> np.ndarray:
            return np.broadcast_to(np.asarray(x, dtype=dtype), (a,)).copy()

        def per_landmark(x: Any, dtype: Any) -> np.ndarray:
            return np.broadcast_to(np.asarray(x, dtype=dtype), (n_l,)).copy()

        return cls(
            num_agents=a,
            dim_c=int(dim_c),
            size=np.concatenate([np.asarray(agent_size, np.float32), np.asarray(landmark_size, np.float32)]),
            movable=np.concatenate([per_agent(agent_movable, bool), np.zeros(n_l, bool)]),
            collide=np.concatenate([per_agent(agent_collide, bool), per_landmark(landmark_collide, bool)]),
            silent=per_agent(silent, bool),
            accel=per_agent(accel, np.float32),
            max_speed=np.concatenate([per_agent(max_speed, np.float32), np.full(n_l, np.inf, np.float32)]),
            spawn=np.concatenate([np.ones(a, np.float32), np.full(n_l, landmark_spawn, np.float32)]),
        )

    @property
    def num_entities(self) -> int:
        return int(self.size.shape[0])

    @property
    def num_landmarks(self) -> int:
        return self.num_entities - self.num_agents


def _pairwise_contact(pos: jax.Array, size: np.ndarray) -> jax.Array:
    """Summed contact force on each of ``C`` entities from the others: ``[C, 2]``.

    Each unordered pair is computed once (Newton's third law gives the other side). Pairs are
    grouped by index offset ``s`` (``i`` with ``i + s``), so the work is static slices and pads
    instead of gathers and scatters.
    """
    c = pos.shape[0]
    offsets = range(1, c)
    delta = jnp.concatenate([pos[: c - s] - pos[s:] for s in offsets])  # [P, 2]: p_i - p_{i+s}
    dist_min = np.concatenate([size[: c - s] + size[s:] for s in offsets]).astype(np.float32)
    dist = jnp.sqrt(jnp.sum(delta * delta, axis=-1))
    x = (dist_min - dist) / CONTACT_MARGIN
    penetration = (jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))) * CONTACT_MARGIN  # softplus
    force = delta * (CONTACT_FORCE * penetration / dist)[:, None]  # on i, and minus it on i + s
    total = jnp.zeros((c, 2), pos.dtype)
    start = 0
    for s in offsets:
        f = force[start : start + c - s]
        total = total + jnp.pad(f, ((0, s), (0, 0))) - jnp.pad(f, ((s, 0), (0, 0)))
        start += c - s
    return total


def drop_diagonal(x: jax.Array) -> jax.Array:
    """``[n, n, ...] -> [n, n-1, ...]``: row ``i`` without entry ``i`` (static slices, no gather).

    With ``x[i, j]`` about agent ``j`` as seen by agent ``i``, this is mpe2's "every other agent,
    in index order".
    """
    n = x.shape[0]
    rest = x.shape[2:]
    if n <= 1:
        return jnp.zeros((n, 0, *rest), x.dtype)
    flat = x.reshape(n * n, *rest)[1:].reshape(n - 1, n + 1, *rest)[:, :n]
    return flat.reshape(n, n - 1, *rest)


def _rounded(x: jax.Array, zero: jax.Array) -> jax.Array:
    """``x`` itself, rounded to float32 before any later add.

    XLA recomputes cheap values inside every fusion that reads them and contracts ``a * b + c``
    into an FMA in some copies and not others, so one step compiled in two programs (alone, and
    under AutoReset) could differ in the last bit. OR-ing the bits with ``zero`` (a runtime 0 the
    compiler cannot see through) makes every copy round the product first.
    """
    bits = jax.lax.bitcast_convert_type(x, jnp.uint32) | zero
    return jax.lax.bitcast_convert_type(bits, jnp.float32)


def _contiguous(idx: np.ndarray) -> bool:
    return idx.size > 0 and bool(np.array_equal(idx, np.arange(idx[0], idx[0] + idx.size)))


def physics_step(
    layout: Layout, pos: jax.Array, vel: jax.Array, u: jax.Array, zero: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """One integration step of the world; ``u`` is the action force ``[A, 2]``.

    ``zero``: a uint32 0 known only at run time (see :func:`_rounded`), e.g. derived from the step
    counter; it makes results bit-identical across programs. Defaults to a constant (no effect).
    """
    zero = jnp.uint32(0) if zero is None else zero
    a, e = layout.num_agents, layout.num_entities
    agent_mov = layout.movable[:a]
    force_agents = u if agent_mov.all() else jnp.where(agent_mov[:, None], u, 0.0)
    force = jnp.concatenate([force_agents, jnp.zeros((e - a, 2), u.dtype)]) if e > a else force_agents
    cidx = np.flatnonzero(layout.collide)
    if cidx.size >= 2:
        if _contiguous(cidx):  # the usual case: a prefix of agents (+ obstacles); slices, no scatter
            lo, hi = int(cidx[0]), int(cidx[-1]) + 1
            contact = _pairwise_contact(pos[lo:hi], layout.size[lo:hi])
            contact = jnp.where(layout.movable[lo:hi, None], contact, 0.0)
            force = force + jnp.pad(contact, ((lo, e - hi), (0, 0)))
        else:
            contact = _pairwise_contact(pos[cidx], layout.size[cidx])
            contact = jnp.where(layout.movable[cidx, None], contact, 0.0)
            force = force.at[cidx].add(contact)
    mov = layout.movable[:, None]
    new_pos = jnp.where(mov, pos + _rounded(vel * DT, zero), pos)
    new_vel = _rounded(vel * (1.0 - DAMPING), zero) + _rounded(force * DT, zero)  # every mass is 1
    if np.isfinite(layout.max_speed).any():
        limit = jnp.asarray(layout.max_speed)
        speed = jnp.sqrt(jnp.sum(new_vel * new_vel, axis=-1))
        factor = jnp.where(speed > limit, limit / jnp.maximum(speed, 1e-30), 1.0)
        new_vel = _rounded(new_vel * factor[:, None], zero)
    new_vel = jnp.where(mov, new_vel, vel)
    return new_pos, new_vel


def bound_penalty(x: jax.Array) -> jax.Array:
    """mpe2's penalty for leaving the arena: 0 below 0.9, linear to 1, then ``min(exp(2x-2), 10)``."""
    return jnp.where(
        x < 0.9, 0.0, jnp.where(x < 1.0, (x - 0.9) * 10.0, jnp.minimum(jnp.exp(2.0 * x - 2.0), 10.0))
    )


def distances(pos_a: jax.Array, pos_b: jax.Array) -> jax.Array:
    """Euclidean distances ``[len(a), len(b)]`` between two sets of points."""
    d = pos_a[:, None, :] - pos_b[None, :, :]
    return jnp.sqrt(jnp.sum(d * d, axis=-1))


def pad_rows(rows: Sequence[jax.Array], width: int) -> jax.Array:
    """Stack per-role observation blocks ``[n_r, d_r]`` (in agent order) into ``[A, width]``."""
    padded = [r if r.shape[-1] == width else jnp.pad(r, ((0, 0), (0, width - r.shape[-1]))) for r in rows]
    return padded[0] if len(padded) == 1 else jnp.concatenate(padded, axis=0)
