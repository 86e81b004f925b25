"""alem.arena.crossplay: partner manifests and their splits, cross-play seatings and results."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hydra import compose, initialize_config_module

import alem
from alem import pools
from alem.arena import crossplay as xp
from alem.arena.command import run
from alem.errors import ConfigError
from alem.players import FunctionPlayer, register_player


def cfg(*overrides):
    with initialize_config_module(config_module="alem.configs", version_base=None):
        return compose(config_name="evaluate", overrides=list(overrides))


def _idle(env):
    """A partner that never acts: action 0 (LBF's no-op) in every seat, every step."""
    import jax.numpy as jnp

    return FunctionPlayer(lambda key, turn: jnp.zeros(turn.obs.shape[0], jnp.int32), "idle")


register_player("lbf_8x8_2p_2f_coop", "idle", _idle)


def test_splits_are_disjoint_complete_and_stable():
    names = [f"p{i}" for i in range(8)]
    s = pools.assign_splits(names, seed=3)
    assert set(s) == set(names) and set(s.values()) == set(pools.SPLITS)
    counts = {k: list(s.values()).count(k) for k in pools.SPLITS}
    assert counts == {"heldout": 2, "validation": 1, "train": 5}
    assert pools.assign_splits(names[::-1], seed=3) == s  # the order given does not matter
    assert any(pools.assign_splits(names, seed=k) != s for k in range(4, 8))  # the seed does
    assert pools.assign_splits(["a"], 0) == {"a": "train"}
    assert sorted(pools.assign_splits(["a", "b"], 0).values()) == ["heldout", "train"]
    with pytest.raises(ConfigError, match="distinct"):
        pools.assign_splits(["a", "a"])


def test_seatings_put_each_ego_in_every_seat_with_each_partner():
    seats = xp.crossplay_seatings(num_egos=2, num_partners=3, num_seats=3)
    # self-play x2, ego-with-partner 2*3*3, partner self-play x3, the random pair
    assert len(seats) == 2 + 18 + 3 + 1 and len(set(seats)) == len(seats)
    for e in range(2):
        for p in range(2, 5):
            mine = [s for s in seats if set(s) == {e, p}]
            assert sorted(s.index(e) for s in mine) == [0, 1, 2] and all(s.count(e) == 1 for s in mine)
    assert (5, 5, 5) in seats


def _pool(tmp_path, env, specs, name="pool"):
    folder = tmp_path / name
    folder.mkdir()
    pools.write_manifest(folder / "partners.json", env, specs, seed=0)
    return folder


def test_a_pool_of_partners_identical_to_the_ego_has_no_gap(tmp_path):
    env = alem.make("coordination-v0")
    pool = _pool(tmp_path, env, [(f"r{i}", "random") for i in range(4)])
    out = tmp_path / "run"
    res = run(
        cfg(
            "env=coordination",
            "mode=crossplay",
            "players=[random]",
            f"partners={pool}",
            "episodes=6",
            "num_envs=3",
            "report=html",
        ),
        out,
    )
    m = np.array(res["crossplay_matrix"])
    assert m.shape == (1, 4) and np.allclose(m, res["selfplay"][0]) and res["gap"] == [0.0]
    assert res["random_pair"] == res["selfplay"][0] and res["complete"]
    assert res["partners"] == ["r0", "r1", "r2", "r3"] and res["players"] == ["random"]
    rows = (out / "crossplay.csv").read_text().splitlines()
    assert rows[0].split(",")[:4] == ["env_id", "player", "partner", "split"] and len(rows) == 5
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["crossplay_matrix"] == res["crossplay_matrix"]
    # the results page: a row per player, a column per partner, in both matrices
    page = (out / "report.html").read_text()
    heads = re.findall(r'<table class="heat"><thead><tr>(.*?)</tr>', page)
    assert len(heads) == 2 and all(re.findall(r"<th>(.*?)</th>", h)[1:] == res["partners"] for h in heads)
    assert "<h2>Cross-play</h2>" in page and f"{res['selfplay'][0]:+.3f}" in page
    # held-out split only: the same cells for the held-out partners
    held = run(
        cfg(
            "env=coordination",
            "mode=crossplay",
            "players=[random]",
            f"partners={pool}:heldout",
            "episodes=6",
            "num_envs=3",
        ),
        tmp_path / "held",
    )
    split = json.loads((pool / "partners.json").read_text())["partners"]
    assert held["partners"] == [p["name"] for p in split if p["split"] == "heldout"]


def test_a_partner_that_never_acts_gives_the_floor(tmp_path):
    """Cooperative foraging: every food needs both agents, so with an idle partner the ego loads
    nothing (team return 0), while with a copy of itself it forages; a copy of the ego is the best
    partner-specific player for itself (normalised 1)."""
    env = alem.make("lbf_8x8_2p_2f_coop-v0")
    pool = _pool(tmp_path, env, [("idle", "idle"), ("twin", "centre"), ("rnd", "random")])
    res = run(
        cfg(
            "env.id=lbf_8x8_2p_2f_coop-v0",
            "mode=crossplay",
            "players=[centre]",
            f"partners={pool}",
            "episodes=8",
            "num_envs=8",
        ),
        tmp_path / "run",
    )
    (idle, twin, rnd) = res["crossplay_matrix"][0]
    assert idle == 0.0 and res["crossplay_ci95"][0][0] == 0.0 and res["partner_selfplay"][0] == 0.0
    assert res["selfplay"][0] > 0.1 and twin == pytest.approx(res["selfplay"][0])
    assert res["normalized"][0][1] == pytest.approx(1.0)
    assert res["gap"][0] == pytest.approx(res["selfplay"][0] - (idle + twin + rnd) / 3)


def test_bad_pools_are_refused_by_name_before_anything_is_written(tmp_path):
    env = alem.make("coordination-v0")
    ckpt = tmp_path / "pool" / "ck"
    ckpt.mkdir(parents=True)
    (ckpt / "params.bin").write_bytes(b"12345678")
    pools.write_manifest(tmp_path / "pool" / "partners.json", env, [("a", "random"), ("ck", "checkpoint:ck")])
    manifest = tmp_path / "pool" / "partners.json"

    def refused(match, *overrides, env_arg="env=coordination"):
        out = tmp_path / "out"
        with pytest.raises(ConfigError, match=match):
            run(cfg(env_arg, "players=[random]", "episodes=2", *overrides), out)
        assert not out.exists()

    (ckpt / "params.bin").write_bytes(b"1234")  # torn after the pool was built
    refused(r"partner 'ck'.*do not match the manifest's digest", "mode=crossplay", f"partners={manifest}")
    (ckpt / "params.bin").unlink()
    ckpt.rmdir()
    refused(r"partner 'ck': checkpoint folder .*ck does not exist", "mode=crossplay", f"partners={manifest}")
    refused(
        r"the pool is for .coordination-v0., not .climbing-v0.",
        "mode=crossplay",
        f"partners={manifest}",
        env_arg="env.id=climbing-v0",
    )
    refused(
        r"mode=crossplay measures how well players cooperate; tic_tac_toe-v0 is zero-sum",
        "mode=crossplay",
        f"partners={manifest}",
        env_arg="env=tic_tac_toe",
    )
    refused(r"unknown split 'test'", "mode=crossplay", f"partners={manifest}:test")
    refused(r"give partners=<manifest>", "mode=crossplay")
    refused(r"partners= is read by mode=crossplay only", f"partners={manifest}")
    refused(r"no manifest at", "mode=crossplay", f"partners={tmp_path / 'nowhere'}")
    (tmp_path / "torn.json").write_text('{"format": "alem-partn')
    refused(
        r"torn.json is not a readable partner manifest",
        "mode=crossplay",
        f"partners={tmp_path / 'torn.json'}",
    )
    three = json.loads(manifest.read_text())
    three["num_agents"] = 3
    (tmp_path / "three.json").write_text(json.dumps(three))
    refused(r"fill 3 seats; coordination-v0 has 2", "mode=crossplay", f"partners={tmp_path / 'three.json'}")
    with pytest.raises(ConfigError, match="never overwritten"):
        pools.write_manifest(manifest, env, [("a", "random")])


def test_the_shipped_pool_is_whole_and_the_others_are_named():
    """``partners=builtin``: the pool inside the package for the env, its digests checked."""
    env = alem.make("lbf_8x8_2p_2f_coop-v0")
    pool = pools.read_pool("builtin", env)
    assert len(pool.partners) >= 8 and "lbf_8x8_2p_2f_coop-v0" in pools.shipped_pools()
    held = pools.read_pool("builtin:heldout", env).partners
    train = pools.read_pool("builtin:train", env).partners
    assert held and train and not {p.name for p in held} & {p.name for p in train}
    assert {p.spec.partition(":")[0] for p in pool.partners} >= {"checkpoint", "centre"}
    for env_id in pools.shipped_pools():  # every shipped pool reads whole (digests checked)
        assert {p.split for p in pools.read_pool("builtin", alem.make(env_id)).partners} == set(pools.SPLITS)
    assert "overcooked_cramped_room-v0" in pools.shipped_pools()
    with pytest.raises(
        ConfigError, match=r"partners=builtin: no partner pool ships for coordination-v0; pools ship for \["
    ):
        pools.read_pool("builtin", alem.make("coordination-v0"))


@pytest.mark.integration  # compiles the pool's trained partners
def test_the_shipped_partners_forage_with_each_other_and_with_a_scripted_ego(tmp_path):
    res = run(
        cfg(
            "env.id=lbf_8x8_2p_2f_coop-v0",
            "mode=crossplay",
            "players=[centre]",
            "partners=builtin:heldout",
            "episodes=8",
            "num_envs=8",
        ),
        tmp_path / "run",
    )
    trained = [j for j, name in enumerate(res["partners"]) if "_s" in name]
    assert len(trained) >= 2 and res["complete"]
    # each trained partner forages with a copy of itself (random pair: about 0)
    assert min(res["partner_selfplay"][j] for j in trained) > 0.3 > res["random_pair"]


def test_an_llm_ego_plays_cross_play_through_the_text_bridge(tmp_path):
    """``players=[llm:first]`` (the scripted stand-in of an LLM) with every partner: its replies
    go through the text bridge, and its invalid-reply counters reach the seatings' results."""
    env = alem.make("coordination-v0")
    pool = _pool(tmp_path, env, [("r0", "random"), ("r1", "random")])
    out = tmp_path / "run"
    res = run(
        cfg(
            "env=coordination",
            "mode=crossplay",
            "players=[llm:first]",
            "llm=scripted",
            f"partners={pool}",
            "episodes=4",
            "num_envs=2",
        ),
        out,
    )
    assert res["players"] == ["llm:first"] and len(res["crossplay_matrix"][0]) == 2
    # llm:first always names the first legal move: with itself it always coordinates
    assert res["selfplay"][0] == 1.0
    seats = [
        s
        for d in sorted((out / "matches").iterdir())
        for s in json.loads((d / "results.json").read_text())["seats"]
        if s["player"] == "llm:first"
    ]
    assert seats and all(s["llm_decisions"] > 0 and s["invalid_rate"] == 0.0 for s in seats)


@pytest.mark.parametrize("bad", ["abc", -1, True, 1.5, None])
def test_a_hand_edited_seed_index_is_refused_with_the_manifest_the_partner_and_the_field(tmp_path, bad):
    """``"seed_index": "abc"`` read fine and failed at play time in int(), a 25-line traceback."""
    env = alem.make("coordination-v0")
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "params.bin").write_bytes(b"1234")
    manifest = tmp_path / "partners.json"
    pools.write_manifest(manifest, env, [("a", "random"), ("ck", "checkpoint:ck", {"seed_index": 0})])
    assert pools.read_pool(manifest, env).partners[1].kwargs == {"seed_index": 0}
    data = json.loads(manifest.read_text())
    data["partners"][1]["kwargs"]["seed_index"] = bad
    manifest.write_text(json.dumps(data))
    field = rf"partner 'ck' has kwargs.seed_index={re.escape(repr(bad))}; a non-negative integer is expected"
    with pytest.raises(
        ConfigError, match=rf"partners={re.escape(str(tmp_path))}: {field} \({re.escape(str(manifest))}\)"
    ):
        pools.read_pool(tmp_path, env)
