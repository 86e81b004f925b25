"""SMAX: the env (spaces, the battle simulation, observations); its card is on the class.

Maps and start draws come from :mod:`~alem.envs.coordination.smax.scenarios`, the scripted enemy
from :mod:`~alem.envs.coordination.smax.heuristic`, the units' motion arithmetic (move vectors,
push-apart, cooldown jitter) from :mod:`~alem.envs.coordination.smax.motion`, RGB frames from
:mod:`~alem.envs.coordination.smax.viewer`.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from alem import spaces
from alem.core import MultiAgentEnv, TimeStep
from alem.envs.coordination.smax import text, viewer
from alem.envs.coordination.smax.heuristic import heuristic_actions
from alem.envs.coordination.smax.motion import MOVE_VECTORS, cooldown_jitter, push_apart, sum_in_order
from alem.envs.coordination.smax.scenarios import SCENARIOS, Scenario, draw_start
from alem.envs.coordination.smax.types import (
    FIRST_ATTACK,
    MOVE_NAMES,
    NUM_MOVES,
    NUM_UNIT_TYPES,
    OTHER_FEATURES,
    OWN_FEATURES,
    STOP,
    UNIT_STATS,
    SmaxParams,
    SmaxState,
)
from alem.errors import EnvArgumentError
from alem.text_hooks import TextHooks

__all__ = ["SMAX", "SmaxParams", "SmaxState", "DEFAULT_MAX_STEPS", "MOVE_VECTORS"]

#: Units beyond the map edge the observation box allows (SMACv2 starts: at most 2, plus a push).
_POS_MARGIN = 8.0

#: JaxMARL's default ``max_steps``.
DEFAULT_MAX_STEPS = 100


class SMAX(TextHooks, MultiAgentEnv[SmaxState, SmaxParams]):
    """SMAX (JaxMARL's StarCraft multi-agent challenge in JAX): two armies fight on an open map.

    Card
    ----
    - **Agents**: ``ally_0 .. ally_{A-1}``, one unit each, role ``ally``; the ``E`` enemies are
      played by the scripted heuristic inside the env (JaxMARL's ``HeuristicEnemySMAX``). With
      ``self_play=True`` both armies learn: agents ``ally_*`` then ``enemy_*`` (roles ``ally`` and
      ``enemy``), as JaxMARL's ``SMAX`` itself, and ``cooperative`` is False.
    - **Maps** (``map_name``): ``3m``, ``8m``, ``25m``, ``5m_vs_6m``, ``10m_vs_11m``,
      ``27m_vs_30m``, ``2s3z``, ``3s5z``, ``3s5z_vs_3s6z``, ``3s_vs_5z``, ``6h_vs_8z`` (fixed unit
      types: m marine, s stalker, z zealot, h hydralisk) and ``smacv2_5_units``,
      ``smacv2_10_units``, ``smacv2_20_units`` (types drawn uniformly from marine, marauder,
      stalker, zealot, zergling, hydralisk, mirrored by the enemies; surround-or-reflect starts);
      see :mod:`~alem.envs.coordination.smax.scenarios`. The map is 32 x 32; fixed maps start
      each army around ``(8, 16)`` / ``(24, 16)`` with uniform ``[-2, 2)`` noise, then push
      overlapping bodies apart.
    - **Units** (:data:`~alem.envs.coordination.smax.types.UNIT_STATS`): health, damage per shot,
      attack range, sight range, speed, body radius and weapon cooldown per type (JaxMARL's
      values).
    - **Actions**: ``Discrete(5 + K)``, ``K`` the size of the other army: 0 north, 1 east,
      2 south, 3 west (unit speed along the axis), 4 stop, ``5 + k`` shoot the ``k``-th unit of
      the other army (allies number enemies in order; enemies number allies in reverse order).
      **Mask**: moves need the unit alive; stop is always legal; ``5 + k`` needs both alive and
      the target closer than the attack range. Dead units can only stop. Everyone acts every step.
    - **Step**: ``world_ticks`` (8) ticks of ``tick_seconds`` (1/16 s), each: all units move
      (clipped to the map), and every ready unit (cooldown <= 0) whose ordered target is alive and
      in range hits it (damage of all shooters summed, health floored at 0; the cooldown restarts
      at the type's cooldown plus a uniform jitter in ``[-1, 2) * tick_seconds``; otherwise it
      falls by ``tick_seconds``); with ``walls_cause_death`` (default) a unit on or beyond the map
      edge dies; units with health 0 die; overlapping live bodies are pushed apart.
    - **Heuristic enemy**: shoots the visible unit in range it shot last, else the closest
      (``attack_mode="random"``: a random one); with nothing in range walks towards a random
      visible unit, else towards its start position reflected through the map centre
      (:mod:`~alem.envs.coordination.smax.heuristic`). ``enemy_shoots=False`` makes it only move.
    - **Observation**: float32 ``[13 * (U - 1) + 10]`` (``U = A + E``): for every other unit (own
      army first, in order, then the other army; enemies list both armies in reverse order) health
      fraction, offset divided by the observer's sight range (x, y), its last movement direction
      (x, y) and last attack action divided by its largest action (both 0 for the other army when
      ``see_enemy_actions=False``), cooldown fraction (clipped to [0, 1]), unit-type one-hot (6);
      all zero unless both are alive and it is within sight. Then the unit's own health fraction,
      position divided by the map size, cooldown fraction and type one-hot (all zero when dead).
    - **Global state** (``env.global_state``): float32 ``[12 * U]``: per unit health fraction,
      position, raw cooldown (it keeps falling below 0), type one-hot (zero when dead); then
      every unit's team (0/1) and unit type index.
    - **Rewards**: each army gets, shared by all its agents (alive or not), the health the other
      army lost this step as a fraction of its maximum, summed over the other army and divided by
      its size, plus ``won_battle_bonus`` (1) when the other army is wiped out and its own is not.
      ``self_play_reward=True`` (self-play): only +bonus for a win and -bonus for a loss.
    - **Termination**: ``terminated`` when an army is wiped out (both at once: a draw);
      ``truncated`` after ``max_steps + 1`` steps (default 100: a step that starts at step count
      ``max_steps`` ends the episode, as in the reference). ``info``: ``won``, ``lost``, ``draw``,
      ``timeout`` (from the allies' side) and ``alive`` per agent (JaxMARL's per-agent dones are
      ``~alive``).
    - **Reference**: JaxMARL 0.2.0 (``jaxmarl.environments.smax``: ``HeuristicEnemySMAX``, and
      ``SMAX`` for ``self_play=True``, ``observation_type="unit_list"``, discrete actions). Keys
      are consumed as the reference consumes them, so a reset key gives the same battle and a step
      key the same heuristic choices and cooldown jitter: positions, health, alive flags,
      cooldowns, last actions, heuristic memory, rewards, dones, observations, global states and
      action masks are compared bit for bit on every map (tests/envs/coordination/test_smax.py).
      Float details follow what the reference computes under ``jit`` (its last-attack feature is
      a product with a float32 reciprocal, its jitter a fused multiply-add, its damage sums run
      first to last). One difference: the reference's movement directions carry a ~1.3e-8
      off-axis residue where XLA fuses its rotation into multiply-adds (depending on how many
      units one call decodes); alem's are exactly axis-aligned (:data:`MOVE_VECTORS`), and the
      tests zero that residue in the reference. Not reproduced: JaxMARL's ``conic``
      observations, continuous actions and ``LearnedPolicyEnemySMAX``.
    - **Text** (:mod:`~alem.envs.coordination.smax.text`): the rules, and each agent's view decoded
      from its own observation (the units in its sight: health, offset, weapon, last order where
      shown), so a language agent sees what a learned policy sees; action names ``north`` ...
      ``stop``, ``attack enemy_<i>``. Each agent is one commander of one unit (no team commander).
    - **Version**: v0.

    Args:
        map_name: one of :data:`~alem.envs.coordination.smax.scenarios.SCENARIOS`, or a
            :class:`~alem.envs.coordination.smax.scenarios.Scenario`.
        self_play: both armies are agents (no scripted enemy).
        enemy_shoots: the heuristic enemy attacks (False: it only moves).
        attack_mode: the heuristic's choice of a new target, ``"closest"`` or ``"random"``.
        walls_cause_death: units touching the map edge die.
        see_enemy_actions: observations show the other army's last actions.
        self_play_reward: win/loss rewards only (+-``won_battle_bonus``), no damage reward.
        max_steps: the episode limit (a param).
        won_battle_bonus: the win reward (a param).
        world_ticks: simulation ticks per step.
        tick_seconds: game time of one tick.
        map_width, map_height: the map size.
        illegal_action: only ``"replace"`` (an illegal action becomes the first legal one).
    """

    cooperative = True  # the allies share one goal (alem.core.MultiAgentEnv); False in self-play
    stochastic = True
    outcomes = ("won", "lost", "draw", "timeout")  # training reports won_rate, ...

    def __init__(
        self,
        map_name: str | Scenario = "3m",
        *,
        self_play: bool = False,
        enemy_shoots: bool = True,
        attack_mode: str = "closest",
        walls_cause_death: bool = True,
        see_enemy_actions: bool = True,
        self_play_reward: bool = False,
        max_steps: int = DEFAULT_MAX_STEPS,
        won_battle_bonus: float = 1.0,
        world_ticks: int = 8,
        tick_seconds: float = 1.0 / 16,
        map_width: int = 32,
        map_height: int = 32,
        illegal_action: str = "replace",
    ):
        super().__init__(illegal_action=illegal_action)
        if isinstance(map_name, Scenario):
            scenario = map_name
        elif map_name in SCENARIOS:
            scenario = SCENARIOS[map_name]
        else:
            raise EnvArgumentError(f"SMAX: map_name must be one of {list(SCENARIOS)}, got {map_name!r}")
        if attack_mode not in ("closest", "random"):
            raise EnvArgumentError(f"SMAX: attack_mode must be 'closest' or 'random', got {attack_mode!r}")
        if int(max_steps) < 1 or int(world_ticks) < 1 or float(tick_seconds) <= 0:
            raise EnvArgumentError("SMAX: max_steps and world_ticks must be >= 1, tick_seconds > 0")
        if scenario.num_allies < 1 or scenario.num_enemies < 1:
            raise EnvArgumentError("SMAX: each army needs at least one unit")
        self.scenario = scenario
        self.self_play = bool(self_play)
        self.cooperative = not self.self_play
        self.enemy_shoots = bool(enemy_shoots)
        self.attack_mode = attack_mode
        self.walls_cause_death = bool(walls_cause_death)
        self.see_enemy_actions = bool(see_enemy_actions)
        self.self_play_reward = bool(self_play_reward)
        self.world_ticks = int(world_ticks)
        self.tick_seconds = float(tick_seconds)
        self.map_width, self.map_height = int(map_width), int(map_height)
        self._max_steps = int(max_steps)
        self._won_battle_bonus = float(won_battle_bonus)

        a, e = scenario.num_allies, scenario.num_enemies
        u = a + e
        self.num_allies, self.num_enemies, self.num_units = a, e, u
        self.team = np.array([0] * a + [1] * e, np.int32)
        self.agents = tuple(f"ally_{i}" for i in range(a))
        if self.self_play:
            self.agents += tuple(f"enemy_{i}" for i in range(e))
        self.learners = np.arange(len(self.agents))  # units played by the agents
        self.agent_roles = self.team[self.learners].copy()
        self.role_names = ("ally", "enemy") if self.self_play else ("ally",)

        # What each unit sees, in order: its own army then the other (enemies count backwards).
        self.view_order = np.array(
            [[j for j in (range(u) if i < a else reversed(range(u))) if j != i] for i in range(u)],
            np.int32,
        )
        # The unit each attack slot aims at; padding aims at the unit itself (never a hit).
        slots = max(a, e)
        self.attack_slots = np.tile(np.arange(u, dtype=np.int32)[:, None], (1, slots))
        self.attack_slots[:a, :e] = a + np.arange(e)
        self.attack_slots[a:, :a] = a - 1 - np.arange(a)
        self.slot_real = np.zeros((u, slots), bool)
        self.slot_real[:a, :e] = True
        self.slot_real[a:, :a] = True
        self.unit_actions = np.where(self.team == 0, NUM_MOVES + e, NUM_MOVES + a).astype(np.int32)
        sees_actions = (self.team[:, None] == self.team[self.view_order]) | self.see_enemy_actions
        self._sees_actions = sees_actions
        # Last-attack feature per unit and action: the action over the unit's largest action. The
        # reference divides by a per-unit constant, and XLA's simplifier rewrites a division by a
        # constant into a product with its float32 reciprocal (which can be 1 ulp off a division);
        # the table holds those products. (An unbatched reference program of a map with unequal
        # armies keeps the division, as its divisor is then selected at run time.)
        largest = (self.unit_actions - 1).astype(np.float32)
        actions = np.arange(NUM_MOVES + max(a, e), dtype=np.float32)
        self._attack_feature = actions[None, :] * (np.float32(1) / largest[:, None])

        self.obs_size = (len(OTHER_FEATURES) + NUM_UNIT_TYPES) * (u - 1) + len(OWN_FEATURES) + NUM_UNIT_TYPES
        self.state_size = (len(OWN_FEATURES) + NUM_UNIT_TYPES + 2) * u
        self._bounds = np.array([self.map_width, self.map_height], np.float32)

    # ------------------------------------------------------------------ description
    @property
    def default_params(self) -> SmaxParams:
        return SmaxParams(
            max_steps=jnp.int32(self._max_steps), won_battle_bonus=jnp.float32(self._won_battle_bonus)
        )

    def check_params(self, params: SmaxParams) -> None:
        """The type, and where concrete: ``max_steps >= 1``."""
        super().check_params(params)
        self._check_param_range(params, "max_steps", 1)

    @property
    def episode_steps_hint(self) -> float:
        return float(self._max_steps)

    def _one_obs_space(self) -> spaces.Box:
        other = [0, -1, -1, -1, -1, 0, 0] + [0] * NUM_UNIT_TYPES, [1] * (7 + NUM_UNIT_TYPES)
        # Own position, a fraction of the map: moves are clipped to the map, but SMACv2 surround
        # starts lie up to 2 units outside it and overlapping bodies are pushed apart, so the
        # box leaves a margin of _POS_MARGIN units on every side.
        lo, hi = -_POS_MARGIN / min(self._bounds), 1 + _POS_MARGIN / min(self._bounds)
        own = [0, lo, lo, 0] + [0] * NUM_UNIT_TYPES, [1, hi, hi, 1] + [1] * NUM_UNIT_TYPES
        low = np.concatenate([np.tile(other[0], self.num_units - 1), own[0]])
        high = np.concatenate([np.tile(other[1], self.num_units - 1), own[1]])
        return spaces.Box(low, high)

    def observation_space(self, agent: int | None = None) -> spaces.Space:
        one = self._one_obs_space()
        return one if agent is not None else spaces.stack([one] * self.num_agents)

    def action_space(self, agent: int | None = None) -> spaces.Space:
        sizes = self.unit_actions[self.learners]
        if agent is not None:
            return spaces.Discrete(int(sizes[agent]))
        return spaces.MultiDiscrete(sizes)

    def global_state_space(self) -> spaces.Space:
        inf = np.inf
        unit_low = [0, -inf, -inf, -inf] + [0] * NUM_UNIT_TYPES
        unit_high = [1, inf, inf, inf] + [1] * NUM_UNIT_TYPES
        low = np.concatenate([np.tile(unit_low, self.num_units), np.zeros(2 * self.num_units)])
        high = np.concatenate(
            [np.tile(unit_high, self.num_units), np.ones(self.num_units), np.full(self.num_units, 5.0)]
        )
        return spaces.Box(low, high)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _stat(name: str, unit_type: jax.Array) -> jax.Array:
        return jnp.asarray(getattr(UNIT_STATS, name))[unit_type]

    # ------------------------------------------------------------------ observations
    def unit_observations(self, state: SmaxState, units: np.ndarray) -> jax.Array:
        """float32 ``[len(units), D]``: the observations of the given (static) units."""
        units = np.asarray(units)
        others = self.view_order[units]  # [M, U-1]
        kind, kind_o = state.unit_type[units], state.unit_type[others]
        alive, alive_o = state.alive[units], state.alive[others]
        sight = self._stat("sight", kind)
        offset = state.pos[others] - state.pos[units][:, None, :]
        near = jnp.sqrt(jnp.sum(offset * offset, axis=-1)) < sight[:, None]
        shown = near & alive[:, None] & alive_o
        sees = jnp.asarray(self._sees_actions[units])
        last_attack = jnp.asarray(self._attack_feature)[others, state.last_attack[others]]
        cooldown_o = jnp.clip(state.cooldown[others] / self._stat("cooldown", kind_o), 0.0, 1.0)
        feats = jnp.concatenate(
            [
                (state.health[others] / self._stat("health", kind_o))[..., None],
                offset / sight[:, None, None],
                jnp.where(sees[..., None], state.last_move[others], 0.0),
                jnp.where(sees, last_attack, 0.0)[..., None],
                cooldown_o[..., None],
                jax.nn.one_hot(kind_o, NUM_UNIT_TYPES, dtype=jnp.float32),
            ],
            axis=-1,
        )
        feats = jnp.where(shown[..., None], feats, 0.0).reshape(len(units), -1)
        own = jnp.concatenate(
            [
                (state.health[units] / self._stat("health", kind))[:, None],
                state.pos[units] / jnp.asarray(self._bounds),
                jnp.clip(state.cooldown[units] / self._stat("cooldown", kind), 0.0, 1.0)[:, None],
                jax.nn.one_hot(kind, NUM_UNIT_TYPES, dtype=jnp.float32),
            ],
            axis=-1,
        )
        own = jnp.where(alive[:, None], own, 0.0)
        return jnp.concatenate([feats, own], axis=-1)

    def observe(self, state: SmaxState, params: SmaxParams) -> jax.Array:
        return self.unit_observations(state, self.learners)

    def global_state(self, state: SmaxState, params: SmaxParams | None = None) -> jax.Array:
        kind = state.unit_type
        units = jnp.concatenate(
            [
                (state.health / self._stat("health", kind))[:, None],
                state.pos,
                state.cooldown[:, None],
                jax.nn.one_hot(kind, NUM_UNIT_TYPES, dtype=jnp.float32),
            ],
            axis=-1,
        )
        units = jnp.where(state.alive[:, None], units, 0.0)
        return jnp.concatenate(
            [units.reshape(-1), jnp.asarray(self.team, jnp.float32), kind.astype(jnp.float32)]
        )

    def unit_action_mask(self, state: SmaxState, units: np.ndarray) -> jax.Array:
        """bool ``[len(units), 5 + max(A, E)]``: the legal actions of the given (static) units."""
        units = np.asarray(units)
        alive = state.alive[units]
        targets = self.attack_slots[units]
        offset = state.pos[targets] - state.pos[units][:, None, :]
        reach = self._stat("attack_range", state.unit_type[units])[:, None]
        in_range = jnp.sqrt(jnp.sum(offset * offset, axis=-1)) < reach
        shoot = in_range & state.alive[targets] & alive[:, None] & jnp.asarray(self.slot_real[units])
        moves = jnp.broadcast_to(alive[:, None], (len(units), STOP))
        stop = jnp.ones((len(units), 1), bool)
        return jnp.concatenate([moves, stop, shoot], axis=-1)

    def action_mask(self, state: SmaxState, params: SmaxParams) -> jax.Array:
        return self.unit_action_mask(state, self.learners)[:, : self.num_actions]

    # ------------------------------------------------------------------ dynamics
    def reset_env(self, key: jax.Array, params: SmaxParams) -> tuple[SmaxState, TimeStep]:
        if not self.self_play:  # HeuristicEnemySMAX hands SMAX the second half of a split
            key = jax.random.split(key)[1]
        pos, unit_type = draw_start(key, self.scenario, self.map_width, self.map_height)
        u, e = self.num_units, self.num_enemies
        alive = jnp.ones((u,), bool)
        pos = push_apart(pos, alive, self._stat("radius", unit_type))
        state = SmaxState(
            pos=pos,
            health=self._stat("health", unit_type),
            alive=alive,
            unit_type=unit_type,
            cooldown=jnp.zeros((u,), jnp.float32),
            last_move=jnp.zeros((u, 2), jnp.float32),
            last_attack=jnp.zeros((u,), jnp.int32),
            target=jnp.zeros((e, 2), jnp.float32),
            last_target=jnp.full((e,), -1, jnp.int32),
            step=jnp.int32(0),
        )
        zero = jnp.zeros((self.num_agents,), jnp.float32)
        no = jnp.bool_(False)
        return state, self._outcome_timestep(state, params, zero, no, no, no, no)

    def _orders(self, key: jax.Array, state: SmaxState, actions: jax.Array):
        """Every unit's action ``[U]`` and the heuristic's new memory."""
        if self.self_play:
            return actions, state.target, state.last_target
        enemies = np.arange(self.num_allies, self.num_units)
        enemy_actions, target, last_target = heuristic_actions(
            key,
            self.unit_observations(state, enemies),
            state.target,
            state.last_target,
            own_team=self.num_enemies,
            other_team=self.num_allies,
            width=self.map_width,
            height=self.map_height,
            shoot=self.enemy_shoots,
            attack_mode=self.attack_mode,
        )
        return jnp.concatenate([actions, enemy_actions]), target, last_target

    def step_env(self, key, state: SmaxState, actions: jax.Array, params: SmaxParams):
        k_world, k_policy = jax.random.split(key)
        orders, target, last_target = self._orders(k_policy, state, actions)
        u, dt = self.num_units, self.tick_seconds
        idx = jnp.arange(u)
        move = jnp.asarray(MOVE_VECTORS)[jnp.minimum(orders, STOP)]
        attack = jnp.where(orders >= FIRST_ATTACK, orders, 0)
        slot = jnp.clip(attack - FIRST_ATTACK, 0, self.attack_slots.shape[1] - 1)
        victim = jnp.where(attack >= FIRST_ATTACK, jnp.asarray(self.attack_slots)[idx, slot], idx)
        kind = state.unit_type
        speed, reach = self._stat("speed", kind), self._stat("attack_range", kind)
        damage, reload = self._stat("damage", kind), self._stat("cooldown", kind)
        radius = self._stat("radius", kind)
        bounds = jnp.asarray(self._bounds)

        def tick(carry, jitter):
            pos, health, alive, cooldown = carry
            moved = jnp.maximum(jnp.minimum(pos + move * speed[:, None] * dt, bounds), 0.0)
            new_pos = jnp.where(alive[:, None], moved, pos)
            offset = pos - pos[victim]
            hit = (
                (jnp.sqrt(jnp.sum(offset * offset, axis=-1)) < reach)
                & alive
                & alive[victim]
                & (victim != idx)
                & (cooldown <= 0.0)
            )
            health = jnp.maximum(health.at[victim].add(jnp.where(hit, -damage, 0.0)), 0.0)
            cooldown = cooldown + jnp.where(hit, reload + jitter - cooldown, -dt)
            if self.walls_cause_death:
                edge = jnp.any(new_pos <= 0.0, axis=-1) | jnp.any(new_pos >= bounds, axis=-1)
                health = jnp.where(edge, 0.0, health)
            alive = health > 0
            new_pos = push_apart(new_pos, alive, radius)
            return (new_pos, health, alive, cooldown), None

        carry = (state.pos, state.health, state.alive, state.cooldown)
        (pos, health, alive, cooldown), _ = jax.lax.scan(
            tick, carry, cooldown_jitter(k_world, self.world_ticks, u, dt)
        )

        # Terminal test on the step count before this step (the reference's order).
        allies_out = ~alive[: self.num_allies].any()
        enemies_out = ~alive[self.num_allies :].any()
        timeout = state.step >= params.max_steps
        lost_frac = (health - state.health) / self._stat("health", kind)
        ally_lost = jnp.abs(sum_in_order(lost_frac[: self.num_allies])) / self.num_allies
        enemy_lost = jnp.abs(sum_in_order(lost_frac[self.num_allies :])) / self.num_enemies
        bonus = params.won_battle_bonus
        zero = jnp.float32(0.0)
        if self.self_play_reward:
            ally_reward = jnp.where(enemies_out & ~allies_out, bonus, zero) - jnp.where(
                allies_out & ~enemies_out, bonus, zero
            )
            enemy_reward = jnp.where(allies_out & ~enemies_out, bonus, zero) - jnp.where(
                enemies_out & ~allies_out, bonus, zero
            )
        else:
            ally_reward = enemy_lost + jnp.where(enemies_out & ~allies_out, bonus, zero)
            enemy_reward = ally_lost + jnp.where(allies_out & ~enemies_out, bonus, zero)
        reward = jnp.where(jnp.asarray(self.agent_roles) == 0, ally_reward, enemy_reward).astype(jnp.float32)

        state = SmaxState(
            pos=pos,
            health=health,
            alive=alive,
            unit_type=kind,
            cooldown=cooldown,
            last_move=move,
            last_attack=attack.astype(jnp.int32),
            target=target,
            last_target=last_target,
            step=state.step + 1,
        )
        terminated = allies_out | enemies_out
        return state, self._outcome_timestep(
            state, params, reward, terminated, timeout & ~terminated, allies_out, enemies_out
        )

    def _outcome_timestep(
        self, state, params, reward, terminated, truncated, allies_out, enemies_out
    ) -> TimeStep:
        """The step's TimeStep with SMAX's info: the episode's outcome and who is alive."""
        info = {
            "won": enemies_out & ~allies_out,
            "lost": allies_out & ~enemies_out,
            "draw": allies_out & enemies_out,
            "timeout": truncated,
            "alive": state.alive[self.learners],
        }
        return self.timestep(state, params, reward, terminated=terminated, truncated=truncated, info=info)

    # ------------------------------------------------------------------ text and pixels
    def action_names(self, agent: int = 0) -> list[str]:
        """``north``, ``east``, ``south``, ``west``, ``stop``, then ``attack <unit>``."""
        unit = int(self.learners[agent])
        names = list(MOVE_NAMES)
        for k in range(int(self.unit_actions[unit]) - NUM_MOVES):
            j = int(self.attack_slots[unit, k])
            names.append(f"attack {'enemy' if j >= self.num_allies else 'ally'}_{self._team_index(j)}")
        return names

    def rules_text(self, params: SmaxParams | None = None, agent: int = 0) -> str:
        return text.rules_text(self, agent)

    def render_text(
        self,
        state: SmaxState,
        agent: int | None = None,
        params: SmaxParams | None = None,
        *,
        moves: bool = True,
    ) -> str:
        """The battle as ``agent`` observes it (decoded from its observation); ``None``: every unit.
        ``moves=False`` leaves out that a dead unit can only stop (directions locate units and
        orders are past ones: they stay)."""
        return text.render_text(self, state, agent, moves=moves)

    def json_view(self, state: SmaxState, agent: int, params: SmaxParams | None = None) -> dict[str, Any]:
        """See :func:`~alem.envs.coordination.smax.text.json_view` (the schema)."""
        return text.json_view(self, state, agent)

    def _team_index(self, unit: int) -> int:
        return unit - self.num_allies if unit >= self.num_allies else unit

    def render_rgb(self, state: SmaxState, params: SmaxParams | None = None, scale: int = 16) -> np.ndarray:
        """uint8 ``[H * scale, W * scale, 3]``: allies blue, enemies red, discs of the body radius
        with a health bar; north is up."""
        return viewer.render_rgb(self, state, scale)
