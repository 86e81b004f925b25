"""Deprecated: the player interface moved to :mod:`alem.players` (2026-12), where every name
says *player* (``Policy`` is ``Player``, ``make_policy`` is ``make_player`` ...). This module
keeps the old names for one release and warns once on import."""

from __future__ import annotations

import warnings

from alem.players import (
    FunctionPlayer,
    Player,
    RandomPlayer,
    Turn,
    host_view,
    make_player,
    player_names,
    register_player,
)

warnings.warn(
    "alem.policies is deprecated: import from alem.players (Policy -> Player, RandomPolicy -> "
    "RandomPlayer, FunctionPolicy -> FunctionPlayer, make_policy -> make_player, register_policy -> "
    "register_player, policy_names -> player_names)",
    DeprecationWarning,
    stacklevel=2,
)

Policy = Player
RandomPolicy = RandomPlayer
FunctionPolicy = FunctionPlayer
make_policy = make_player
register_policy = register_player
policy_names = player_names

__all__ = [
    "Turn",
    "Policy",
    "RandomPolicy",
    "FunctionPolicy",
    "register_policy",
    "make_policy",
    "policy_names",
    "host_view",
]
