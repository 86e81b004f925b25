"""Coordination worlds: MPE (mpe2's particle worlds, :mod:`~alem.envs.coordination.mpe`),
Level-Based Foraging (:mod:`~alem.envs.coordination.lbf`), Overcooked
(:mod:`~alem.envs.coordination.overcooked`), the multi-robot warehouse RWARE
(:mod:`~alem.envs.coordination.rware`) and SMAX, JaxMARL's StarCraft-style unit micromanagement
(:mod:`~alem.envs.coordination.smax`).

:func:`register` adds their registry ids; entry points are strings, so importing this
package imports no env module.
"""

from __future__ import annotations

__all__ = ["register"]

_MPE = "alem.envs.coordination.mpe"

# name -> (entry point in _MPE, agents, mpe2 id, description)
_MPE_SCENARIOS = {
    "simple": ("navigation:Simple", 1, "simple_v3", "one agent reaches one landmark (debugging)"),
    "simple_spread": ("navigation:SimpleSpread", 3, "simple_spread_v3", "N agents cover N landmarks"),
    "simple_reference": (
        "communication:SimpleReference",
        2,
        "simple_reference_v3",
        "each agent guides the other",
    ),
    "simple_speaker_listener": (
        "communication:SimpleSpeakerListener",
        2,
        "simple_speaker_listener_v4",
        "a speaker names the goal, a listener goes there",
    ),
    "simple_crypto": (
        "communication:SimpleCrypto",
        3,
        "simple_crypto_v3",
        "Alice and Bob share a key, Eve listens",
    ),
    "simple_tag": ("adversarial:SimpleTag", 4, "simple_tag_v3", "predators chase prey among obstacles"),
    "simple_adversary": (
        "adversarial:SimpleAdversary",
        3,
        "simple_adversary_v3",
        "hide the goal from an adversary",
    ),
    "simple_push": (
        "adversarial:SimplePush",
        2,
        "simple_push_v3",
        "an adversary pushes the agent off its goal",
    ),
    "simple_world_comm": (
        "adversarial:SimpleWorldComm",
        6,
        "simple_world_comm_v3",
        "tag with food, forests and a talking leader",
    ),
}

# Level-Based Foraging (lbforaging / EPyMARL LBF); each description names the matching lbforaging id.
_LBF = (
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
)

# Overcooked (Carroll et al. 2019) layouts as overcooked-ai 1.1.0 ships them:
# (layout name, description); grids in alem.envs.coordination.overcooked.layouts.
_OVERCOOKED = (
    ("cramped_room", "a small shared room with one pot"),
    ("asymmetric_advantages", "two rooms sharing two pots"),
    ("coordination_ring", "a ring around a central counter"),
    ("forced_coordination", "ingredients on one side, pots on the other: hand over on counters"),
    ("counter_circuit", "a loop around a long counter, onion and tomato orders"),
)

# Multi-robot warehouse (rware 2.0.0): rware's sizes and agent counts, its "-hard" queue (half a shelf
# per robot); id suffix -> (kwargs, rware id).
_RWARE = {
    f"{size}_{n}ag{'_hard' if hard else ''}": (
        {"size": size, "num_agents": n, "difficulty": "hard" if hard else "normal"},
        f"rware-{size}-{n}ag{'-hard' if hard else ''}-v2",
    )
    for size, n in (("tiny", 2), ("tiny", 4), ("small", 4), ("medium", 4), ("large", 4))
    for hard in (False, True)
}

# SMAX (JaxMARL 0.2.0's maps): map name -> (allies, description); the enemies are JaxMARL's
# heuristic. Kept in step with alem.envs.coordination.smax.scenarios.SCENARIOS (not imported here).
_SMAX = {
    "3m": (3, "3 marines vs 3 marines"),
    "2s3z": (5, "2 stalkers and 3 zealots per side"),
    "25m": (25, "25 marines vs 25 marines"),
    "3s5z": (8, "3 stalkers and 5 zealots per side"),
    "8m": (8, "8 marines vs 8 marines"),
    "5m_vs_6m": (5, "5 marines vs 6 marines"),
    "10m_vs_11m": (10, "10 marines vs 11 marines"),
    "27m_vs_30m": (27, "27 marines vs 30 marines"),
    "3s5z_vs_3s6z": (8, "3 stalkers and 5 zealots vs 3 stalkers and 6 zealots"),
    "3s_vs_5z": (3, "3 stalkers vs 5 zealots"),
    "6h_vs_8z": (6, "6 hydralisks vs 8 zealots"),
    "smacv2_5_units": (5, "SMACv2-style 5 vs 5 units of random mirrored types"),
    "smacv2_10_units": (10, "SMACv2-style 10 vs 10 units of random mirrored types"),
    "smacv2_20_units": (20, "SMACv2-style 20 vs 20 units of random mirrored types"),
}


def register() -> None:
    """Register the MPE, LBF, Overcooked, RWARE and SMAX ids (family ``"coordination"``)."""
    from alem.players import register_player
    from alem.registry import register

    # MPE; continuous actions with continuous_actions=True.
    for name, (entry, agents, mpe2, desc) in _MPE_SCENARIOS.items():
        register(
            f"mpe/{name}-v0",
            f"{_MPE}.{entry}",
            family="coordination",
            num_agents=agents,
            reference=f"mpe2 {mpe2}",
            description=desc,
        )
    for env_id, kwargs, desc in _LBF:
        register(
            env_id,
            "alem.envs.coordination.lbf:LevelBasedForaging",
            kwargs=kwargs,
            family="coordination",
            num_agents=kwargs.get("num_agents", 2),
            text=True,
            reference="lbforaging",
            description=f"Level-Based Foraging: {desc}",
        )
        for player in ("nearest", "centre"):
            register_player(
                env_id.rsplit("-v", 1)[0], player, f"alem.envs.coordination.lbf.players:{player}_player"
            )
    # Overcooked (overcooked-ai 1.1.0), one id per original layout.
    for name, desc in _OVERCOOKED:
        register(
            f"overcooked_{name}-v0",
            "alem.envs.coordination.overcooked:Overcooked",
            kwargs={"layout": name},
            family="coordination",
            num_agents=2,
            text=True,
            reference="overcooked-ai 1.1.0",
            description=f"Overcooked ({name}): {desc}",
        )
    # RWARE (rware 2.0.0); rware-v0 is rware's rware-tiny-2ag-v2.
    for suffix, (kwargs, rware_id) in {
        "": _RWARE["tiny_2ag"],
        **{f"_{k}": v for k, v in _RWARE.items()},
    }.items():
        register(
            f"rware{suffix}-v0",
            "alem.envs.coordination.rware:Warehouse",
            kwargs=kwargs,
            family="coordination",
            num_agents=kwargs["num_agents"],
            text=True,
            reference="rware 2.0.0",
            description=f"Multi-robot warehouse: {kwargs['size']}, {kwargs['num_agents']} robots, "
            f"{kwargs['difficulty']} request queue ({rware_id})",
        )
    # SMAX (jaxmarl 0.2.0's HeuristicEnemySMAX), one id per map; self_play=True makes both armies agents.
    for name, (allies, desc) in _SMAX.items():
        register(
            f"smax_{name}-v0",
            "alem.envs.coordination.smax:SMAX",
            kwargs={"map_name": name},
            family="coordination",
            num_agents=allies,
            text=True,
            reference="jaxmarl 0.2.0 (HeuristicEnemySMAX)",
            description=f"SMAX {name}: {desc}, against the heuristic enemy",
        )
