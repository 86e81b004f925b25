"""Grid multi-agent pathfinding: one grid engine, three modes (one-shot, lifelong, disappear-at-goal).

- :mod:`~alem.envs.pathfinding.grid`: moves, collision systems, BFS, observations (pure JAX).
- :mod:`~alem.envs.pathfinding.maps`: map generators (in jit), warehouse layout, POGEMA ASCII
  and MovingAI ``.map``/``.scen`` loaders.
- :mod:`~alem.envs.pathfinding.env`: :class:`PathfindingEnv` (the docstring card) and params.
- :mod:`~alem.envs.pathfinding.baseline`: a classical BFS baseline policy.

Importing this package imports none of them; import the module you need.
"""
