"""The arena's typed records: a :class:`Match` (what to play) and an :class:`EpisodeRecord`
(one finished episode: a line of ``episodes.jsonl``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from alem.core import MultiAgentEnv
from alem.errors import ConfigError, require_positive_int
from alem.players import Player
from alem.rundir import read_jsonl

__all__ = [
    "EPISODES_FILE",
    "TRANSCRIPTS_FILE",
    "Match",
    "EpisodeRecord",
    "default_openings",
    "read_episodes",
    "seating",
]

#: One flushed line per finished episode (:class:`EpisodeRecord`).
EPISODES_FILE = "episodes.jsonl"
#: One flushed line per LLM decision (written by :class:`alem.text.llm.player.LLMPlayer`).
TRANSCRIPTS_FILE = "transcripts.jsonl"


@dataclasses.dataclass(frozen=True, eq=False)
class Match:
    """What the loop plays: episodes ``0..episodes-1`` of ``env`` with ``players[i]`` in seat ``i``.

    Checked on construction (:class:`~alem.errors.ConfigError` naming the value): one player
    per seat, ``episodes`` and ``num_envs`` integers >= 1, ``max_steps`` None or an integer
    >= 1, a discrete-action env. ``params=None`` means ``env.default_params``.

    Attributes:
        env: the env.
        players: the seating, one policy per seat (a tuple).
        episodes: how many episodes the match has.
        num_envs: envs stepped in lock-step.
        seed: episode ``e`` is dealt from ``(seed, e)`` alone.
        max_steps: cut episodes after this many env steps (None: the env's own horizon).
        params: the env params.
        openings: random legal plies played from each start before the players move (turn-based
            envs; see :func:`default_openings` for ``None``). They are drawn from ``(seed, e)``
            alone, so every seating meets the same opening in episode ``e``; a ply that would end
            the game is skipped. Their rewards are not counted, and ``max_steps`` counts from the
            players' first move.
    """

    env: MultiAgentEnv
    players: tuple[Player, ...]
    episodes: int
    num_envs: int = 8
    seed: int = 0
    max_steps: int | None = None
    params: Any = None
    openings: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", seating(self.env, self.players))
        require_positive_int(self.episodes, "episodes", error=ConfigError)
        require_positive_int(self.num_envs, "num_envs", error=ConfigError)
        require_positive_int(self.max_steps, "max_steps", error=ConfigError, allow_none=True)
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int | np.integer)
            or not 0 <= self.seed < 2**32
        ):
            # jax.random.key reduces other values onto this range: seed=-1 would replay 2**32 - 1
            raise ConfigError(f"seed must be an integer in [0, 2**32 - 1], got {self.seed!r}")
        if self.env.continuous_actions:
            raise ConfigError(
                f"{self.env.id} has continuous actions; the evaluator plays discrete-action envs"
            )
        if self.params is None:
            object.__setattr__(self, "params", self.env.default_params)
        if self.openings is None:
            object.__setattr__(self, "openings", default_openings(self.env))
        if (
            isinstance(self.openings, bool)
            or not isinstance(self.openings, int | np.integer)
            or self.openings < 0
        ):
            raise ConfigError(f"openings must be null or an integer >= 0, got {self.openings!r}")
        object.__setattr__(self, "openings", int(self.openings))
        if self.openings and not self.env.turn_based:
            raise ConfigError(
                f"openings={self.openings}: {self.env.id} is not turn-based (openings are random plies of "
                "turn-based games; its deals already vary with the episode)"
            )

    @property
    def host_seats(self) -> list[int]:
        """Seats whose player runs on the host (e.g. LLMs), in seat order."""
        return [i for i, p in enumerate(self.players) if p.host]

    @property
    def device_seats(self) -> list[int]:
        """Seats whose player is traced into the jitted step, in seat order."""
        return [i for i, p in enumerate(self.players) if not p.host]


def default_openings(env: MultiAgentEnv) -> int:
    """``openings=None``: one random ply for turn-based games that start from one fixed position
    (board games), none otherwise. Without it two deterministic players play one game in every
    episode; one ply gives as many different starts as the first mover has moves (9 at
    tic-tac-toe, 7 at connect four), and since no first move of tic-tac-toe loses, perfect play
    still never loses (more plies can hand one side a won position)."""
    return 1 if env.turn_based and env.fixed_start else 0


@dataclasses.dataclass(frozen=True)
class EpisodeRecord:
    """One finished episode; per-seat values are tuples in seat order.

    Attributes:
        episode: the episode's index.
        returns: each seat's undiscounted return.
        length: env steps played.
        terminated: the env ended the episode.
        truncated: the env's own time limit ended it.
        decisions: how often each seat acted.
        env_illegal: how many of each seat's moves the env flagged illegal.
        opening: the random plies played before the players moved (the movers' actions).
        game: a digest of the episode: its opening, every seat's first observation (the deal,
            in games of chance) and every move; equal digests, the same game. None in records written before it existed.
        metrics: the env's ``episode_metrics`` on the episode's last step (at a cut by the
            match's ``max_steps``: their values then); empty for envs that declare none.
    """

    TYPE: ClassVar[str] = "episode"

    episode: int
    returns: tuple[float, ...]
    length: int
    terminated: bool
    truncated: bool
    decisions: tuple[int, ...]
    env_illegal: tuple[int, ...]
    opening: tuple[int, ...] = ()
    game: str | None = None
    metrics: Mapping[str, float] = dataclasses.field(default_factory=dict, hash=False)

    @property
    def cut(self) -> bool:
        """Neither terminated nor truncated: ended by the match's ``max_steps``."""
        return not self.terminated and not self.truncated

    def to_json(self) -> dict[str, Any]:
        """The ``episodes.jsonl`` line (``type: episode``; ``cut`` is written out for readers)."""
        return {
            "type": self.TYPE,
            "episode": self.episode,
            "returns": list(self.returns),
            "length": self.length,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "cut": self.cut,
            "decisions": list(self.decisions),
            "env_illegal": list(self.env_illegal),
            "opening": list(self.opening),
            "game": self.game,
            **({"metrics": dict(self.metrics)} if self.metrics else {}),  # other envs' lines as before
        }

    @classmethod
    def from_json(cls, line: Mapping[str, Any]) -> EpisodeRecord:
        """The record of an ``episodes.jsonl`` line written by :meth:`to_json`."""
        return cls(
            episode=int(line["episode"]),
            returns=tuple(float(x) for x in line["returns"]),
            length=int(line["length"]),
            terminated=bool(line["terminated"]),
            truncated=bool(line["truncated"]),
            decisions=tuple(int(x) for x in line["decisions"]),
            env_illegal=tuple(int(x) for x in line["env_illegal"]),
            opening=tuple(int(x) for x in line.get("opening", ())),
            game=None if line.get("game") is None else str(line["game"]),
            metrics={str(k): float(v) for k, v in (line.get("metrics") or {}).items()},
        )


def read_episodes(path: str | Path, *, below: int | None = None) -> dict[int, EpisodeRecord]:
    """The episodes recorded in ``path`` (an ``episodes.jsonl``), by index; the first line of an
    episode counts. ``below``: only episodes with a smaller index. Other lines are skipped."""
    out: dict[int, EpisodeRecord] = {}
    for line in read_jsonl(path):
        if line.get("type") != EpisodeRecord.TYPE or (below is not None and line["episode"] >= below):
            continue
        if int(line["episode"]) not in out:
            out[int(line["episode"])] = EpisodeRecord.from_json(line)
    return out


def seating(env: MultiAgentEnv, players: Sequence[Player]) -> tuple[Player, ...]:
    """``players`` as the seating of ``env`` (``players[i]`` in seat ``i``); refuses a wrong count."""
    players = tuple(players)
    if len(players) != env.num_agents:
        raise ConfigError(f"{env.id} needs {env.num_agents} players, got {len(players)}")
    return players
