"""The policies ``benchmarks.pogema_protocol`` plays, as its command line names them.

- the classical ones (:data:`POLICIES`): ``pibt``, ``bfs``, ``random``;
- ``checkpoint:<folder>[#greedy]``: the trained actor of a ``python -m alem.train`` run (a folder
  with ``results.json``) or an exported actor (``actor.json``, :mod:`alem.algos.actor_export`);
- :data:`LEARNED` names that alem ships: ``follow`` is the learned follower of
  ``configs/env/pathfinding_follow.yaml`` (:func:`alem.envs.pathfinding.learned_follower`), so the
  learned row of the protocol needs no training run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

from alem.errors import AlemError

__all__ = ["POLICIES", "LEARNED", "policy_spec", "policy_label", "checkpoint", "trained_kwargs", "digest"]

POLICIES = ("pibt", "bfs", "random")


def _learned() -> dict[str, Path]:
    from alem.envs.pathfinding import learned_follower

    return {"follow": learned_follower()}


#: Shipped learned policies: name -> exported actor folder.
LEARNED: tuple[str, ...] = ("follow",)


def _record(folder: Path) -> Path | None:
    """The file that says what a checkpoint folder trained: results.json, or an export's actor.json."""
    for name in ("results.json", "actor.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def checkpoint(policy: str) -> tuple[Path, bool]:
    """(folder, greedy) of a ``checkpoint:<folder>[#greedy]`` policy."""
    return Path(policy.removeprefix("checkpoint:").removesuffix("#greedy")), policy.endswith("#greedy")


def policy_spec(text: str) -> str:
    """An argparse type: a classical policy, a shipped learned one (as ``checkpoint:<its folder>``),
    or ``checkpoint:<folder>[#greedy]`` of a finished run or an exported actor."""
    if text in POLICIES:
        return text
    name, _, greedy = text.partition("#")
    if name in LEARNED and greedy in ("", "greedy"):
        return f"checkpoint:{_learned()[name]}" + ("#greedy" if greedy else "")
    if text.startswith("checkpoint:"):
        folder, _ = checkpoint(text)
        if _record(folder) is None:
            raise argparse.ArgumentTypeError(
                f"{folder} has neither results.json nor actor.json (a finished alem.train run or an exported actor?)"
            )
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r}: choose from {list(POLICIES)}, a shipped learned policy {list(LEARNED)} or checkpoint:<run dir>"
    )


def policy_label(policy: str) -> str:
    """The name a policy has in the tables: a checkpoint by its folder's name, not its path."""
    if not policy.startswith("checkpoint:"):
        return policy
    folder, greedy = checkpoint(policy)
    return f"checkpoint:{folder.name}" + ("#greedy" if greedy else "")


def trained_kwargs(policy: str) -> tuple[Path, bool, dict[str, Any]]:
    """(folder, greedy, the trained env's keywords) of a ``checkpoint:`` policy."""
    folder, greedy = checkpoint(policy)
    record = _record(folder)
    try:
        res = json.loads(record.read_text(encoding="utf-8")) if record else {}
        kwargs = dict(((res.get("config") or {}).get("env") or {}).get("kwargs") or {})
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise AlemError(f"{record} is unreadable or not an alem.train result or exported actor ({e})") from None
    return folder, greedy, kwargs


def digest(policy: str) -> str | None:
    """A checkpoint's identity for a resume's settings: the hash of its record file (its label is
    only a folder's name); None for the classical policies or an unreadable record."""
    if not policy.startswith("checkpoint:"):
        return None
    record = _record(checkpoint(policy)[0])
    try:
        return hashlib.sha256(record.read_bytes()).hexdigest() if record else None
    except OSError:
        return None
