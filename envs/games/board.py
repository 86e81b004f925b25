"""Shared machinery of the two-player alternating board games (tic-tac-toe, connect four).

One state layout, one transition and one win check serve both games; a game
only says where a move lands (:meth:`BoardGame.move_cell`), which moves are
legal (:meth:`BoardGame.legal_moves`) and how its board reads as text.

- **Board**: ``int8 [H * W]`` in row-major order, row 0 on top; ``0`` empty,
  ``1`` a piece of player 0 (``X``, moves first as in OpenSpiel), ``2`` a piece of
  player 1 (``O``).
- **Win check**: every line of ``k`` cells is a precomputed index table, and a step
  checks all of them for the mover's mark with one gather of *constant* indices (8
  lines in tic-tac-toe, 69 in connect four). Under ``vmap`` that is several times
  cheaper than gathering only the lines through the cell just played, whose
  indices depend on the state. Writes are one-hot selects, not scatters, for the
  same reason.
- **Observation**: bool ``[2, H, W, 3]``, ego-centric planes per player (own
  pieces, opponent's pieces, empty cells).
- **Turn-based contract**: ``acting`` is one-hot on the player to move (all
  False once the game is over); the mover's ``action_mask`` row holds the legal
  moves and the other row is all False (as OpenSpiel's ``legal_actions(p)`` is
  empty for the player not to move). The core replaces the ignored action of
  the waiting player by 0 without flagging it; :func:`alem.rollout.random_legal_actions`
  returns 0 for an all-False row.
- **Illegal moves** (masked or out of range) of the mover: ``"replace"`` (default,
  the core's behaviour) plays the mover's first legal move and sets
  ``info["illegal_action"]``; ``"lose"`` ends the game on the spot with the board
  as it was, the mover getting -1 and the opponent +1 (also flagged in ``info``).
- **Stepping a finished game** changes nothing and pays 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.players import Player, Turn
from alem.text_hooks import TextHooks, words

__all__ = [
    "BoardState",
    "BoardParams",
    "BoardGame",
    "line_table",
    "lines_through_cells",
    "window_matrix",
    "glyph_masks",
    "play_games",
]

MARKS = ("X", "O")
#: A board cell with no piece; player ``p``'s pieces are ``p + 1`` (its mark ``MARKS[p]``).
EMPTY = 0


def line_table(height: int, width: int, k: int) -> np.ndarray:
    """All straight lines of ``k`` cells on an ``height x width`` board: int32 ``[L, k]``.

    Order: rows, columns, down-right diagonals, up-right diagonals; cell = row * width + col.
    """
    lines = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
        for r in range(height):
            for c in range(width):
                rr, cc = r + dr * (k - 1), c + dc * (k - 1)
                if 0 <= rr < height and 0 <= cc < width:
                    lines.append([(r + dr * i) * width + (c + dc * i) for i in range(k)])
    return np.asarray(lines, dtype=np.int32)


def lines_through_cells(lines: np.ndarray, num_cells: int) -> np.ndarray:
    """For each cell, the cells of every line through it: int32 ``[C, M, k]``.

    Rows are padded to the largest count ``M`` with a line made of the sentinel
    cell ``num_cells`` (index into the board with one always-empty cell appended).
    """
    per_cell = [[line for line in lines if c in line] for c in range(num_cells)]
    m = max(len(p) for p in per_cell)
    k = lines.shape[1]
    out = np.full((num_cells, m, k), num_cells, dtype=np.int32)
    for c, p in enumerate(per_cell):
        if p:
            out[c, : len(p)] = np.asarray(p)
    return out


def window_matrix(lines: np.ndarray, num_cells: int) -> np.ndarray:
    """float32 ``[C, L]`` membership matrix: ``pieces @ M`` counts pieces per line."""
    m = np.zeros((num_cells, len(lines)), dtype=np.float32)
    for j, line in enumerate(lines):
        m[line, j] = 1.0
    return m


@struct.dataclass
class BoardState:
    board: jax.Array  # int8 [H*W]; 0 empty, 1 player 0 (X), 2 player 1 (O)
    player: jax.Array  # int32 [], player to move (meaningless once terminated)
    winner: jax.Array  # int32 [], -1 while running and for a draw
    terminated: jax.Array  # bool []
    num_moves: jax.Array  # int32 [], pieces on the board
    last_cell: jax.Array  # int32 [], cell of the last piece (-1 before the first move)


@struct.dataclass
class BoardParams(EnvParams):
    """The board games have no dynamic parameters (the board size is static)."""


class BoardGame(TextHooks, MultiAgentEnv[BoardState, BoardParams]):
    """Base class of the alternating two-player board games; see the module docstring.

    Subclasses call ``super().__init__`` with the board shape, the number of
    actions and the winning length, and implement :meth:`move_cell`,
    :meth:`legal_moves`, :meth:`rules_text`, :meth:`action_names` and
    :meth:`_grid_text`.
    """

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
    stochastic: ClassVar[bool] = False
    turn_based: ClassVar[bool] = True
    zero_sum: ClassVar[bool] = True
    fixed_start: ClassVar[bool] = True
    title: ClassVar[str] = "a board game"
    #: RGB glyph per mark (index 0 = player 0) for :meth:`render_rgb`.
    glyphs: ClassVar[tuple[str, str]] = ("disc", "disc")
    colors: ClassVar[np.ndarray] = np.array([[220, 60, 50], [240, 200, 40]], np.uint8)
    background: ClassVar[tuple[int, int, int]] = (245, 245, 240)
    #: Colour of an empty cell's disc (None: plain background).
    hole: ClassVar[tuple[int, int, int] | None] = None

    def __init__(self, height: int, width: int, num_actions: int, k: int, *, illegal_action: str = "replace"):
        super().__init__(illegal_action=illegal_action)
        self.agents = ("player_0", "player_1")
        self.agent_roles = np.zeros(2, dtype=np.int32)
        self.role_names = ("player",)
        self.height, self.width, self.k = int(height), int(width), int(k)
        self.num_cells = self.height * self.width
        self._num_actions = int(num_actions)
        self.lines = line_table(self.height, self.width, self.k)
        self._default_params = BoardParams()

    # ------------------------------------------------------------------ game-specific
    def move_cell(self, board: jax.Array, action: jax.Array) -> jax.Array:
        """int32 ``[]`` cell where a legal ``action`` puts the mover's piece."""
        raise NotImplementedError

    def legal_moves(self, board: jax.Array) -> jax.Array:
        """bool ``[A]``: moves legal on ``board`` for whoever is to move."""
        raise NotImplementedError

    def _grid_text(self, board: np.ndarray) -> list[str]:
        """Lines of the ASCII board with coordinates."""
        raise NotImplementedError

    # ------------------------------------------------------------------ description
    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Box(0, 1, (self.height, self.width, 3), dtype=bool)
        return one if agent is not None else spaces.stack([one, one])

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(self._num_actions)
        return one if agent is not None else spaces.stack([one, one])

    # ------------------------------------------------------------------ dynamics
    def wins(self, board: jax.Array, mark: jax.Array) -> jax.Array:
        """bool ``[]``: ``mark`` owns a whole line of ``k`` on ``board``.

        Per direction, the AND of ``k`` shifted static slices of the mark's plane: every
        window of ``k`` at once, all elementwise (XLA fuses it into one loop). Gathering the
        precomputed line table (``self.lines``) was 1.2x slower per env step in connect four.
        """
        own = (board == mark).reshape(self.height, self.width)
        h, w, k = self.height, self.width, self.k
        found = jnp.bool_(False)
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            rows, cols = h - dr * (k - 1), w - abs(dc) * (k - 1)
            if rows <= 0 or cols <= 0:
                continue
            c0 = 0 if dc >= 0 else k - 1  # anti-diagonals start k-1 columns in
            run = own[0:rows, c0 : c0 + cols]
            for i in range(1, k):
                r, c = dr * i, c0 + dc * i
                run = run & own[r : r + rows, c : c + cols]
            found = found | run.any()
        return found

    def acting(self, state: BoardState, params: BoardParams | None = None) -> jax.Array:
        return (jnp.arange(2) == state.player) & ~state.terminated

    def action_mask(self, state: BoardState, params: BoardParams | None = None) -> jax.Array:
        return self.acting(state, params)[:, None] & self.legal_moves(state.board)[None, :]

    def observe(self, state: BoardState, params: BoardParams | None = None) -> jax.Array:
        """bool ``[2, H, W, 3]``: per player its own pieces, the opponent's, empty cells.

        Boolean like Pgx's boards: a float32 copy would quadruple the bytes every step
        writes and halve the throughput of a batched rollout; networks cast it.
        """
        b = state.board.reshape(1, self.height, self.width, 1)
        # planes[i] = the cell codes agent i sees as (own, opponent, empty); one broadcast compare.
        planes = jnp.asarray([[1, 2, 0], [2, 1, 0]], jnp.int8)[:, None, None, :]
        return b == planes

    def reset_env(self, key: jax.Array, params: BoardParams) -> tuple[BoardState, TimeStep]:
        state = BoardState(
            board=jnp.zeros((self.num_cells,), jnp.int8),
            player=jnp.int32(0),
            winner=jnp.int32(-1),
            terminated=jnp.bool_(False),
            num_moves=jnp.int32(0),
            last_cell=jnp.int32(-1),
        )
        return state, self.timestep(state, params, jnp.zeros((2,), jnp.float32))

    def step_env(
        self, key: jax.Array, state: BoardState, actions: jax.Array, params: BoardParams
    ) -> tuple[BoardState, TimeStep]:
        live = ~state.terminated
        p = state.player
        # Selects and one-hot writes instead of gathers/scatters: much cheaper under vmap.
        cell = self.move_cell(state.board, jnp.where(p == 0, actions[0], actions[1]))
        mark = (p + 1).astype(jnp.int8)
        board = jnp.where((jnp.arange(self.num_cells) == cell) & live, mark, state.board)
        won = live & self.wins(board, mark)
        num_moves = state.num_moves + live.astype(jnp.int32)
        terminated = state.terminated | won | (num_moves >= self.num_cells)
        sign = jnp.where(jnp.arange(2) == p, 1.0, -1.0).astype(jnp.float32)
        new = BoardState(
            board=board,
            player=jnp.where(live, 1 - p, p),
            winner=jnp.where(won, p, state.winner),
            terminated=terminated,
            num_moves=num_moves,
            last_cell=jnp.where(live, cell, state.last_cell),
        )
        return new, self.timestep(new, params, jnp.where(won, sign, 0.0), terminated=new.terminated)

    def forfeit(
        self, state: BoardState, offender: jax.Array, params: BoardParams
    ) -> tuple[BoardState, jax.Array]:
        # Undo the substitute move the core made; the offender loses.
        lost = BoardState(
            board=jnp.where(jnp.arange(self.num_cells) == state.last_cell, 0, state.board).astype(jnp.int8),
            player=offender,
            winner=1 - offender,
            terminated=jnp.bool_(True),
            num_moves=state.num_moves - 1,
            last_cell=jnp.int32(-1),
        )
        return lost, jnp.where(jnp.arange(2) == offender, -1.0, 1.0).astype(jnp.float32)

    # ------------------------------------------------------------------ text
    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """The game's title, the seats (``player 0``), the pieces; subclasses add coordinates."""
        return {"game": ("name", (self.title,)), "seat": ("name", ("0", "1")), "piece": ("upper", MARKS)}

    def _status(self, state: BoardState, agent: int | None) -> str:
        seat, mark = self.labels("seat"), self.labels("piece")

        def who(j: int) -> str:
            return "you" if agent == j else f"player {seat[j]} ({mark[j]})"

        if bool(state.terminated):
            w = int(state.winner)
            if w < 0:
                return "The game is over: a draw."
            return f"The game is over: {who(w)} won." if agent != w else "The game is over: you won."
        p = int(state.player)
        if agent is None:
            return f"Player {seat[p]} ({mark[p]}) to move."
        return "It is your turn." if p == agent else f"Waiting for {who(p)} to move."

    def json_view(self, state: BoardState, agent: int, params: Any = None) -> dict[str, Any]:
        """``your_piece``, ``to_move`` (``"you"``, ``"opponent"`` or null once over), ``board``: rows
        top to bottom of pieces and ``"."``, ``winner`` (``"you"``, ``"opponent"``, ``"draw"`` or null)."""
        mark = self.labels("piece")
        board = np.array([".", *mark])[np.asarray(state.board).reshape(self.height, self.width)]
        side = lambda j: "you" if j == agent else "opponent"
        over, w = bool(state.terminated), int(state.winner)
        return {
            "your_piece": mark[agent],
            "to_move": None if over else side(int(state.player)),
            "board": ["".join(row) for row in board],
            "winner": (side(w) if w >= 0 else "draw") if over else None,
        }

    def render_text(
        self, state: BoardState, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        # the board and whose turn it is; no available moves to leave out
        board = np.asarray(state.board)
        seat, mark = self.labels("seat"), self.labels("piece")
        head = (
            f"You are player {seat[agent]} and play {mark[agent]} ({mark[0]} moves first)."
            if agent is not None
            else f"Player {seat[0]} plays {mark[0]} (moves first), player {seat[1]} plays {mark[1]}."
        )
        return "\n".join([head, *self._grid_text(board), self._status(state, agent)])

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """The :class:`~alem.text_hooks.TextHooks` parser, plus: when several names occur in a sentence, a name that
        overlaps a longer name found there is dropped ("the middle left" -> middle left,
        not the centre as well)."""
        found = super().parse_action(text, agent)
        if found is not None:
            return found
        table = {words(n): j for j, n in enumerate(self.action_names(agent))}
        table.update({words(k): v for k, v in self.action_aliases(agent).items()})
        said = f" {words(text)} "
        spans = []
        for name, j in table.items():
            if not name:
                continue
            for m in re.finditer(f"(?= {re.escape(name)} )", said):
                spans.append((m.start() + 1, m.start() + 1 + len(name), j))
        outer = {
            j
            for s, e, j in spans
            if not any(s2 < e and s < e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)
        }
        return outer.pop() if len(outer) == 1 else None

    # ------------------------------------------------------------------ pictures
    def render_rgb(self, state: BoardState, params: Any = None, cell: int = 48) -> np.ndarray:
        """uint8 ``[H * cell, W * cell, 3]`` picture of the board (NumPy only)."""
        board = np.asarray(state.board).reshape(self.height, self.width)
        masks = glyph_masks(cell)
        img = np.empty((self.height * cell, self.width * cell, 3), np.uint8)
        img[:] = self.background
        for (r, c), v in np.ndenumerate(board):
            tile = img[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell]
            if v:
                tile[masks[self.glyphs[v - 1]]] = self.colors[v - 1]
            elif self.hole is not None:
                tile[masks["disc"]] = self.hole
        img[::cell, :] = 90
        img[:, ::cell] = 90
        img[-1, :] = 90
        img[:, -1] = 90
        return img


def glyph_masks(cell: int) -> dict[str, np.ndarray]:
    """bool ``[cell, cell]`` masks of a filled disc, a ring and a cross."""
    y, x = np.mgrid[0:cell, 0:cell] + 0.5
    u, v = x / cell - 0.5, y / cell - 0.5
    r = np.hypot(u, v)
    w = 0.06
    return {
        "disc": r < 0.38,
        "ring": (r < 0.36) & (r > 0.36 - 2 * w),
        "cross": ((np.abs(u - v) < w) | (np.abs(u + v) < w)) & (np.maximum(np.abs(u), np.abs(v)) < 0.34),
    }


def play_games(
    env: BoardGame,
    players: Sequence[Player],
    key: jax.Array,
    num_games: int,
    params: Any = None,
    max_moves: int | None = None,
) -> jax.Array:
    """float32 ``[num_games, 2]`` final returns of a batch of games between two device policies.

    ``players[i]`` plays seat ``i``. Pure and jittable (``num_games``, the players and
    ``max_moves`` are static): the games run as one vmapped batch in a ``lax.scan`` over the
    longest possible game, ``max_moves`` steps (default: one move per cell, for board games;
    any other two-player turn-based env passes its own bound).
    """
    params = env.default_params if params is None else params
    k_reset, k_play = jax.random.split(key)
    state, ts = jax.vmap(env.reset, (0, None))(jax.random.split(k_reset, num_games), params)
    episode = jnp.arange(num_games)

    def body(carry, k):
        state, ts, ret = carry
        keys = jax.random.split(k, 3)
        acts = []
        for i, p in enumerate(players):
            turn = Turn(env, params, i, state, ts, ts.acting[:, i], episode)
            # A real branch (the batch is not vmapped): a seat that moves nowhere costs nothing.
            acts.append(
                jax.lax.cond(
                    turn.active.any(),
                    lambda t=turn, k=keys[i], p=p: p.act(k, t).astype(jnp.int32),
                    lambda: jnp.zeros((num_games,), jnp.int32),
                )
            )
        state, ts = jax.vmap(env.step, (0, 0, 0, None))(
            jax.random.split(keys[2], num_games), state, jnp.stack(acts, axis=1), params
        )
        return (state, ts, ret + ts.reward), None

    ret0 = jnp.zeros((num_games, 2), jnp.float32)
    (_, _, ret), _ = jax.lax.scan(
        body, (state, ts, ret0), jax.random.split(k_play, env.num_cells if max_moves is None else max_moves)
    )
    return ret
