"""Trained learners as evaluator players: ``checkpoint:<run dir>``.

The run directory of ``python -m alem.train`` holds the learner configuration
(``results.json``), the parameter set of each agent (its ``roles`` field) and the last checkpoint; :class:`CheckpointPlayer`
rebuilds the learner for the env it is asked to play (through the learner table,
:mod:`alem.algos.registry`) and samples from (or takes the mode of) the trained actor of one
seed; a value-based run (``pqn``, ``iql``, ``vdn``, ...) plays its greedy legal action. The
player asks the learner, whatever its core, for its moves (``play_actions``) and action
probabilities (``action_probabilities``). It is a device policy: a pure JAX function of the
observation and the legal-action mask.

A self-play run (``algo.selfplay``) also keeps its opponent pool in the checkpoint: the
spec ``checkpoint:<run dir>#<k>`` (or the keyword ``snapshot=k``) plays pool slot ``k``
instead of the final parameters, so a run's snapshots can be rated as a league.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem.algos.actor_export import ACTOR_META, is_actor_folder, read_actor
from alem.algos.config import RunConfig
from alem.algos.registry import LEARNERS, make_learner
from alem.checkpoint import CheckpointError, latest, restore
from alem.core import MultiAgentEnv
from alem.errors import AlemError, LearnerConfigError
from alem.players import Player, Turn
from alem.struct import zeros_like

__all__ = ["CheckpointPlayer", "TrainedActor", "load_trained", "load_state", "actor_actions"]


def load_trained(
    run_dir: str | Path,
    env: MultiAgentEnv,
    seed_index: int = 0,
    snapshot: int | None = None,
    recurrent: bool = False,
    transfer: bool = False,
):
    """``(learner, actor_params)`` of seed ``seed_index`` of a finished or checkpointed run (of a
    vmapped sweep's run: its row ``seed_index``, ``configuration * num_seeds + seed``).

    ``snapshot=k``: the actor of slot ``k`` of a self-play run's opponent pool instead of the
    final one (the critic stays the final one; acting does not use it). A recurrent run is
    refused unless ``recurrent=True`` (a caller that carries the GRU state, :class:`TrainedActor`).

    ``transfer=True`` plays the trained actor in ``env`` although it is another env than the
    run's (another id, agent count or map size): the checkpoint is restored for the run's own
    env (rebuilt from its saved id and keywords), and the learner returned acts in ``env``.
    That needs a PPO-core run whose parameters do not depend on the team: one shared role, no
    agent-id input, local actor and critic, and the same observation and action spaces per
    agent; anything else is refused with the reason.
    """
    run_dir = Path(run_dir)
    res, source = _read_run(run_dir)
    lcfg = _learner_config(res, source)
    exported = source.name == ACTOR_META
    play_env = env
    if transfer:
        env = _trained_env(res, run_dir, lcfg, play_env)
    elif res["env_id"] != env.id:
        raise AlemError(f"{run_dir} was trained on {res['env_id']!r}, not {env.id!r}")
    rows = _rows(res, source)
    if not 0 <= seed_index < rows:
        what = f"{rows} rows (configurations x seeds)" if "rows" in res else f"{res['num_seeds']} seeds"
        raise AlemError(f"seed_index={seed_index} out of range: the run has {what}")
    if lcfg.recurrent and not recurrent:
        raise AlemError(
            "recurrent checkpoints cannot be played by the evaluator yet (feed-forward only); "
            "alem.algos.checkpoint_player.TrainedActor plays them in one env (e.g. for alem.render)"
        )
    if exported and snapshot is not None:
        raise AlemError(
            f"{run_dir}: snapshot={snapshot} asked for, but an exported actor keeps no self-play pool"
        )
    learner, state = _restore_rows(run_dir, env, res, lcfg, rows, exported)
    params = jax.tree.map(lambda x: x[seed_index], state.params)
    if snapshot is not None:
        pool = getattr(state, "pool", None)  # the PPO core's self-play pool
        if pool is None:
            raise AlemError(f"{run_dir}: snapshot={snapshot} asked for, but the run has no self-play pool")
        filled = min(int(pool.count[seed_index]), lcfg.pool_size)
        if isinstance(snapshot, bool) or not 0 <= int(snapshot) < filled:
            raise AlemError(
                f"{run_dir}: snapshot={snapshot!r} is not a filled pool slot; the pool holds slots 0..{filled - 1}"
            )
        actor = jax.tree.map(lambda x: x[seed_index, int(snapshot)], pool.actor)
        params = {**params, "actor": actor}
    if transfer:
        learner = make_learner(play_env, lcfg, np.zeros(play_env.num_agents, np.int32))
    return learner, params


def load_state(run_dir: str | Path, env: MultiAgentEnv | None = None) -> tuple[Any, Any, dict]:
    """``(learner, state, results)``: the whole vmapped learner state of a run's newest checkpoint
    (every row), for ``env`` (default: the run's env, rebuilt from its saved id and keywords)."""
    run_dir = Path(run_dir)
    res, source = _read_run(run_dir)
    lcfg = _learner_config(res, source)
    if env is None:
        env = _saved_env(res)
    elif res["env_id"] != env.id:
        raise AlemError(f"{run_dir} was trained on {res['env_id']!r}, not {env.id!r}")
    learner, state = _restore_rows(run_dir, env, res, lcfg, _rows(res, source), source.name == ACTOR_META)
    return learner, state, res


def _rows(res: dict, source: Path) -> int:
    """Rows of the run's state: its seeds, or a vmapped sweep's configuration-major (configuration, seed) rows."""
    rows = res.get("rows", res["num_seeds"])
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
        raise CheckpointError(f"{source}: rows is {rows!r}, not a positive integer")
    return rows


def _saved_env(res: dict) -> MultiAgentEnv:
    """The env a run trained on, rebuilt from its saved id and keywords."""
    from alem.registry import make

    env_cfg = (res.get("config") or {}).get("env") or {}
    return make(res["env_id"], **dict(env_cfg.get("kwargs") or {}))


def _read_run(run_dir: Path) -> tuple[dict, Path]:
    """The run's description and the file it came from: ``results.json`` of a run directory, or
    ``actor.json`` of an exported actor (:mod:`alem.algos.actor_export`)."""
    if is_actor_folder(run_dir):
        meta, _ = read_actor(run_dir)
        return meta, run_dir / ACTOR_META
    results = run_dir / "results.json"
    if not results.is_file():
        raise CheckpointError(f"{run_dir}: no results.json; is it a finished `python -m alem.train` run?")
    try:
        res = json.loads(results.read_text(encoding="utf-8"))
        if not isinstance(res, dict) or not isinstance(res.get("env_id"), str):
            raise ValueError("not an alem.train results object")
    except (ValueError, RecursionError) as e:
        raise CheckpointError(
            f"{results} is damaged or not written by `python -m alem.train` ({type(e).__name__}: {e}); "
            f"resume the run with `python -m alem.train resume={run_dir}` to rewrite it"
        ) from None
    if "learner" not in res:
        raise AlemError(f"{run_dir}: algo {res.get('algo')!r} has no trained parameters to play")
    return res, results


def _restore_rows(
    run_dir: Path, env: MultiAgentEnv, res: dict, lcfg: Any, rows: int, exported: bool
) -> tuple[Any, Any]:
    """``(learner, state)`` with every row's parameters: restored from the newest checkpoint, or,
    for an exported actor, its actor leaves in an otherwise zero state (acting reads the actor only)."""
    try:
        learner = make_learner(env, lcfg, param_sets=np.asarray(res["roles"]))
    except LearnerConfigError as e:  # e.g. the roles field edited to disagree with the configuration
        raise CheckpointError(f"{run_dir}: {e}") from None
    keys = jax.vmap(jax.random.key)(jnp.arange(rows))
    template = zeros_like(jax.eval_shape(jax.vmap(learner.init), keys))  # shapes only: no init to run
    if exported and "actor" not in template.params:
        raise CheckpointError(
            f"{run_dir}: an exported actor of a {lcfg.kind} run ({res.get('algo')}), which has none"
        )
    if exported:
        _, leaves = read_actor(run_dir)
        want, treedef = jax.tree.flatten(template.params["actor"])
        shapes = [(tuple(x.shape), str(x.dtype)) for x in want]
        if [(tuple(x.shape), str(x.dtype)) for x in leaves] != shapes:
            raise CheckpointError(
                f"{run_dir}: its actor leaves do not fit the learner its actor.json describes "
                "(edited, damaged or written by another alem version)"
            )
        params = {**template.params, "actor": jax.tree.unflatten(treedef, [jnp.asarray(x) for x in leaves])}
        return learner, template.replace(params=params)
    found = latest(run_dir)
    if found is None:
        raise CheckpointError(f"{run_dir}: no checkpoint")
    try:
        return learner, restore(found[1], template)
    except CheckpointError:
        # Playing needs only the parameters, which lead the state: a run whose later leaves are
        # laid out otherwise (an older alem's env info) still plays; a damaged one still fails.
        count = len(jax.tree.leaves(template.params))
        leading = zip(jax.tree.leaves(template), jax.tree.leaves(template.params), strict=False)
        if not all(a is b for a, b in leading):
            raise
        return learner, restore(found[1], template, leading=count)


def actor_actions(
    learner: Any, params: Any, obs: jax.Array, mask: jax.Array, key: jax.Array, greedy: bool = False
):
    """int ``[N]``: a feed-forward trained learner's actions in one (unbatched) env, from a zero
    hidden state; sampled, or the mode with ``greedy``. Pure JAX: call it inside jit, vmap, scan."""
    return learner.play_actions(params, obs[None], mask[None], key, greedy)[0]


def _trained_env(res: dict, run_dir: Path, lcfg: RunConfig, play_env: MultiAgentEnv):
    """The env a run trained on (from its saved id and keywords), checked to share its actor with ``play_env``."""
    why = lcfg.transfer_refusal(res["roles"])
    if why:
        raise AlemError(f"{run_dir}: its actor cannot play another env: {why}")
    trained = _saved_env(res)
    for what, get in (("observation", "observation_space"), ("action", "action_space")):
        a, b = getattr(trained, get)(0), getattr(play_env, get)(0)
        if (a.shape, a.dtype, getattr(a, "n", None)) != (b.shape, b.dtype, getattr(b, "n", None)):
            raise AlemError(
                f"{run_dir}: trained with per-agent {what} space {a}, but {play_env.id} has {b}; "
                "its actor cannot play there"
            )
    return trained


def _learner_config(res: dict, path: Path) -> RunConfig:
    """The learner configuration a ``results.json`` names, of the class the learner table gives
    its algo; a missing or mistyped field is one :class:`CheckpointError` naming it (the file was
    edited, damaged or written by another version)."""
    num_seeds, fields, roles = res.get("num_seeds"), res.get("learner"), res.get("roles")
    entry = LEARNERS.get(res.get("algo")) if isinstance(res.get("algo"), str) else None
    problem = None
    if entry is None:
        problem = f"algo is {res.get('algo')!r}, not a known learner ({', '.join(sorted(LEARNERS))})"
    elif isinstance(num_seeds, bool) or not isinstance(num_seeds, int) or num_seeds < 1:
        problem = f"num_seeds is {num_seeds!r}, not a positive integer"
    elif not isinstance(fields, dict) or not isinstance(fields.get("hidden"), list):
        problem = "learner is not a learner configuration (with a hidden list)"
    elif not isinstance(roles, list):
        problem = f"roles is {roles!r}, not a list"
    else:
        try:
            return entry.config(**{**fields, "hidden": tuple(fields["hidden"])})
        except (TypeError, ValueError) as e:
            problem = f"learner does not build a learner configuration ({e})"
    raise CheckpointError(
        f"{path}: {problem}; it was edited, damaged or written by another alem version "
        f"(resume the run with `python -m alem.train resume={path.parent}` to rewrite it)"
    )


class CheckpointPlayer(Player):
    """Plays seat ``turn.agent`` with the trained actor of a run (``spec`` = the run directory)."""

    def __init__(
        self,
        env: MultiAgentEnv,
        spec: str | None = None,
        seed_index: int = 0,
        greedy: bool = False,
        snapshot: int | None = None,
    ):
        if not spec:
            raise AlemError("the checkpoint player needs a run directory: checkpoint:<run dir>")
        run_dir, sep, slot = str(spec).rpartition("#")
        if sep and slot.isdigit():  # checkpoint:<run dir>#<k>: pool slot k
            if snapshot is not None and int(snapshot) != int(slot):
                raise AlemError(f"checkpoint:{spec} and snapshot={snapshot} name different pool slots")
            spec, snapshot = run_dir, int(slot)
        self.snapshot = None if snapshot is None else int(snapshot)
        self.learner, self.params = load_trained(spec, env, int(seed_index), self.snapshot)
        self.greedy = bool(greedy)
        self.name = f"checkpoint:{Path(spec).name}" + ("" if self.snapshot is None else f"#{self.snapshot}")

    def program_key(self) -> Hashable:
        """Runs of one learner configuration, parameter sets and env act alike given their parameters."""
        learner = self.learner
        param_sets = np.asarray(learner.param_sets).tobytes()
        return (type(self), type(learner), learner.cfg, param_sets, id(learner.env.unwrapped), self.greedy)

    def device_params(self) -> Any:
        return self.params

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        return self.act_with(self.params, key, turn)

    def act_with(self, params: Any, key: jax.Array, turn: Turn) -> jax.Array:
        ts = turn.timestep
        actions = self.learner.play_actions(params, ts.obs, ts.action_mask, key, greedy=self.greedy)
        return actions[:, turn.agent]

    def action_probs(self, obs: Any, mask: Any, agent: Any = 0) -> jax.Array:
        """float32 ``[I, A]``: the probabilities with which this player picks each action.

        The action-probability protocol of the arena's game-theoretic scores (see
        :func:`alem.arena.exploitability.player_exploitability`): ``obs [I, ...]`` are
        single agents' observations, ``mask`` bool ``[I, A]`` their legal actions, and
        ``agent`` (an int or int ``[I]``) the seat each row belongs to (its role's
        parameters and, with ``agent_id``, its id input). The rows go through the actor as
        a batch of ``I`` envs, each row in its own agent's slot (the other slots are
        zero-filled: decentralised actors see only their own observation). Illegal actions
        get probability 0; a ``greedy`` player puts 1 on the actor's mode.
        """
        self.learner.check_action_probabilities()
        fn = self.__dict__.get("_action_probs")
        if fn is None:
            fn = self._action_probs = jax.jit(self._probs_batch)
        obs = jnp.asarray(obs, jnp.float32)
        mask = jnp.asarray(mask, bool)
        agent = jnp.broadcast_to(jnp.asarray(agent, jnp.int32), obs.shape[:1])
        return fn(self.params, obs, mask, agent)

    def _probs_batch(self, params: Any, obs: jax.Array, mask: jax.Array, agent: jax.Array) -> jax.Array:
        learner = self.learner
        b, n = obs.shape[0], learner.n
        slot = jax.nn.one_hot(agent, n, dtype=bool)  # [I, N]: each row's own agent
        full_obs = jnp.where(slot.reshape(b, n, *(1,) * (obs.ndim - 1)), obs[:, None], 0.0)
        full_mask = jnp.where(slot[..., None], mask[:, None], True)
        table = learner.action_probabilities(params, full_obs, full_mask, greedy=self.greedy)
        probs = jnp.where(mask, table[jnp.arange(b), agent], 0.0)  # [I, A]
        total = probs.sum(-1, keepdims=True)
        return jnp.where(total > 0, probs / jnp.maximum(total, 1e-30), probs)

    def describe(self) -> dict[str, Any]:
        greedy = self.greedy or self.learner.always_greedy
        info = {"algo": self.learner.cfg.name, "greedy": greedy}
        if self.snapshot is not None:
            info["snapshot"] = self.snapshot
        return info


class TrainedActor:
    """The trained PPO-core actor of a run as a ``policy(key, ts)`` for one unbatched env, feed-forward
    or recurrent: it carries the GRU state between calls, and :func:`alem.render.rollout_frames`
    calls :meth:`reset` when an episode starts (the state is zeroed, as in training)::

        render_gif(env, "battle.gif", num_steps=200, policy=TrainedActor(run_dir, env, greedy=True))
    """

    def __init__(self, run_dir: str | Path, env: MultiAgentEnv, seed_index: int = 0, greedy: bool = False):
        learner, params = load_trained(run_dir, env, int(seed_index), recurrent=True)
        if "actor" not in params:  # a core without an actor network (value-based)
            raise AlemError(
                f"{run_dir}: TrainedActor plays runs with an actor network (PPO core); a "
                f"{learner.cfg.kind} run plays as checkpoint:"
            )
        self.learner, self.params, self.greedy = learner, params, bool(greedy)
        width = 1 if learner.centralised else learner.n
        self._initial = learner.actor_net.initial_hidden((1, width))
        self._act = jax.jit(self._step, static_argnames="greedy")
        self.reset()

    def _step(self, params, hidden, obs, mask, start, key, greedy):
        gstate = jnp.zeros((1, 0), jnp.float32)
        h, actions, _, _ = self.learner.act(
            params, hidden, obs[None], gstate, mask[None], start[None], key, greedy
        )
        return h, actions[0]

    def reset(self) -> None:
        """A new episode starts: the next call zeroes the GRU state first."""
        self._hidden, self._start = self._initial, True

    def __call__(self, key: jax.Array, ts: Any) -> jax.Array:
        self._hidden, actions = self._act(
            self.params, self._hidden, ts.obs, ts.action_mask, jnp.bool_(self._start), key, greedy=self.greedy
        )
        self._start = False
        return actions
