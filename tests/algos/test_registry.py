"""alem.algos.registry: the one table of learners (name -> core, config class, preset, factory)
that make_config/make_learner, the training command and the checkpoint player share.

Nothing here compiles an update: learners are built (their fit checked) and the players act on
parameters of the right shapes, drawn without running ``init``."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import alem
import alem.algos as algos
from alem.algos import (
    LEARNERS,
    Q_VARIANTS,
    VARIANTS,
    PPOConfig,
    PPOLearner,
    QConfig,
    QLearner,
    make_config,
    make_learner,
)
from alem.algos.checkpoint_player import CheckpointPlayer, load_trained
from alem.errors import CheckpointError, LearnerConfigError

COORD = "coordination-v0"  # cooperative, two agents, two actions: every preset fits


def test_the_table_lists_every_preset_of_both_cores_with_its_config_class():
    assert set(LEARNERS) == set(VARIANTS) | set(Q_VARIANTS)
    for name, entry in LEARNERS.items():
        ppo = name in VARIANTS
        assert entry.name == name and entry.core == ("ppo" if ppo else "q")
        assert entry.config is (PPOConfig if ppo else QConfig)
        assert entry.learner is (PPOLearner if ppo else QLearner)
        assert dict(entry.preset) == (VARIANTS if ppo else Q_VARIANTS)[name]
        cfg = make_config(name)
        assert type(cfg) is entry.config and cfg.name == name


@pytest.mark.parametrize("name", ["mappo", "happo", "pqn", "qmix"])
def test_make_learner_by_name_is_make_learner_of_make_config(name):
    env = alem.make(COORD)
    options = {"num_envs": 8, "hidden": (16,), "total_steps": 4096}
    by_name = make_learner(name, env, **options)
    by_config = make_learner(env, make_config(name, **options))
    assert type(by_name) is type(by_config) is LEARNERS[name].learner
    assert by_name.cfg == by_config.cfg and by_name.cfg.hidden == (16,)
    assert np.array_equal(by_name.param_sets, by_config.param_sets)


def test_a_configuration_built_by_hand_dispatches_on_its_class():
    env = alem.make(COORD)
    assert type(make_learner(env, PPOConfig(name="mine", num_envs=4))) is PPOLearner
    assert type(make_learner(env, QConfig(name="mine", num_envs=4))) is QLearner


def test_an_unknown_name_is_one_line_listing_the_known_ones():
    env = alem.make(COORD)
    for call in (lambda: make_learner("mapo", env), lambda: make_config("mapo")):
        with pytest.raises(LearnerConfigError) as err:
            call()
        message = str(err.value)
        assert "\n" not in message and "unknown learner 'mapo'" in message
        assert "did you mean 'mappo'" in message
        assert all(name in message for name in LEARNERS)


def test_misused_calls_are_one_line_errors():
    env = alem.make(COORD)
    with pytest.raises(LearnerConfigError, match=r"make_learner\(env, cfg\) takes no options \(lr\)"):
        make_learner(env, make_config("ippo"), lr=0.1)
    with pytest.raises(LearnerConfigError, match="needs an env"):
        make_learner("ippo", make_config("ippo"))
    with pytest.raises(LearnerConfigError, match="not a learner configuration.*dict"):
        make_learner(env, {"name": "ippo"})
    with pytest.raises(LearnerConfigError, match="value-based pqn takes none"):
        make_learner("pqn", env, partners="pool:train")
    with pytest.raises(LearnerConfigError, match=r"param_sets \[0, 1\] are not the value-based iql's own"):
        make_learner(env, make_config("iql"), param_sets=np.array([0, 1]))


def test_a_learners_parameter_sets_are_not_called_roles_beside_the_envs_agent_roles():
    """The learner's parameter set per unit was ``roles``, the word the env uses for ``agent_roles``;
    it is ``param_sets`` now, and ``roles=`` is a deprecated keyword for one release."""
    env = alem.make("mpe/simple_spread-v0")
    learner = make_learner("ippo", env, sharing="none")
    assert learner.param_sets.tolist() == [0, 1, 2] and learner.num_param_sets == 3
    assert not hasattr(learner, "roles")
    with pytest.warns(DeprecationWarning, match="param_sets"):
        old = make_learner(env, make_config("ippo"), roles=np.array([0, 0, 1]))
    assert old.param_sets.tolist() == [0, 0, 1]


def test_the_deprecated_names_are_the_new_objects():
    from alem.algos import config, ppo, state

    for old, new in [("Learner", "PPOLearner"), ("LearnerConfig", "PPOConfig"), ("LearnerState", "PPOState")]:
        assert getattr(algos, old) is getattr(algos, new) and old in algos.__all__ and new in algos.__all__
    assert config.LearnerConfig is config.PPOConfig and state.Batch is state.PPOBatch
    assert ppo.Learner is ppo.PPOLearner and ppo.make_learner is ppo.make_ppo_learner


def test_partners_are_loaded_by_make_learner(monkeypatch):
    """``make_learner(..., partners=<manifest>)`` seats the pool's actors and sizes the pool; the
    config form without it is a template (a restored checkpoint holds the pool)."""
    from alem.algos import population

    env = alem.make(COORD)
    actors = {"stand-in": jnp.zeros((2, 1))}
    seen = []

    def partner_actors(cfg, env):
        seen.append(cfg.partners)
        return dataclasses.replace(cfg, pool_size=2), actors

    monkeypatch.setattr(population, "partner_actors", partner_actors)
    learner = make_learner("ippo", env, partners="some/pool:train", num_envs=8)
    assert seen == ["some/pool:train"] and learner.partner_actor is actors
    assert learner.cfg.partners == "some/pool:train" and learner.cfg.pool_size == 2
    template = make_learner(env, learner.cfg)
    assert template.partner_actor is None and seen == ["some/pool:train"]


def _random_params(learner, seed=0):
    """Parameters of ``learner``'s shapes, drawn N(0, 1) (no ``init`` to run)."""
    shapes = jax.eval_shape(learner.init, jax.random.key(0)).params
    leaves, treedef = jax.tree.flatten(shapes)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    return jax.tree.unflatten(
        treedef, [jax.random.normal(k, x.shape, x.dtype) for x, k in zip(leaves, keys, strict=True)]
    )


def _player(learner, params, greedy=False):
    player = CheckpointPlayer.__new__(CheckpointPlayer)  # what load_trained gives, minus the files
    player.learner, player.params, player.greedy, player.name = learner, params, greedy, "checkpoint:test"
    player.snapshot = None
    return player


@pytest.mark.parametrize("name", ["ippo", "pqn"])
def test_a_checkpoint_player_plays_either_core(name):
    env = alem.make(COORD)
    learner = make_learner(name, env, num_envs=4, hidden=(8,))
    params = _random_params(learner)
    player = _player(learner, params, greedy=True)
    obs = jax.random.normal(jax.random.key(1), (3, 2, *env.observation_space().shape[1:]))
    mask = jnp.array([[[True, True]] * 2, [[False, True]] * 2, [[True, False]] * 2])
    probs = np.asarray(player.action_probs(obs[:, 0], mask[:, 0], 0))
    assert probs.tolist()[1:] == [[0.0, 1.0], [1.0, 0.0]]  # the only legal move
    assert np.all(probs.sum(-1) == 1.0) and set(np.unique(probs)) <= {0.0, 1.0}  # greedy: one-hot
    ts = SimpleNamespace(obs=obs, action_mask=mask)
    turn = SimpleNamespace(timestep=ts, agent=0)
    moves = np.asarray(player.act(jax.random.key(2), turn))
    assert moves.tolist()[1:] == [1, 0]
    assert player.describe() == {"algo": name, "greedy": True}


def test_a_third_core_plays_through_the_same_methods():
    """The player asks the learner (play_actions, action_probabilities, always_greedy), never
    which class it is: a core it has never seen plays."""

    @dataclasses.dataclass(frozen=True)
    class ConstantCore:
        cfg: object
        n: int = 2
        param_sets: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(2, np.int32))
        env: object = None
        always_greedy = True

        def play_actions(self, params, obs, mask, key, greedy=True):
            return jnp.full(obs.shape[:2], params["action"], jnp.int32)

        def check_action_probabilities(self):
            pass

        def action_probabilities(self, params, obs, mask, greedy=True):
            return jax.nn.one_hot(jnp.full(obs.shape[:2], params["action"]), mask.shape[-1])

    core = ConstantCore(cfg=SimpleNamespace(name="constant"))
    player = _player(core, {"action": jnp.int32(1)})
    ts = SimpleNamespace(obs=jnp.zeros((2, 2, 3)), action_mask=jnp.ones((2, 2, 2), bool))
    assert np.asarray(player.act(jax.random.key(0), SimpleNamespace(timestep=ts, agent=1))).tolist() == [1, 1]
    assert np.asarray(player.action_probs(jnp.zeros((1, 3)), jnp.ones((1, 2), bool))).tolist() == [[0.0, 1.0]]
    assert player.describe() == {"algo": "constant", "greedy": True}


@pytest.mark.parametrize(("algo", "cls"), [("mappo", PPOConfig), ("iql", QConfig), ("nope", None)])
def test_a_run_is_read_back_with_its_algos_config_class(tmp_path, algo, cls):
    """The config class of a run's results.json comes from the table, by the run's algo name."""
    cfg = make_config("ippo" if cls is None else algo, hidden=(8,))
    results = {
        "env_id": COORD,
        "algo": algo,
        "num_seeds": 1,
        "roles": [0, 0],
        "learner": {**dataclasses.asdict(cfg), "hidden": [8]},
    }
    (tmp_path / "results.json").write_text(json.dumps(results))
    if cls is None:
        with pytest.raises(CheckpointError, match=r"algo is 'nope', not a known learner \(.*ippo.*pqn"):
            load_trained(tmp_path, alem.make(COORD))
        return
    with pytest.raises(CheckpointError, match="no checkpoint"):  # read and rebuilt: then the files
        load_trained(tmp_path, alem.make(COORD))
