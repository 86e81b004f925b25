"""A Monte Carlo tree search player for any turn-based alem env, on DeepMind's ``mctx``.

:class:`MCTSPlayer` runs :func:`mctx.muzero_policy` (PUCT) with the env itself as the model:
the recurrent function is the env's own ``step`` (alem envs are pure functions of
``(key, state, actions, params)``), the prior is uniform over the legal moves, and a leaf is
valued by random playouts. There is no network and nothing to train; the budget is
``num_simulations`` (default 100) env expansions per decision, plus the playouts. It plays
the most visited root move.

Why PUCT and not :func:`mctx.gumbel_muzero_policy`: with a uniform prior and playout values
(no network) Gumbel MuZero was much weaker at 100 simulations. Sequential Halving spends
about five simulations per root move in its first round, too few to see the opponent's
winning reply, and the interior rule, fed by single noisy playouts, kept following the first
reply that looked good; it lost 6-14% of its tic-tac-toe games against random as O
(300 games), and more simulations barely helped. PUCT that tries every child once before
any twice (an optimistic value for unvisited children, as UCT does), with 16 playouts per
leaf, lost none of 600 as O and 300 as X.

It plays any turn-based game (tic-tac-toe, connect four, bargaining, and any other once
registered), so it sits above the envs, not among them, and is registered per env like the
``minimax`` players (``alem/envs/games/__init__.py``); another turn-based game gets it with
one line: ``register_player("<game>", "mcts", "alem.search.mcts:MCTSPlayer")``.

**It searches the true state.** ``turn.state`` holds everything, including what the seat
must not see (the opponent's cards, private values). For perfect-information games that is
the position; for imperfect-information games it is cheating, so there the player is a
clairvoyant opponent (an upper bound), not a fair one. Chance moves are sampled once per tree
edge (the key ``mctx`` hands the recurrent function), so in stochastic games the tree follows
one sampled outcome per move: the player is meant for deterministic games.

Values and signs
----------------
``mctx`` backs up ``Q(s, a) = r(s, a) + discount(s, a) * V(s')`` and maximises ``Q`` at every
node. The search is done from the view of the seat that asked (``turn.agent``, the root
player ``p``): a node's value is ``+`` the root player's expected return when ``p`` moves
there and ``-`` it when another player moves (the two-player zero-sum sign flip; with more
players the "paranoid" reduction, every opponent minimising ``p``'s return). So on the edge
from a node moved by ``i`` to one moved by ``j``:

- ``reward = sign(i) * r_p`` (the root player's reward of that step, seen by the mover);
- ``discount = sign(i) * sign(j)``: ``-1`` when the turn passes to the other side, ``+1``
  when the same side moves again (games where one player may move twice in a row);
- ``discount = 0`` into a finished game, so the edge's value is its reward alone.

``r_p`` is the root player's own reward (``objective="own"``) or its margin over the mean of
the other seats (``"margin"``). In zero-sum games the two rank moves alike. In general-sum
games the sign flip makes "own" paranoid (the opponent plays only to hurt the root player:
in bargaining it would never accept a deal), while "margin" is the zero-sum game in which
every seat plays for its own margin, which the search models exactly; bargaining registers
"margin". Measured there at 100 simulations against random, 100 deals per seat (2 cores):
"margin" scored 6.6 and 7.3 points per deal as first and second mover (random 2.7 and 2.5),
"own" 6.2 and 6.1 (random 4.9 and 4.4); random against random scores 2.0 and 1.8.

A finished game is never stepped again: below a terminal node every transition pays 0
with discount 0 and keeps the state, and its leaf value is 0 (no playout), so whatever the
search does under a terminal node cannot change the value of the move that ended the game.
Illegal moves are never expanded: inside the tree their Q-value is ``-inf`` for the
selection (:func:`_qtransform`), at the root they are ``invalid_actions``.

Leaf values: the mean over ``num_rollouts`` uniform-random playouts of at most
``rollout_steps`` steps of the root player's summed rewards (times the leaf's sign);
``rollout_steps=0`` values every non-terminal leaf at 0 (pure tree search).

Everything is pure JAX with static shapes: ``act`` jits and vmaps (the evaluator's
lock-step loop vmaps it over rows), and the search runs the whole batch ``[B]`` as one tree
batch of ``mctx``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from alem import struct
from alem.core import MultiAgentEnv
from alem.errors import EnvArgumentError
from alem.extras import require
from alem.players import Player, Turn
from alem.rollout import random_legal_actions

__all__ = ["MCTSPlayer", "Node", "search"]

#: What the searching seat may maximise (``MCTSPlayer(objective=...)``).
OBJECTIVES = ("own", "margin")
#: Per game (the id without its version), the objective used when none is given.
_DEFAULT_OBJECTIVE: dict[str, str] = {"bargaining": "margin"}

#: Logit of an illegal move in a node's prior (finite: a softmax over an all-illegal terminal
#: node stays finite; ``exp(-1e9)`` is exactly 0 in float32, so such a move has prior 0).
_ILLEGAL_LOGIT = -1e9


@struct.dataclass
class Node:
    """What the tree stores per node (batched ``[B, ...]``): the env state and its turn info."""

    state: Any
    acting: jax.Array  # bool [N]
    mask: jax.Array  # bool [N, A]
    done: jax.Array  # bool []


def _mover(acting: jax.Array) -> jax.Array:
    """int32 ``[...]``: the seat to move (0 once nobody acts; then the node is finished)."""
    return jnp.argmax(acting, axis=-1).astype(jnp.int32)


def _sign(acting: jax.Array, root: int) -> jax.Array:
    """float32 ``[...]``: +1 where the root player moves, -1 where another player does."""
    return jnp.where(_mover(acting) == root, 1.0, -1.0).astype(jnp.float32)


def _prior_logits(node: Node) -> jax.Array:
    """float32 ``[B, A]``: uniform over the mover's legal moves."""
    legal = jnp.take_along_axis(node.mask, _mover(node.acting)[:, None, None], axis=1)[:, 0]
    return jnp.where(legal, 0.0, _ILLEGAL_LOGIT).astype(jnp.float32)


def _score(reward: jax.Array, root: int, objective: str) -> jax.Array:
    """float32 ``[B]``: what the root player maximises of a step's rewards ``[B, N]``: its own
    reward (``"own"``) or its margin over the mean of the other seats (``"margin"``)."""
    own = reward[:, root]
    if objective == "own":
        return own
    n = reward.shape[1]
    return own - (reward.sum(-1) - own) / max(n - 1, 1)


def _step(env: MultiAgentEnv, params: Any, keys: jax.Array, node: Node, action: jax.Array):
    """Play ``action`` [B] for each row's mover; finished rows stay as they are and pay 0.

    Returns the next nodes and the rewards ``[B, N]`` of the step.
    """
    seats = jnp.arange(env.num_agents)
    actions = jnp.where(seats == _mover(node.acting)[:, None], action[:, None], 0).astype(jnp.int32)
    state, ts = jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, node.state, actions, params)
    nxt = Node(state=state, acting=ts.acting, mask=ts.action_mask, done=ts.done)
    done = node.done
    nxt = jax.tree.map(
        lambda old, new: jnp.where(done.reshape((-1,) + (1,) * (new.ndim - 1)), old, new), node, nxt
    )
    reward = jnp.where(done[:, None], 0.0, ts.reward).astype(jnp.float32)
    return nxt, reward


def _rollout_return(
    env: MultiAgentEnv, params: Any, key: jax.Array, node: Node, root: int, steps: int, objective: str
) -> jax.Array:
    """float32 ``[B]``: the root player's summed score (:func:`_score`) over one random playout of
    ``<= steps`` steps.

    A ``while_loop`` that stops once every row has finished (or after ``steps`` steps).
    """
    b = node.done.shape[0]

    def cond(carry):
        t, _, n, _ = carry
        return (t < steps) & ~jnp.all(n.done)

    def body(carry):
        t, k, n, ret = carry
        k, k_act, k_env = jax.random.split(k, 3)
        acts = random_legal_actions(k_act, n.mask)  # [B, N]; the waiting seats' rows give 0
        mover_act = jnp.take_along_axis(acts, _mover(n.acting)[:, None], axis=1)[:, 0]
        n2, reward = _step(env, params, jax.random.split(k_env, b), n, mover_act)
        return t + 1, k, n2, ret + _score(reward, root, objective)

    init = (jnp.int32(0), key, node, jnp.zeros((b,), jnp.float32))
    return jax.lax.while_loop(cond, body, init)[3]


def _leaf_value(
    env: MultiAgentEnv,
    params: Any,
    key: jax.Array,
    node: Node,
    root: int,
    steps: int,
    rollouts: int,
    objective: str,
) -> jax.Array:
    """float32 ``[B]``: a node's value for its mover (see the module docstring); 0 when finished."""
    if steps == 0:
        return jnp.zeros(node.done.shape, jnp.float32)
    returns = jax.vmap(lambda k: _rollout_return(env, params, k, node, root, steps, objective))(
        jax.random.split(key, rollouts)
    )
    return jnp.where(node.done, 0.0, _sign(node.acting, root) * returns.mean(0))


def _qtransform(tree, node_index: jax.Array) -> jax.Array:
    """Q-values for PUCT: mctx's min-max normalised values (parent and siblings), with every
    unvisited legal child at the top (1: each is tried once before any is tried twice) and
    illegal children (prior zero) at ``-inf``, so that the selection never picks them."""
    import mctx

    q = mctx.qtransform_by_parent_and_siblings(tree, node_index)
    q = jnp.where(tree.children_visits[node_index] > 0, q, 1.0)
    return jnp.where(tree.children_prior_logits[node_index] > _ILLEGAL_LOGIT, q, -jnp.inf)


def search(
    env: MultiAgentEnv,
    params: Any,
    key: jax.Array,
    node: Node,
    root: int,
    *,
    num_simulations: int = 100,
    rollout_steps: int = 100,
    num_rollouts: int = 16,
    pb_c_init: float = 1.25,
    objective: str = "own",
):
    """PUCT search (:func:`mctx.muzero_policy`) from a batch of nodes ``[B]`` for seat ``root``.

    Returns the ``mctx.PolicyOutput``: ``action`` int32 ``[B]`` is the most visited root move
    (ties broken at random with the key), ``action_weights`` float32 ``[B, A]`` the root visit
    shares, ``search_tree`` the tree (node values seen by each node's mover, see the module
    docstring). Rows whose mover has no legal move (finished games) get an arbitrary action.
    """
    import mctx

    def recurrent_fn(params, rng_key, action, emb: Node):
        b = action.shape[0]
        k_env, k_val = jax.random.split(rng_key)
        nxt, reward = _step(env, params, jax.random.split(k_env, b), emb, action)
        before, after = _sign(emb.acting, root), _sign(nxt.acting, root)
        out = mctx.RecurrentFnOutput(
            reward=jnp.where(emb.done, 0.0, before * _score(reward, root, objective)),
            discount=jnp.where(nxt.done, 0.0, before * after),
            prior_logits=_prior_logits(nxt),
            value=_leaf_value(env, params, k_val, nxt, root, rollout_steps, num_rollouts, objective),
        )
        return out, nxt

    k_root, k_search = jax.random.split(key)
    logits = _prior_logits(node)
    legal = logits > _ILLEGAL_LOGIT
    invalid = ~legal & legal.any(-1, keepdims=True)  # a row with no legal move: no mask (no NaN)
    value = _leaf_value(env, params, k_root, node, root, rollout_steps, num_rollouts, objective)
    return mctx.muzero_policy(
        params=params,
        rng_key=k_search,
        root=mctx.RootFnOutput(prior_logits=logits, value=value, embedding=node),
        recurrent_fn=recurrent_fn,
        num_simulations=num_simulations,
        invalid_actions=invalid,
        qtransform=_qtransform,
        dirichlet_fraction=0.0,  # no exploration noise: this is a player, not self-play training
        pb_c_init=pb_c_init,
        temperature=0.0,  # play the most visited move
    )


def _count(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < low:
        raise EnvArgumentError(f"MCTSPlayer: {name} must be an integer >= {low}, got {value!r}")
    return int(value)


class MCTSPlayer(Player):
    """PUCT tree search over the true env state, valued by random playouts.

    See the module docstring for the signs, terminal nodes and what it may see.

    Args:
        env: a turn-based env with discrete actions (at most one seat acts per step).
        num_simulations: tree expansions per decision (the budget; default 100).
        rollout_steps: the longest random playout from a leaf, in env steps (default 100;
            playouts stop early once every row's game has ended); 0: leaves are worth 0.
        num_rollouts: playouts averaged per leaf (default 16; they run as one vmapped batch).
        pb_c_init: PUCT's exploration constant (mctx's default 1.25); values are normalised
            to [0, 1] per node, so it does not depend on the reward scale.
        objective: what the searching seat maximises (and, by the sign flip, the others
            minimise): ``"own"`` its own return, or ``"margin"`` its return minus the mean
            of the other seats' returns. In zero-sum games the two choose the same moves;
            in general-sum games (bargaining) ``"own"`` assumes opponents that only hurt
            it, ``"margin"`` opponents that each play for their own margin (a zero-sum game
            the search models exactly). ``None`` (default): the env's registered choice,
            ``"own"`` unless the game registers another (see the module docstring).
    """

    name = "mcts"

    def __init__(
        self,
        env: MultiAgentEnv | None = None,
        num_simulations: int = 100,
        rollout_steps: int = 100,
        num_rollouts: int = 16,
        pb_c_init: float = 1.25,
        objective: str | None = None,
    ):
        require("arena", "the mcts player")
        if env is not None and (not env.turn_based or env.continuous_actions):
            raise EnvArgumentError(
                f"MCTSPlayer: {env.id} is not a turn-based env with discrete actions; "
                "the search needs one mover per step"
            )
        self.num_simulations = _count(num_simulations, "num_simulations", 1)
        self.rollout_steps = _count(rollout_steps, "rollout_steps", 0)
        self.num_rollouts = _count(num_rollouts, "num_rollouts", 1)
        self.pb_c_init = float(pb_c_init)
        if not self.pb_c_init > 0:
            raise EnvArgumentError(f"MCTSPlayer: pb_c_init must be > 0, got {pb_c_init!r}")
        if objective is None:
            objective = _DEFAULT_OBJECTIVE.get(env.id.split("-v")[0], "own") if env is not None else "own"
        if objective not in OBJECTIVES:
            raise EnvArgumentError(f"MCTSPlayer: objective must be one of {OBJECTIVES}, got {objective!r}")
        self.objective = objective
        self.name = f"mcts(sims={self.num_simulations})"

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        ts = turn.timestep
        node = Node(state=turn.state, acting=ts.acting, mask=ts.action_mask, done=ts.done)
        out = search(
            turn.env,
            turn.params,
            key,
            node,
            turn.agent,
            num_simulations=self.num_simulations,
            rollout_steps=self.rollout_steps,
            num_rollouts=self.num_rollouts,
            pb_c_init=self.pb_c_init,
            objective=self.objective,
        )
        return out.action.astype(jnp.int32)
