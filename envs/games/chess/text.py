"""chess-v0's text hooks: UCI move names, a reader of UCI and SAN replies, the rules, a board
diagram with the FEN, the JSON view and the relabelable vocabulary (a mixin of
:class:`~alem.envs.games.chess.env.Chess`).

Action names are UCI per action id (:func:`~alem.envs.games.chess.tables.uci_names`): static, so a
queen promotion is named without its ``q`` there (the id does not say a pawn makes the move), and
the rook's or queen's move that castling's name would also name is ``e1-g1`` (see :func:`_names`).
The names of a position (:meth:`ChessText.legal_action_names`, the view, the JSON) are exact UCI (``e7e8q``), and
:meth:`ChessText.parse_move` reads a reply against the position (UCI or SAN: ``Nf3``, ``O-O``,
``exd8=Q+``); :meth:`ChessText.parse_action`, which has no position, reads UCI only.
"""

from __future__ import annotations

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from alem.envs.games.chess import movegen as mg
from alem.envs.games.chess import san
from alem.envs.games.chess import tables as T
from alem.text_hooks import TextHooks, words

_FILES, _RANKS, _PIECES = "abcdefgh", "12345678", "PNBRQK"
_PIECE_WORDS = ("pawn", "knight", "bishop", "rook", "queen", "king")


@functools.lru_cache(maxsize=16)
def _names(black: bool, files: tuple[str, ...], ranks: tuple[str, ...], pieces: tuple[str, ...]) -> tuple:
    """Unique static names: UCI, except ``a1-off-board-<move type>`` for ids no position makes legal and
    ``e1-g1`` (``e1-c1``; black ``e8-g8``, ``e8-c8``) for a rook's or queen's move that castling's
    ``e1g1`` would otherwise name too (a position names both ``e1g1``: only one is ever legal)."""
    names = [_relabel(n, files, ranks, pieces) for n in T.uci_names(black)]
    for a in range(T.NUM_PIECE_ACTIONS):
        if names[a] == "-":  # named by its square (relabeled with it) and move type
            src, mtype = divmod(a, T.NUM_MOVE_TYPES)
            square = _relabel(T.square_name(src, black) * 2, files, ranks, pieces)[:2]
            names[a] = f"{square}-off-board-{mtype}"
        elif names[a] in (names[T.CASTLE_LONG], names[T.CASTLE_SHORT]):
            names[a] = names[a][:2] + "-" + names[a][2:]
    return tuple(names)


def _relabel(uci: str, files: tuple[str, ...], ranks: tuple[str, ...], pieces: tuple[str, ...]) -> str:
    """A UCI name in the given labels (files, ranks, promotion pieces lower-cased)."""
    if uci == "-":
        return uci
    out = ""
    for i, ch in enumerate(uci):
        if i == 4:
            out += pieces[_PIECES.index(ch.upper())].lower()
        else:
            out += files[_FILES.index(ch)] if i % 2 == 0 else ranks[_RANKS.index(ch)]
    return out


def _white_board(state: Any) -> np.ndarray:
    """int8 ``[64]`` board of ``state`` in white's frame (square ``file * 8 + rank``)."""
    board = np.asarray(state.board)
    return board if int(state.player) == 0 else -board.reshape(8, 8)[:, ::-1].reshape(64)


class ChessText(TextHooks):
    """The text hooks of :class:`~alem.envs.games.chess.env.Chess`; see the module docstring."""

    # ------------------------------------------------------------------ vocabulary
    def text_vocabulary(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """The game's name, the seats (White, Black), the piece letters, the files and the ranks."""
        return {
            "game": ("name", ("chess",)),
            "seat": ("name", ("White", "Black")),
            "piece": ("upper", tuple(_PIECES)),
            "file": ("lower", tuple(_FILES)),
            "rank": ("digit", tuple(_RANKS)),
        }

    def _labelled(self, uci: str) -> str:
        if not self.relabeled_text:
            return uci
        return _relabel(uci, self.labels("file"), self.labels("rank"), self.labels("piece"))

    # ------------------------------------------------------------------ moves
    def action_names(self, agent: int = 0) -> list[str]:
        """UCI per action id for ``agent``'s side (``"-"``: an id no position makes legal)."""
        return list(_names(agent == 1, self.labels("file"), self.labels("rank"), self.labels("piece")))

    def action_format(self, agent: int = 0) -> str:
        """Moves are named in UCI (4,674 ids: too many to list in a prompt)."""
        example = [self._labelled(u) for u in ("e2e4", "e7e8q", "e1g1")]
        return (
            f"A move is named in UCI: the from-square then the to-square ({example[0]}), a promotion "
            f"adds the piece ({example[1]}), castling is the king's move ({example[2]})."
        )

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        """Queen promotions with their ``q`` (``e7e8q``), castling as ``O-O`` / ``O-O-O`` / ``0-0``."""
        names = T.uci_names(agent == 1)
        last, before = ("1", "2") if agent == 1 else ("8", "7")
        out = {
            n + "q": a
            for a, n in enumerate(names[: T.NUM_PIECE_ACTIONS])
            if len(n) == 4 and n[1] == before and n[3] == last and abs(ord(n[0]) - ord(n[2])) <= 1
        }
        for short, action in (("o-o", T.CASTLE_SHORT), ("o-o-o", T.CASTLE_LONG)):
            out[short] = out[short.replace("o", "0")] = action
        return out

    def legal_action_names(self, state: Any, agent: int, params: Any = None) -> list[str]:
        """The exact UCI names of ``agent``'s legal moves in ``state`` (``e7e8q``), in action order."""
        if int(state.player) != agent or bool(state.terminated):
            return []
        return [self._labelled(m.uci) for m in self._moves(state)]

    def _moves(self, state: Any) -> list[san.Move]:
        return san.legal_moves(np.asarray(state.board), int(state.player), np.asarray(state.legal))

    def parse_action(self, text: str, agent: int = 0) -> int | None:
        """UCI (a name of :meth:`action_names` or an alias) in ``text``; no position, so no SAN
        (:meth:`parse_move` reads it)."""
        if not words(text):
            return None
        return super().parse_action(text, agent)

    def parse_move(self, state: Any, text: str, agent: int = 0, params: Any = None) -> int | None:
        """The move ``text`` names in ``state``: a legal move in UCI or SAN (see
        :mod:`~alem.envs.games.chess.san`); else, through :meth:`parse_action`, the id of an
        illegal UCI move it names (so the reply counts as illegal, not unparseable)."""
        if not words(text):
            return None
        if int(state.player) == agent and not bool(state.terminated):
            moves = self._moves(state)
            if self.relabeled_text:  # a copy reads its own names only
                table = {words(self._labelled(m.uci)): m.action for m in moves}
                found = table.get(words(text))
                if found is None:
                    hits = {a for k, a in table.items() if f" {k} " in f" {words(text)} "}
                    found = hits.pop() if len(hits) == 1 else None
            else:
                found = san.read_move(text, moves)
            if found is not None:
                return found
        return self.parse_action(text, agent)

    # ------------------------------------------------------------------ rules and views
    def rules_text(self, params: Any = None, agent: int = 0) -> str:
        seat, (game,) = self.labels("seat"), self.labels("game")
        letters = ", ".join(f"{p} {w}" for p, w in zip(self.labels("piece"), _PIECE_WORDS, strict=True))
        example = [self._labelled(u) for u in ("e2e4", "e7e8q", "e1g1")]
        answer = (
            f"Answer with one legal move in UCI: the from-square then the to-square ({example[0]}); "
            f"a promotion adds the piece in lower case ({example[1]}); castling is the king's move "
            f"({example[2]})."
        )
        if not self.relabeled_text:
            answer += " SAN is read too (Nf3, O-O, exd8=Q)."
        return "\n".join(
            [
                f"You play {seat[agent]} in {game}; your opponent plays {seat[1 - agent]}. {seat[0]} "
                "moves first.",
                f"The usual rules of {game} apply: castling, en passant and promotion. A move may not "
                "leave your own king in check.",
                f"Pieces: {letters}; {seat[0]}'s in upper case, {seat[1]}'s in lower case.",
                "Checkmate wins: +1 to the winner, -1 to the loser. Draws (0 each) come automatically, "
                "with no offers or claims: stalemate, the third occurrence of a position (the same "
                "pieces, side to move, castling rights and en-passant square), 100 plies in a row "
                "without a capture or a pawn move, and too little material to mate (no pawn, rook or "
                "queen, and either one knight alone or bishops all on squares of one colour).",
                answer,
            ]
        )

    def _fen(self, state: Any) -> str | None:
        """The FEN of ``state``; None in a relabeled copy (its letters would give the game away)."""
        return None if self.relabeled_text else self.to_fen(state)

    def _grid(self, state: Any) -> list[str]:
        """Rows of piece letters (``.`` empty), rank 8 first, files a to h."""
        letters = self.labels("piece")
        grid = _white_board(state).reshape(8, 8)  # [file, rank]
        rows = []
        for rank in range(7, -1, -1):
            row = ""
            for file in range(8):
                p = int(grid[file, rank])
                row += (
                    "." if p == 0 else letters[abs(p) - 1].upper() if p > 0 else letters[abs(p) - 1].lower()
                )
            rows.append(row)
        return rows

    def _outcome(self, state: Any) -> tuple[int, str]:
        """``(winner, how)`` of a finished game (winner -1: a draw)."""
        winner = int(state.winner)
        if winner >= 0:
            mated = not np.asarray(state.legal).any() and bool(state.in_check)
            return winner, "checkmate" if mated else "an illegal move of the loser"
        if bool(mg.insufficient_material(jnp.asarray(state.board))):
            return -1, "too little material to mate"
        if int(state.repetitions) >= 2:
            return -1, "the third occurrence of the position"
        if not np.asarray(state.legal).any():
            return -1, "stalemate"
        if int(state.halfmove) >= 100:
            return -1, "100 plies without a capture or a pawn move"
        return -1, "the ply limit"

    def _status(self, state: Any, agent: int | None) -> str:
        seat = self.labels("seat")
        if bool(state.terminated):
            winner, how = self._outcome(state)
            if winner < 0:
                return f"The game is over: a draw ({how})."
            who = "you" if agent == winner else seat[winner]
            return f"The game is over: {who} won ({how})."
        p = int(state.player)
        check = f" {seat[p]} is in check." if bool(state.in_check) else ""
        if agent is None:
            return f"{seat[p]} to move.{check}"
        turn = "It is your turn." if p == agent else f"Waiting for {seat[p]} to move."
        return f"{seat[p]} to move.{check} {turn}"

    def render_text(
        self, state: Any, agent: int | None = None, params: Any = None, *, moves: bool = True
    ) -> str:
        """A board diagram (rank 8 at the top, files a-h), the FEN, whose turn it is and check;
        with ``moves``, the legal moves of the side to move in UCI."""
        seat, files, ranks = self.labels("seat"), self.labels("file"), self.labels("rank")
        if agent is None:
            head = f"{seat[0]} (upper case) and {seat[1]} (lower case)."
        else:
            head = f"You play {seat[agent]} ({'upper' if agent == 0 else 'lower'}-case pieces)."
        lines = [head, "   +" + "-" * 17 + "+"]
        for rank, row in zip(reversed(ranks), self._grid(state), strict=True):
            lines.append(f" {rank} | {' '.join(row)} |")
        lines += ["   +" + "-" * 17 + "+", "     " + " ".join(files)]
        fen = self._fen(state)
        if fen is not None:
            lines.append(f"FEN: {fen}")
        lines.append(self._status(state, agent))
        mover = int(state.player)
        if moves and not bool(state.terminated) and agent in (None, mover):
            lines.append("Legal moves (UCI): " + " ".join(self.legal_action_names(state, mover)))
        return "\n".join(lines)

    def json_view(self, state: Any, agent: int, params: Any = None) -> dict[str, Any]:
        """``you_play`` (a seat), ``fen`` (null in a relabeled copy), ``board`` (rows rank 8 first,
        files a to h, ``.`` empty, the side that moves first in upper case), ``to_move``
        (``"you"``, ``"opponent"`` or null once over), ``in_check``, ``legal_moves`` (UCI; empty
        when it is not ``agent``'s turn), ``winner`` (``"you"``, ``"opponent"``, ``"draw"`` or null)."""
        over = bool(state.terminated)
        side = lambda j: "you" if j == agent else "opponent"
        winner = None
        if over:
            w = self._outcome(state)[0]
            winner = side(w) if w >= 0 else "draw"
        return {
            "you_play": self.labels("seat")[agent],
            "fen": self._fen(state),
            "board": self._grid(state),
            "to_move": None if over else side(int(state.player)),
            "in_check": bool(state.in_check),
            "legal_moves": self.legal_action_names(state, agent, params),
            "winner": winner,
        }
