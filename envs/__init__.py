"""alem's environments, one subpackage per family, and their registry entries.

Entries point at constructors by string, so importing this module imports no env.
"""

from __future__ import annotations

from alem.registry import register

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
    register(f"{name}-v0", entry, kwargs=kwargs, description=f"one-shot {desc}", **spec)
    register(
        f"iterated_{name}-v0",
        entry,
        kwargs={**kwargs, "num_rounds": 20, "history_len": 1},
        description=f"20-round repeated game, {desc}",
        **spec,
    )


for _name, _desc in _MATRIX_GAMES.items():
    _register_one_shot_and_iterated(
        _name,
        f"{_MATRIX}:MatrixGame",
        {"game": _name},
        _desc,
        family="games",
        num_agents=2,
        text=True,
        reference=_OPENSPIEL.get(_name, ""),
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

# Single-agent gymnax envs through the adapter, so they can drive the learners as 1-agent envs.
for _alem_id, _gymnax_name in {
    "gymnax/cartpole-v1": "CartPole-v1",
    "gymnax/pendulum-v1": "Pendulum-v1",
}.items():
    register(
        _alem_id,
        "alem.wrappers.gymnax:make_gymnax",
        kwargs={"name": _gymnax_name},
        family="single_agent",
        num_agents=1,
        reference=f"gymnax {_gymnax_name}",
        requires={"gymnax": "gymnax>=1.0,<1.1"},
        description=f"gymnax {_gymnax_name} as a one-agent env (FromGymnax)",
    )
