"""Advantage estimators for training LLMs on multi-agent games (pure NumPy, no model code).

Three estimators that papers on LLM self-play use, written from their formulas:

- :func:`grpo_advantages`: group-relative advantages (GRPO). Trajectories of the same group
  (the same env seed: the same deal played several times) are compared with each other:
  ``A_i = (R_i - mean_g R) / (std_g R + eps)``, or only mean-centred (``scale=False``).
- :class:`RoleBaseline` / :func:`rae_advantages`: role-conditioned advantage estimation
  (SPIRAL's RAE). One running baseline per ``(game, role)``, an exponential moving average of
  that role's returns: ``b <- decay * b + (1 - decay) * R``, then ``A = R - b``. In a
  zero-sum game whose first seat wins more often, each seat is compared with its own
  typical outcome rather than with the other seat's.
- :func:`turn_level_advantages`: turn-level advantages with per-agent normalisation (in the
  style of MARS): each decision's discounted return over the *same agent's* later turns,
  ``G_k = r_k + gamma * G_{k+1}`` (``r_k``: the rewards credited to decision ``k``, see
  :func:`alem.text.train.turns.credit_rewards`), then normalised over the batch separately per agent
  (or role): ``A = (G - mean_agent G) / (std_agent G + eps)``.

Every function takes flat arrays (one entry per trajectory or per decision) and returns a
float64 array of the same length; group and role keys may be any hashable values.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "grpo_advantages",
    "rae_advantages",
    "RoleBaseline",
    "discounted_returns",
    "turn_level_advantages",
]


def _groups(keys: Sequence[Hashable]) -> np.ndarray:
    """Integer group ids (first occurrence order) for arbitrary hashable keys."""
    ids: dict[Any, int] = {}
    return np.array([ids.setdefault(_hashable(k), len(ids)) for k in keys], np.int64)


def _hashable(k: Any) -> Any:
    if isinstance(k, np.ndarray):
        return tuple(k.tolist())
    if isinstance(k, np.generic):
        return k.item()
    if isinstance(k, list):
        return tuple(_hashable(x) for x in k)
    return k


def _normalise_by(
    values: np.ndarray, keys: Sequence[Hashable], scale: bool, eps: float, ddof: int
) -> np.ndarray:
    """``(v - mean_k v) [/ (std_k v + eps)]`` within each key's entries."""
    gid = _groups(keys)
    out = np.zeros_like(values)
    for g in range(int(gid.max()) + 1 if len(gid) else 0):
        sel = gid == g
        v = values[sel]
        centred = v - v.mean()
        if scale:
            std = v.std(ddof=ddof) if v.size > ddof else 0.0
            centred = centred / (std + eps)
        out[sel] = centred
    return out


def grpo_advantages(
    returns: Sequence[float] | np.ndarray,
    groups: Sequence[Hashable],
    *,
    scale: bool = True,
    eps: float = 1e-6,
    ddof: int = 0,
) -> np.ndarray:
    """Group-relative advantages: each return minus its group's mean, optionally over its std.

    ``A_i = (R_i - mean_{j in g(i)} R_j) / (std_{j in g(i)} R_j + eps)``; with ``scale=False``
    only ``R_i - mean``. ``std`` is the population standard deviation (``ddof=0``; ``ddof=1``
    gives the sample one, as some trainers use). A group of one gets 0; a group whose returns
    are all equal gets 0 everywhere (no signal).

    Args:
        returns: one return per trajectory (or per completion).
        groups: one group key per entry, e.g. the env seed (the same deal).
    """
    r = np.asarray(returns, np.float64)
    if len(groups) != r.shape[0] or r.ndim != 1:
        raise ValueError(f"returns [{r.shape}] and groups [{len(groups)}] must be flat and of one length")
    return _normalise_by(r, groups, scale, eps, ddof)


def rae_advantages(
    games: Sequence[Hashable],
    roles: Sequence[Hashable],
    returns: Sequence[float] | np.ndarray,
    baselines: Mapping[tuple[Any, Any], float] | None = None,
    *,
    decay: float = 0.95,
    update_first: bool = True,
) -> tuple[np.ndarray, dict[tuple[Any, Any], float]]:
    """Role-conditioned advantages and the updated baselines (a pure function).

    Trajectories are taken in order. For trajectory ``k`` of game ``G`` and role ``p`` with
    return ``R``: ``b[G, p] <- decay * b[G, p] + (1 - decay) * R`` and ``A_k = R - b[G, p]``
    (``update_first=True``: the baseline already includes ``R``, as SPIRAL's algorithm updates
    it before computing the advantage; ``False``: ``A_k = R - b`` with the baseline from before
    the update). A ``(game, role)`` not in ``baselines`` starts at 0.

    Returns:
        ``(advantages, baselines)``: float64 ``[len(returns)]`` and the new baseline table.
    """
    r = np.asarray(returns, np.float64)
    if not (len(games) == len(roles) == r.shape[0]) or r.ndim != 1:
        raise ValueError("games, roles and returns must be flat and of one length")
    if not 0.0 <= decay < 1.0:
        raise ValueError(f"decay must be in [0, 1), got {decay}")
    table = {k: float(v) for k, v in (baselines or {}).items()}
    adv = np.zeros_like(r)
    for k, (g, p) in enumerate(zip(games, roles, strict=True)):
        key = (_hashable(g), _hashable(p))
        before = table.get(key, 0.0)
        after = decay * before + (1.0 - decay) * r[k]
        table[key] = after
        adv[k] = r[k] - (after if update_first else before)
    return adv, table


class RoleBaseline:
    """SPIRAL's role-conditioned baselines as state: ``advantages(games, roles, returns)``
    updates the per-``(game, role)`` moving averages and returns ``R - b`` (see
    :func:`rae_advantages`)."""

    def __init__(self, decay: float = 0.95, *, update_first: bool = True):
        if not 0.0 <= decay < 1.0:
            raise ValueError(f"decay must be in [0, 1), got {decay}")
        self.decay, self.update_first = float(decay), bool(update_first)
        self.baselines: dict[tuple[Any, Any], float] = {}

    def advantages(
        self,
        games: Sequence[Hashable],
        roles: Sequence[Hashable],
        returns: Sequence[float] | np.ndarray,
    ) -> np.ndarray:
        adv, self.baselines = rae_advantages(
            games, roles, returns, self.baselines, decay=self.decay, update_first=self.update_first
        )
        return adv

    def state_dict(self) -> dict[str, Any]:
        """The baselines as a JSON-friendly list (to checkpoint with the trainer)."""
        return {"decay": self.decay, "baselines": [[g, p, b] for (g, p), b in self.baselines.items()]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.decay = float(state["decay"])
        self.baselines = {(_hashable(g), _hashable(p)): float(b) for g, p, b in state["baselines"]}


def discounted_returns(rewards: Sequence[float] | np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """``G_k = r_k + gamma * G_{k+1}`` (``G`` after the last entry is 0) for one sequence."""
    r = np.asarray(rewards, np.float64)
    out = np.zeros_like(r)
    acc = 0.0
    for k in range(r.shape[0] - 1, -1, -1):
        acc = r[k] + gamma * acc
        out[k] = acc
    return out


def turn_level_advantages(
    rewards: Sequence[float] | np.ndarray,
    episodes: Sequence[Hashable],
    agents: Sequence[Hashable],
    *,
    gamma: float = 1.0,
    normalize: str = "agent",
    scale: bool = True,
    eps: float = 1e-6,
    ddof: int = 0,
) -> np.ndarray:
    """Turn-level advantages with per-agent normalisation.

    Entries are decisions in play order (within each episode). For every ``(episode, agent)``
    its decisions ``k = 0..K-1`` with credited rewards ``r_k`` get the discounted return over
    that agent's own later turns, ``G_k = r_k + gamma * G_{k+1}``. The advantages are then
    ``G`` normalised over the whole batch per ``normalize`` key:

    - ``"agent"``: per agent (pass the seat, or ``(game, seat)``, or the role):
      ``A = (G - mean_agent G) / (std_agent G + eps)``;
    - ``"batch"``: one mean and std over every decision;
    - ``"none"``: ``A = G``.

    ``scale=False`` only subtracts the mean.
    """
    r = np.asarray(rewards, np.float64)
    if not (len(episodes) == len(agents) == r.shape[0]) or r.ndim != 1:
        raise ValueError("rewards, episodes and agents must be flat and of one length")
    if normalize not in ("agent", "batch", "none"):
        raise ValueError(f"normalize must be 'agent', 'batch' or 'none', got {normalize!r}")
    seq = _groups([(_hashable(e), _hashable(a)) for e, a in zip(episodes, agents, strict=True)])
    g = np.zeros_like(r)
    for s in range(int(seq.max()) + 1 if len(seq) else 0):
        idx = np.flatnonzero(seq == s)
        g[idx] = discounted_returns(r[idx], gamma)
    if normalize == "none":
        return g
    keys = agents if normalize == "agent" else [0] * len(g)
    return _normalise_by(g, keys, scale, eps, ddof)
