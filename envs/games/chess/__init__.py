"""Chess (``chess-v0``): OpenSpiel 2.0.2's rules and action ids, a JAX move generator.

- :mod:`~alem.envs.games.chess.env`: the :class:`Chess` env and its card;
- :mod:`~alem.envs.games.chess.movegen`: legal actions, moves, position hashes (JAX);
- :mod:`~alem.envs.games.chess.tables`: squares, rays, the action numbering, UCI names (NumPy);
- :mod:`~alem.envs.games.chess.fen`: FEN in and out, UCI names of moves (host side).
"""

from __future__ import annotations

from alem.envs.games.chess.env import Chess, ChessParams, ChessState

__all__ = ["Chess", "ChessParams", "ChessState"]
