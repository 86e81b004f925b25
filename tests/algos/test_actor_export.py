"""alem.algos.actor_export: actor-only partners (read, refused when damaged; the export itself
is checked against its run in tests/arena/test_partners.py, which trains the runs)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest

import alem
from alem.algos.actor_export import ACTOR_FILE, ACTOR_META, export_actor, is_actor_folder, read_actor
from alem.algos.checkpoint_player import CheckpointPlayer, load_trained
from alem.errors import AlemError, CheckpointError

LBF = "lbf_8x8_2p_2f_coop-v0"
SHIPPED = Path(alem.__file__).parent / "pools" / "lbf_8x8_2p_2f_coop"


@pytest.fixture
def actor(tmp_path):
    """A copy of the shipped LBF pool's IPPO actors (four seeds), free to damage."""
    out = tmp_path / "ippo"
    shutil.copytree(SHIPPED / "ippo", out)
    return out


def test_the_shipped_partners_are_exported_actors_with_every_seed(actor):
    assert is_actor_folder(actor) and not (actor / "checkpoints").exists()
    meta, leaves = read_actor(actor)
    assert meta["env_id"] == LBF and meta["num_seeds"] == 4 and meta["source"]["seed_indices"] == [0, 1, 2, 3]
    assert all(x.shape[0] == 4 and x.dtype == np.float32 for x in leaves)
    env = alem.make(LBF)
    rows = [load_trained(actor, env, k)[1]["actor"] for k in range(4)]
    # each seed_index is its own row of the stacked leaves, and the seeds differ
    for k, params in enumerate(rows):
        for got, want in zip(jax.tree.leaves(params), leaves, strict=True):
            np.testing.assert_array_equal(np.asarray(got), want[k])
    assert not np.array_equal(jax.tree.leaves(rows[0])[0], jax.tree.leaves(rows[1])[0])


def test_damaged_or_misused_exported_actors_are_refused_by_name(actor, tmp_path):
    env = alem.make(LBF)
    with pytest.raises(AlemError, match=r"seed_index=4 out of range: the run has 4 seeds"):
        load_trained(actor, env, 4)
    with pytest.raises(AlemError, match="trained on 'lbf_8x8_2p_2f_coop-v0', not 'coordination-v0'"):
        load_trained(actor, alem.make("coordination-v0"))
    with pytest.raises(AlemError, match="an exported actor keeps no self-play pool"):
        CheckpointPlayer(env, spec=f"{actor}#0")
    with pytest.raises(AlemError, match="is an exported actor already"):
        export_actor(actor, tmp_path / "again")
    with pytest.raises(AlemError, match="exists; an exported actor is written to a new folder"):
        export_actor(actor, actor)
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")  # the final rename would fail on it
    with pytest.raises(AlemError, match=r"link is a symlink to .*nowhere; an exported actor is written"):
        export_actor(actor, tmp_path / "link")

    data = (actor / ACTOR_FILE).read_bytes()
    (actor / ACTOR_FILE).write_bytes(data[: len(data) // 2])  # a torn copy
    with pytest.raises(CheckpointError, match=rf"{actor.name}: not a readable exported actor"):
        load_trained(actor, env)
    (actor / ACTOR_FILE).write_bytes(data)

    meta = json.loads((actor / ACTOR_META).read_text())
    edited = {**meta, "learner": {**meta["learner"], "hidden": [16]}}  # leaves of other shapes
    (actor / ACTOR_META).write_text(json.dumps(edited))
    with pytest.raises(CheckpointError, match="do not fit the learner its actor.json describes"):
        load_trained(actor, env)
    (actor / ACTOR_META).write_text(json.dumps({**meta, "format": "alem-actor/9"}))
    with pytest.raises(CheckpointError, match=r"format 'alem-actor/9', not alem-actor/1"):
        load_trained(actor, env)
    (actor / ACTOR_META).write_text(json.dumps({**meta, "leaves": meta["leaves"][:-1] + [[[1], "float32"]]}))
    with pytest.raises(CheckpointError, match=r"leaf \d+ is .* the metadata says \(1,\) float32"):
        load_trained(actor, env)
