"""The CPU-side proxy of GPU cost (benchmarks/hlo.py): its counts on programs whose answer is known,
alem's loop-free auto-reset on the GPU target, and the one-line refusals."""

from __future__ import annotations

import contextlib
import io
import json

import jax
import jax.numpy as jnp
import pytest

from benchmarks import hlo


def _stats(fn, *args, work=1):
    return hlo.program_stats(fn, args, work)


def test_data_dependent_loops_are_told_apart_from_loops_of_known_trip_count():
    def dynamic(x):  # the trip count depends on the data: a host sync per iteration on a GPU
        return jax.lax.while_loop(lambda c: c[0] < c[1].sum(), lambda c: (c[0] + 1, c[1]), (0.0, x))[0]

    def fixed(x):
        return jax.lax.fori_loop(0, 7, lambda i, y: jnp.sin(y) * y, x)

    x = jnp.ones(64)
    dyn, fix = _stats(dynamic, x), _stats(fixed, x)
    assert dyn["while_dynamic"] == 1
    assert fix["while_dynamic"] == 0 and fix["while"] >= 1


def test_gathers_scatters_sorts_and_rng_are_counted():
    def fn(key, x, i):
        y = x[i] + jnp.sort(x)[:4].sum()  # one gather, one sort
        z = x.at[i].add(1.0)  # one scatter
        return y, z, jax.random.split(key, 8)  # one PRNG call: 8 keys of 2 words

    s = _stats(fn, jax.random.key(0), jnp.ones(32), jnp.array([3, 5, 7]), work=8)
    assert s["gather"] >= 1 and s["scatter"] >= 1 and s["sort"] == 1
    assert s["rng"] == 1 and s["rng_words_per_env_step"] == pytest.approx(2.0)
    plain = _stats(lambda x: x * 2.0, jnp.ones(32))
    assert (plain["gather"], plain["scatter"], plain["sort"], plain["rng"], plain["while_dynamic"]) == (
        0,
    ) * 5


def test_bytes_per_env_step_are_the_traffic_of_the_program():
    n = 4096
    s = _stats(lambda a, b: a + b, jnp.ones(n), jnp.ones(n), work=n)
    assert s["bytes_per_env_step"] == pytest.approx(12.0, rel=0.05)  # two float32 reads, one write
    assert s["kernels"] >= 1


def test_alem_kuhn_step_has_no_data_dependent_loop_on_the_gpu_target():
    """The GPU fix this tool measured: on an accelerator the cheap poker reset is selected for every
    env (no loop); on CPU alem keeps the served rounds (one data-dependent loop)."""
    gpu = hlo.env_rows("kuhn_poker-v0", None, 64, target="gpu")[0]
    cpu = hlo.env_rows("kuhn_poker-v0", None, 64, target="cpu")[0]
    assert (gpu["side"], gpu["N"]) == ("alem", 64)
    assert gpu["while_dynamic"] == 0 and gpu["conditional"] == 0
    assert cpu["while_dynamic"] == 1
    assert gpu["scatter"] < cpu["scatter"]


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        hlo.main(argv)
    return exit_.value.code, err.getvalue()


def test_unknown_id_and_missing_reference_are_one_line(monkeypatch, tmp_path):
    code, err = _run(["--env", "no_such_game-v0"])
    assert code == 2 and err.count("\n") == 1 and "no_such_game-v0" in err
    code, err = _run(["--env", "kuhn_poker-v0", "--reference", "nosuch"])
    assert code == 2 and err.count("\n") == 1 and "'nosuch'" in err
    pytest.importorskip("pgx")
    from benchmarks.references import pgx as pgx_ref

    monkeypatch.setattr(pgx_ref, "pgx_available", lambda: False)
    code, err = _run(["--env", "kuhn_poker-v0"])
    assert code == 2 and err.count("\n") == 1 and "pgx is not installed" in err
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    code, err = _run(["--env", "kuhn_poker-v0", "--reference", "none", "--out", str(taken)])
    assert code == 2 and "already exists" in err and taken.read_text() == "{}"


def test_cli_writes_json_and_table(tmp_path):
    out = tmp_path / "hlo.json"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        doc = hlo.main(
            ["--env", "tic_tac_toe-v0", "--reference", "none", "--num-envs", "16", "--out", str(out)]
        )
    written = json.loads(out.read_text())
    assert written["rows"] == json.loads(json.dumps(doc["rows"]))
    [row] = written["rows"]
    assert (row["env"], row["side"], row["N"], row["kind"]) == ("tic_tac_toe-v0", "alem", 16, "env step")
    assert row["while_dynamic"] == 0  # board games share one start state: selected, never looped
    table = printed.getvalue().splitlines()
    assert table[0].startswith("| what | env | side | N | kernels") and len(table) == 3


def test_auto_reference_measures_chess_against_pgx():
    # chess-v0 is not in the default list (its compile is slow) but Pgx ships it.
    assert hlo.auto_reference("chess-v0") == "pgx"
    assert hlo.auto_reference("tic_tac_toe-v0") == "pgx"
