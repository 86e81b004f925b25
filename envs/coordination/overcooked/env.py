"""Overcooked: the env (spaces, dynamics, the lossless observation); its card is on the class.

Layouts come from :mod:`~alem.envs.coordination.overcooked.layouts`, text and RGB output from
:mod:`~alem.envs.coordination.overcooked.viewer`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv, TimeStep
from alem.envs.coordination.overcooked import viewer
from alem.envs.coordination.overcooked.fusion import fusion_boundary
from alem.envs.coordination.overcooked.layouts import LAYOUTS, Layout, compile_layout
from alem.envs.coordination.overcooked.types import (
    ACTION_ALIASES,
    ACTION_NAMES,
    CHANNEL_NAMES,
    COUNTER,
    DIRECTIONS,
    DISH,
    DISH_DISPENSER,
    FLOOR,
    INTERACT,
    MAX_INGREDIENTS,
    NOTHING,
    NUM_CHANNELS,
    ONION,
    ONION_DISPENSER,
    POT,
    SERVING,
    SOUP,
    STAY,
    TOMATO,
    TOMATO_DISPENSER,
    OvercookedParams,
    OvercookedState,
)
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = ["Overcooked", "OvercookedParams", "OvercookedState", "DEFAULT_MAX_STEPS"]

#: overcooked-ai's standard horizon.
DEFAULT_MAX_STEPS = 400
#: The lossless encoding's ``urgency`` plane is on for the last this many steps.
URGENCY_STEPS = 40
#: overcooked-ai's ``BASE_REW_SHAPING_PARAMS`` (its distance-based terms are 0 and unused).
SHAPING_DEFAULTS = {"placement_in_pot_rew": 3.0, "dish_pickup_rew": 3.0, "soup_pickup_rew": 5.0}


class Overcooked(TextHooks, MultiAgentEnv[OvercookedState, OvercookedParams]):
    """Overcooked (Carroll et al. 2019): two cooks make onion soup in a shared kitchen.

    Card
    ----
    - **Agents**: ``agent_0``, ``agent_1`` (overcooked-ai's players 1 and 2), one role
      (``cook``). They start on the layout's start cells, facing north, empty-handed.
    - **Layouts** (``layout``): ``cramped_room``, ``asymmetric_advantages``,
      ``coordination_ring``, ``forced_coordination``, ``counter_circuit`` as overcooked-ai
      1.1.0 ships them (grids in :mod:`~alem.envs.coordination.overcooked.layouts`), or a
      :class:`~alem.envs.coordination.overcooked.layouts.Layout`. Tiles: floor, counters,
      pots, onion/tomato/dish dispensers, serving windows. Cells are ``(x, y)`` as in
      overcooked-ai (``x`` the column, ``y`` the row, row 0 at the top).
    - **Actions**: ``Discrete(6)`` in overcooked-ai's order: 0 ``up`` (north), 1 ``down``,
      2 ``right`` (east), 3 ``left`` (west), 4 ``stay``, 5 ``interact``; always all legal.
      A move turns the cook to face its direction and moves it one cell if that cell is
      floor (else it only turns); ``stay`` and ``interact`` keep cell and orientation.
    - **Collisions**: if two cooks would end on one cell, or would swap cells, nobody moves
      that step (their orientations still change); a cook may step into the cell the other
      leaves.
    - **Interact** (before the moves, player 0 first, then player 1 on the updated kitchen)
      acts on the tile the cook faces: on a counter, put the held object down on an empty
      counter or pick up what lies there with empty hands; on a dispenser, take an onion,
      tomato or dish with empty hands; on a pot, add a held onion/tomato while the soup has
      not started and holds fewer than 3 ingredients, start cooking a soup of 1-3 ingredients
      with empty hands (cooking needs this interact; a full pot does not start by itself),
      or scoop a cooked soup into a held dish; on a serving window, serve a held soup.
    - **Cooking**: after the moves every cooking soup advances one tick; it is ready when
      its tick reaches the recipe's cooking time (20 on the first four layouts; on
      ``counter_circuit`` 15 per onion plus 7 per tomato).
    - **Rewards**: serving a soup pays its recipe value (``params.recipe_value``: 20 for
      three onions and 0 for any other soup on the first four layouts; on
      ``counter_circuit`` 21 per onion plus 13 per tomato for the orders (1, 2) and (2, 1)
      onions/tomatoes, twice that for the bonus order onion + tomato, 0 for the rest).
      The sparse reward is shared: ``reward[i] = sum of served values + shaping_factor *
      shaped[i]``. Shaped terms (overcooked-ai's ``BASE_REW_SHAPING_PARAMS``, to the player
      who acts): 3 for an ingredient put in a pot, 3 for a dish taken while fewer dishes
      are held than pots are cooking, cooked or partly filled (1-2 ingredients) and no dish
      lies on a counter, 5 for scooping a soup. ``reward_shaping=False`` (default) sets
      ``shaping_factor = 0``; ``info["sparse_reward"]`` and ``info["shaped_reward"]`` always
      hold the per-player terms, ``info["delivered"]`` the soups served so far. Learners can
      anneal the weight during training (``algo.anneal_param=shaping_factor``).
    - **Observation**: overcooked-ai's ``lossless_state_encoding`` (its horizon is
      ``max_steps``), ``uint8 [W, H, 26]`` per agent (x first, as overcooked-ai): the
      observer's cell, the other's cell, 4 + 4 orientation planes (observer first),
      pot/counter/onion/tomato/dish dispenser/serving tiles, onions and tomatoes in
      unstarted pots, onions and tomatoes in started or finished soups (pots, counters,
      hands), cooking time remaining, soup done, dishes, onions, tomatoes, urgency (all ones
      in the last 40 steps). ``env.channel_names`` names them.
    - **Termination**: never; ``truncated`` after ``max_steps`` steps (default 400, the
      reference's horizon).
    - **Reference**: ``overcooked-ai`` 1.1.0 (``overcooked_ai_py``,
      ``OvercookedGridworld.from_layout_name`` in ``OvercookedEnv``, horizon 400): cells,
      orientations, held objects, pots and cooking ticks, counters, deliveries, sparse and
      shaped rewards and the lossless observation are checked step by step against golden
      fixtures (scripts/overcooked_fixtures.py, tests/envs/coordination/test_overcooked.py).
    - **Text**: rules, an ASCII kitchen with each cook's cell, orientation and held item,
      pot states; action names with aliases (``north``, ``wait``, ``pick up``, ...).
    - **Version**: v0.

    Args:
        layout: a layout name (above) or a :class:`Layout`.
        reward_shaping: add the shaped terms to ``reward`` (True: weight 1; a float: that
            weight; ``params.shaping_factor``).
        max_steps: the horizon (overcooked-ai's ``horizon``); a params field.
        placement_in_pot_rew, dish_pickup_rew, soup_pickup_rew: the shaped terms
            (overcooked-ai's defaults 3, 3, 5); params fields.
    """

    cooperative: ClassVar[bool] = True  # the agents share one goal (alem.core.MultiAgentEnv)

    stochastic: ClassVar[bool] = False
    fixed_start: ClassVar[bool] = True

    def __init__(
        self,
        layout: str | Layout = "cramped_room",
        *,
        reward_shaping: bool | float = False,
        max_steps: int = DEFAULT_MAX_STEPS,
        placement_in_pot_rew: float = SHAPING_DEFAULTS["placement_in_pot_rew"],
        dish_pickup_rew: float = SHAPING_DEFAULTS["dish_pickup_rew"],
        soup_pickup_rew: float = SHAPING_DEFAULTS["soup_pickup_rew"],
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        if isinstance(layout, str):
            if layout not in LAYOUTS:
                raise EnvArgumentError(
                    f"Overcooked: unknown layout {layout!r}; choose one of {sorted(LAYOUTS)}"
                )
            layout = LAYOUTS[layout]
        if not isinstance(layout, Layout):
            raise EnvArgumentError(
                f"Overcooked: layout must be a name or a Layout, got {type(layout).__name__}"
            )
        if int(max_steps) < 1:
            raise EnvArgumentError(f"Overcooked: max_steps must be >= 1, got {max_steps}")
        self.layout = layout
        self.compiled = compile_layout(layout)
        self.height, self.width = self.compiled.height, self.compiled.width
        self.agents = ("agent_0", "agent_1")
        self.agent_roles = np.zeros(2, dtype=np.int32)
        self.role_names = ("cook",)
        self.channel_names = CHANNEL_NAMES
        terrain = self.compiled.terrain
        self._terrain = terrain
        # Terrain planes of the observation, [6, H, W]: pot, counter, onion/tomato/dish dispenser, serving.
        tiles = (POT, COUNTER, ONION_DISPENSER, TOMATO_DISPENSER, DISH_DISPENSER, SERVING)
        self._terrain_planes_chw = np.stack([terrain == t for t in tiles]).astype(np.uint8)
        self._pot_cells = tuple(np.nonzero(terrain == POT))  # (ys, xs)
        self._default_params = OvercookedParams(
            max_steps=jnp.int32(max_steps),
            shaping_factor=jnp.float32(float(reward_shaping)),
            placement_in_pot_rew=jnp.float32(placement_in_pot_rew),
            dish_pickup_rew=jnp.float32(dish_pickup_rew),
            soup_pickup_rew=jnp.float32(soup_pickup_rew),
            recipe_value=jnp.asarray(self.compiled.recipe_value),
            cook_time=jnp.asarray(self.compiled.cook_time),
        )

    # ------------------------------------------------------------------ description
    def check_params(self, params: OvercookedParams) -> None:
        """The type, and where concrete: ``max_steps >= 1``, cooking times in ``[1, 255]``."""
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)
        self._check_param_range(params, "cook_time", 1, 255)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._default_params.max_steps)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        high = np.ones((self.width, self.height, NUM_CHANNELS))
        high[..., 16:20] = MAX_INGREDIENTS  # ingredient counts
        high[..., 20] = 255  # cooking time remaining (cook_time <= 255)
        one = spaces.Box(np.zeros_like(high), high, dtype=np.uint8)
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        one = spaces.Discrete(len(ACTION_NAMES))
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    # ------------------------------------------------------------------ dynamics
    def initial_state(self) -> OvercookedState:
        h, w, n = self.height, self.width, self.num_agents
        return OvercookedState(
            pos=jnp.asarray(self.compiled.start),
            dir=jnp.zeros((n,), jnp.int32),  # north
            held=jnp.zeros((n,), jnp.int32),
            held_soup=jnp.zeros((n, 2), jnp.int32),
            obj=jnp.zeros((h, w), jnp.int32),
            soup=jnp.zeros((h, w, 2), jnp.int32),
            tick=jnp.full((h, w), -1, jnp.int32),
            delivered=jnp.int32(0),
            time=jnp.int32(0),
        )

    def reset_env(self, key: jax.Array, params: OvercookedParams) -> tuple[OvercookedState, TimeStep]:
        state = self.initial_state()
        zero = jnp.zeros((self.num_agents,), jnp.float32)
        return state, self.timestep(state, params, zero, info=_info(state, zero, zero))

    def _cook_time_at(self, soup: jax.Array, params: OvercookedParams) -> jax.Array:
        return params.cook_time[soup[..., 0], soup[..., 1]]

    def _pot_cook_times(self, soup: jax.Array, params: OvercookedParams) -> jax.Array:
        """int32 [H, W]: the cooking time of the soup in each pot, 0 off the pots.

        Only pots cook, so the table is read at the pot cells alone (a handful of gathers per
        kitchen instead of one per cell)."""
        ys, xs = self._pot_cells
        times = self._cook_time_at(soup[ys, xs], params)
        return jnp.zeros(soup.shape[:2], jnp.int32).at[ys, xs].set(times, unique_indices=True)

    def step_env(self, key, state: OvercookedState, actions: jax.Array, params: OvercookedParams):
        h, w, n = self.height, self.width, self.num_agents
        terrain = jnp.asarray(self._terrain, jnp.int32)
        counter = terrain == COUNTER
        dirs = jnp.asarray(DIRECTIONS)

        # Pots counted once, before anyone interacts (overcooked-ai's pot_states): cooking,
        # ready, or idle with 1-2 ingredients.
        n_ing = state.soup.sum(-1)
        in_pot = (terrain == POT) & (state.obj == SOUP)
        non_empty_pots = (in_pot & ((state.tick >= 0) | (n_ing < MAX_INGREDIENTS))).sum()

        ys, xs = jnp.arange(h)[:, None], jnp.arange(w)[None, :]
        agent_ids = jnp.arange(n)

        # One-hot masks instead of gathers and scatters: the grids are tiny, and selects
        # vectorise better than scatters under vmap.
        def interact(carry, i):
            held, held_soup, obj, soup, tick, sparse, shaped, delivered = carry
            me = agent_ids == i
            target = state.pos[i] + dirs[state.dir[i]]
            m = (ys == target[1]) & (xs == target[0])  # the faced tile (empty mask off the grid)
            tile = jnp.where(m, terrain, 0).sum()
            hk, hs = held[i], held_soup[i]
            ck, ct = jnp.where(m, obj, 0).sum(), jnp.where(m, tick, 0).sum()
            cs = jnp.where(m[..., None], soup, 0).sum((0, 1))
            act = actions[i] == INTERACT
            empty = hk == NOTHING
            on_counter = act & (tile == COUNTER)
            place = on_counter & ~empty & (ck == NOTHING)
            take = on_counter & empty & (ck != NOTHING)
            kind = jnp.select(
                [tile == ONION_DISPENSER, tile == TOMATO_DISPENSER, tile == DISH_DISPENSER],
                [ONION, TOMATO, DISH],
                0,
            )
            dispense = act & empty & (kind != NOTHING)
            on_pot = act & (tile == POT)
            soup_here = ck == SOUP
            idle = ct < 0
            size = cs.sum()
            start = on_pot & empty & soup_here & idle & (size > 0)
            scoop = on_pot & (hk == DISH) & soup_here & ~idle & (ct >= self._cook_time_at(cs, params))
            add = on_pot & ((hk == ONION) | (hk == TOMATO)) & (~soup_here | (idle & (size < MAX_INGREDIENTS)))
            serve = act & (tile == SERVING) & (hk == SOUP)

            useful = (((obj == DISH) & counter).sum() == 0) & ((held == DISH).sum() < non_empty_pots)
            zero2 = jnp.zeros((2,), jnp.int32)
            added = cs + jnp.stack([hk == ONION, hk == TOMATO]).astype(jnp.int32)
            placed_tick = jnp.where(hk == SOUP, self._cook_time_at(hs, params), -1)
            new_hk = jnp.select([place, take, dispense, scoop, add, serve], [0, ck, kind, SOUP, 0, 0], hk)
            new_hs = jnp.select([place | add | serve, take | scoop], [zero2, cs], hs)
            new_ck = jnp.select([place, take | scoop, add], [hk, 0, SOUP], ck)
            new_cs = jnp.select([place, take | scoop, add], [hs, zero2, added], cs)
            new_ct = jnp.select([place, take | scoop | add, start], [placed_tick, -1, 0], ct)

            sparse = sparse + jnp.where(me & serve, params.recipe_value[hs[0], hs[1]], 0.0)
            bonus = (
                jnp.where(add, params.placement_in_pot_rew, 0.0)
                + jnp.where(dispense & (kind == DISH) & useful, params.dish_pickup_rew, 0.0)
                + jnp.where(scoop, params.soup_pickup_rew, 0.0)
            )
            carry = (
                jnp.where(me, new_hk, held),
                jnp.where(me[:, None], new_hs, held_soup),
                jnp.where(m, new_ck, obj),
                jnp.where(m[..., None], new_cs, soup),
                jnp.where(m, new_ct, tick),
                sparse,
                shaped + jnp.where(me, bonus, 0.0),
                delivered + serve.astype(jnp.int32),
            )
            # Materialise the kitchen after each cook's interact: without the boundary XLA:CPU
            # recomputes this whole chain for every cell of every grid that reads it (~1.2-1.3x
            # slower steps). max_steps >= 1 is checked with the params.
            return fusion_boundary(carry, params.max_steps > 0), None

        zero = jnp.zeros((n,), jnp.float32)
        init = (state.held, state.held_soup, state.obj, state.soup, state.tick, zero, zero, state.delivered)
        carry, _ = jax.lax.scan(interact, init, jnp.arange(n), unroll=True)
        held, held_soup, obj, soup, tick, sparse, shaped, delivered = carry

        # Moves: all or nothing when two cooks would share a cell or swap.
        moving = actions < STAY
        cand = state.pos + dirs[jnp.minimum(actions, 3)]
        cx = jnp.clip(cand[:, 0], 0, w - 1)
        cy = jnp.clip(cand[:, 1], 0, h - 1)
        inside = (cand[:, 0] == cx) & (cand[:, 1] == cy)
        free = inside & (terrain[cy, cx] == FLOOR)
        new_pos = jnp.where((moving & free)[:, None], cand, state.pos)
        new_dir = jnp.where(moving, actions, state.dir)
        other = ~jnp.eye(n, dtype=bool)
        same = (new_pos[:, None] == new_pos[None]).all(-1) & other
        onto = (new_pos[:, None] == state.pos[None]).all(-1)  # onto[i, j]: i ends where j was
        collision = (same | (onto & onto.T & other)).any()
        pos = jnp.where(collision, state.pos, new_pos)

        # Environment effects: cooking soups advance one tick.
        cooking = (obj == SOUP) & (tick >= 0) & (tick < self._pot_cook_times(soup, params))
        tick = jnp.where(cooking, tick + 1, tick)

        state = OvercookedState(
            pos=pos,
            dir=new_dir,
            held=held,
            held_soup=held_soup,
            obj=obj,
            soup=soup,
            tick=tick,
            delivered=delivered,
            time=state.time + 1,
        )
        reward = sparse.sum() + params.shaping_factor * shaped
        truncated = state.time >= params.max_steps
        return state, self.timestep(
            state, params, reward, truncated=truncated, info=_info(state, sparse, shaped)
        )

    # ------------------------------------------------------------------ observations
    def observe(self, state: OvercookedState, params: OvercookedParams) -> jax.Array:
        """overcooked-ai's ``lossless_state_encoding``: ``uint8 [2, W, H, 26]``."""
        h, w, n = self.height, self.width, self.num_agents
        px, py = state.pos[:, 0], state.pos[:, 1]
        # Every object on the grid, held ones at their cook's cell (cooks stand on floor, which
        # holds nothing else).
        at = (jnp.arange(h)[:, None] == py[:, None, None]) & (jnp.arange(w)[None, :] == px[:, None, None])
        kind = state.obj + jnp.where(at, state.held[:, None, None], 0).sum(0)  # [N, H, W] -> [H, W]
        soup = state.soup + jnp.where(at[..., None], state.held_soup[:, None, None], 0).sum(0)
        tick = state.tick
        is_pot = jnp.asarray(self._terrain == POT)
        is_soup = kind == SOUP
        pot_soup = is_soup & is_pot
        idle = pot_soup & (tick < 0)
        started = pot_soup & (tick >= 0)
        loose = is_soup & ~is_pot  # held or on a counter: a finished soup
        cook_time = self._pot_cook_times(soup, params)
        in_soup = started | loose
        # Built channel-first ([C, H, W]) and transposed once at the end.
        planes = [
            jnp.where(idle, soup[..., 0], 0),
            jnp.where(idle, soup[..., 1], 0),
            jnp.where(in_soup, soup[..., 0], 0),
            jnp.where(in_soup, soup[..., 1], 0),
            jnp.where(started, cook_time - tick, 0),
            (started & (tick >= cook_time)) | loose,
            kind == DISH,
            kind == ONION,
            kind == TOMATO,
            jnp.broadcast_to(params.max_steps - state.time < URGENCY_STEPS, (h, w)),
        ]
        # Cast before stacking: XLA materialises the stack, a quarter of the bytes as uint8.
        variable = jnp.stack([p.astype(jnp.uint8) for p in planes])
        shared = jnp.concatenate([jnp.asarray(self._terrain_planes_chw), variable])  # [16, H, W]
        facing = at[:, None] & (state.dir[:, None] == jnp.arange(4))[:, :, None, None]  # [N, 4, H, W]
        # Observer first: static orders (0, 1) and (1, 0) of the two cooks.
        orders = np.array([[0, 1], [1, 0]])
        own = jnp.concatenate([at[orders], facing[orders].reshape(n, 2 * 4, h, w)], 1)  # [N, 10, H, W]
        full = jnp.concatenate([own.astype(jnp.uint8), jnp.broadcast_to(shared, (n, *shared.shape))], 1)
        return jnp.transpose(full, (0, 3, 2, 1))  # [N, W, H, 26]

    # ------------------------------------------------------------------ text
    def action_names(self, agent: int = 0) -> list[str]:
        return list(ACTION_NAMES)

    def action_aliases(self, agent: int = 0) -> dict[str, int]:
        return dict(ACTION_ALIASES)

    def rules_text(self, params: OvercookedParams | None = None, agent: int = 0) -> str:
        return viewer.rules_text(self, self.default_params if params is None else params, agent)

    def json_view(
        self, state: OvercookedState, agent: int, params: OvercookedParams | None = None
    ) -> dict[str, Any]:
        """See :func:`~alem.envs.coordination.overcooked.viewer.json_view` (the schema)."""
        return viewer.json_view(self, state, agent, self.default_params if params is None else params)

    def render_text(
        self,
        state: OvercookedState,
        agent: int | None = None,
        params: OvercookedParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        # the view names no available moves: ``moves`` changes nothing
        return viewer.render_text(self, state, agent, self.default_params if params is None else params)

    # ------------------------------------------------------------------ pixels
    def render_rgb(
        self, state: OvercookedState, params: OvercookedParams | None = None, cell: int = 32
    ) -> np.ndarray:
        """uint8 ``[H * cell, W * cell, 3]``: tiles, objects, cooks as discs with a facing mark."""
        return viewer.render_rgb(self, state, self.default_params if params is None else params, cell)


def _info(state: OvercookedState, sparse: jax.Array, shaped: jax.Array) -> dict[str, jax.Array]:
    """A step's info: the sparse (soup) and shaped rewards apart, and the soups delivered so far."""
    return {"sparse_reward": sparse, "shaped_reward": shaped, "delivered": state.delivered}
