"""Multi-robot warehouse: the env (spaces, dynamics); its card is on the class.

Layouts and reset-side draws come from :mod:`~alem.envs.coordination.rware.generator`, conflicting
moves are resolved by :mod:`~alem.envs.coordination.rware.collisions`, the observation encoders
live in :mod:`~alem.envs.coordination.rware.observer`, text and RGB output come from
:mod:`~alem.envs.coordination.rware.viewer`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv, TimeStep
from alem.envs.coordination.rware import viewer
from alem.envs.coordination.rware.collisions import ProbeTables, resolve_moves
from alem.envs.coordination.rware.generator import (
    DIFFICULTIES,
    SIZES,
    Layout,
    RwareGenerator,
    layout_from_params,
    layout_from_str,
)
from alem.envs.coordination.rware.observer import RwareObserver
from alem.envs.coordination.rware.types import (
    ACTION_ALIASES,
    ACTION_NAMES,
    DEFAULT_IMAGE_LAYERS,
    DIRECTION_DELTAS,
    FORWARD,
    GLOBAL,
    IMAGE_LAYERS,
    INDIVIDUAL,
    LEFT,
    NO_LIMIT,
    NOOP,
    NUM_MOVES,
    OBSERVATION_TYPES,
    REWARD_TYPES,
    RIGHT,
    TOGGLE_LOAD,
    TURN_LEFT,
    TURN_RIGHT,
    TWO_STAGE,
    RwareParams,
    RwareState,
)
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = ["Warehouse", "RwareParams", "RwareState"]

#: rware's ``max_steps`` of its registered tasks.
DEFAULT_MAX_STEPS = 500


def _enum_name(value: Any, table, what: str) -> str:
    """A reward/observation type given as a name, rware enum member or rware enum value."""
    if hasattr(value, "name"):  # an rware enum member
        value = value.name
    if isinstance(value, int | np.integer) and what == "reward_type":
        names = {v: k for k, v in REWARD_TYPES.items()}
        if int(value) in names:
            return names[int(value)]
    name = str(value).lower().replace("-", "_")
    name = {"twostage": "two_stage", "indiv": "individual", "dict": "flattened"}.get(name, name)
    if name not in table:
        raise EnvArgumentError(f"Warehouse: {what} must be one of {list(table)}, got {value!r}")
    return name


class Warehouse(RwareObserver, TextHooks, MultiAgentEnv[RwareState, RwareParams]):
    """Multi-robot warehouse (RWARE): robots fetch requested shelves, deliver them, and bring them back.

    Card
    ----
    - **Agents**: ``agent_0 .. agent_{N-1}``, robots on a warehouse grid, one role (``robot``). At
      reset they stand on distinct cells drawn uniformly from all cells (shelf cells included) and
      face uniform directions.
    - **Warehouse**: rware's layout: ``shelf_rows`` blocks of ``shelf_columns`` (odd) double columns
      of shelves, ``column_height`` deep, separated by corridors ("highways"), goals (delivery cells)
      in the middle of the bottom row under a two-wide queueing lane; the grid is
      ``(column_height + 1) * shelf_rows + 2`` rows by ``3 * shelf_columns + 1`` columns. Presets
      ``size="tiny" | "small" | "medium" | "large"`` are 1x3, 2x3, 2x5 and 3x5 blocks of columns
      8 deep; ``layout=`` takes rware's custom layout strings (``x`` shelf, ``.`` corridor, ``g``
      goal). Every shelf cell holds one shelf at the start.
    - **Requests**: ``request_queue_size`` distinct shelves are requested at any time (default: one
      per robot; ``difficulty="easy" | "normal" | "hard"`` makes it ``int(N * 2 | 1 | 0.5)`` as
      rware's ``-easy``/``-hard`` ids do). A requested shelf carried onto a goal is delivered: it
      leaves the queue, replaced in place by a shelf drawn uniformly from the shelves not in the
      queue (rware checks the goals in order, so one step can deliver on several goals). The draw
      for goal ``g`` is ``floor(u[g] * count)`` with ``u = env.request_draws(key)`` (the step key);
      the reference tests feed the same choice to rware.
    - **Actions**: ``Discrete(5)``: 0 ``noop``, 1 ``forward`` (one cell in the facing direction;
      off the grid it stays), 2 ``left`` and 3 ``right`` (turn 90 degrees in place), 4
      ``toggle_load`` (pick up the shelf under an unloaded robot; put the carried shelf down,
      allowed only off the corridors). Every action is always legal. With ``msg_bits = b > 0``
      actions are ``Discrete(5 * 2**b)``: ``move + 5 * m``, where bit ``k`` of ``m`` is message
      bit ``k`` (rware's ``MultiDiscrete([5, 2, ..., 2])``), shown to robots that see the sender.
    - **Moves**: an unloaded robot drives under shelves; a loaded robot cannot enter a cell holding a
      standing shelf (its move is cancelled), but may follow another loaded robot. Simultaneous moves
      are resolved as rware does (:mod:`~alem.envs.coordination.rware.collisions`): a chain of robots
      follows its head into a free cell, a rotation of three or more robots turns, two robots
      swapping cells both stay, a robot facing a robot that stays stays, and of several chains
      driving into the same cell the longest wins (a tie goes to the branch networkx lists first,
      reproduced exactly).
    - **Rewards** (``reward_type``, a param): ``"individual"`` (default) +1 to the robot that
      delivers; ``"global"`` +1 to every robot per delivery; ``"two_stage"`` +0.5 to the delivering
      robot and +0.5 when that robot next puts a shelf down.
    - **Observation** (``observation_type="flattened"``, default): rware's flattened vector, float32
      ``[8 + (2r+1)**2 * (7 + msg_bits)]`` with ``r = sensor_range``: own column ``x``, row ``y``
      (divided by ``cols - 1``/``rows - 1`` with ``normalised_coordinates``), carrying flag,
      direction one-hot (up, down, left, right), on-corridor flag; then for each cell of the
      ``(2r+1) x (2r+1)`` square around the robot, row-major: robot present, that robot's direction
      one-hot (``[1, 0, 0, 0]`` when empty), its message bits, shelf present, shelf requested.
      ``"image"``: float32 ``[L, 2r+1, 2r+1]`` planes of ``image_observation_layers`` (default
      shelves, requests, agents, goals, accessible; also ``agent_direction``, ``agent_load``)
      around the robot, rotated to its heading when ``image_observation_directional``; rware writes
      the direction and load planes transposed (``[x, y]``), and alem does too (rware raises
      ``IndexError`` where that falls outside a non-square grid; alem drops those values). ``"image_dict"``:
      the image flattened, then direction one-hot, on-corridor and carrying flags.
    - **Termination**: never; ``truncated`` after ``max_steps`` steps (default 500, rware's
      registered value) or after ``max_inactivity_steps`` steps without a delivery (default none).
      rware reports both as ``done``.
    - **Reference**: ``rware`` 2.0.0 (``rware.warehouse.Warehouse``): states injected into rware and
      stepped side by side, positions, directions, loads, shelves, request queues, rewards, dones
      and observations are compared on every step (tests/envs/coordination/test_rware.py).
      Registered ids follow rware's names (``rware-tiny-2ag-v2`` -> ``rware_tiny_2ag-v0``,
      ``rware-small-4ag-hard-v2`` -> ``rware_small_4ag_hard-v0``); ``rware-v0`` is
      ``rware_tiny_2ag-v0``.
    - **Text**: rules, an ASCII map (robots as letters with heading arrows), action names with
      aliases (``turn left``, ``pick up``, ``put down``, ...), parser.
    - **Version**: v0.

    Static (shape-changing) options are constructor arguments; ``params`` holds ``max_steps``,
    ``max_inactivity_steps`` and ``reward_type``.

    Args:
        size: rware's preset name (``tiny``, ``small``, ``medium``, ``large``); sets ``shelf_rows``
            and ``shelf_columns`` (``column_height`` stays 8 unless given).
        shelf_columns: number of double shelf columns per block (odd).
        column_height: depth of a shelf column.
        shelf_rows: number of blocks of shelf columns.
        num_agents: number of robots (``n_agents`` is accepted as rware's name for it).
        msg_bits: communication bits per robot.
        sensor_range: radius of the observed square.
        request_queue_size: shelves requested at once (default from ``difficulty``).
        difficulty: ``easy``, ``normal`` or ``hard`` (queue of 2, 1 or 0.5 shelves per robot).
        max_inactivity_steps: steps without a delivery that end the episode (None: never).
        max_steps: time limit (None: never; rware's registered tasks use 500).
        reward_type: ``individual``, ``global`` or ``two_stage`` (or an rware ``RewardType``).
        layout: an rware layout string; overrides the shelf options.
        observation_type: ``flattened``, ``image`` or ``image_dict`` (or an rware ``ObservationType``;
            ``DICT`` gives the flattened vector).
        image_observation_layers: names (or rware ``ImageLayer`` members) of the image planes.
        image_observation_directional: rotate image observations to the robot's heading.
        normalised_coordinates: divide the own coordinates in the flattened vector by the grid size.
        illegal_action: only ``"replace"`` (every action is legal).
    """

    cooperative = True  # the agents share one goal (alem.core.MultiAgentEnv)

    stochastic = True

    def __init__(
        self,
        size: str | None = None,
        *,
        shelf_columns: int | None = None,
        column_height: int = 8,
        shelf_rows: int | None = None,
        num_agents: int | None = None,
        n_agents: int | None = None,
        msg_bits: int = 0,
        sensor_range: int = 1,
        request_queue_size: int | None = None,
        difficulty: str = "normal",
        max_inactivity_steps: int | None = None,
        max_steps: int | None = DEFAULT_MAX_STEPS,
        reward_type: Any = "individual",
        layout: str | None = None,
        observation_type: Any = "flattened",
        image_observation_layers: Any = DEFAULT_IMAGE_LAYERS,
        image_observation_directional: bool = True,
        normalised_coordinates: bool = False,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        name = "Warehouse"
        if num_agents is not None and n_agents is not None:
            raise EnvArgumentError(f"{name}: pass num_agents or its alias n_agents (rware's name), not both")
        n = int(num_agents if num_agents is not None else n_agents if n_agents is not None else 2)
        if n < 1:
            raise EnvArgumentError(f"{name}: num_agents must be >= 1, got {n}")
        if layout:
            lay: Layout = layout_from_str(layout)
        else:
            rows_cols = SIZES.get(size or "tiny")
            if rows_cols is None:
                raise EnvArgumentError(f"{name}: size must be one of {list(SIZES)}, got {size!r}")
            shelf_rows = rows_cols[0] if shelf_rows is None else int(shelf_rows)
            shelf_columns = rows_cols[1] if shelf_columns is None else int(shelf_columns)
            lay = layout_from_params(int(shelf_columns), int(column_height), shelf_rows)
        if n > lay.rows * lay.cols:
            raise EnvArgumentError(f"{name}: {n} robots do not fit on {lay.rows * lay.cols} cells")
        if difficulty not in DIFFICULTIES:
            raise EnvArgumentError(
                f"{name}: difficulty must be one of {list(DIFFICULTIES)}, got {difficulty!r}"
            )
        queue = int(n * DIFFICULTIES[difficulty]) if request_queue_size is None else int(request_queue_size)
        if not 1 <= queue < lay.num_shelves:
            raise EnvArgumentError(
                f"{name}: request_queue_size must be in [1, {lay.num_shelves - 1}] (fewer than the "
                f"{lay.num_shelves} shelves, so a delivered shelf can be replaced), got {queue}"
            )
        if int(msg_bits) < 0 or int(sensor_range) < 0:
            raise EnvArgumentError(f"{name}: msg_bits and sensor_range must be >= 0")
        for kw, value in (("max_steps", max_steps), ("max_inactivity_steps", max_inactivity_steps)):
            if value is not None and int(value) < 1:
                raise EnvArgumentError(f"{name}: {kw} must be >= 1 (or None for no limit), got {value}")
        obs_type = _enum_name(observation_type, OBSERVATION_TYPES, "observation_type")
        layers = tuple(
            _enum_name(layer, IMAGE_LAYERS, "image_observation_layers") for layer in image_observation_layers
        )
        if obs_type != "flattened" and not layers:
            raise EnvArgumentError(f"{name}: image observations need at least one layer")

        self.layout = lay
        self.rows, self.cols = lay.rows, lay.cols
        self.num_shelves = lay.num_shelves
        self.num_goals = len(lay.goals)
        self.msg_bits = int(msg_bits)
        self.sensor_range = int(sensor_range)
        self.request_queue_size = queue
        self.observation_type = obs_type
        self.image_layers = layers
        self.image_directional = bool(image_observation_directional)
        self.normalised_coordinates = bool(normalised_coordinates)
        self.agents = tuple(f"agent_{i}" for i in range(n))
        self.agent_roles = np.zeros(n, dtype=np.int32)
        self.role_names = ("robot",)
        self.generator = RwareGenerator(
            layout=lay, num_agents=n, request_queue_size=queue, msg_bits=self.msg_bits
        )
        # CPython set tables for networkx's tie-break (only components of >= 3 nodes that hold
        # less than half of the graph's nodes use them, which needs >= 4 robots).
        self._tables = ProbeTables.build(lay.rows, lay.cols, n - 1) if n >= 4 else None
        # rware writes coordinates as float64 then float32; a table keeps the exact values.
        self._x_table = np.arange(lay.cols, dtype=np.float32)
        self._y_table = np.arange(lay.rows, dtype=np.float32)
        if self.normalised_coordinates:
            self._x_table = (np.arange(lay.cols) / max(lay.cols - 1, 1)).astype(np.float32)
            self._y_table = (np.arange(lay.rows) / max(lay.rows - 1, 1)).astype(np.float32)
        self._default_params = RwareParams(
            max_steps=jnp.int32(NO_LIMIT if max_steps is None else int(max_steps)),
            max_inactivity_steps=jnp.int32(
                NO_LIMIT if max_inactivity_steps is None else int(max_inactivity_steps)
            ),
            reward_type=jnp.int32(REWARD_TYPES[_enum_name(reward_type, REWARD_TYPES, "reward_type")]),
        )

    # ------------------------------------------------------------------ description
    def check_params(self, params: RwareParams) -> None:
        """The type, and where concrete: ``max_steps >= 1``, ``max_inactivity_steps >= 1`` and a known
        ``reward_type``."""
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)
        self._check_param_range(params, "max_inactivity_steps", 1)
        self._check_param_range(params, "reward_type", 0, 2)

    @property
    def episode_steps_hint(self) -> float:
        return float(min(int(self._default_params.max_steps), int(self._default_params.max_inactivity_steps)))

    @property
    def sensor_cells(self) -> int:
        return (2 * self.sensor_range + 1) ** 2

    def _image_space(self) -> spaces.Box:
        w = 2 * self.sensor_range + 1
        high = np.stack(
            [np.full((w, w), 4.0 if name == "agent_direction" else 1.0) for name in self.image_layers]
        )
        return spaces.Box(np.zeros_like(high, np.float32), high.astype(np.float32))

    def _one_obs_space(self) -> spaces.Box:
        if self.observation_type == "image":
            return self._image_space()
        if self.observation_type == "image_dict":
            high = np.concatenate([self._image_space().high.reshape(-1), np.ones(6, np.float32)])
            return spaces.Box(np.zeros_like(high), high)
        coord = 1.0 if self.normalised_coordinates else float(max(self.rows, self.cols))
        per_cell = 7 + self.msg_bits
        high = np.concatenate([[coord, coord], np.ones(6), np.ones(self.sensor_cells * per_cell)])
        return spaces.Box(np.zeros_like(high, np.float32), high.astype(np.float32))

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = self._one_obs_space()
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(NUM_MOVES * 2**self.msg_bits)
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    # ------------------------------------------------------------------ dynamics
    def reset_env(self, key: jax.Array, params: RwareParams) -> tuple[RwareState, TimeStep]:
        state = self.generator(key, params)
        zero = jnp.zeros((self.num_agents,), jnp.float32)
        return state, self.timestep(state, params, zero)

    def request_draws(self, key: jax.Array) -> jax.Array:
        """float32 ``[G]`` uniforms of one step (its key): a delivery on goal ``g`` requests the
        ``floor(u[g] * count)``-th shelf (index order) among the ``count`` shelves not in the queue."""
        return jax.random.uniform(key, (self.num_goals,))

    def _grids(self, agent_pos: jax.Array, shelf_pos: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Flat int32 ``[H*W]`` cell maps: robot index + 1, shelf index + 1 (0: none)."""
        cells = self.rows * self.cols
        a = agent_pos[:, 0] * self.cols + agent_pos[:, 1]
        s = shelf_pos[:, 0] * self.cols + shelf_pos[:, 1]
        agents = jnp.zeros((cells,), jnp.int32).at[a].set(jnp.arange(1, self.num_agents + 1, dtype=jnp.int32))
        shelves = (
            jnp.zeros((cells,), jnp.int32).at[s].set(jnp.arange(1, self.num_shelves + 1, dtype=jnp.int32))
        )
        return agents, shelves

    def step_env(self, key, state: RwareState, actions: jax.Array, params: RwareParams):
        n, cols = self.num_agents, self.cols
        move = actions % NUM_MOVES
        message = state.message
        if self.msg_bits:
            bits = ((actions // NUM_MOVES)[:, None] >> jnp.arange(self.msg_bits)) & 1
            message = bits.astype(jnp.float32)
        highway = jnp.asarray(self.layout.highway.reshape(-1))
        pos, carrying = state.agent_pos, state.carrying
        src = pos[:, 0] * cols + pos[:, 1]
        agent_grid, shelf_grid = self._grids(pos, state.shelf_pos)

        # Requested cells: one step ahead when moving forward, clipped to the grid.
        ahead = pos + jnp.asarray(DIRECTION_DELTAS)[state.agent_dir]
        ahead = jnp.clip(ahead, 0, jnp.array([self.rows - 1, cols - 1]))
        target = jnp.where((move == FORWARD)[:, None], ahead, pos)
        tgt = target[:, 0] * cols + target[:, 1]
        # A loaded robot cannot drive into a standing shelf (one carried by a robot there is fine).
        there = agent_grid[tgt] - 1
        there_loaded = (there >= 0) & (carrying[jnp.maximum(there, 0)] >= 0)
        cancel = (carrying >= 0) & (tgt != src) & (shelf_grid[tgt] > 0) & ~there_loaded
        move = jnp.where(cancel, NOOP, move)
        tgt = jnp.where(cancel, src, tgt)
        moved = resolve_moves(src, tgt, self._tables)
        new_pos = jnp.where(moved[:, None], target, pos)

        direction = jnp.where(
            move == LEFT,
            jnp.asarray(TURN_LEFT)[state.agent_dir],
            jnp.where(move == RIGHT, jnp.asarray(TURN_RIGHT)[state.agent_dir], state.agent_dir),
        )
        toggle = move == TOGGLE_LOAD
        under = shelf_grid[src] - 1
        pick = toggle & (carrying < 0) & (under >= 0)
        drop = toggle & (carrying >= 0) & ~highway[src]
        reward = jnp.where(drop & state.has_delivered & (params.reward_type == TWO_STAGE), 0.5, 0.0)
        has_delivered = state.has_delivered & ~drop
        shelf_pos = state.shelf_pos.at[jnp.where(carrying >= 0, carrying, self.num_shelves)].set(
            new_pos, mode="drop"
        )
        carrying = jnp.where(pick, under, jnp.where(drop, -1, carrying))

        # Deliveries, goal by goal (a replacement may already stand on a later goal).
        agent_grid, shelf_grid = self._grids(new_pos, shelf_pos)
        goals = jnp.asarray(self.layout.goals[:, 0] * cols + self.layout.goals[:, 1])
        shelf_ids = jnp.arange(self.num_shelves)

        def deliver(carry, inputs):
            queue, reward, has_delivered, any_delivered = carry
            cell, u = inputs
            shelf = shelf_grid[cell] - 1
            hit_slot = (queue == shelf) & (shelf >= 0)
            hit = hit_slot.any()
            free = ~(shelf_ids[:, None] == queue[None, :]).any(1)
            count = free.sum()
            k = jnp.minimum(jnp.floor(u * count).astype(jnp.int32), count - 1)
            new = jnp.argmax(jnp.cumsum(free) > k).astype(jnp.int32)
            queue = jnp.where(hit_slot, new, queue)
            who = jnp.arange(n) == agent_grid[cell] - 1
            gain = jnp.where(
                params.reward_type == GLOBAL,
                1.0,
                jnp.where(params.reward_type == INDIVIDUAL, who * 1.0, who * 0.5),
            )
            reward = reward + jnp.where(hit, gain, 0.0)
            has_delivered = has_delivered | (hit & who & (params.reward_type == TWO_STAGE))
            return (queue, reward, has_delivered, any_delivered | hit), None

        (queue, reward, has_delivered, delivered), _ = jax.lax.scan(
            deliver,
            (state.request_queue, reward, has_delivered, jnp.bool_(False)),
            (goals, self.request_draws(key)),
        )
        state = RwareState(
            agent_pos=new_pos,
            agent_dir=direction,
            carrying=carrying,
            has_delivered=has_delivered,
            message=message,
            shelf_pos=shelf_pos,
            request_queue=queue,
            step=state.step + 1,
            inactive_steps=jnp.where(delivered, 0, state.inactive_steps + 1),
        )
        truncated = (state.step >= params.max_steps) | (state.inactive_steps >= params.max_inactivity_steps)
        return state, self.timestep(state, params, reward, truncated=truncated)

    # ------------------------------------------------------------------ text
    def action_names(self, agent: int = 0) -> list[str]:
        if not self.msg_bits:
            return list(ACTION_NAMES)
        return [
            f"{ACTION_NAMES[a % NUM_MOVES]} msg {format(a // NUM_MOVES, f'0{self.msg_bits}b')[::-1]}"
            for a in range(NUM_MOVES * 2**self.msg_bits)
        ]

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        aliases = dict(ACTION_ALIASES)
        aliases.update({name.replace("_", " "): i for i, name in enumerate(ACTION_NAMES)})
        return aliases  # with messages: the bare move names send message 0

    def rules_text(self, params: RwareParams | None = None, agent: int = 0) -> str:
        return viewer.rules_text(self, self.default_params if params is None else params, agent)

    def json_view(self, state: RwareState, agent: int, params: RwareParams | None = None) -> dict[str, Any]:
        """See :func:`~alem.envs.coordination.rware.viewer.json_view` (the schema)."""
        return viewer.json_view(self, state, agent, self.default_params if params is None else params)

    def render_text(
        self,
        state: RwareState,
        agent: int | None = None,
        params: RwareParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        # the view names no available moves ("facing left" is a heading): ``moves`` changes nothing
        return viewer.render_text(self, state, agent, self.default_params if params is None else params)

    # ------------------------------------------------------------------ pixels
    def render_rgb(self, state: RwareState, params: RwareParams | None = None, cell: int = 24) -> np.ndarray:
        """uint8 ``[rows * cell, cols * cell, 3]``: corridors light, shelves blue (requested teal), goals
        dark, robots orange discs (red when loaded) with a heading mark."""
        return viewer.render_rgb(self, state, cell)
