"""The POGEMA benchmark's instances on alem (Skrynnik et al. 2024, ``pogema-benchmark``).

Host-side (NumPy), run once per evaluation:

- :func:`load_map_set` reads a ``maps.yaml`` of the benchmark (map name -> POGEMA ASCII
  grid); :data:`MAP_SETS` ships the benchmark's own ``random``, ``mazes`` and ``puzzles``
  sets (Apache-2.0, see ``data/pogema_benchmark/NOTICE``). The MovingAI and warehouse sets
  are not shipped: pass their ``maps.yaml`` path instead (warehouse maps restrict starts and
  goals with ``@``/``$``/``!``, which :func:`pogema_task` refuses).
- :func:`expand_config` turns an evaluation YAML (``environment:`` with ``grid_search``
  lists) into one dict per instance, as ``pogema-toolbox`` expands it.
- :func:`pogema_task` places starts and goals exactly as POGEMA 1.4 does for a map and a
  seed (components in row-major discovery order, free cells shuffled by
  ``numpy.random.default_rng(seed)``, each start paired with a later cell of its
  component); the benchmark's published per-instance ``scenarios`` equal its output.
- :func:`pogema_goal_sequences` draws the lifelong goal sequences POGEMA's ``restart`` mode
  draws (one generator per agent, seeded from ``seed``; each next goal uniform in the
  agent's component, never its current cell), long enough for ``max_steps``.

:func:`instance_params` builds the env params of one instance. Maps of one set differ in
size (17 to 21 cells a side for ``random``); alem batches instances of one shape, so maps are
padded to a common shape with obstacles (:func:`pad_map`). Moves, collisions and metrics
are unchanged by the padding (padded cells are walls, as the map's border is); only the
local observation beyond the border shows walls where POGEMA shows free padding.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from alem.envs.pathfinding.maps import MapFormatError, components, parse_ascii_map
from alem.errors import EnvArgumentError

__all__ = [
    "MAP_SETS",
    "load_map_set",
    "load_config",
    "expand_config",
    "pogema_task",
    "pogema_goal_sequences",
    "pad_map",
    "instance_task",
    "instance_params",
]

#: Map sets shipped with alem: name -> file under ``alem/envs/pathfinding/data/pogema_benchmark``.
MAP_SETS = {"random": "01-random.yaml", "mazes": "02-mazes.yaml", "puzzles": "05-puzzles.yaml"}


def load_map_set(name_or_path: str | Path) -> dict[str, np.ndarray]:
    """Map name -> bool ``[H, W]`` obstacles, from a shipped set (:data:`MAP_SETS`) or a
    ``maps.yaml`` path. Cells marked ``@``/``$``/``!`` (start/goal restrictions) are refused."""
    if str(name_or_path) in MAP_SETS:
        ref = (
            resources.files("alem.envs.pathfinding")
            / "data"
            / "pogema_benchmark"
            / MAP_SETS[str(name_or_path)]
        )
        text, source = ref.read_text(encoding="utf-8"), f"map set {name_or_path!r}"
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise EnvArgumentError(
                f"{name_or_path!r} is neither a shipped map set ({sorted(MAP_SETS)}) nor a maps.yaml file"
            )
        text, source = path.read_text(encoding="utf-8"), str(path)
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise MapFormatError(f"{source}: not valid YAML: {e}") from None
    if not isinstance(raw, dict) or not raw:
        raise MapFormatError(f"{source}: expected a mapping of map name -> ASCII grid")
    out = {}
    for name, grid in raw.items():
        if not isinstance(grid, str):
            raise MapFormatError(f"{source}: map {name!r} is not a string grid")
        marks = sorted(set(grid) & set("@$!"))
        if marks:
            raise MapFormatError(
                f"{source}: map {name!r} restricts start/goal cells with {marks}; alem places agents "
                "anywhere free, as POGEMA does for plain maps, so these maps are not supported"
            )
        parsed = parse_ascii_map(grid, f"{source}: {name}")
        if parsed.starts is not None:
            raise MapFormatError(
                f"{source}: map {name!r} marks agents; the benchmark's maps hold only '.'/'#'"
            )
        out[str(name)] = parsed.obstacles
    return out


def load_config(path: str | Path) -> dict[str, Any]:
    """An evaluation YAML of ``pogema-benchmark`` (its ``environment:`` block is what alem reads)."""
    try:
        cfg = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise EnvArgumentError(f"cannot read the evaluation config {path}: {e}") from None
    if not isinstance(cfg, dict) or not isinstance(cfg.get("environment"), dict):
        raise EnvArgumentError(f"{path}: an evaluation config needs an 'environment:' mapping")
    return cfg


def expand_config(environment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per instance: the Cartesian product of every ``{grid_search: [...]}`` value,
    in the order the keys appear (later keys vary fastest), as ``pogema-toolbox`` expands them."""
    keys = list(environment)
    choices = []
    for k in keys:
        v = environment[k]
        if isinstance(v, Mapping) and "grid_search" in v:
            values = v["grid_search"]
            if not isinstance(values, list) or not values:
                raise EnvArgumentError(
                    f"environment.{k}.grid_search must be a non-empty list, got {values!r}"
                )
            choices.append(values)
        else:
            choices.append([v])
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*choices)]


def _components(obstacles: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Labels ``0..K-1`` of the free cells' components (-1 on obstacles) and their sizes.
    :func:`~alem.envs.pathfinding.maps.components` numbers components in the order a row-major
    scan first meets them, which is POGEMA's order."""
    label = components(obstacles) - 1
    return label, np.bincount(label[label >= 0], minlength=int(label.max()) + 1).tolist()


def pogema_task(obstacles: np.ndarray, num_agents: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Starts and goals ``[N, 2]`` (row, col) that POGEMA 1.4 places on ``obstacles`` for ``seed``.

    The free cells in row-major order are shuffled with ``default_rng(seed)``; walking that
    order, a cell first completes the most recent open start of its component (its goal),
    else opens a start when fewer than ``num_agents`` are open and its component still has
    two unclaimed cells. Raises :class:`EnvArgumentError` when the map cannot hold them.
    """
    obstacles = np.asarray(obstacles, bool)
    label, sizes = _components(obstacles)
    cells = np.argwhere(~obstacles)  # row-major
    perm = np.arange(len(cells))
    np.random.default_rng(seed).shuffle(perm)  # the same swaps as shuffling the list of cells
    room = list(sizes)
    open_starts: list[list[int]] = [[] for _ in sizes]
    starts: list[tuple[int, int]] = []
    goals: list[tuple[int, int] | None] = [None] * num_agents
    done = 0
    for i in perm:
        r, c = (int(v) for v in cells[i])
        k = int(label[r, c])
        if open_starts[k]:
            goals[open_starts[k].pop()] = (r, c)
            done += 1
            continue
        if len(starts) >= num_agents:
            if done >= num_agents:
                break
            continue
        if room[k] >= 2:
            room[k] -= 2
            open_starts[k].append(len(starts))
            starts.append((r, c))
    if len(starts) < num_agents or done < num_agents:
        raise EnvArgumentError(
            f"the map cannot hold {num_agents} agents with distinct starts and goals "
            f"(POGEMA placed {min(len(starts), done)})"
        )
    return np.asarray(starts, np.int32), np.asarray(goals, np.int32)


def pogema_goal_sequences(
    obstacles: np.ndarray, starts: np.ndarray, goals: np.ndarray, seed: int, max_steps: int
) -> np.ndarray:
    """Goal sequences ``[N, L, 2]`` of POGEMA's lifelong mode (``on_target="restart"``).

    Agent ``i`` draws from ``default_rng(s_i)``, where ``s_0..s_{N-1}`` are
    ``default_rng(seed).integers(2**31 - 1, size=N)``: each next goal is a uniform cell of
    its component (cells in row-major order), drawn again while it equals the current
    goal. Each agent gets goals until their summed Manhattan legs (from its start) reach
    ``max_steps``, so no agent can use them up in an episode; shorter sequences are
    continued from the same generator to a common length ``L``.
    """
    obstacles = np.asarray(obstacles, bool)
    label, _ = _components(obstacles)
    members: dict[int, np.ndarray] = {}
    n = len(starts)
    seeds = np.random.default_rng(seed).integers(np.iinfo(np.int32).max, size=n)
    rngs = [np.random.default_rng(s) for s in seeds]

    def draw(i: int, here: tuple[int, int]) -> tuple[int, int]:
        k = int(label[here])
        pts = members.setdefault(k, np.argwhere(label == k))
        while True:
            cell = pts[int(rngs[i].choice(len(pts), 1)[0])]
            nxt = (int(cell[0]), int(cell[1]))
            if nxt != here:
                return nxt

    seqs: list[list[tuple[int, int]]] = []
    for i in range(n):
        here = (int(goals[i][0]), int(goals[i][1]))
        seq = [here]
        dist = abs(int(starts[i][0]) - here[0]) + abs(int(starts[i][1]) - here[1])
        while dist < max_steps:
            nxt = draw(i, here)
            dist += abs(here[0] - nxt[0]) + abs(here[1] - nxt[1])
            seq.append(nxt)
            here = nxt
        seqs.append(seq)
    length = max(len(s) for s in seqs)
    for i, seq in enumerate(seqs):
        while len(seq) < length:
            seq.append(draw(i, seq[-1]))
    return np.asarray(seqs, np.int32)


def pad_map(obstacles: np.ndarray, height: int, width: int) -> np.ndarray:
    """``obstacles`` in the top-left corner of a ``height x width`` map of obstacles."""
    h, w = obstacles.shape
    if h > height or w > width:
        raise EnvArgumentError(f"a {h}x{w} map does not fit in {height}x{width}")
    out = np.ones((height, width), bool)
    out[:h, :w] = obstacles
    return out


def instance_task(
    obstacles: np.ndarray, num_agents: int, seed: int, max_steps: int, mode: str
) -> tuple[np.ndarray, np.ndarray]:
    """POGEMA's starts ``[N, 2]`` and goals of one instance: ``[N, 2]``, or in lifelong mode the
    goal sequences ``[N, L, 2]`` (:func:`pogema_goal_sequences`)."""
    starts, goals = pogema_task(obstacles, num_agents, seed)
    if mode == "lifelong":
        goals = pogema_goal_sequences(obstacles, starts, goals, seed, max_steps)
    return starts, goals


def instance_params(
    env: Any,
    obstacles: np.ndarray,
    num_agents: int,
    seed: int,
    max_steps: int,
    mode: str | None = None,
    task: tuple[np.ndarray, np.ndarray] | None = None,
) -> Any:
    """Params of ``env`` (``map_type="fixed"``, the padded shape) for one benchmark instance:
    POGEMA's task on ``obstacles`` for ``seed`` (goal sequences in lifelong mode), or ``task``
    when the caller already has it from :func:`instance_task`. ``mode`` (default: the env's) is
    a param, so one compiled program runs both of the benchmark's."""
    from alem.envs.pathfinding.generator import make_params

    mode = env.mode if mode is None else mode
    starts, goals = instance_task(obstacles, num_agents, seed, max_steps, mode) if task is None else task
    if mode == "lifelong":
        if goals.shape[1] > env.goal_sequence_len:
            raise EnvArgumentError(
                f"the instance needs {goals.shape[1]} goals per agent; build the env with "
                f"goal_sequence_len >= {goals.shape[1]}"
            )
        # Goals past POGEMA's need are never reached; continue the sequence to the env's length.
        reps = -(-env.goal_sequence_len // goals.shape[1])
        goals = np.concatenate([goals] * reps, axis=1)[:, : env.goal_sequence_len]
    else:
        goals = goals[:, None].repeat(env.goal_sequence_len, axis=1)
    grid = pad_map(obstacles, env.height, env.width)
    return make_params(env, maps=grid, starts=starts, goals=goals, max_steps=max_steps, mode=mode)
