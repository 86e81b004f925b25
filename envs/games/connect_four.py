"""Connect four, and a depth-limited minimax player.

Card
----
- **Agents**: ``player_0`` (X, moves first) and ``player_1`` (O), as in OpenSpiel. One role.
- **Observation**: bool ``[6, 7, 3]`` per player (row 0 = top row), ego-centric
  planes: the player's own pieces, the opponent's pieces, empty cells.
- **Actions**: ``Discrete(7)``: drop a piece into column ``index`` (0 = leftmost),
  the same numbering as OpenSpiel's ``connect_four`` actions. Text uses column
  *numbers* 1-7 (= index + 1): names ``column 1 .. column 7``; aliases ``col 3``,
  ``c3``, ``3``, ``column3``; a bare number is a column number, ``action 2`` an index.
- **Turns**: ``acting`` is one-hot on the player to move, all False after the end;
  ``action_mask``: the mover's row marks the columns that are not full, the other
  row is all False. Actions of the waiting player are ignored.
- **Rewards**: terminal utilities, zero-sum: +1 to the player completing four in a
  row (horizontal, vertical or diagonal), -1 to the other, 0 each for a draw
  (full board); 0 on every other step.
- **Termination**: four in a row or a full board (42 pieces). No truncation.
- **Illegal moves**: ``illegal_action="replace"`` (default): a full or
  out-of-range column becomes the mover's first open column and is counted in
  ``info["illegal_action"]``; ``illegal_action="lose"``: the mover loses at once
  (-1/+1, board unchanged). See :mod:`alem.envs.games.board`.
- **Reference**: OpenSpiel 2.0.2 ``connect_four`` (6 rows, 7 columns, 4 in a row): same
  legal actions, player to move, terminal states and returns at every step
  (tests/envs/games/test_connect_four.py).
- **Text**: rules, a board with column numbers per player, column names and aliases, parser.
- **Scripted players**: ``"minimax"`` (:class:`MinimaxPlayer`, full-width
  depth-4 search with a window-count heuristic), ``"greedy"`` (the same at depth 1)
  and ``"random"``.
- **Version**: v0.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.games.board import EMPTY, BoardGame, line_table, lines_through_cells, window_matrix
from alem.errors import EnvArgumentError
from alem.players import Player, Turn
from alem.text_hooks import words

__all__ = ["ConnectFour", "MinimaxPlayer", "greedy_player"]

ROWS, COLS, K = 6, 7, 4


class ConnectFour(BoardGame):
    """Connect four on a 6x7 board; see the module card.

    Args:
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    title = "connect four"
    glyphs = ("disc", "disc")
    colors = np.array([[220, 50, 40], [245, 205, 30]], np.uint8)
    background = (40, 80, 190)
    hole = (235, 235, 235)
    episode_steps_hint = 21.0  # random play, measured

    def __init__(self, *, illegal_action: str = "replace"):
        super().__init__(ROWS, COLS, COLS, K, illegal_action=illegal_action)

    def move_cell(self, board: jax.Array, action: jax.Array) -> jax.Array:
        col = action.astype(jnp.int32)
        filled = ((board.reshape(ROWS, COLS) != 0) & (jnp.arange(COLS) == col)).sum()
        return (ROWS - 1 - filled) * COLS + col

    def legal_moves(self, board: jax.Array) -> jax.Array:
        return board[:COLS] == EMPTY  # the top cell of the column is free

    # ------------------------------------------------------------------ text
    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        return {**super().text_vocabulary(), "column": ("lower", tuple(str(c + 1) for c in range(COLS)))}

    def action_names(self, agent: int = 0) -> list[str]:
        return [f"column {c}" for c in self.labels("column")]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in range(COLS):
            n = c + 1
            for form in (f"col {n}", f"c{n}", f"{n}", f"column{n}", f"col{n}", f"column number {n}"):
                out[form] = c
        return out

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """As the base parser, except that a bare number is a column number 1-7."""
        said = words(text)
        if re.fullmatch(r"\d+", said):
            n = int(said)
            return n - 1 if 1 <= n <= COLS else None
        return super().parse_action(text, agent)

    def rules_text(self, params=None, agent: int = 0) -> str:
        mark, (game,), seat, cols = (
            self.labels("piece"),
            self.labels("game"),
            self.labels("seat"),
            self.labels("column"),
        )
        if self.relabeled_text:  # made-up labels have no order to name a range by
            naming = f"Columns are named {', '.join(cols)} from left to right."
        else:
            naming = "Columns are numbered 1 to 7 from left to right."
        return "\n".join(
            [
                f"You are player {seat[agent]} in {game} and play {mark[agent]}; your opponent plays "
                f"{mark[1 - agent]}.",
                "The board has 6 rows and 7 columns. Players take turns dropping one piece into a column;",
                f"it falls to the lowest empty cell of that column. {mark[0]} moves first. A full column cannot be",
                "chosen. The first to line up four of their pieces horizontally, vertically or diagonally",
                "wins; a full board without such a line is a draw. Win: +1, loss: -1, draw: 0.",
                f"{naming} Answer with one open column, e.g. column {cols[3]}.",
            ]
        )

    def _grid_text(self, board: np.ndarray) -> list[str]:
        sym = np.array([".", *self.labels("piece")])[board.reshape(ROWS, COLS)]
        lines = [" " + " ".join(self.labels("column"))]
        lines += ["|" + " ".join(row) + "|" for row in sym]
        lines.append("+" + "-" * (2 * COLS - 1) + "+")
        return lines


# ---------------------------------------------------------------------------- scripted player
_LINES = line_table(ROWS, COLS, K)  # [69, 4]
# Encoding own = 1, opponent = 8 per cell makes a window's sum own + 8 * opp (exact in float32).
_WINDOWS = window_matrix(_LINES, ROWS * COLS)  # [42, 69]
_THROUGH = lines_through_cells(_LINES, ROWS * COLS)  # [42, M, 4]
_WIN = 1000.0


def _window_scores() -> np.ndarray:
    """float32 ``[33]``: heuristic value of a window by its code ``own + 8 * opp``."""
    weight = np.array([0.0, 1.0, 4.0, 32.0, 0.0])  # pieces in an otherwise empty window
    out = np.zeros(33, np.float32)
    for own in range(5):
        for opp in range(5):
            if own + opp <= 4:
                out[own + 8 * opp] = weight[own] * (opp == 0) - weight[opp] * (own == 0)
    return out


_SCORES = _window_scores()
_CENTER = np.zeros(ROWS * COLS, np.float32)
_CENTER[COLS // 2 :: COLS] = 3.0  # pieces in the centre column take part in most lines


def _heuristic(board: jax.Array) -> jax.Array:
    """float32 ``[...]``: window-count evaluation of ego boards ``int8 [..., 42]`` (1 root, 2 opponent)."""
    code = jnp.where(board == 1, 1.0, jnp.where(board == 2, 8.0, 0.0))
    windows = code @ jnp.asarray(_WINDOWS)
    value = jnp.asarray(_SCORES)[windows.astype(jnp.int32)].sum(-1)
    own_mid = jnp.where(board == 1, 1.0, jnp.where(board == 2, -1.0, 0.0)) @ jnp.asarray(_CENTER)
    return value + own_mid


def _children(board: jax.Array, mark: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Every move from ego boards ``int8 [..., 42]``: children ``[..., 7, 42]``, legal ``[..., 7]``,
    and whether the move wins for ``mark`` ``[..., 7]``."""
    grid = board.reshape(*board.shape[:-1], ROWS, COLS)
    filled = (grid != 0).sum(-2)  # [..., 7]
    legal = filled < ROWS
    cell = (ROWS - 1 - jnp.minimum(filled, ROWS - 1)) * COLS + jnp.arange(COLS)
    onehot = jax.nn.one_hot(cell, ROWS * COLS, dtype=jnp.int8) * legal[..., None]
    child = board[..., None, :] + jnp.int8(mark) * onehot
    padded = jnp.concatenate([child, jnp.zeros((*child.shape[:-1], 1), child.dtype)], axis=-1)
    cells = jnp.asarray(_THROUGH)[cell]  # [..., 7, M, 4] cells of the lines through each move
    got = jnp.take_along_axis(padded, cells.reshape(*cells.shape[:-2], -1), axis=-1).reshape(cells.shape)
    wins = legal & jnp.all(got == mark, axis=-1).any(-1)
    return child, legal, wins


def search_values(board: jax.Array, depth: int) -> tuple[jax.Array, jax.Array]:
    """Minimax values of the root player's moves from ego boards ``int8 [B, 42]``.

    Full-width fixed-depth search (the tree is expanded level by level as arrays,
    so it is one static program under jit/vmap; it returns what alpha-beta would).
    Wins score ``±(1000 + plies left)`` (faster wins, slower losses preferred),
    draws 0, leaves the window heuristic of :func:`_heuristic`.

    Returns:
        q: float32 ``[B, 7]`` value of each move (``-inf`` for full columns); legal ``[B, 7]``.
    """
    levels = []  # per level k = 1..depth: (legal [B, 7**k], wins [B, 7**k])
    nodes = board[:, None, :]
    for k in range(1, depth + 1):
        mark = 1 if k % 2 == 1 else 2
        child, legal, wins = _children(nodes, mark)
        nodes = child.reshape(board.shape[0], -1, ROWS * COLS)
        legal = legal.reshape(board.shape[0], -1)
        if levels:  # children of finished games do not exist
            parent_done = jnp.repeat(levels[-1][1] | ~levels[-1][0], COLS, axis=1)
            legal = legal & ~parent_done
        levels.append((legal, wins.reshape(board.shape[0], -1)))
    value = _heuristic(nodes)
    for k in range(depth, 0, -1):
        legal, wins = levels[k - 1]
        sign = 1.0 if k % 2 == 1 else -1.0  # the level-k move was made by the root player if k is odd
        value = jnp.where(wins, sign * (_WIN + depth - k), value)
        if k == 1:
            return jnp.where(legal, value, -jnp.inf), legal
        # Back up into level k-1, whose mover (the root player if k-1 is even) picks the best child.
        v = value.reshape(board.shape[0], -1, COLS)
        ok = legal.reshape(v.shape)
        maximise = (k - 1) % 2 == 0
        fill = -jnp.inf if maximise else jnp.inf
        best = jnp.where(ok, v, fill)
        best = best.max(-1) if maximise else best.min(-1)
        value = jnp.where(ok.any(-1), best, 0.0)  # no move left: a full board, a draw
    raise AssertionError("unreachable")


class MinimaxPlayer(Player):
    """Connect four by full-width minimax of fixed ``depth`` plies.

    Scores wins (sooner is better), losses (later is better) and, at the
    horizon, the window-count heuristic: every 4-cell window holding only one
    player's pieces counts 1/4/32 for 1/2/3 pieces (positive for the player to
    move, negative for the opponent), plus 3 per piece in the centre column. So
    it takes an immediate win and blocks an immediate threat whenever
    ``depth >= 2``. Ties are broken at random with the key. Pure JAX, batched
    over the ``B`` envs of a :class:`~alem.players.Turn`; reads only the seat's
    ego-centric observation. Cost grows as ``7**depth`` per decision.
    """

    name = "minimax"

    def __init__(self, env=None, depth: int = 4):
        del env
        if not 1 <= int(depth) <= 6:
            raise EnvArgumentError(f"connect four MinimaxPlayer: depth must be in 1..6, got {depth}")
        self.depth = int(depth)
        self.name = f"minimax(depth={self.depth})"

    def act(self, key: jax.Array, turn: Turn) -> jax.Array:
        from alem.rollout import random_legal_actions

        obs = turn.obs  # [B, 6, 7, 3]
        board = (obs[..., 0] + 2 * obs[..., 1]).astype(jnp.int8).reshape(obs.shape[0], -1)
        q, legal = search_values(board, self.depth)
        best = legal & (q >= q.max(-1, keepdims=True))
        return random_legal_actions(key, best)


def greedy_player(env=None) -> MinimaxPlayer:
    """The one-ply player: takes a win if there is one, else the best-scoring move."""
    p = MinimaxPlayer(env, depth=1)
    p.name = "greedy"
    return p
