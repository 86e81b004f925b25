"""Bargaining ("Deal or No Deal"), exact to OpenSpiel's ``bargaining`` (the card is in :mod:`.env`).

The package: :mod:`.types` (constants, the offer table, the instance list, state and
parameters), :mod:`.env` (the rules and the observation tensors), :mod:`.text` (rules,
views, offer names and the parser) and :mod:`.viewer` (the RGB picture).
"""

from alem.envs.games.bargaining.env import Bargaining
from alem.envs.games.bargaining.types import (
    AGREE,
    ITEMS,
    OFFERS,
    BargainingParams,
    BargainingState,
    load_instances,
    split_text,
)

__all__ = [
    "Bargaining",
    "BargainingParams",
    "BargainingState",
    "AGREE",
    "ITEMS",
    "OFFERS",
    "load_instances",
    "split_text",
]
