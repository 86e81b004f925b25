"""SMAX maps and the start of a battle: unit compositions and start positions.

Fixed maps put every unit at its team's rally point (a quarter of the map width in from its side,
half-way up) plus uniform noise in ``[-2, 2)`` per coordinate. SMACv2-style maps draw both at
reset: the allies' types uniformly among the six unit types (the enemies copy them, slot by
slot), and the start positions from an even mixture of

- *surround*: one team (a fair coin decides which) starts around the centre of the map, the
  other is split over four groups, each on the segment from the centre to one map corner at a
  uniform fraction of the way, every unit joining a uniformly drawn group;
- *reflect*: the allies start uniformly in the left half of the map, the enemies at their mirror
  images across the vertical centre line (enemies beyond the number of allies uniformly in the
  right half).

Every draw consumes the reset key exactly as JaxMARL 0.2.0 does, so a key gives the same battle
in both (the reference tests rely on it).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from alem.envs.coordination.smax.types import NUM_UNIT_TYPES, UNIT_NAMES

__all__ = ["Scenario", "SCENARIOS", "draw_start", "start_noise_positions", "smacv2_positions", "smacv2_types"]

M, MM, S, ZL, ZG, H = range(NUM_UNIT_TYPES)  # marine, marauder, stalker, zealot, zergling, hydralisk


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A map: the unit types of each team (placeholders when ``smacv2``) and how the start is drawn."""

    name: str
    allies: tuple[int, ...]
    enemies: tuple[int, ...]
    smacv2: bool
    description: str

    @property
    def num_allies(self) -> int:
        return len(self.allies)

    @property
    def num_enemies(self) -> int:
        return len(self.enemies)

    def composition(self, team: int) -> str:
        """``"3 stalkers, 5 zealots"``-style text of a team (fixed maps)."""
        types = self.allies if team == 0 else self.enemies
        if self.smacv2:
            return f"{len(types)} units of random types"
        parts = []
        for t in dict.fromkeys(types):
            k = types.count(t)
            parts.append(f"{k} {UNIT_NAMES[t]}{'s' if k > 1 else ''}")
        return ", ".join(parts)


def _fixed(name: str, allies: tuple[int, ...], enemies: tuple[int, ...], description: str) -> Scenario:
    return Scenario(name, allies, enemies, False, description)


def _random(name: str, n: int) -> Scenario:
    return Scenario(
        name,
        (M,) * n,
        (M,) * n,
        True,
        f"SMACv2-style: {n} vs {n} units of random mirrored types, surround or reflect starts",
    )


#: The maps of JaxMARL 0.2.0's ``MAP_NAME_TO_SCENARIO``, by name.
SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        _fixed("3m", (M,) * 3, (M,) * 3, "3 marines vs 3 marines"),
        _fixed("2s3z", (S, S, ZL, ZL, ZL), (S, S, ZL, ZL, ZL), "2 stalkers and 3 zealots per side"),
        _fixed("25m", (M,) * 25, (M,) * 25, "25 marines vs 25 marines"),
        _fixed("3s5z", (S,) * 3 + (ZL,) * 5, (S,) * 3 + (ZL,) * 5, "3 stalkers and 5 zealots per side"),
        _fixed("8m", (M,) * 8, (M,) * 8, "8 marines vs 8 marines"),
        _fixed("5m_vs_6m", (M,) * 5, (M,) * 6, "5 marines vs 6 marines"),
        _fixed("10m_vs_11m", (M,) * 10, (M,) * 11, "10 marines vs 11 marines"),
        _fixed("27m_vs_30m", (M,) * 27, (M,) * 30, "27 marines vs 30 marines"),
        _fixed(
            "3s5z_vs_3s6z",
            (S,) * 3 + (ZL,) * 5,
            (S,) * 3 + (ZL,) * 6,
            "3 stalkers and 5 zealots vs 3 stalkers and 6 zealots",
        ),
        _fixed("3s_vs_5z", (S,) * 3, (ZL,) * 5, "3 stalkers vs 5 zealots"),
        _fixed("6h_vs_8z", (H,) * 6, (ZL,) * 8, "6 hydralisks vs 8 zealots"),
        _random("smacv2_5_units", 5),
        _random("smacv2_10_units", 10),
        _random("smacv2_20_units", 20),
    )
}


def _key_chain(key: jax.Array, n: int) -> list[jax.Array]:
    """``n`` keys drawn one after another from a running key (each split keeps the first half
    running and hands out the second)."""
    out = []
    for _ in range(n):
        key, sub = jax.random.split(key)
        out.append(sub)
    return out


def start_noise_positions(k_allies, k_enemies, n_allies, n_enemies, width, height) -> jax.Array:
    """Fixed maps: the two rally points plus uniform ``[-2, 2)`` noise; float32 ``[A + E, 2]``."""
    left = jnp.array([width / 4, height / 2], jnp.float32)
    right = jnp.array([width / 4 * 3, height / 2], jnp.float32)
    a = left + jax.random.uniform(k_allies, (n_allies, 2), minval=-2, maxval=2)
    e = right + jax.random.uniform(k_enemies, (n_enemies, 2), minval=-2, maxval=2)
    return jnp.concatenate([a, e])


def _ring_side(key, n_centre, n_ring, width, height) -> tuple[jax.Array, jax.Array]:
    """Surround start of one arrangement: (centre team ``[n_centre, 2]``, ring team ``[n_ring, 2]``)."""
    k_centre, k_group, k_frac, k_ring = _key_chain(key, 4)
    middle = jnp.array([width / 2, height / 2], jnp.float32)
    centre = middle + jax.random.uniform(k_centre, (n_centre, 2), minval=-2, maxval=2)
    group = jax.random.categorical(k_group, jnp.log(jnp.ones((4,)) / 4), shape=(n_ring,))
    corners = jnp.array([[0.0, 0.0], [0.0, height], [width, 0.0], [width, height]], jnp.float32)
    frac = jax.random.uniform(k_frac, (4, 1), minval=0.0, maxval=1.0)
    stations = frac * middle + (1 - frac) * corners
    ring = stations[group] + jax.random.uniform(k_ring, (n_ring, 2), minval=-2, maxval=2)
    return centre, ring


def smacv2_positions(key, n_allies, n_enemies, width, height) -> jax.Array:
    """SMACv2 start positions (surround or reflect, even odds); float32 ``[A + E, 2]``."""
    k_coin, k_surround, k_reflect = jax.random.split(key, 3)

    # surround: both arrangements are drawn, a coin picks the one with the allies in the centre
    k_pick, k_ally_centre, k_enemy_centre = jax.random.split(k_surround, 3)
    inner, outer = _ring_side(k_ally_centre, n_allies, n_enemies, width, height)
    allies_inside = jnp.concatenate([inner, outer])
    outer, inner = _ring_side(k_enemy_centre, n_enemies, n_allies, width, height)
    enemies_inside = jnp.concatenate([inner, outer])
    ally_centre = jax.random.randint(k_pick, (), 0, 2) == 1
    surround = jnp.where(ally_centre, allies_inside, enemies_inside)

    # reflect
    k_extra, k_left = jax.random.split(k_reflect)
    left = jax.random.uniform(
        k_left,
        (n_allies, 2),
        minval=jnp.array([0.0, 0.0]),
        maxval=jnp.array([width / 2, height]),
    )
    mirrored = jnp.stack([width - left[:, 0], left[:, 1]], axis=-1)[:n_enemies]
    if n_enemies > n_allies:
        extra = jax.random.uniform(
            k_extra,
            (n_enemies - n_allies, 2),
            minval=jnp.array([width / 2, 0.0]),
            maxval=jnp.array([width, height]),
        )
        mirrored = jnp.concatenate([mirrored, extra])
    reflect = jnp.concatenate([left, mirrored])

    return jnp.where(jax.random.uniform(k_coin) < 0.5, surround, reflect)


def smacv2_types(key, n_allies, n_enemies) -> jax.Array:
    """SMACv2 unit types: allies uniform over the six types, enemies copy them slot by slot.

    Enemies beyond the number of allies are marines: JaxMARL 0.2.0 draws types for them but never
    stores the draw (no registered map has more enemies than allies here)."""
    _, k_allies = jax.random.split(key)
    allies = jax.random.categorical(
        k_allies, jnp.log(jnp.ones((NUM_UNIT_TYPES,)) / NUM_UNIT_TYPES), shape=(n_allies,)
    ).astype(jnp.int32)
    enemies = allies[:n_enemies]
    if n_enemies > n_allies:
        enemies = jnp.concatenate([enemies, jnp.zeros((n_enemies - n_allies,), jnp.int32)])
    return jnp.concatenate([allies, enemies])


def draw_start(key, scenario: Scenario, width: float, height: float) -> tuple[jax.Array, jax.Array]:
    """(positions float32 ``[U, 2]`` before the overlap push, unit types int32 ``[U]``) of a battle.

    The key is split into a running key and the two noise keys of the fixed maps; the running key
    then hands out the SMACv2 position key and the SMACv2 type key, in that order."""
    a, e = scenario.num_allies, scenario.num_enemies
    running, k_allies, k_enemies = jax.random.split(key, 3)
    if not scenario.smacv2:
        pos = start_noise_positions(k_allies, k_enemies, a, e, width, height)
        return pos, jnp.asarray(np.array(scenario.allies + scenario.enemies, np.int32))
    k_pos, k_types = _key_chain(running, 2)
    return smacv2_positions(k_pos, a, e, width, height), smacv2_types(k_types, a, e)
