"""The play engine, the floor below the arena and the LLM tools: what to play, how, and what
comes out. It needs no extra (jax, numpy and alem's core).

- :mod:`alem.engine.record`: :class:`~alem.engine.record.Match` (an env, one player per seat,
  episodes, seed), :class:`~alem.engine.record.EpisodeRecord` (one finished episode) and the
  run files they are read from and written to.
- :mod:`alem.engine.lockstep`: :func:`~alem.engine.lockstep.play`, the lock-step loop over a
  batch of envs (:class:`~alem.engine.lockstep.LockStep`) with device and host players, and
  the episode keys (:func:`~alem.engine.lockstep.episode_key`) that make an episode's
  randomness independent of the batch layout.
- :mod:`alem.engine.sync`: running an async player's requests from synchronous code.
- :mod:`alem.engine.counters`: the per-seat decision counters (illegal, fallback, tokens).

:mod:`alem.arena` (evaluation, tournaments, ratings) and :mod:`alem.text` (the LLM player and
the LLM-training tools) are built on it; it imports neither.
"""
