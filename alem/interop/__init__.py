"""Adapters to the libraries users already have: PettingZoo, Gymnasium and gymnax.

- :mod:`alem.interop.pettingzoo`: any alem env as a ``pettingzoo.ParallelEnv``
  (:func:`~alem.interop.pettingzoo.parallel_env`) or ``AECEnv``
  (:func:`~alem.interop.pettingzoo.aec_env`).
- :mod:`alem.interop.pettingzoo_players`: :func:`~alem.interop.pettingzoo_players.play`
  (also ``alem.interop.pettingzoo.play``), which seats alem's evaluator players
  (:class:`alem.players.Player`) in a PettingZoo env.
- :mod:`alem.interop.gymnasium`: one-agent alem envs as a ``gymnasium.Env``
  (:func:`~alem.interop.gymnasium.make_env`) and as a jitted, vmapped
  ``gymnasium.vector.VectorEnv`` (:func:`~alem.interop.gymnasium.make_vector_env`).
- :mod:`alem.interop.gymnax`: gymnax envs as alem envs (:class:`~alem.interop.gymnax.FromGymnax`,
  behind the ``gymnax/*`` ids) and one-agent alem envs as gymnax envs
  (:class:`~alem.interop.gymnax.ToGymnax`); it needs ``pip install "alem[gymnax]"``.

The PettingZoo and Gymnasium adapters need ``pip install "alem[interop]"``; importing this
package imports none of the three libraries.
"""

from __future__ import annotations

__all__: list[str] = []
