"""Games: matrix games, board games (tic-tac-toe, connect four, chess), poker (Kuhn, Leduc),
Liar's dice, Hanabi and bargaining, one module (or package) each.

:func:`register` adds their registry ids and scripted players; entry points are strings,
so importing this package imports none of the game modules.
"""

from __future__ import annotations

__all__ = ["register"]

_MATRIX = "alem.envs.games.matrix"

# name -> description; each game is registered one-shot and iterated.
_MATRIX_GAMES = {
    "prisoners_dilemma": "Axelrod payoffs R=3 S=0 T=5 P=1",
    "stag_hunt": "coordination with a risky efficient equilibrium",
    "chicken": "anti-coordination (dare/chicken)",
    "matching_pennies": "zero-sum, no pure equilibrium",
    "rock_paper_scissors": "zero-sum, cyclic",
    "battle_of_the_sexes": "coordination with conflicting preferences",
    "coordination": "common payoff identity matrix",
    "climbing": "common payoff, Claus & Boutilier",
    "penalty": "common payoff with miscoordination penalty k",
}
_OPENSPIEL = {
    "stag_hunt": "open_spiel matrix_sh",
    "chicken": "open_spiel matrix_cd",
    "matching_pennies": "open_spiel matrix_mp",
    "rock_paper_scissors": "open_spiel matrix_rps",
    "battle_of_the_sexes": "open_spiel matrix_bos",
    "coordination": "open_spiel matrix_coordination",
}


def _register_one_shot_and_iterated(name: str, entry: str, kwargs: dict, desc: str, **spec) -> None:
    """``name-v0`` (one round) and ``iterated_name-v0`` (20 rounds, last joint action observed)."""
    from alem.registry import register

    register(f"{name}-v0", entry, kwargs=kwargs, description=f"one-shot {desc}", **spec)
    register(
        f"iterated_{name}-v0",
        entry,
        kwargs={**kwargs, "num_rounds": 20, "history_len": 1},
        description=f"20-round repeated game, {desc}",
        **spec,
    )


def register() -> None:
    """Register the game ids (family ``"games"``) and their scripted players."""
    from alem.players import register_player
    from alem.registry import register

    for name, desc in _MATRIX_GAMES.items():
        _register_one_shot_and_iterated(
            name,
            f"{_MATRIX}:MatrixGame",
            {"game": name},
            desc,
            family="games",
            num_agents=2,
            text=True,
            reference=_OPENSPIEL.get(name, ""),
        )
    _register_one_shot_and_iterated(
        "public_goods",
        f"{_MATRIX}:PublicGoodsGame",
        {"num_agents": 4},
        "n-player public goods game (keep/contribute)",
        family="games",
        num_agents="2+ (default 4)",
        text=True,
    )

    # Liar's dice (2 players; OpenSpiel liars_dice rules and action numbering).
    register(
        "liars_dice-v0",
        "alem.envs.games.liars_dice:LiarsDice",
        kwargs={"dice_per_player": 1, "dice_sides": 6},
        family="games",
        num_agents=2,
        text=True,
        reference="open_spiel liars_dice",
        description="liar's dice: bid quantity x face (6s wild) or call liar; dice per player configurable",
    )

    # Bargaining (OpenSpiel bargaining, Lewis et al. 2017's "Deal or No Deal"; its 1000 instances).
    register(
        "bargaining-v0",
        "alem.envs.games.bargaining:Bargaining",
        kwargs={"max_turns": 10},
        family="games",
        num_agents=2,
        text=True,
        reference="open_spiel bargaining",
        description="bargaining (Deal or No Deal): split books, hats and balls valued privately, "
        "by alternating offers or agree; 10 offers at most, OpenSpiel's 1000 instances",
    )

    # Board games (OpenSpiel tic_tac_toe / connect_four rules and action numbering) and their players.
    for name, cls, desc in (
        ("tic_tac_toe", "TicTacToe", "tic-tac-toe, 3x3, X moves first"),
        ("connect_four", "ConnectFour", "connect four, 6 rows x 7 columns, four in a row"),
    ):
        register(
            f"{name}-v0",
            f"alem.envs.games.{name}:{cls}",
            family="games",
            num_agents=2,
            text=True,
            reference=f"open_spiel {name}",
            description=desc,
        )
    # Chess (OpenSpiel chess rules and action ids; a JAX move generator).
    register(
        "chess-v0",
        "alem.envs.games.chess:Chess",
        family="games",
        num_agents=2,
        text=True,
        reference="open_spiel chess",
        description="chess: OpenSpiel's rules and 4,674 action ids, FEN in and out, AlphaZero-style planes",
    )
    register_player("tic_tac_toe", "minimax", "alem.envs.games.tic_tac_toe:MinimaxPlayer")
    register_player("connect_four", "minimax", "alem.envs.games.connect_four:MinimaxPlayer")
    register_player("connect_four", "greedy", "alem.envs.games.connect_four:greedy_player")
    # Tree search on the env's own step (alem/search/mcts.py): one line per turn-based game.
    for name in ("tic_tac_toe", "connect_four", "bargaining", "chess"):
        register_player(name, "mcts", "alem.search.mcts:MCTSPlayer")

    # Poker (OpenSpiel kuhn_poker / leduc_poker rules and action numbering) and their CFR players.
    register(
        "kuhn_poker-v0",
        "alem.envs.games.kuhn_poker:KuhnPoker",
        kwargs={"num_players": 2},
        family="games",
        num_agents="2-10 (default 2)",
        text=True,
        reference="open_spiel kuhn_poker",
        description="Kuhn poker: N+1 cards, one betting round (pass/bet); num_players=3 as an option",
    )
    register(
        "leduc_holdem-v0",
        "alem.envs.games.leduc_holdem:LeducHoldem",
        family="games",
        num_agents=2,
        text=True,
        reference="open_spiel leduc_poker",
        description="Leduc hold'em: six cards, two betting rounds, one public card",
    )
    # Hanabi (OpenSpiel hanabi / the Hanabi Learning Environment) and HLE's presets.
    for name, kwargs, desc in (
        ("hanabi", {}, "Hanabi: 5 colours x 5 ranks, hands of 5, 8 hint tokens, 3 lives (HLE Hanabi-Full)"),
        (
            "hanabi_small",
            {"colours": 2, "hand_size": 2, "max_information_tokens": 3, "max_life_tokens": 1},
            "Hanabi: 2 colours, hands of 2, 3 hint tokens, 1 life (HLE Hanabi-Small)",
        ),
        (
            "hanabi_very_small",
            {"colours": 1, "hand_size": 2, "max_information_tokens": 3, "max_life_tokens": 1},
            "Hanabi: 1 colour, hands of 2, 3 hint tokens, 1 life (HLE Hanabi-Very-Small)",
        ),
        (
            "hanabi_mini",
            {"colours": 2, "ranks": 2, "hand_size": 3, "max_information_tokens": 3, "max_life_tokens": 3},
            "Hanabi: 2 colours x 2 ranks (8 cards), hands of 3, 3 hint tokens, 3 lives "
            "(the mini Hanabi of MARS, Yuan et al. 2025: its HanabiConfig defaults in thu-nics/MARS)",
        ),
    ):
        register(
            f"{name}-v0",
            "alem.envs.games.hanabi:Hanabi",
            kwargs=kwargs,
            family="games",
            num_agents="2-5 (default 2)",
            text=True,
            reference="open_spiel hanabi",
            description=desc,
        )
    for name in ("hanabi", "hanabi_small", "hanabi_very_small", "hanabi_mini"):
        register_player(name, "rule", "alem.envs.games.hanabi:RulePlayer")

    for name in ("kuhn_poker", "leduc_holdem"):
        register_player(name, "cfr", f"alem.envs.games.{name}:cfr_player")
        register_player(name, "nash", f"alem.envs.games.{name}:nash_player")
