"""SMAX: lock-step equality with JaxMARL 0.2.0, hand-checked battle rules, the SMACv2 draws.

The reference (``jaxmarl.environments.smax``) runs in this venv. Each episode starts from JaxMARL's
reset, converted into an alem state (``to_alem``); both envs then take the same random legal actions
with the same step keys, and unit positions, health, alive flags, cooldowns, last actions, the
heuristic enemy's memory, rewards, dones, every agent's observation, the global state and the action
masks must agree bit for bit until the battle ends. alem consumes keys as JaxMARL does, so the
heuristic's random choices, the cooldown jitter and the starts (SMACv2 draws included) are compared
exactly too.

One patch is applied to the reference: its decoded movement directions carry a ~1.3e-8 residue in
the off-axis component wherever XLA fuses its 2x2 rotation into multiply-adds (it depends on how many
units one call decodes); ``clean_reference_moves`` zeroes it, as alem's table does.
``test_reference_move_residue_is_all_that_is_patched`` pins that down.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
from alem.envs.coordination.smax import MOVE_VECTORS, SCENARIOS, SMAX, UNIT_STATS, SmaxState
from benchmarks.references.jaxmarl import smax_kwargs

try:  # the reference; tests that need it are skipped without it, the hand-checked ones still run
    from jaxmarl.environments.smax import SMAX as RefSMAX
    from jaxmarl.environments.smax import HeuristicEnemySMAX, map_name_to_scenario
except ImportError:
    RefSMAX = HeuristicEnemySMAX = map_name_to_scenario = None
needs_jaxmarl = pytest.mark.skipif(RefSMAX is None, reason="reference missing: pip install jaxmarl==0.2.0")

MAPS = tuple(SCENARIOS)
STATE_FIELDS = (
    "pos",
    "health",
    "alive",
    "unit_type",
    "cooldown",
    "last_move",
    "last_attack",
    "target",
    "last_target",
    "step",
)


# ---------------------------------------------------------------------------------------- harness
def clean_reference_moves(smax) -> None:
    """Zero the reference's multiply-add residue in decoded movement directions (see the module doc)."""
    decode = smax._decode_discrete_actions

    def clean(actions):
        moves, attacks = decode(actions)
        return jnp.where(jnp.abs(moves) < 1e-6, 0.0, moves), attacks

    smax._decode_discrete_actions = clean


def make_ref(env: SMAX, clean: bool = True):
    """JaxMARL's env configured as ``env`` (``HeuristicEnemySMAX``, or ``SMAX`` in self-play)."""
    kwargs = smax_kwargs(env)
    if env.self_play:
        ref = RefSMAX(use_self_play_reward=env.self_play_reward, **kwargs)
        inner = ref
    else:
        ref = HeuristicEnemySMAX(enemy_shoots=env.enemy_shoots, attack_mode=env.attack_mode, **kwargs)
        inner = ref._env
    if clean:
        clean_reference_moves(inner)
    return ref


def to_alem(env: SMAX, ref_state) -> SmaxState:
    """A JaxMARL state (``HeuristicEnemySMAX``'s or ``SMAX``'s, batched or not) as an alem state."""
    if env.self_play:
        s = ref_state
        lead = s.unit_alive.shape[:-1]
        target = jnp.zeros((*lead, env.num_enemies, 2), jnp.float32)
        last_target = jnp.full((*lead, env.num_enemies), -1, jnp.int32)
    else:
        s = ref_state.state
        target = ref_state.enemy_policy_state.default_target
        last_target = jnp.asarray(ref_state.enemy_policy_state.last_attacked_enemy, jnp.int32)
    return SmaxState(
        pos=s.unit_positions,
        health=s.unit_health,
        alive=s.unit_alive,
        unit_type=s.unit_types.astype(jnp.int32),
        cooldown=s.unit_weapon_cooldowns,
        last_move=s.prev_movement_actions,
        last_attack=s.prev_attack_actions.astype(jnp.int32),
        target=target,
        last_target=last_target,
        step=jnp.asarray(s.step, jnp.int32),
    )


def _ref_mask(env: SMAX, ref, ref_state) -> jax.Array:
    masks = ref.get_avail_actions(ref_state)
    width = env.num_actions
    return jnp.stack([jnp.pad(masks[a].astype(bool), (0, width - masks[a].shape[0])) for a in ref.agents])


def _ours(env: SMAX, state: SmaxState, obs, mask) -> dict:
    out = {k: getattr(state, k) for k in STATE_FIELDS}
    out.update(obs=obs, gs=env.global_state(state, env.default_params), mask=mask)
    return out


@functools.cache
def ref_rollout(env: SMAX, steps: int):
    """Jitted: keys [B] -> (start record, records [B, T], actions [B, T, N], step keys [B, T]) of
    JaxMARL's env under random legal actions; the records hold its states converted to alem's."""
    ref = make_ref(env)

    def record(rstate, robs) -> dict:
        r = {k: getattr(to_alem(env, rstate), k) for k in STATE_FIELDS}
        r.update(obs=jnp.stack([robs[a] for a in ref.agents]), gs=robs["world_state"])
        r["mask"] = _ref_mask(env, ref, rstate)
        return r

    def one(key):
        k_reset, k_run = jax.random.split(key)
        robs, rstate = ref.reset(k_reset)

        def body(rstate, k):
            k_act, k_step = jax.random.split(k)
            mask = _ref_mask(env, ref, rstate)
            acts = jax.random.categorical(k_act, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)
            robs, rstate, rew, dones, _ = ref.step_env(
                k_step, rstate, {a: acts[i] for i, a in enumerate(ref.agents)}
            )
            r = record(rstate, robs)
            r.update(
                reward=jnp.stack([rew[a] for a in ref.agents]),
                done=dones["__all__"],
                agent_done=jnp.stack([dones[a] for a in ref.agents]),
            )
            return rstate, (r, acts, k_step)

        _, (rs, acts, step_keys) = jax.lax.scan(body, rstate, jax.random.split(k_run, steps))
        return record(rstate, robs), rs, acts, step_keys

    return jax.jit(jax.vmap(one))


@functools.cache
def our_rollout(env: SMAX):
    """Jitted: start states [B] + actions [B, T, N] + step keys [B, T] -> (start record, records)."""
    params = env.default_params

    def one(state, acts, keys):
        def body(state, inp):
            a, k = inp
            state, ts = env.step(k, state, a, params)
            o = _ours(env, state, ts.obs, ts.action_mask)
            o.update(
                reward=ts.reward,
                done=ts.done,
                agent_done=~ts.info["alive"],
                terminated=ts.terminated,
                truncated=ts.truncated,
                won=ts.info["won"],
                lost=ts.info["lost"],
                draw=ts.info["draw"],
                illegal=ts.info["illegal_action"],
            )
            return state, o

        first = _ours(env, state, env.observe(state, params), env.action_mask(state, params))
        _, os_ = jax.lax.scan(body, state, (acts, keys))
        return first, os_

    return jax.jit(jax.vmap(one))


def compare(env: SMAX, seed: int, episodes: int, steps: int) -> dict:
    """Run ``episodes`` battles of up to ``steps`` steps in both; assert equality until each ends."""
    keys = jax.random.split(jax.random.key(seed), episodes)
    r0, rs, acts, step_keys = ref_rollout(env, steps)(keys)
    # Injection: alem starts from JaxMARL's reset states, converted.
    start = SmaxState(**{k: r0[k] for k in STATE_FIELDS})
    o0, os_ = our_rollout(env)(start, acts, step_keys)
    r0, rs, o0, os_ = jax.device_get((r0, rs, o0, os_))
    stats = dict(steps=0, won=0, lost=0, draw=0, timeout=0, unfinished=0, shots=0)
    for e in range(episodes):
        for k in (*STATE_FIELDS, "obs", "gs", "mask"):
            np.testing.assert_array_equal(o0[k][e], r0[k][e], err_msg=f"reset {k}, episode {e}")
        for t in range(steps):
            where = f"{env.id} episode {e} step {t + 1}"
            for k in (*STATE_FIELDS, "obs", "gs", "mask", "reward", "done", "agent_done"):
                np.testing.assert_array_equal(os_[k][e, t], rs[k][e, t], err_msg=f"{k}, {where}")
            assert not os_["illegal"][e, t].any(), where
            stats["steps"] += 1
            stats["shots"] += int((os_["last_attack"][e, t] > 0).sum())
            if os_["done"][e, t]:
                alive = os_["alive"][e, t]
                allies, enemies = alive[: env.num_allies].any(), alive[env.num_allies :].any()
                assert os_["won"][e, t] == (allies and not enemies), where
                assert os_["lost"][e, t] == (enemies and not allies), where
                assert os_["draw"][e, t] == (not allies and not enemies), where
                assert os_["terminated"][e, t] == (not allies or not enemies), where
                stats["won"] += int(os_["won"][e, t])
                stats["lost"] += int(os_["lost"][e, t])
                stats["draw"] += int(os_["draw"][e, t])
                stats["timeout"] += int(os_["truncated"][e, t])
                break
        else:
            stats["unfinished"] += 1
    return stats


# ------------------------------------------------------------------------------ default tier
@pytest.mark.exhaustive  # the default run's budget; every map's lock-step sweep is exhaustive too
@needs_jaxmarl
def test_3m_lockstep_with_jaxmarl():
    env = alem.make("smax_3m-v0")
    stats = compare(env, seed=0, episodes=2, steps=10)
    assert stats["steps"] == 20 and stats["shots"] > 0  # no battle of 3m ends in 10 random steps


def test_one_shot_a_wall_death_and_the_rewards_by_hand():
    """Two marines 4 apart (range 5): ally 0 shoots enemy 0 (action 5), ally 1 walks west into the
    wall from x = 0.3, enemy 1 far away. Marines: 45 health, 9 damage, cooldown 0.61 s, speed 3.15."""
    env = SMAX("3m")
    params = env.default_params
    state = SmaxState(
        pos=jnp.array([[10.0, 16.0], [0.3, 5.0], [10.0, 25.0], [14.0, 16.0], [30.0, 30.0], [30.0, 2.0]]),
        health=jnp.full((6,), 45.0),
        alive=jnp.ones((6,), bool),
        unit_type=jnp.zeros((6,), jnp.int32),
        cooldown=jnp.zeros((6,)),
        last_move=jnp.zeros((6, 2)),
        last_attack=jnp.zeros((6,), jnp.int32),
        target=jnp.zeros((3, 2)),
        last_target=jnp.full((3,), -1, jnp.int32),
        step=jnp.int32(0),
    )
    mask = np.asarray(env.action_mask(state, params))
    np.testing.assert_array_equal(mask[0], [1, 1, 1, 1, 1, 1, 0, 0])  # only enemy 0 is in range
    np.testing.assert_array_equal(mask[1], [1, 1, 1, 1, 1, 0, 0, 0])
    state, ts = jax.jit(env.step)(jax.random.key(1), state, jnp.array([5, 3, 4]), params)
    health = np.asarray(state.health)
    assert health[3] == 45.0 - 9.0  # one shot in 8 ticks: the cooldown (>= 0.61 - 1/16 s) outlasts 0.5 s
    assert not bool(state.alive[1]) and health[1] == 0.0  # 0.3 - 3.15/16 * 2 <= 0: on the wall, dead
    cooldown = float(state.cooldown[0])
    # shot on tick 1 (cooldown 0.61 + jitter in [-1/16, 1/8)), then 7 ticks of -1/16
    assert 0.61 - 1 / 16 - 7 / 16 - 1e-6 <= cooldown < 0.61 + 1 / 8 - 7 / 16 + 1e-6
    np.testing.assert_array_equal(np.asarray(state.cooldown[1:3]), [-0.5, -0.5])  # no shot: 8 x -1/16
    # ally reward: the enemies lost 9 of 45 health on one of 3 units -> 9/45/3; the wall death is an
    # ally loss, rewarded to the enemy side only
    np.testing.assert_allclose(np.asarray(ts.reward), np.full(3, 9 / 45 / 3, np.float32), rtol=1e-6)
    assert not bool(ts.done) and np.asarray(ts.info["alive"]).tolist() == [True, False, True]
    np.testing.assert_array_equal(np.asarray(ts.action_mask[1]), [0, 0, 0, 0, 1, 0, 0, 0])  # dead: stop
    np.testing.assert_array_equal(np.asarray(ts.obs[1]), 0.0)  # the dead see nothing
    # the observed enemy 0 (ally 0's block 2): health 36/45, offset (4, 0) / sight 9 (no unit moved)
    block = np.asarray(ts.obs[0])[2 * 13 : 3 * 13]
    np.testing.assert_allclose(block[:3], [36 / 45, 4 / 9, 0.0], rtol=1e-6)
    # The text view tells what ally 0 observes: enemy 0 (4 east, 36/45 health, shot ally 0 back);
    # not ally 2 (exactly 9 away: sight is "closer than 9"), nor the dead ally 1, nor the far enemies.
    view = env.render_text(state, agent=0)
    assert view.startswith("You command ally_0 (marine): health 80%, at (10.0, 16.0), weapon cooling (")
    seen = [line for line in view.splitlines() if line.startswith("- ")]
    assert len(seen) == 1 and seen[0].startswith(
        "- enemy_0 (marine): health 80%, 4.0 east, 0.0 north, weapon cooling ("
    )
    assert seen[0].endswith("last order: attack ally_0")
    assert env.render_text(state, agent=1) == "You command ally_1. Your unit is dead; you can only stop."
    # llm.legal_moves=none: the state without its only move
    assert env.render_text(state, agent=1, moves=False) == "You command ally_1. Your unit is dead."
    assert "ally_1 (marine): dead" in env.render_text(state)  # the whole battle
    assert env.legal_action_names(state, 0) == ["north", "east", "south", "west", "stop", "attack enemy_0"]


# ---------------------------------------------------------------------------- exhaustive tier
# The maps lock-stepped at their defaults: every unit type (marines, stalkers, zealots,
# hydralisks, SMACv2's random mix with surround starts), the largest map and an asymmetric
# mixed one. The 14 maps share one code path and differ in unit counts and types; with
# test_3m_lockstep_with_jaxmarl and the option sweep below, 10 of them run in lock-step here
# (each costs two compiles, about 40 s on 2 cores: all 14 did not fit CI's time), and every
# map's reset is checked against JaxMARL's below.
LOCKSTEP_MAPS = ("2s3z", "6h_vs_8z", "27m_vs_30m", "3s5z_vs_3s6z", "smacv2_5_units")


@needs_jaxmarl
@pytest.mark.exhaustive
@pytest.mark.parametrize("map_name", LOCKSTEP_MAPS)
def test_every_map_lockstep_with_jaxmarl(map_name):
    env = alem.make(f"smax_{map_name}-v0")
    stats = compare(env, seed=1, episodes=4, steps=102)
    assert stats["unfinished"] == 0, stats  # every battle ends by step 101
    assert stats["shots"] > 0 and stats["steps"] >= 4 * 10, stats


@needs_jaxmarl
@pytest.mark.exhaustive
@pytest.mark.parametrize(
    "map_name,kwargs",
    [
        ("3s_vs_5z", dict(enemy_shoots=False, walls_cause_death=False, see_enemy_actions=False)),
        ("8m", dict(attack_mode="random")),
        ("5m_vs_6m", dict(self_play=True)),
        ("smacv2_10_units", dict(self_play=True, self_play_reward=True, see_enemy_actions=False)),
        ("2s3z", dict(max_steps=20, won_battle_bonus=2.5)),
    ],
)
def test_options_lockstep_with_jaxmarl(map_name, kwargs):
    env = SMAX(map_name, **kwargs)
    stats = compare(env, seed=2, episodes=4, steps=102)
    assert stats["unfinished"] == 0, stats
    if not kwargs.get("enemy_shoots", True):
        assert stats["timeout"] == 4, stats  # nobody dies: every battle is cut after 101 steps
    if kwargs.get("max_steps") == 20:
        assert stats["timeout"] >= 1 and stats["steps"] <= 4 * 21, stats


@needs_jaxmarl
@pytest.mark.exhaustive
@pytest.mark.parametrize("map_name", MAPS)
def test_reset_matches_jaxmarl_for_the_same_key(map_name):
    env = SMAX(map_name)
    ref = make_ref(env)
    keys = jax.random.split(jax.random.key(7), 256)
    ours = jax.device_get(jax.jit(jax.vmap(env.reset, (0, None)))(keys, env.default_params))
    obs, theirs = jax.device_get(jax.jit(jax.vmap(ref.reset))(keys))
    theirs = to_alem(env, theirs)
    for k in STATE_FIELDS:
        np.testing.assert_array_equal(getattr(ours[0], k), getattr(theirs, k), err_msg=k)
    np.testing.assert_array_equal(ours[1].obs, np.stack([obs[a] for a in ref.agents], 1))


@needs_jaxmarl
@pytest.mark.exhaustive
def test_reference_move_residue_is_all_that_is_patched():
    """Unpatched, the reference's decoded moves differ from alem's table by at most the rounding
    residue of c*c (c = 1/sqrt 2 in float32) in the off-axis component; patched, they are equal."""
    for units in (3, 5, 8, 11, 30):
        ref = RefSMAX(scenario=map_name_to_scenario("3m"))
        actions = jnp.arange(units) % 5
        raw, _ = jax.jit(ref._decode_discrete_actions)(actions)
        ours = MOVE_VECTORS[np.asarray(actions)]
        c = np.float32(1) / np.sqrt(np.float32(2))
        residue = np.float64(c) ** 2 - np.float64(np.float32(c * c))
        assert np.abs(np.asarray(raw) - ours).max() <= abs(residue), units
        clean_reference_moves(ref)
        cleaned, _ = jax.jit(ref._decode_discrete_actions)(actions)
        np.testing.assert_array_equal(np.asarray(cleaned), ours)


@pytest.mark.exhaustive
def test_smacv2_draws_by_hand():
    """SMACv2 starts: ally types uniform over the 6 types and mirrored by the enemies; half the
    battles reflect (enemy = ally mirrored across x = 16), half surround (one army within 2 of the
    centre before the push)."""
    env = SMAX("smacv2_10_units")
    keys = jax.random.split(jax.random.key(3), 2000)
    state, _ = jax.device_get(jax.jit(jax.vmap(env.reset, (0, None)))(keys, env.default_params))
    types = state.unit_type
    np.testing.assert_array_equal(types[:, :10], types[:, 10:])
    freq = np.bincount(types[:, :10].reshape(-1), minlength=6) / types[:, :10].size
    np.testing.assert_allclose(freq, 1 / 6, atol=0.02)
    # The overlap push moves units by well under 1, so the arrangements stay recognisable.
    mirrored = np.abs(state.pos[:, 10:, 0] - (32 - state.pos[:, :10, 0])).max(-1) < 1.5
    centred = [
        (np.abs(state.pos[:, team] - 16) < 2 + 1.5).all((-1, -2)) for team in (slice(0, 10), slice(10, 20))
    ]
    surround = centred[0] | centred[1]
    assert ((mirrored | surround).mean()) > 0.98
    assert 0.45 < surround.mean() < 0.55 and 0.4 < centred[0][surround].mean() < 0.6


@pytest.mark.exhaustive
def test_fixed_map_starts_and_truncation_by_hand():
    """3m starts within 2 (+ the push) of (8, 16) and (24, 16), full health; with idle armies that
    never shoot, the episode is truncated by the step that starts at step count max_steps."""
    env = SMAX("3m", enemy_shoots=False, walls_cause_death=False, max_steps=3)
    state, ts = env.reset(jax.random.key(0))
    pos = np.asarray(state.pos)
    assert (np.abs(pos[:3] - [8, 16]) < 2.5).all() and (np.abs(pos[3:] - [24, 16]) < 2.5).all()
    np.testing.assert_array_equal(np.asarray(state.health), UNIT_STATS.health[0])
    step = jax.jit(env.step)
    for t in range(4):
        state, ts = step(jax.random.key(t), state, jnp.full((3,), 4, jnp.int32))
        assert bool(ts.truncated) == (t == 3) and not bool(ts.terminated)
    assert bool(ts.info["timeout"]) and not bool(ts.info["won"] | ts.info["lost"] | ts.info["draw"])


@pytest.mark.exhaustive
def test_self_play_agents_roles_and_render():
    env = SMAX("5m_vs_6m", self_play=True)
    assert env.num_agents == 11 and not env.cooperative and env.role_names == ("ally", "enemy")
    assert [env.action_space(i).n for i in (0, 5)] == [11, 10] and env.num_actions == 11
    assert env.action_names(5)[5:] == [f"attack ally_{k}" for k in (4, 3, 2, 1, 0)]
    state, ts = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), 3))
    assert ts.obs.shape == (3, 11, env.obs_size) and not bool(ts.action_mask[:, 5:, 10].any())
    one = jax.tree.map(lambda x: x[0], state)
    img = env.render_rgb(one)
    assert img.shape == (32 * 16, 32 * 16, 3) and img.dtype == np.uint8
    assert (img == (40, 90, 220)).all(-1).any() and (img == (210, 50, 40)).all(-1).any()
