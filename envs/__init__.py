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

# Board games (OpenSpiel tic_tac_toe / connect_four rules and action numbering) and their players.
from alem.policies import register_policy  # noqa: E402

for _name, _cls, _desc in (
    ("tic_tac_toe", "TicTacToe", "tic-tac-toe, 3x3, X moves first"),
    ("connect_four", "ConnectFour", "connect four, 6 rows x 7 columns, four in a row"),
):
    register(
        f"{_name}-v0",
        f"alem.envs.games.{_name}:{_cls}",
        family="games",
        num_agents=2,
        text=True,
        reference=f"open_spiel {_name}",
        description=_desc,
    )
register_policy("tic_tac_toe", "minimax", "alem.envs.games.tic_tac_toe:MinimaxPlayer")
register_policy("connect_four", "minimax", "alem.envs.games.connect_four:MinimaxPlayer")
register_policy("connect_four", "greedy", "alem.envs.games.connect_four:greedy_player")

# MPE (mpe2's particle worlds); continuous actions with continuous_actions=True.
_MPE = "alem.envs.coordination.mpe"
for _name, (_entry, _agents, _mpe2, _desc) in {
    "simple": ("navigation:Simple", 1, "simple_v3", "one agent reaches one landmark (debugging)"),
    "simple_spread": ("navigation:SimpleSpread", 3, "simple_spread_v3", "N agents cover N landmarks"),
    "simple_reference": ("communication:SimpleReference", 2, "simple_reference_v3", "each agent guides the other"),
    "simple_speaker_listener": (
        "communication:SimpleSpeakerListener",
        2,
        "simple_speaker_listener_v4",
        "a speaker names the goal, a listener goes there",
    ),
    "simple_crypto": ("communication:SimpleCrypto", 3, "simple_crypto_v3", "Alice and Bob share a key, Eve listens"),
    "simple_tag": ("adversarial:SimpleTag", 4, "simple_tag_v3", "predators chase prey among obstacles"),
    "simple_adversary": ("adversarial:SimpleAdversary", 3, "simple_adversary_v3", "hide the goal from an adversary"),
    "simple_push": ("adversarial:SimplePush", 2, "simple_push_v3", "an adversary pushes the agent off its goal"),
    "simple_world_comm": (
        "adversarial:SimpleWorldComm",
        6,
        "simple_world_comm_v3",
        "tag with food, forests and a talking leader",
    ),
}.items():
    register(
        f"mpe/{_name}-v0",
        f"{_MPE}.{_entry}",
        family="coordination",
        num_agents=_agents,
        reference=f"mpe2 {_mpe2}",
        description=_desc,
    )

# Poker (OpenSpiel kuhn_poker / leduc_poker rules and action numbering) and their CFR players.
from alem.policies import register_policy as _register_policy  # noqa: E402

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
for _name in ("kuhn_poker", "leduc_holdem"):
    _register_policy(_name, "cfr", f"alem.envs.games.{_name}:cfr_policy")
    _register_policy(_name, "nash", f"alem.envs.games.{_name}:nash_policy")

# Level-Based Foraging (lbforaging / EPyMARL LBF); each description names the matching lbforaging id.
for _lbf_id, _lbf_kwargs, _lbf_desc in (
    ("lbf-v0", {}, "8x8 grid, 2 agents, 2 food (Foraging-8x8-2p-2f-v3)"),
    (
        "lbf_8x8_2p_2f_coop-v0",
        {"force_coop": True},
        "8x8, 2 agents, 2 food needing both (Foraging-8x8-2p-2f-coop-v3)",
    ),
    (
        "lbf_2s_10x10_3p_3f-v0",
        {"grid_size": 10, "num_agents": 3, "num_food": 3, "sight": 2},
        "10x10, 3 agents, 3 food, sight 2 (Foraging-2s-10x10-3p-3f-v3)",
    ),
):
    register(
        _lbf_id,
        "alem.envs.coordination.lbf:LevelBasedForaging",
        kwargs=_lbf_kwargs,
        family="coordination",
        num_agents=_lbf_kwargs.get("num_agents", 2),
        text=True,
        reference="lbforaging",
        description=f"Level-Based Foraging: {_lbf_desc}",
    )

# Grid multi-agent pathfinding (POGEMA-exact), one id per mode; the classical BFS baseline
# is the scripted player "bfs" of each.
from alem.policies import register_policy as _register_pf_policy  # noqa: E402

for _pf_id, _pf_mode, _pf_pogema, _pf_desc in (
    ("pathfinding-v0", "one_shot", "nothing", "one-shot MAPF: agents stay on goals; solved when all are on goal"),
    ("pathfinding_lifelong-v0", "lifelong", "restart", "lifelong MAPF: a new goal on each arrival"),
    ("pathfinding_disappear-v0", "disappear", "finish", "MAPF where agents leave the map at their goals"),
):
    register(
        _pf_id,
        "alem.envs.pathfinding.env:PathfindingEnv",
        kwargs={"mode": _pf_mode, "num_agents": 8, "height": 16},
        family="pathfinding",
        num_agents=8,
        text=True,
        reference=f"pogema 1.4.0 (on_target={_pf_pogema})",
        description=f"{_pf_desc} (16x16 random map, density 0.3, soft collisions, FOV radius 5)",
    )
    _register_pf_policy(_pf_id.rsplit("-v", 1)[0], "bfs", "alem.envs.pathfinding.baseline:BFSPolicy")
