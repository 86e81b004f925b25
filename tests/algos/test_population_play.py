"""Population play (``algo.partners``): the PPO core learns in one seat beside trained partners.

The defining checks use a tiny pool; the learning result (a partner-trained ego works with the
conventions of held-out partners where a self-play ego does not) is in the exhaustive tier."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hydra import compose, initialize_config_module

import alem
from alem.arena.command import run as evaluate_run
from alem.arena.partners import build
from alem.errors import ConfigError
from alem.pools import write_manifest
from tests.tiny_runs import TINY_RUN


def _compose(name, overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name=name, overrides=list(overrides))


def _train(out, *overrides):
    from alem.train import run

    return run(_compose("config", overrides), out)


@pytest.fixture(scope="module")
def tiny_pool(tmp_path_factory):
    """Two tiny IPPO partners (one run, two seeds) on the coordination game, and a scripted one."""
    root = tmp_path_factory.mktemp("pool")
    tiny = [o for o in TINY_RUN if not o.startswith("algo=")]
    cfg = _compose(
        "partners",
        [
            "env=coordination",
            "algos=[ippo]",
            "num_seeds=2",
            "train_overrides=[" + ",".join(f'"{o}"' for o in tiny) + "]",
        ],
    )
    build(cfg, root / "pool")
    return root / "pool"


def test_an_ego_trains_beside_the_pool_and_keeps_it_in_its_checkpoint(tiny_pool, tmp_path):
    out = tmp_path / "ego"
    _train(out, "env=coordination", *TINY_RUN, f"algo.partners={tiny_pool}:heldout", "seed=7")
    res = json.loads((out / "results.json").read_text())
    assert res["learner"]["partners"] == f"{tiny_pool}:heldout" and res["learner"]["pool_size"] == 1
    # the run plays as an arena player, without the pool's files
    from alem.algos.checkpoint_player import load_trained
    from alem.checkpoint import latest, restore

    learner, _ = load_trained(out, alem.make("coordination-v0"))
    assert learner.partner_actor is None  # a template; the checkpoint holds the pool
    import jax

    state = restore(latest(out)[1], jax.vmap(learner.init)(jax.vmap(jax.random.key)(np.arange(1))))
    held = [
        p
        for p in json.loads((tiny_pool / "partners.json").read_text())["partners"]
        if p["split"] == "heldout"
    ]
    _, partner_params = load_trained(
        tiny_pool / "ippo", alem.make("coordination-v0"), held[0]["kwargs"]["seed_index"]
    )
    got = jax.tree.leaves(jax.tree.map(lambda x: x[0, 0], state.pool.actor))
    want = jax.tree.leaves(partner_params["actor"])
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))  # the partner, unchanged


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (
            ["env=tic_tac_toe"],
            r"algo.partners seats trained partners .* tic_tac_toe-v0 does not fit: it is not cooperative",
        ),
        (["algo.selfplay=uniform"], "does not combine with algo.selfplay=uniform"),
        (["algo.hidden=[16]"], r"partner 'ippo_s\d' is an actor of other shapes"),
    ],
)
def test_bad_partner_setups_are_refused_before_training(tiny_pool, tmp_path, overrides, match):
    from alem.train import plan

    cfg = _compose("config", ["env=coordination", *TINY_RUN, f"algo.partners={tiny_pool}", *overrides])
    with pytest.raises((ConfigError, alem.AlemError), match=match):
        plan(cfg, alem.make(cfg.env.id, **cfg.env.kwargs))


def test_scripted_or_torn_partners_are_refused(tiny_pool, tmp_path):
    from alem.train import plan

    env = alem.make("coordination-v0")
    scripted = tmp_path / "scripted"
    write_manifest(scripted / "partners.json", env, [("a", "random"), ("b", "random")])
    for pool, match in [
        (
            f"{scripted}:heldout",
            "the split holds no trained partner .*'random'.*; population play trains against checkpoint partners",
        ),
        (str(tmp_path / "none"), "no manifest at"),
    ]:
        cfg = _compose("config", ["env=coordination", *TINY_RUN, f"algo.partners={pool}"])
        with pytest.raises(ConfigError, match=match):
            plan(cfg, env)


def test_a_split_that_mixes_scripted_and_trained_partners_trains_with_the_trained_ones(
    tiny_pool, tmp_path, capsys
):
    from alem.pools import assign_splits
    from alem.train import plan

    env = alem.make("coordination-v0")
    names = ["ck0", "ck1", "r0", "r1"]
    seed = next(
        s
        for s in range(100)
        if sorted(n for n, x in assign_splits(names, s).items() if x == "train")
        in (["ck0", "r0"], ["ck0", "r1"], ["ck1", "r0"], ["ck1", "r1"])
    )
    entries = [(f"ck{k}", f"checkpoint:{tiny_pool / 'ippo'}", {"seed_index": k}) for k in range(2)]
    write_manifest(
        tmp_path / "mixed" / "partners.json", env, [*entries, ("r0", "random"), ("r1", "random")], seed=seed
    )
    cfg = _compose("config", ["env=coordination", *TINY_RUN, f"algo.partners={tmp_path / 'mixed'}"])
    assert plan(cfg, env).lcfg.pool_size == 1
    assert "algo.partners: scripted partners ['r" in capsys.readouterr().out


def test_an_actor_without_the_id_input_is_seated_by_a_learner_with_it_as_the_same_function(tiny_pool):
    """An IPPO partner beside a MAPPO ego (``agent_id``): zero weights on the appended one-hot
    id, the same action probabilities as the partner's own learner gives."""
    import jax
    import jax.numpy as jnp

    from alem.algos.checkpoint_player import load_trained
    from alem.algos.population import with_id_inputs
    from alem.train import plan

    env = alem.make("coordination-v0")
    tiny = [o for o in TINY_RUN if not o.startswith("algo=")]
    ego = plan(
        _compose("config", ["env=coordination", "algo=mappo", *tiny, f"algo.partners={tiny_pool}"]), env
    )
    assert ego.lcfg.agent_id and ego.lcfg.pool_size == 1
    (train,) = [
        p for p in json.loads((tiny_pool / "partners.json").read_text())["partners"] if p["split"] == "train"
    ]
    ippo, params = load_trained(tiny_pool / "ippo", env, train["kwargs"]["seed_index"])
    seated = jax.tree.map(lambda x: x[0], ego.learner.partner_actor)
    assert jax.tree.structure(seated) == jax.tree.structure(params["actor"])
    key = jax.random.key(3)
    _, ts = env.reset(key)
    h = ippo.actor_net.initial_hidden((1, env.num_agents))
    none = jnp.zeros((1, 0), jnp.float32)
    args = (ts.obs[None], none, ts.action_mask[None], jnp.ones((1,), bool), key)
    want = ippo.act(params, h, *args)[3]
    lifted = with_id_inputs(params["actor"], seated, env.num_agents)
    assert all(
        np.array_equal(a, b) for a, b in zip(jax.tree.leaves(lifted), jax.tree.leaves(seated), strict=True)
    )
    mappo_params = {**ego.learner.init(key).params, "actor": seated}
    gstate = jnp.zeros((1, 0), jnp.float32)
    if ego.learner.uses_global_state:
        env_state, _ = env.reset(key)
        gstate = env.global_state(env_state, env.default_params)[None]
    got = ego.learner.act(
        mappo_params, h, ts.obs[None], gstate, ts.action_mask[None], jnp.ones((1,), bool), key
    )[3]
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)


@pytest.mark.exhaustive  # three training runs (~2 minutes)
def test_an_ego_trained_with_a_pool_adapts_to_conventions_a_self_play_ego_misses(tmp_path):
    """Iterated coordination: each self-play partner settles on one of two conventions. A
    self-play ego fails with the partners of the other one; an ego trained beside the pool's
    train split (which holds both) reads its partner's last move and follows either, including
    the partners it never trained with."""
    steps = '"algo.total_steps=200000"'
    env_arg = "env.id=iterated_coordination-v0"
    build(
        _compose("partners", [env_arg, "algos=[ippo]", "num_seeds=8", f"train_overrides=[{steps}]"]),
        tmp_path / "pool",
    )
    _train(tmp_path / "sp", env_arg, "algo=ippo", "algo.total_steps=200000", "seed=100")
    _train(
        tmp_path / "pp",
        env_arg,
        "algo=ippo",
        "algo.total_steps=200000",
        "seed=100",
        f"algo.partners={tmp_path / 'pool'}",
    )
    res = evaluate_run(
        _compose(
            "evaluate",
            [
                env_arg,
                "mode=crossplay",
                f"players=[checkpoint:{tmp_path / 'sp'},checkpoint:{tmp_path / 'pp'}]",
                f"partners={tmp_path / 'pool'}",
                "episodes=16",
                "num_envs=16",
            ],
        ),
        tmp_path / "xp",
    )
    splits = {
        p["name"]: p["split"]
        for p in json.loads((tmp_path / "pool" / "partners.json").read_text())["partners"]
    }
    unseen = [j for j, name in enumerate(res["partners"]) if splits[name] != "train"]
    sp, pp = np.array(res["crossplay_matrix"])
    assert sp.min() < 8.0  # some partner follows the other convention (random pair: ~10, best: 20)
    assert pp.min() > 15.0 and pp[unseen].min() > 15.0  # every partner, the unseen ones too
    assert np.mean(pp) > np.mean(sp) + 3.0
