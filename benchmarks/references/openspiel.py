"""OpenSpiel reference for the games benchmark: ``--reference openspiel``.

OpenSpiel's games are C++ states driven from Python (``pyspiel``), one state per game; this is how
its Python users play many games. The rollout keeps ``N`` states and, for each of ``T`` steps, steps
every game once (a Python ``for`` loop over the games): one uniformly random legal action
(``random.Random``), then any chance nodes that follow (cards, dice) sampled from
``chance_outcomes()``; an ended game is replaced by a new one whose initial chance nodes are sampled
the same way. One env step is one player action, as in alem, whose chance happens inside
``reset``/``step``; chance nodes are not counted as steps. All ``N * T`` steps are run and timed.
The loop asks each state for its legal actions and returns only; it does not build observation
tensors (alem's step computes every player's observation), for every game alike, Hanabi included
(``hanabi-v0``: OpenSpiel's ``hanabi``, the Hanabi Learning Environment, where every card dealt is a
chance node: ten at the start of a 2-player game, one after each play or discard).

The loop's rate does not depend on ``N`` (one game at a time), while its cost grows with it: at
``N = 16384, T = 128`` one repetition is 2.1M steps, 15-40 s on a 2-vCPU machine. The games table in
benchmarks/games.md therefore measures OpenSpiel at ``N = 1`` and ``1024`` and quotes the ``N = 1024``
rate (a 131k-step sample) against alem at ``N = 16384``, and says so; ``--num-envs 16384`` still runs
the full ``N * T`` when asked.

``pyspiel`` is imported inside ``prepare`` only, so the harness works without it.
"""

from __future__ import annotations

import importlib.util
import random
from typing import Any

#: alem id -> OpenSpiel game name.
GAMES = {
    "tic_tac_toe-v0": "tic_tac_toe",
    "connect_four-v0": "connect_four",
    "kuhn_poker-v0": "kuhn_poker",
    "leduc_holdem-v0": "leduc_poker",
    "liars_dice-v0": "liars_dice",
    "hanabi-v0": "hanabi",
    "hanabi_small-v0": "hanabi",
    "hanabi_very_small-v0": "hanabi",
    "chess-v0": "chess",
}


def game_parameters(env_id: str, env: Any) -> dict[str, Any]:
    """OpenSpiel parameters matching the alem env's static configuration."""
    name = GAMES[env_id]
    if name in ("kuhn_poker", "leduc_poker"):
        return {"players": env.num_agents}
    if name == "liars_dice":
        return {"numdice": env.dice_per_player, "dice_sides": env.dice_sides}
    if name == "hanabi":
        return env.openspiel_params()
    return {}


def openspiel_available() -> bool:
    return importlib.util.find_spec("pyspiel") is not None


def run_games(game: Any, num_envs: int, num_steps: int, seed: int) -> dict[str, float]:
    """Play ``num_envs`` OpenSpiel games for ``num_steps`` steps each with random legal actions.

    Returns ``total_reward`` (every player of every ended game), ``episodes`` (ended games) and
    ``steps`` (player actions taken, ``num_envs * num_steps``).
    """
    rand = random.Random(seed).random

    def resolve_chance(state: Any) -> None:
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            u, acc, pick = rand(), 0.0, outcomes[-1][0]  # the last outcome absorbs rounding
            for outcome, prob in outcomes:
                acc += prob
                if u < acc:
                    pick = outcome
                    break
            state.apply_action(pick)

    def new_game() -> Any:
        state = game.new_initial_state()
        resolve_chance(state)
        return state

    states = [new_game() for _ in range(num_envs)]
    total, episodes, steps = 0.0, 0, 0
    for _ in range(num_steps):
        for i, state in enumerate(states):
            legal = state.legal_actions()
            state.apply_action(legal[int(rand() * len(legal))])
            resolve_chance(state)
            steps += 1
            if state.is_terminal():
                total += sum(state.returns())
                episodes += 1
                states[i] = new_game()
    return {"total_reward": total, "episodes": episodes, "steps": steps}


def make_references(bench: Any) -> list:
    def supports(env_id: str, env: Any) -> str | None:
        if env_id not in GAMES:
            return f"no OpenSpiel counterpart of {env_id!r} in this reference; covered: {sorted(GAMES)}"
        if not openspiel_available():
            return "open_spiel is not installed (pip install open_spiel)"
        return None

    def prepare(env_id: str, env: Any, num_envs: int, num_steps: int):
        import pyspiel

        game = pyspiel.load_game(GAMES[env_id], game_parameters(env_id, env))
        return lambda seed: run_games(game, num_envs, num_steps, seed)["total_reward"]

    return [
        bench.Reference(
            name="openspiel",
            description=(
                "OpenSpiel (pyspiel) states in a Python loop: N games, each stepped T times with random "
                "legal actions, chance sampled inline (not counted), all N*T steps timed"
            ),
            supports=supports,
            prepare=prepare,
        )
    ]
