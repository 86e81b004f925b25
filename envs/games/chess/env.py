"""Chess, with OpenSpiel 2.0.2's rules and action ids.

Card
----
- **Agents**: ``player_0`` (white, moves first) and ``player_1`` (black). One role. OpenSpiel numbers
  them the other way round (its player 0 is black): its returns are alem's reversed.
- **Observation** (``observation="planes"``, default): bool ``[8, 8, 14 * history + 23]`` per agent,
  AlphaZero-style, from the agent's own side: ``obs[i, r, f, c]`` is rank ``r`` counted from agent
  ``i``'s first rank (black sees the ranks reversed), file ``f`` from the a-file. Per position,
  newest first, ``history`` positions (default 8; before the first move the older ones are all
  False): 14 planes, the agent's pawn, knight, bishop, rook, queen, king, then the opponent's six,
  then "this position occurred once before" and "... at least twice before". Then 23 constant
  planes: the agent plays black; the agent is to move; castling rights (agent's short, agent's long,
  opponent's short, opponent's long); the half-move clock in 7 binary planes (least significant
  first); the full-move number (capped at 1,023) in 10 binary planes. Binary planes keep the
  array boolean (a float32 copy would quadruple what every step writes).
  ``observation="board"``: int8 ``[8, 8]`` per agent, the same frame, ``+1..+6`` the agent's pawn,
  knight, bishop, rook, queen, king, ``-1..-6`` the opponent's, 0 empty.
- **Actions**: ``Discrete(4674)``, OpenSpiel's ``chess`` ids (``num_distinct_actions``), seen from the
  mover's side (black's ranks reversed): ``from_square * 73 + move_type`` with squares
  ``file * 8 + rank``, move types 0-8 under-promotions (rook, bishop, knight x straight, towards h,
  towards a), 9-64 queen-like moves (a pawn's push, capture and queen promotion among them), 65-72
  knight jumps; 4672 long castling, 4673 short castling (:mod:`~alem.envs.games.chess.tables`).
  ``Chess.uci(state, action)`` names a move in UCI (castling as the king's move, ``e1g1``);
  :func:`~alem.envs.games.chess.tables.uci_names` names every index for a side.
- **Turns**: ``acting`` is one-hot on the side to move, all False after the end; ``action_mask``: the
  mover's row holds its legal moves (computed once per step and kept in the state), the other row
  is all False. Actions of the waiting player are ignored.
- **Rewards**: terminal, zero-sum: +1 to the side that checkmates, -1 to the mated side; 0 each for
  every draw; 0 on every other step.
- **Termination**, in OpenSpiel's order: insufficient material (no pawn, rook or queen, and no
  knight with all bishops on one square colour, or one knight and no bishop), threefold repetition
  (the third occurrence of the pieces, side to move, castling rights and en-passant square, which
  OpenSpiel sets after a double push only when an enemy pawn stands beside the pawn), no legal
  move (checkmate, or stalemate: a draw), the fifty-move rule (the half-move clock reaches 100).
  All automatic, no claims. **Truncation**: ``params.max_steps`` plies (default 17,695, OpenSpiel's
  ``max_game_length``, which no game reaches under the rules above).
- **Illegal moves**: ``illegal_action="replace"`` (default): an illegal or out-of-range action
  becomes the mover's first legal one and is counted in ``info["illegal_action"]``;
  ``illegal_action="lose"``: the mover loses at once (-1/+1, position unchanged).
- **Positions**: ``env.from_fen(fen)`` starts from a FEN (6 fields, or 4 with the clocks at 0 and 1);
  a malformed one raises :class:`~alem.errors.EnvArgumentError` naming what is wrong.
  ``env.to_fen(state)`` writes OpenSpiel's FEN (``str(state)`` of pyspiel).
- **Text** (:mod:`~alem.envs.games.chess.text`): action names in UCI; a reply is read in UCI or SAN
  (``Nf3``, ``O-O``, ``exd8=Q+``) against the position; a board diagram with the FEN, the JSON view
  (FEN, side to move, legal moves in UCI); pieces, files and ranks relabelable (``llm.obfuscate``).
- **Picture**: ``render_rgb``, the board with drawn piece glyphs (:mod:`~alem.envs.games.chess.viewer`).
- **Players**: ``mcts`` (a tree search on the env's own step) and ``random``.
- **Reference**: OpenSpiel 2.0.2 ``chess``: the same legal action ids, terminal states and returns
  at every ply of random games, and python-chess's perft counts from the standard positions
  (tests/envs/games/chess/).
- **Version**: v0.
"""

from __future__ import annotations

from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces, struct
from alem.core import EnvParams, MultiAgentEnv, TimeStep
from alem.envs.games.chess import fen as fen_io
from alem.envs.games.chess import movegen as mg
from alem.envs.games.chess import tables as T
from alem.envs.games.chess.text import ChessText
from alem.envs.games.chess.viewer import ChessViewer
from alem.errors import EnvArgumentError

__all__ = ["Chess", "ChessState", "ChessParams"]

#: Earlier positions kept for repetition: the fifty-move rule ends a game before a position can
#: recur after more than 100 reversible plies.
REPETITION_WINDOW = 100
MAX_GAME_LENGTH = 17_695  # OpenSpiel's max_game_length()
_CLOCK_BITS, _MOVE_BITS = 7, 10
_FLAGS = 2 + 4 + _CLOCK_BITS + _MOVE_BITS  # constant planes after the positions
_SWAP_SIDES = np.array([2, 3, 0, 1])


@struct.dataclass
class ChessState:
    board: jax.Array  # int8 [64] in the mover's frame (tables.py): + mover's pieces, - opponent's
    player: jax.Array  # int32 [] side to move: 0 white, 1 black
    castling: jax.Array  # bool [4] mover's short, mover's long, opponent's short, opponent's long
    ep_file: jax.Array  # int32 [] file of the en-passant target square, -1 none
    halfmove: jax.Array  # int32 [] plies since the last capture or pawn move
    fullmove: jax.Array  # int32 [] FEN's full-move number
    ply: jax.Array  # int32 [] plies played in this episode
    legal: jax.Array  # bool [4674] the mover's legal actions
    in_check: jax.Array  # bool []
    hash: jax.Array  # uint32 [2] of the current position
    history: jax.Array  # uint32 [100, 2] hashes of earlier positions, newest first
    history_len: jax.Array  # int32 [] how many of them could recur (since the last irreversible move)
    repetitions: jax.Array  # int32 [] earlier occurrences of the current position
    past_boards: jax.Array  # int8 [history - 1, 64] earlier boards in white's frame, newest first
    past_repetitions: jax.Array  # int8 [history - 1]
    terminated: jax.Array  # bool []
    winner: jax.Array  # int32 [] -1 while running and for a draw


@struct.dataclass
class ChessParams(EnvParams):
    max_steps: int = MAX_GAME_LENGTH  # plies before truncation


def _white_frame(board: jax.Array, player: jax.Array) -> jax.Array:
    return jnp.where(player == 0, board, mg.flip(board))


def _bits(value: jax.Array, n: int) -> jax.Array:
    return (value >> jnp.arange(n)) & 1 == 1


class Chess(ChessText, ChessViewer, MultiAgentEnv[ChessState, ChessParams]):
    """Chess with OpenSpiel's rules and action ids; see the module card.

    Args:
        observation: ``"planes"`` (AlphaZero-style, default) or ``"board"`` (int8 piece codes).
        history: positions in the planes (1-16, default 8).
        illegal_action: ``"replace"`` (default) or ``"lose"``.
    """

    illegal_action_modes: ClassVar[tuple[str, ...]] = ("replace", "lose")
    #: Under "lose", an illegal move is replaced by this no-move, which leaves the board as it was.
    forfeit_move: ClassVar[int | None] = T.NUM_ACTIONS
    stochastic: ClassVar[bool] = False
    turn_based: ClassVar[bool] = True
    zero_sum: ClassVar[bool] = True
    fixed_start: ClassVar[bool] = True
    episode_steps_hint = 330.0  # random play (OpenSpiel, 100 games: mean 334 plies)

    def __init__(self, *, observation: str = "planes", history: int = 8, illegal_action: str = "replace"):
        super().__init__(illegal_action=illegal_action)
        if observation not in ("planes", "board"):
            raise EnvArgumentError(f"Chess: observation={observation!r}; choose 'planes' or 'board'")
        if isinstance(history, bool) or not isinstance(history, int | np.integer) or not 1 <= history <= 16:
            raise EnvArgumentError(f"Chess: history={history!r} must be an int in 1..16")
        self.observation = observation
        self.history = int(history) if observation == "planes" else 1
        self.num_planes = 14 * self.history + _FLAGS
        self.agents = ("player_0", "player_1")
        self.agent_roles = np.zeros(2, dtype=np.int32)
        self.role_names = ("player",)
        self._default_params = ChessParams()
        self._position = jax.jit(self._position_state)

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> ChessParams:
        return self._default_params

    def check_params(self, params: ChessParams) -> None:
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        if self.observation == "board":
            one = spaces.Box(-6, 6, (8, 8), dtype=jnp.int8)
        else:
            one = spaces.Box(0, 1, (8, 8, self.num_planes), dtype=bool)
        return one if agent is not None else spaces.stack([one, one])

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(T.NUM_ACTIONS)
        return one if agent is not None else spaces.stack([one, one])

    # ------------------------------------------------------------------ positions
    def _position_state(self, board, player, castling, ep_file, halfmove, fullmove) -> ChessState:
        """A fresh position (no history) in the mover's frame, with its legal moves and outcome."""
        legal, check = mg.legal_actions(board, castling, ep_file)
        h = self.history - 1
        state = ChessState(
            board=board,
            player=player,
            castling=castling,
            ep_file=ep_file,
            halfmove=halfmove,
            fullmove=fullmove,
            ply=jnp.int32(0),
            legal=legal,
            in_check=check,
            hash=mg.position_hash(board, player, castling, ep_file),
            history=jnp.zeros((REPETITION_WINDOW, 2), jnp.uint32),
            history_len=jnp.int32(0),
            repetitions=jnp.int32(0),
            past_boards=jnp.zeros((h, 64), jnp.int8),
            past_repetitions=jnp.zeros((h,), jnp.int8),
            terminated=jnp.bool_(False),
            winner=jnp.int32(-1),
        )
        return self._judge(state)

    @staticmethod
    def _judge(state: ChessState) -> ChessState:
        """Set ``terminated`` and ``winner`` from the position, in OpenSpiel's order of checks."""
        drawn = mg.insufficient_material(state.board) | (state.repetitions >= 2)
        stuck = ~state.legal.any()
        mated = stuck & state.in_check & ~drawn
        over = drawn | stuck | (state.halfmove >= 100)
        return state.replace(terminated=over, winner=jnp.where(mated, 1 - state.player, -1).astype(jnp.int32))

    def from_fen(self, fen: str) -> ChessState:
        """The state of a FEN position (host side; see the card). Raises EnvArgumentError if malformed."""
        p = fen_io.parse_fen(fen)
        board = p.board if p.player == 0 else -p.board.reshape(8, 8)[:, ::-1].reshape(64)
        rights = p.castling if p.player == 0 else p.castling[_SWAP_SIDES]
        return self._position(
            jnp.asarray(board, jnp.int8),
            jnp.int32(p.player),
            jnp.asarray(rights),
            jnp.int32(p.ep_file),
            jnp.int32(p.halfmove),
            jnp.int32(p.fullmove),
        )

    def to_fen(self, state: ChessState) -> str:
        """OpenSpiel's FEN of ``state`` (one unbatched state, host side)."""
        player = int(state.player)
        board = np.asarray(_white_frame(jnp.asarray(state.board), player))
        rights = np.asarray(state.castling)
        return fen_io.format_fen(
            board,
            player,
            rights if player == 0 else rights[_SWAP_SIDES],
            int(state.ep_file),
            int(state.halfmove),
            int(state.fullmove),
        )

    def uci(self, state: ChessState, action: int) -> str:
        """The UCI name of ``action`` in ``state`` (host side): ``e2e4``, ``e7e8q``, ``e1g1``."""
        return fen_io.uci(np.asarray(state.board), int(state.player), int(action))

    def legal_uci(self, state: ChessState) -> list[str]:
        """The mover's legal moves in UCI, in action order (empty once the game is over)."""
        if bool(state.terminated):
            return []
        return [self.uci(state, a) for a in np.flatnonzero(np.asarray(state.legal))]

    # ------------------------------------------------------------------ dynamics
    def acting(self, state: ChessState, params: ChessParams | None = None) -> jax.Array:
        return (jnp.arange(2) == state.player) & ~state.terminated

    def action_mask(self, state: ChessState, params: ChessParams | None = None) -> jax.Array:
        return self.acting(state, params)[:, None] & state.legal[None, :]

    def observe(self, state: ChessState, params: ChessParams | None = None) -> jax.Array:
        white = _white_frame(state.board, state.player)
        if self.observation == "board":
            views = jnp.stack([white, mg.flip(white)])  # [2, 64]
            return views.reshape(2, 8, 8).transpose(0, 2, 1)
        # Arrange the small int8 boards as [agent, rank, file, position] first, so that the big
        # boolean planes come out in their final layout with no transpose.
        boards = jnp.concatenate([white[None], state.past_boards]).reshape(-1, 8, 8)  # [H, file, rank]
        views = jnp.stack([boards, -boards[:, :, ::-1]]).transpose(0, 3, 2, 1)  # [2, rank, file, H]
        codes = jnp.asarray([1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6], jnp.int8)
        pieces = views[..., None] == codes  # [2, 8, 8, H, 12]
        reps = jnp.concatenate([jnp.minimum(state.repetitions, 2)[None], state.past_repetitions])
        seen = jnp.stack([reps >= 1, reps >= 2], -1)  # [H, 2]
        seen = jnp.broadcast_to(seen, (2, 8, 8, self.history, 2))
        per_position = jnp.concatenate([pieces, seen], -1).reshape(2, 8, 8, 14 * self.history)
        agent = jnp.arange(2)
        own_first = jnp.where(agent[:, None] == state.player, state.castling, state.castling[_SWAP_SIDES])
        flags = jnp.concatenate(
            [
                (agent == 1)[:, None],
                (agent == state.player)[:, None],
                own_first,
                jnp.broadcast_to(_bits(state.halfmove, _CLOCK_BITS), (2, _CLOCK_BITS)),
                jnp.broadcast_to(
                    _bits(jnp.minimum(state.fullmove, 2**_MOVE_BITS - 1), _MOVE_BITS), (2, _MOVE_BITS)
                ),
            ],
            -1,
        )  # [2, 23]
        return jnp.concatenate(
            [per_position, jnp.broadcast_to(flags[:, None, None, :], (2, 8, 8, _FLAGS))], -1
        )

    def sanitize_actions(
        self, state: ChessState, actions: jax.Array, params: ChessParams
    ) -> tuple[jax.Array, jax.Array]:
        """The base class's rule on the stored legal row of the mover alone (one row of 4,674,
        not the two of the action mask): an illegal move becomes the first legal one (or, under
        "lose", the no-move); the waiting player's action is left as it is (ignored)."""
        acting = self.acting(state, params)
        mover = jnp.where(state.player == 0, actions[0], actions[1])
        ok = (state.legal & (jnp.arange(T.NUM_ACTIONS) == mover)).any()
        if self.illegal_action == "lose":
            substitute = jnp.int32(T.NUM_ACTIONS)
        else:
            substitute = jnp.argmax(state.legal).astype(jnp.int32)
        return jnp.where(acting, jnp.where(ok, mover, substitute), actions), acting & ~ok

    def reset_env(self, key: jax.Array, params: ChessParams) -> tuple[ChessState, TimeStep]:
        state = self._position_state(
            jnp.asarray(fen_io.START_BOARD, jnp.int8),
            jnp.int32(0),
            jnp.ones((4,), bool),
            jnp.int32(-1),
            jnp.int32(0),
            jnp.int32(1),
        )
        return state, self.timestep(state, params, jnp.zeros((2,), jnp.float32))

    def step_env(
        self, key: jax.Array, state: ChessState, actions: jax.Array, params: ChessParams
    ) -> tuple[ChessState, TimeStep]:
        p = state.player
        action = jnp.where(p == 0, actions[0], actions[1])
        moves = ~state.terminated & (action < T.NUM_ACTIONS)  # forfeit_move is no move
        board, castling, ep_file, irreversible = mg.play(state.board, state.castling, state.ep_file, action)
        player = 1 - p
        legal, check = mg.legal_actions(board, castling, ep_file)
        h = mg.position_hash(board, player, castling, ep_file)
        history = jnp.concatenate([state.hash[None], state.history[:-1]])
        history_len = jnp.where(irreversible, 0, jnp.minimum(state.history_len + 1, REPETITION_WINDOW))
        recent = jnp.arange(REPETITION_WINDOW) < history_len
        repetitions = ((history == h).all(-1) & recent).sum(dtype=jnp.int32)
        new = ChessState(
            board=board,
            player=player,
            castling=castling,
            ep_file=ep_file,
            halfmove=jnp.where(irreversible, 0, state.halfmove + 1),
            fullmove=state.fullmove + p,
            ply=state.ply + 1,
            legal=legal,
            in_check=check,
            hash=h,
            history=history,
            history_len=history_len,
            repetitions=repetitions,
            past_boards=jnp.concatenate([_white_frame(state.board, p)[None], state.past_boards[:-1]]),
            past_repetitions=jnp.concatenate(
                [jnp.minimum(state.repetitions, 2).astype(jnp.int8)[None], state.past_repetitions[:-1]]
            ),
            terminated=jnp.bool_(False),
            winner=jnp.int32(-1),
        )
        new = self._judge(new)
        new = jax.tree.map(lambda a, b: jnp.where(moves, a, b), new, state)
        won = moves & (new.winner >= 0)
        reward = jnp.where(won, jnp.where(jnp.arange(2) == new.winner, 1.0, -1.0), 0.0)
        truncated = moves & ~new.terminated & (new.ply >= params.max_steps)
        return new, self.timestep(new, params, reward, terminated=new.terminated, truncated=truncated)

    def forfeit(
        self, state: ChessState, offender: jax.Array, params: ChessParams
    ) -> tuple[ChessState, jax.Array]:
        # step_env played the no-move: the position is as it was; the offender loses.
        lost = state.replace(terminated=jnp.bool_(True), winner=(1 - offender).astype(jnp.int32))
        return lost, jnp.where(jnp.arange(2) == offender, -1.0, 1.0).astype(jnp.float32)
