"""Bargaining's constants, offer table, instance list, state and parameters."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from alem import struct
from alem.core import EnvParams
from alem.errors import EnvArgumentError

__all__ = [
    "AGREE",
    "ITEMS",
    "OFFERS",
    "BargainingParams",
    "BargainingState",
    "load_instances",
    "split_text",
]

NUM_PLAYERS = 2
NUM_ITEMS = 3
POOL_MAX = 7  # at most 7 items in a pool (and in an offer)
VALUE_MAX = 10  # a full pool is worth 10 to each player
ITEMS = ("book", "hat", "ball")
DATA = Path(__file__).resolve().parent.parent / "data" / "bargaining_instances1000.json"

#: int32 [120, 3]: every offer (books, hats, balls) with at most 7 items, in OpenSpiel's order.
OFFERS = np.array(
    [(a, b, c) for c in range(8) for b in range(8) for a in range(8) if a + b + c <= POOL_MAX], np.int32
)
AGREE = len(OFFERS)  # 120


def load_instances(path: str | Path | None = None, max_num_instances: int | None = None) -> np.ndarray:
    """int32 ``[K, 3, 3]`` instances (pool, player 0's values, player 1's values).

    ``path=None`` reads the shipped OpenSpiel default list; any other path is read as
    OpenSpiel's ``instances_file`` format (one ``"p,p,p v,v,v v,v,v"`` line per instance).
    """
    if path is None:
        rows = json.loads(DATA.read_text())["instances"]
    else:
        rows = [line for line in Path(path).read_text().splitlines() if line.strip()]
    out = []
    for line in rows[: max_num_instances or None]:
        try:
            inst = [[int(x) for x in part.split(",")] for part in line.split(" ")]
            ok = len(inst) == 3 and all(len(p) == NUM_ITEMS for p in inst)
        except ValueError:
            ok = False
        if not ok:
            raise EnvArgumentError(f"Bargaining: instance line {line!r} is not 'p,p,p v,v,v v,v,v'")
        pool, values = np.array(inst[0]), np.array(inst[1:])
        if pool.min() < 0 or pool.max() > POOL_MAX or values.min() < 0 or values.max() > VALUE_MAX:
            raise EnvArgumentError(
                f"Bargaining: instance {line!r} out of range (pool counts 0..{POOL_MAX}, values 0..{VALUE_MAX})"
            )
        out.append(inst)
    if not out:
        raise EnvArgumentError("Bargaining: no instances")
    return np.array(out, np.int32)


def split_text(q, items: tuple[str, ...] = ITEMS) -> str:
    """``"1 book, 2 hats, 0 balls"`` for counts ``q`` (of ``items``, named in the singular)."""
    return ", ".join(f"{int(n)} {items[i]}{'' if int(n) == 1 else 's'}" for i, n in enumerate(q))


@struct.dataclass
class BargainingState:
    instance: jax.Array  # int32 []: row of the instance list
    pool: jax.Array  # int32 [3]
    values: jax.Array  # int32 [2, 3]: each player's value per item
    offers: jax.Array  # int32 [T, 3]: the offers so far (proposer's share); zeros beyond num_offers
    num_offers: jax.Array  # int32 []
    player: jax.Array  # int32 []: player to move
    agreed: jax.Array  # bool []
    ended: jax.Array  # bool []: broken off by chance (prob_end)


@struct.dataclass
class BargainingParams(EnvParams):
    discount: jax.Array  # float32 []: returns x discount ** (offers - 1) on agreement
    prob_end: jax.Array  # float32 []: chance of a break-off after each offer but the first
