"""Conflict resolution of simultaneous moves, equal to rware 2.0.0's (pure JAX, static shapes).

rware draws one edge per robot, from its cell to the cell it asks for (its own cell when it does not
move), and resolves each weakly connected component of that graph on its own:

- a component with a cycle moves exactly the robots on the cycle (a rotation of three or more robots),
  except a cycle of two (a swap), where no robot moves; robots queued behind a cycle, and behind a
  robot that stays (a cycle of one), stay;
- a component without a cycle is a tree of movers rooted at an empty cell: the robots on its longest
  path move (a chain follows its head), the other branches stay.

Ties between branches of equal length (two robots driving into the same cell) are broken the way
networkx 3.x breaks them in ``dag_longest_path``: the first predecessor in the order in which the
component's subgraph copy lists its nodes. That order is the graph's node-insertion order when the
component holds at least half of the graph's nodes, else the iteration order of a CPython ``set`` of
the component's ``(x, y)`` tuples, built from a breadth-first search. Both are reproduced here: the
set by emulating CPython's hash table (tuple hashes, probe sequences and resizes are precomputed on the
host per cell, :class:`ProbeTables`), so the tie-break is exactly rware's under CPython >= 3.8.

Everything is vectorised over robots with loops of a fixed length (``N`` rounds of pointer following),
so :func:`resolve_moves` jits and vmaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ProbeTables", "resolve_moves", "set_iteration_order"]

#: CPython set constants (Objects/setobject.c): linear probes per slot and the perturbation shift.
_LINEAR_PROBES = 9
_PERTURB_SHIFT = 5
_MIN_SIZE = 8


def _probe_order(h: int, mask: int) -> list[int]:
    """The distinct slots CPython's set visits for a hash ``h`` in a table of ``mask + 1`` slots, in
    visiting order (the first free one is where the key goes)."""
    perturb = h & (2**64 - 1)
    i = perturb & mask
    out: list[int] = []
    seen = set()
    while len(out) <= mask:
        probes = _LINEAR_PROBES if i + _LINEAR_PROBES <= mask else 0
        for s in range(i, i + probes + 1):
            if s not in seen:
                seen.add(s)
                out.append(s)
        perturb >>= _PERTURB_SHIFT
        i = (i * 5 + 1 + perturb) & mask
    return out


def _table_plan(capacity: int) -> list[tuple[int, int]]:
    """``[(table size, element count that triggers the resize out of it), ...]`` for sets built by
    adding up to ``capacity`` elements one at a time (no deletions, so fill == used)."""
    plan, size = [], _MIN_SIZE
    while True:
        mask = size - 1
        trigger = -(-3 * mask // 5)  # smallest fill with fill * 5 >= mask * 3
        plan.append((size, trigger))
        if capacity < trigger:
            return plan
        new = _MIN_SIZE
        while new <= 4 * trigger:
            new <<= 1
        size = new


@dataclass(frozen=True, eq=False)
class ProbeTables:
    """Host-precomputed CPython set probe orders for every cell's ``(x, y)`` tuple.

    ``probes[level, cell]`` lists the slots of a table of ``plan[level][0]`` slots in probe order,
    padded to the largest table size (the padding is never reached: tables are never full).
    """

    probes: np.ndarray  # int32 [levels, cells, max size]
    plan: tuple[tuple[int, int], ...]

    @classmethod
    def build(cls, rows: int, cols: int, capacity: int) -> ProbeTables:
        plan = _table_plan(capacity)
        top = plan[-1][0]
        probes = np.zeros((len(plan), rows * cols, top), np.int32)
        for level, (size, _) in enumerate(plan):
            for r in range(rows):
                for c in range(cols):
                    order = _probe_order(hash((c, r)), size - 1)  # rware's nodes are (x, y)
                    probes[level, r * cols + c] = order + [order[0]] * (top - size)
        return cls(probes=probes, plan=tuple(plan))


def _insert(probes: jax.Array, table: jax.Array, cell: jax.Array, do: jax.Array) -> jax.Array:
    perm = probes[cell]
    slot = perm[jnp.argmax(table[perm] < 0)]
    return table.at[slot].set(jnp.where(do, cell, table[slot]))


def _compact(table: jax.Array, length: int) -> jax.Array:
    """The keys of ``table`` in slot order (a set's iteration order), padded with -1 to ``length``."""
    occ = table >= 0
    rank = jnp.where(occ, jnp.cumsum(occ) - 1, length)
    return jnp.full((length,), -1, jnp.int32).at[rank].set(table, mode="drop")


def set_iteration_order(tables: ProbeTables, seq: jax.Array, count: jax.Array) -> jax.Array:
    """Iteration order of a CPython set built by adding ``seq[:count]`` (flat cell indices) one by one:
    the cells in slot order, padded with -1 to ``len(seq)``."""
    m = seq.shape[0]
    probes = jnp.asarray(tables.probes)
    top = tables.probes.shape[-1]
    table = jnp.full((top,), -1, jnp.int32)
    start = 0
    for level, (size, trigger) in enumerate(tables.plan):
        stop = min(trigger, m)

        def add(k, t, level=level):
            return _insert(probes[level], t, seq[k], k < count)

        table = jax.lax.fori_loop(start, stop, add, table)
        start = stop
        if level + 1 < len(tables.plan) and m >= trigger:
            old = table

            def move(s, t, old=old, level=level):
                return _insert(probes[level + 1], t, jnp.maximum(old[s], 0), old[s] >= 0)

            grown = jax.lax.fori_loop(0, size, move, jnp.full((top,), -1, jnp.int32))
            table = jnp.where(count >= trigger, grown, table)
    return _compact(table, m)


def _component_order(tables, src, tgt, source, agent):
    """Position of robot ``agent``'s cell in the iteration order of networkx's node set of its
    component: a BFS from ``source`` (successor first, then predecessors by robot index) fills a set,
    whose iteration order fills a second set (``G.subgraph(c)``), whose order is returned."""
    n = src.shape[0]
    # A component whose order matters holds fewer than half of the graph's <= 2N nodes, so at most
    # N - 1; larger ones overflow this queue harmlessly (their order is not used).
    m = n - 1
    queue = jnp.full((m,), -1, jnp.int32).at[0].set(source)

    def visit(head, carry):
        queue, tail = carry
        v = queue[head]
        live = head < tail
        at_v = src == v
        succ = jnp.where(at_v.any(), tgt[jnp.argmax(at_v)], -1)
        cand = jnp.concatenate([succ[None], jnp.where(tgt == v, src, -1)])  # [n + 1]
        valid = (cand >= 0) & live
        in_queue = (cand[:, None] == queue[None, :]).any(-1)
        earlier = jnp.tril(cand[:, None] == cand[None, :], -1) & valid[None, :]
        new = valid & ~in_queue & ~earlier.any(-1)
        pos = jnp.where(new, tail + jnp.cumsum(new) - 1, m)
        return queue.at[pos].set(cand, mode="drop"), tail + new.sum()

    queue, count = jax.lax.fori_loop(0, m, visit, (queue, jnp.int32(1)))
    count = jnp.minimum(count, m)
    first = set_iteration_order(tables, queue, count)
    second = set_iteration_order(tables, first, count)
    return jnp.argmax(second == src[agent])


def resolve_moves(src: jax.Array, tgt: jax.Array, tables: ProbeTables | None) -> jax.Array:
    """bool ``[N]``: which robots move, given each robot's flat cell ``src`` (distinct) and requested
    flat cell ``tgt`` (``tgt == src`` for a robot that stays). ``tables`` may be None for ``N < 4``
    (no component small enough for the set order to decide a tie)."""
    n = src.shape[0]
    idx = jnp.arange(n)
    mover = tgt != src
    onto = tgt[:, None] == src[None, :]  # [i, j]: i asks for j's cell
    nxt = jnp.where(onto.any(1), jnp.argmax(onto, 1), -1)

    # Follow successors N times: cycle membership, cycle length, the cycle's lowest robot, and each
    # robot's terminal (last robot before an empty cell, or a robot on the cycle it runs into).
    def follow(k, c):
        p, q, clen, cmin = c
        p = jnp.where(p >= 0, nxt[jnp.maximum(p, 0)], -1)
        q = jnp.where(nxt[q] >= 0, nxt[q], q)
        clen = jnp.where((clen == 0) & (p == idx), k + 1, clen)
        cmin = jnp.where(p >= 0, jnp.minimum(cmin, p), cmin)
        return p, q, clen, cmin

    _, term, clen, cmin = jax.lax.fori_loop(0, n, follow, (idx, idx, jnp.zeros(n, jnp.int32), idx))
    on_cycle = clen > 0
    cyclic = nxt[term] >= 0
    num_cells = jnp.int32(2**30)
    label = jnp.where(cyclic, num_cells + cmin[term], tgt[term])  # sink cell, or the cycle's robot

    # Longest chain of movers ending at each robot (networkx's dist), for acyclic components.
    feeds = onto.T & mover[None, :]  # [i, j]: mover j asks for i's cell

    def grow(_, h):
        return jnp.where(feeds, h[None, :] + 1, 0).max(1)

    height = jax.lax.fori_loop(0, n, grow, jnp.zeros(n, jnp.int32))

    # Order of a robot's cell among its component's nodes (the tie-break).
    seq = jnp.stack([src, tgt], 1).reshape(-1)  # networkx's node-insertion order, with repeats
    gpos = jnp.argmax(src[:, None] == seq[None, :], 1)
    num_nodes = (jnp.argmax(seq[:, None] == seq[None, :], 1) == jnp.arange(2 * n)).sum()
    same = label[:, None] == label[None, :]
    size = same.sum(1) + ~cyclic
    key = gpos
    if tables is not None and n >= 4:
        small = 2 * size < num_nodes
        sink_pos = jnp.argmax(tgt[term][:, None] == seq[None, :], 1)
        node_pos = jnp.where(same, gpos[None, :], 2 * n).min(1)
        node_pos = jnp.where(cyclic, node_pos, jnp.minimum(node_pos, sink_pos))
        source = seq[node_pos]
        order = jax.vmap(lambda s, a: _component_order(tables, src, tgt, s, a))(source, idx)
        key = jnp.where(small, order, gpos)

    # A mover is chosen by the cell it asks for when no rival for that cell has a longer chain, or an
    # equal one earlier in the order; it moves when every robot ahead of it up to the empty cell is
    # chosen too.
    rival = (tgt[:, None] == tgt[None, :]) & mover[None, :] & ~jnp.eye(n, dtype=bool)
    beats = (height[None, :] > height[:, None]) | (
        (height[None, :] == height[:, None]) & (key[None, :] < key[:, None])
    )
    chosen = mover & ~(rival & beats).any(1)

    def chain(_, ok):
        return chosen & jnp.where(nxt >= 0, ok[jnp.maximum(nxt, 0)], True)

    ok = jax.lax.fori_loop(0, n, chain, chosen)
    return mover & jnp.where(cyclic, on_cycle & (clen != 2), ok)
