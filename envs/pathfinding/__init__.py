"""Grid multi-agent pathfinding: one grid engine, three modes (one-shot, lifelong, disappear-at-goal).

- :mod:`~alem.envs.pathfinding.grid`: moves, collision systems, BFS, observations (pure JAX).
- :mod:`~alem.envs.pathfinding.maps`: map generators (in jit), warehouse layout, POGEMA ASCII
  and MovingAI ``.map``/``.scen`` loaders.
- :mod:`~alem.envs.pathfinding.types`: params and state dataclasses, named constants (modes).
- :mod:`~alem.envs.pathfinding.generator`: the task drawn at reset (in jit) and
  :func:`~alem.envs.pathfinding.generator.make_params` (maps loaded, given tasks checked).
- :mod:`~alem.envs.pathfinding.env`: :class:`PathfindingEnv` (the docstring card), the dynamics.
- :mod:`~alem.envs.pathfinding.viewer`: rules and ASCII views (the env's text hooks).
- :mod:`~alem.envs.pathfinding.baseline`: a classical BFS baseline policy.
- :mod:`~alem.envs.pathfinding.pibt`: PIBT, a classical planner (joint moves, jittable).
- :mod:`~alem.envs.pathfinding.benchmark`: the POGEMA benchmark's map sets (shipped in
  ``data/pogema_benchmark``), evaluation configs and POGEMA's own task placement
  (``python -m benchmarks.pogema_protocol`` runs a policy over them).

Importing this package imports none of them; import the module you need. :func:`register`
adds the registry ids (one per mode; entry points are strings), the BFS player ``"bfs"`` and the
PIBT player ``"pibt"``.
"""

from __future__ import annotations

__all__ = ["register", "learned_follower"]

# id -> mode, POGEMA's on_target, description
_MODES = (
    (
        "pathfinding-v0",
        "one_shot",
        "nothing",
        "one-shot MAPF: agents stay on goals; solved when all are on goal",
    ),
    ("pathfinding_lifelong-v0", "lifelong", "restart", "lifelong MAPF: a new goal on each arrival"),
    ("pathfinding_disappear-v0", "disappear", "finish", "MAPF where agents leave the map at their goals"),
)


def register() -> None:
    """Register the pathfinding ids (family ``"pathfinding"``; POGEMA-exact, one id per mode)
    and the classical planners as scripted players of each: ``"bfs"`` (the BFS baseline) and
    ``"pibt"`` (PIBT)."""
    from alem.players import register_player
    from alem.registry import register

    for env_id, mode, pogema, desc in _MODES:
        register(
            env_id,
            "alem.envs.pathfinding.env:PathfindingEnv",
            kwargs={"mode": mode, "num_agents": 8, "height": 16},
            family="pathfinding",
            num_agents=8,
            text=True,
            reference=f"pogema 1.4.0 (on_target={pogema})",
            description=f"{desc} (16x16 random map, density 0.3, soft collisions, FOV radius 5)",
        )
        name = env_id.rsplit("-v", 1)[0]
        register_player(name, "bfs", "alem.envs.pathfinding.baseline:BFSPlayer")
        register_player(name, "pibt", "alem.envs.pathfinding.pibt:PIBTPlayer")


def learned_follower():
    """The learned follower alem ships (an exported actor, :mod:`alem.algos.actor_export`): shared
    IPPO trained by ``python -m alem.train env=pathfinding_follow`` on 16 agents, 20x20 random maps
    (``data/learned/follow/actor.json`` says the recipe and the run), the learned row of
    ``benchmarks.pogema_protocol`` (``--policy follow``) without a training run. A ``Path``."""
    from pathlib import Path

    return Path(__file__).resolve().parent / "data" / "learned" / "follow"
