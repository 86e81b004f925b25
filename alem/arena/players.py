"""Players at the table: specs (``random``, ``llm:<model>``, ``checkpoint:<run dir>``) to policies, by seat.

A *seating* is one :class:`~alem.players.Player` per seat of an env, in seat order;
:func:`build_players` makes one from specs (:func:`alem.engine.record.seating` checks one
given as objects).
"""

from __future__ import annotations

from collections.abc import Sequence

from alem.core import MultiAgentEnv
from alem.errors import ConfigError
from alem.players import Player, make_player

__all__ = ["parse_spec", "build_player", "build_players", "label_of"]


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"name"`` or ``"name:ARG"`` -> ``(name, ARG or None)``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"a player spec must be a non-empty string like 'random' or 'llm:<model>', got {spec!r}"
        )
    name, _, arg = spec.strip().partition(":")
    return name, (arg or None)


def build_players(
    env: MultiAgentEnv, specs: Sequence[str], player_kwargs: dict[str, dict] | None = None
) -> list[Player]:
    """One policy per seat from player specs (one spec fills every seat).

    ``player_kwargs[name]`` are extra constructor keywords of player ``name``; the ``ARG`` of
    ``name:ARG`` is passed as ``spec=ARG``. Each policy's ``label`` is its spec (the table's name).
    """
    specs = list(specs)
    n = env.num_agents
    if len(specs) == 1:
        specs = specs * n
    if len(specs) != n:
        raise ConfigError(
            f"{env.id} has {n} seats {list(env.agents)}; give one player spec per seat or one for all, "
            f"got {len(specs)}: {specs}"
        )
    return [build_player(env, spec, player_kwargs) for spec in specs]


def build_player(env: MultiAgentEnv, spec: str, player_kwargs: dict[str, dict] | None = None) -> Player:
    """The policy of one player spec for ``env``, labelled with the spec (see :func:`build_players`)."""
    name, arg = parse_spec(spec)
    kwargs = dict((player_kwargs or {}).get(name) or {})
    if arg is not None:
        kwargs["spec"] = arg
    try:
        policy = make_player(name, env, **kwargs)
    except TypeError as e:
        raise ConfigError(f"player {spec!r}: {e}") from None
    policy.label = spec  # how the player is shown in the tables
    return policy


def label_of(policy: Player) -> str:
    """How a seat's player is named in the results: its ``label`` (the spec), else its ``name``."""
    return getattr(policy, "label", policy.name)
