"""Exact best response, NashConv and exploitability for the poker games, in NumPy.

The game tree is enumerated from alem's own env (:func:`game_tree`): every
equally likely deal of :meth:`PokerEnv.deals` is a root, and the betting is
expanded breadth-first with the env's own (jitted, batched) transition, so the
metric scores exactly the game the env plays. OpenSpiel is not needed.

A policy can be given as

- an array ``[I, A]`` aligned with ``tree.infoset_keys``;
- a mapping ``{key: probs}`` whose keys are observation bit strings
  (:func:`~alem.envs.games.poker.obs_key`), or a strategy table loaded with
  :func:`~alem.envs.games.poker.load_table`;
- a :class:`~alem.envs.games.poker.TablePlayer` (anything with ``probs(obs, mask)``);
- a function ``fn(obs, mask) -> probs`` of the observations ``float32 [I, D]`` and
  legal masks ``bool [I, A]`` of all information states (called once, so a trained
  network is one batched forward pass and an LLM can be queried once per
  information state; ``tree.infoset_state(i)`` gives a state to render as text);
- ``"uniform"``: uniform over the legal actions.

Scoring arena players (scripted, trained, LLM) goes through these tables:
:mod:`alem.arena.exploitability`.

Conventions (OpenSpiel's): ``nash_conv = sum_p (BR_p - V_p)``, the total gain of
each player's best response against the others' policy, in chips per game;
``exploitability = nash_conv / num_players``, which for these two-player
zero-sum games equals ``open_spiel.python.algorithms.exploitability.exploitability``
(the mean of the two best-response values). For 3+ players OpenSpiel only
defines ``nash_conv``; :func:`exploitability` still returns ``nash_conv / N``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.games.poker import PokerEnv, obs_key
from alem.errors import AlemError

__all__ = [
    "GameTree",
    "game_tree",
    "policy_table",
    "expected_returns",
    "best_response_value",
    "nash_conv",
    "exploitability",
]

_CHUNK = 512  # fixed batch of the jitted tree expansion (one compile per env)


@dataclasses.dataclass(frozen=True, eq=False)
class GameTree:
    """The whole game as flat NumPy arrays over ``M`` nodes and ``I`` information states.

    Attributes:
        num_players, num_actions: ``N`` and ``A``.
        player: int ``[M]``, player to move (-1 at terminal nodes).
        infoset: int ``[M]``, information state of the player to move (-1 at terminals).
        children: int ``[M, A]``, child node per legal action (-1 elsewhere).
        utility: float64 ``[M, N]``, returns at terminal nodes (0 elsewhere).
        depth: int ``[M]``, moves since the deal.
        root_prob: float64 ``[M]``, probability of the deal at roots (0 elsewhere).
        obs: float32 ``[M, N, D]``, every player's observation at every node.
        infoset_obs: float32 ``[I, D]``; infoset_mask: bool ``[I, A]``;
        infoset_player: int ``[I]``; infoset_keys: observation bit strings ``[I]``;
        infoset_node: int ``[I]``, one node of each information state.
        states: the env states of all nodes (a pytree of host arrays with leading ``[M]``).
    """

    num_players: int
    num_actions: int
    player: np.ndarray
    infoset: np.ndarray
    children: np.ndarray
    utility: np.ndarray
    depth: np.ndarray
    root_prob: np.ndarray
    obs: np.ndarray
    infoset_obs: np.ndarray
    infoset_mask: np.ndarray
    infoset_player: np.ndarray
    infoset_keys: list[str]
    infoset_node: np.ndarray
    states: Any

    @property
    def num_nodes(self) -> int:
        return int(self.player.shape[0])

    @property
    def num_infosets(self) -> int:
        return int(self.infoset_player.shape[0])

    def node_state(self, node: int) -> Any:
        """The env state at ``node`` (render it with ``env.render_text(state, player)``)."""
        return jax.tree.map(lambda x: x[node], self.states)

    def infoset_state(self, i: int) -> Any:
        """A state in information state ``i``; every one renders the same for its player."""
        return self.node_state(int(self.infoset_node[i]))


def _chunked(fn: Callable, tree: Any, size: int) -> Any:
    """``fn`` over a host pytree with leading axis ``size``, in padded chunks of ``_CHUNK``."""
    outs = []
    for start in range(0, size, _CHUNK):
        idx = np.arange(start, start + _CHUNK)
        idx = np.where(idx < size, idx, start)  # pad with a valid row
        part = jax.tree.map(lambda x, idx=idx: x[idx], tree)
        n = min(_CHUNK, size - start)
        outs.append(jax.tree.map(lambda x, n=n: np.asarray(x)[:n], fn(part)))
    return jax.tree.map(lambda *xs: np.concatenate(xs), *outs)


_TREES: dict[tuple, GameTree] = {}


def game_tree(env: PokerEnv) -> GameTree:
    """Enumerate ``env``'s game tree (cached per game and player count)."""
    env = getattr(env, "unwrapped", env)
    if not isinstance(env, PokerEnv):
        raise AlemError(f"game_tree needs a poker env (kuhn_poker, leduc_holdem), got {type(env).__name__}")
    cache_key = (type(env).__name__, env.num_agents)
    if cache_key in _TREES:
        return _TREES[cache_key]
    n, a = env.num_agents, env.num_actions
    deals = env.deals()
    frontier = jax.device_get(jax.vmap(env.initial_state)(jnp.asarray(deals)))
    describe = jax.jit(jax.vmap(lambda s: (env.observe(s), env.legal(s), s.player, s.terminal, s.returns)))
    expand = jax.jit(jax.vmap(lambda s: jax.vmap(lambda x: env.transition(s, x))(jnp.arange(a))))

    levels, level_states, size = [], [], len(deals)
    while size:
        obs, legal, player, terminal, returns = _chunked(describe, frontier, size)
        live = np.flatnonzero(~terminal)
        k_idx, a_idx = np.nonzero(legal[live])
        levels.append(
            dict(obs=obs, legal=legal, player=player, terminal=terminal, returns=returns, live=live)
            | dict(k_idx=k_idx, a_idx=a_idx)
        )
        level_states.append(frontier)
        size = len(k_idx)
        if size:
            alive = jax.tree.map(lambda x, live=live: x[live], frontier)
            kids = _chunked(expand, alive, len(live))
            frontier = jax.tree.map(lambda x, k=k_idx, a=a_idx: x[k, a], kids)

    # Number nodes level by level and link parents to children.
    offsets = np.cumsum([0] + [len(lv["player"]) for lv in levels])
    m = int(offsets[-1])
    children = np.full((m, a), -1, np.int64)
    for d, lv in enumerate(levels[:-1]):
        parents = offsets[d] + lv["live"][lv["k_idx"]]
        children[parents, lv["a_idx"]] = offsets[d + 1] + np.arange(len(lv["k_idx"]))
    cat = lambda k: np.concatenate([lv[k] for lv in levels])
    terminal = cat("terminal")
    player = np.where(terminal, -1, cat("player")).astype(np.int64)
    obs = cat("obs").astype(np.float32)
    legal = cat("legal")
    depth = np.concatenate([np.full(len(lv["player"]), d) for d, lv in enumerate(levels)])
    root_prob = np.where(depth == 0, 1.0 / len(deals), 0.0)
    utility = np.where(terminal[:, None], cat("returns"), 0.0).astype(np.float64)

    decision = np.flatnonzero(~terminal)
    own = obs[decision, player[decision]]
    uniq, first, inverse = np.unique(own.astype(np.uint8), axis=0, return_index=True, return_inverse=True)
    infoset = np.full(m, -1, np.int64)
    infoset[decision] = inverse.reshape(-1)
    nodes = decision[first]
    states = jax.tree.map(lambda *xs: np.concatenate(xs), *level_states)
    tree = GameTree(
        num_players=n,
        num_actions=a,
        player=player,
        infoset=infoset,
        children=children,
        utility=utility,
        depth=depth,
        root_prob=root_prob,
        obs=obs,
        infoset_obs=uniq.astype(np.float32),
        infoset_mask=legal[nodes],
        infoset_player=player[nodes],
        infoset_keys=[obs_key(row) for row in uniq],
        infoset_node=nodes,
        states=states,
    )
    _TREES[cache_key] = tree
    return tree


def _tree(env_or_tree: PokerEnv | GameTree) -> GameTree:
    return env_or_tree if isinstance(env_or_tree, GameTree) else game_tree(env_or_tree)


def policy_table(env_or_tree: PokerEnv | GameTree, policy: Any) -> np.ndarray:
    """float64 ``[I, A]``: ``policy`` (any form in the module docstring) at every information state.

    Raises ``ValueError`` for negative or non-finite probabilities, probability on an
    illegal action, rows that do not sum to 1 (within 1e-4), or missing keys.
    """
    tree = _tree(env_or_tree)
    obs, mask = tree.infoset_obs, tree.infoset_mask
    uniform = isinstance(policy, str)
    if uniform:
        if policy != "uniform":
            raise ValueError(f"unknown policy name {policy!r}; only 'uniform' is built in")
        table = mask.astype(np.float64)
    elif isinstance(policy, Mapping):
        if "infosets" in policy:  # a strategy table file
            policy = {row["obs"]: row["probs"] for row in policy["infosets"]}
        missing = [k for k in tree.infoset_keys if k not in policy]
        if missing:
            raise ValueError(
                f"policy misses {len(missing)} of {tree.num_infosets} information states, e.g. {missing[:3]}"
            )
        table = np.array([policy[k] for k in tree.infoset_keys], np.float64)
    elif hasattr(policy, "probs"):
        table = np.asarray(policy.probs(jnp.asarray(obs), jnp.asarray(mask)), np.float64)
    elif callable(policy):
        table = np.asarray(policy(obs.copy(), mask.copy()), np.float64)
    else:
        table = np.asarray(policy, np.float64)
    if table.shape != mask.shape:
        raise ValueError(
            f"policy table must have shape {mask.shape} (information states x actions), got {table.shape}"
        )
    if not np.isfinite(table).all() or (table < 0).any():
        raise ValueError("policy probabilities must be finite and non-negative")
    illegal = np.where(mask, 0.0, table).max(initial=0.0)
    if illegal > 1e-6:
        raise ValueError(f"policy puts probability {illegal:g} on an illegal action")
    table = np.where(mask, table, 0.0)
    sums = table.sum(1, keepdims=True)
    if uniform:
        return table / sums
    bad = np.abs(sums[:, 0] - 1.0) > 1e-4
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"policy row for information state {tree.infoset_keys[i]} sums to {sums[i, 0]:g}, not 1"
        )
    return table / sums


def _seat_table(tree: GameTree, policy: Any) -> np.ndarray:
    """One table, or a sequence of per-seat policies merged by who owns each information state."""
    if (
        isinstance(policy, Sequence)
        and not isinstance(policy, str | np.ndarray)
        and len(policy) == tree.num_players
    ):
        tables = [policy_table(tree, p) for p in policy]
        return np.stack(tables)[tree.infoset_player, np.arange(tree.num_infosets)]
    return policy_table(tree, policy)


def _levels(tree: GameTree) -> list[np.ndarray]:
    return [np.flatnonzero(tree.depth == d) for d in range(int(tree.depth.max()) + 1)]


def _child_values(tree: GameTree, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    kids = tree.children[nodes]
    return np.where((kids >= 0)[..., None], values[np.maximum(kids, 0)], 0.0)  # [K, A, N]


def expected_returns(env_or_tree: PokerEnv | GameTree, policy: Any) -> np.ndarray:
    """float64 ``[N]`` expected returns when every seat plays ``policy``.

    ``policy`` may also be a sequence of ``N`` policies, one per seat (e.g. ``[table, "uniform"]``).
    """
    tree = _tree(env_or_tree)
    pi = _seat_table(tree, policy)
    values = tree.utility.copy()
    for nodes in reversed(_levels(tree)):
        dec = nodes[tree.player[nodes] >= 0]
        q = _child_values(tree, values, dec)
        values[dec] = np.einsum("ka,kan->kn", pi[tree.infoset[dec]], q)
    return tree.root_prob @ values


def best_response_value(env_or_tree: PokerEnv | GameTree, policy: Any, player: int) -> float:
    """Expected return of ``player``'s best response when the others play ``policy``."""
    tree = _tree(env_or_tree)
    pi = _seat_table(tree, policy)
    levels = _levels(tree)
    # Probability of reaching each node through chance and the other players' actions.
    reach = tree.root_prob.copy()
    for nodes in levels[:-1]:
        dec = nodes[tree.player[nodes] >= 0]
        w = np.where((tree.player[dec] == player)[:, None], 1.0, pi[tree.infoset[dec]])
        kids = tree.children[dec]
        ok = kids >= 0
        reach[kids[ok]] = (reach[dec][:, None] * w)[ok]
    values = tree.utility[:, player].copy()
    for nodes in reversed(levels):
        dec = nodes[tree.player[nodes] >= 0]
        kids = tree.children[dec]
        q = np.where(kids >= 0, values[np.maximum(kids, 0)], 0.0)  # [K, A]
        mine = tree.player[dec] == player
        # Opponent nodes: expectation under their policy.
        values[dec[~mine]] = np.einsum("ka,ka->k", pi[tree.infoset[dec[~mine]]], q[~mine])
        # Own nodes: one action per information state (all its nodes share this depth),
        # the one with the highest reach-weighted value.
        own, q_own = dec[mine], q[mine]
        if len(own):
            inf = tree.infoset[own]
            total = np.zeros((tree.num_infosets, tree.num_actions))
            np.add.at(total, inf, reach[own][:, None] * q_own)
            total = np.where(tree.infoset_mask, total, -np.inf)
            best = np.argmax(total, axis=1)
            values[own] = q_own[np.arange(len(own)), best[inf]]
    return float(tree.root_prob @ values)


def nash_conv(env_or_tree: PokerEnv | GameTree, policy: Any) -> float:
    """``sum_p (BR_p - V_p)`` in chips per game (0 exactly at a Nash equilibrium)."""
    tree = _tree(env_or_tree)
    pi = policy_table(tree, policy)
    on_policy = expected_returns(tree, pi)
    return float(sum(best_response_value(tree, pi, p) - on_policy[p] for p in range(tree.num_players)))


def exploitability(env_or_tree: PokerEnv | GameTree, policy: Any) -> float:
    """``nash_conv / num_players`` (OpenSpiel's ``exploitability`` for two-player zero-sum games)."""
    tree = _tree(env_or_tree)
    return nash_conv(tree, policy) / tree.num_players
