"""Tree search over alem's own env steps: :mod:`alem.search.mcts` (the ``mcts`` player, on mctx)."""
