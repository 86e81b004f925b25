"""SMAX as text: the rules, and a battle as one agent observes it (or as a whole).

An agent's view is decoded from its own observation vector (:meth:`SMAX.unit_observations`), so it
tells exactly what the agent observes and nothing more: the units within its sight with their
health, offset, weapon state and (where the env shows them) last orders; then its own unit. The
whole-battle view (``agent=None``) lists every unit with its absolute position.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from alem.envs.coordination.smax.types import (
    MOVE_NAMES,
    NUM_MOVES,
    NUM_UNIT_TYPES,
    OTHER_FEATURES,
    OWN_FEATURES,
    STOP,
    UNIT_NAMES,
    UNIT_STATS,
)

if TYPE_CHECKING:
    from alem.envs.coordination.smax.env import SMAX, SmaxState

__all__ = ["rules_text", "render_text"]

_OTHER = len(OTHER_FEATURES) + NUM_UNIT_TYPES


def unit_name(env: SMAX, unit: int) -> str:
    """``ally_<i>`` or ``enemy_<i>``, the names the action names use."""
    return f"{'enemy' if unit >= env.num_allies else 'ally'}_{env._team_index(unit)}"


def rules_text(env: SMAX, agent: int = 0) -> str:
    """The rules as told to ``agent``: the battle, the orders, the reward."""
    unit = int(env.learners[agent])
    kinds = ", ".join(
        f"{name} (health {UNIT_STATS.health[k]:.0f}, damage {UNIT_STATS.damage[k]:.0f}, range "
        f"{UNIT_STATS.attack_range[k]:.0f}, sight {UNIT_STATS.sight[k]:.0f}, speed {UNIT_STATS.speed[k]:.2f})"
        for k, name in enumerate(UNIT_NAMES)
    )
    side = "allies" if unit < env.num_allies else "enemies"
    foe = "enemy" if unit < env.num_allies else "allied"
    a_foe = "an " + foe
    return (
        f"SMAX battle ({env.scenario.name}): {env.num_allies} allies against {env.num_enemies} enemies on a "
        f"{env.map_width} x {env.map_height} map (x grows east, y grows north). You command "
        f"{unit_name(env, unit)}, one unit of the {side}; each of your teammates is commanded by another "
        f"player. Each turn you give one order: move north, east, south or west, stop, or attack a "
        f"{a_foe} unit that is alive and within your weapon's range (the legal orders are listed). "
        f"A turn lasts {env.world_ticks * env.tick_seconds:.1f} seconds of game time; a weapon fires "
        f"again after its cooldown. Units see others within their sight range. Unit types: {kinds}. "
        f"Your team is rewarded for the damage it deals and wins when every {foe} unit is dead; the "
        f"battle ends after {int(env.default_params.max_steps)} turns."
        + (" Touching the map edge kills a unit." if env.walls_cause_death else "")
    )


def _type_of(onehot: np.ndarray) -> str:
    return UNIT_NAMES[int(np.argmax(onehot))]


def _weapon(fraction: float) -> str:
    return "weapon ready" if fraction <= 0 else f"weapon cooling ({fraction:.0%} left)"


def _orders(env: SMAX, other: int, move: np.ndarray, attack: float) -> str:
    """The last order of ``other`` as observed (its move direction and attack feature)."""
    if attack > 0:  # the attack action over the unit's largest action
        largest = int(env.unit_actions[other]) - 1
        slot = int(round(attack * largest)) - NUM_MOVES
        return f"last order: attack {unit_name(env, int(env.attack_slots[other, slot]))}"
    from alem.envs.coordination.smax.motion import MOVE_VECTORS

    for j, vec in enumerate(MOVE_VECTORS[:STOP]):
        if np.allclose(move, vec, atol=1e-3):
            return f"last order: {MOVE_NAMES[j]}"
    return "last order: stop"


def render_text(env: SMAX, state: SmaxState, agent: int | None = None, moves: bool = True) -> str:
    """One (unbatched) battle as ``agent`` observes it; ``None``: every unit, with positions.
    ``moves=False``: a dead unit's view does not say that it can only stop."""
    state = jax.device_get(state)
    if agent is None:
        lines = [f"Step {int(state.step)}."]
        for u in range(env.num_units):
            kind = UNIT_NAMES[int(state.unit_type[u])]
            if not bool(state.alive[u]):
                lines.append(f"{unit_name(env, u)} ({kind}): dead")
                continue
            x, y = (float(v) for v in state.pos[u])
            lines.append(
                f"{unit_name(env, u)} ({kind}): health {float(state.health[u]):.0f}, at ({x:.1f}, {y:.1f}), "
                f"{_weapon(float(state.cooldown[u]) / float(UNIT_STATS.cooldown[int(state.unit_type[u])]))}"
            )
        return "\n".join(lines)
    me = _agent_view(env, state, agent)
    if not me["alive"]:
        return f"You command {me['unit']}. Your unit is dead" + ("; you can only stop." if moves else ".")
    lines = [
        f"You command {me['unit']} ({me['type']}): health {me['health']:.0%}, at ({me['x']:.1f}, {me['y']:.1f}), "
        f"{me['weapon']}.",
    ]
    seen = []
    for o in me["in_sight"]:
        dx, dy = o["dx"], o["dy"]
        where = (
            f"{abs(dx):.1f} {'east' if dx >= 0 else 'west'}, {abs(dy):.1f} {'north' if dy >= 0 else 'south'}"
        )
        parts = [f"health {o['health']:.0%}", where, o["weapon"]] + ([o["orders"]] if o["orders"] else [])
        seen.append(f"- {o['unit']} ({o['type']}): {', '.join(parts)}")
    lines.append("Units in sight (offsets from you):" if seen else "No other unit in sight.")
    return "\n".join(lines + seen)


def _agent_view(env: SMAX, state: SmaxState, agent: int) -> dict[str, Any]:
    """What ``agent``'s unit observes, read from its observation (so nothing it cannot see)."""
    unit = int(env.learners[agent])
    obs = np.asarray(env.unit_observations(state, np.array([unit])))[0]
    own = obs[-(len(OWN_FEATURES) + NUM_UNIT_TYPES) :]
    name = unit_name(env, unit)
    if not own.any():
        return {"unit": name, "alive": False, "in_sight": []}
    kind = _type_of(own[len(OWN_FEATURES) :])
    sight = float(UNIT_STATS.sight[UNIT_NAMES.index(kind)])
    seen = []
    for k, other in enumerate(env.view_order[unit]):
        f = obs[k * _OTHER : (k + 1) * _OTHER]
        if not f.any():
            continue  # dead or out of sight: the observation is all zero
        seen.append(
            {
                "unit": unit_name(env, int(other)),
                "type": _type_of(f[len(OTHER_FEATURES) :]),
                "health": float(f[0]),
                "dx": float(f[1] * sight),
                "dy": float(f[2] * sight),
                "weapon": _weapon(float(f[6])),
                "orders": _orders(env, int(other), f[3:5], float(f[5]))
                if env._sees_actions[unit, k]
                else None,
            }
        )
    return {
        "unit": name,
        "alive": True,
        "type": kind,
        "health": float(own[0]),
        "x": float(own[1] * env.map_width),
        "y": float(own[2] * env.map_height),
        "weapon": _weapon(float(own[3])),
        "in_sight": seen,
    }


def json_view(env: SMAX, state: SmaxState, agent: int) -> dict[str, Any]:
    """What ``agent``'s unit observes, as JSON: ``step`` and ``you`` (``unit``, ``alive``, ``type``,
    ``health`` as a fraction, ``x``, ``y``, ``weapon``, ``in_sight``: per unit ``unit``, ``type``,
    ``health``, ``dx``/``dy`` (east/north of you), ``weapon``, ``orders`` or null). Numbers are
    rounded to 0.01."""
    rounded = lambda v: round(v, 2) if isinstance(v, float) else v
    me = _agent_view(env, jax.device_get(state), agent)
    me["in_sight"] = [{k: rounded(v) for k, v in o.items()} for o in me["in_sight"]]
    return {"step": int(jax.device_get(state).step), "you": {k: rounded(v) for k, v in me.items()}}
