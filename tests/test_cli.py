"""alem.cli: what alem.train and alem.evaluate share."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from alem.cli import env_shorthand, make_env, override_key
from alem.errors import ConfigError, UnknownEnvError


def test_env_shorthand_rewrites_registered_ids_only():
    argv = ["prog", "env=tic_tac_toe-v0", "env=simple_spread", "env=mpe/simple_tag-v0", "envx=a-v0"]
    assert env_shorthand(argv) == [
        "prog",
        "env.id=tic_tac_toe-v0",
        "env=simple_spread",  # a configs/env file name
        "env.id=mpe/simple_tag-v0",
        "envx=a-v0",
    ]


def test_make_env_names_what_was_wrong():
    env = make_env(OmegaConf.create({"id": "iterated_prisoners_dilemma-v0", "kwargs": {"num_rounds": 3}}))
    assert env.id == "iterated_prisoners_dilemma-v0"
    with pytest.raises(ConfigError, match="env.id must be a registered env id string"):
        make_env({"id": 3})
    with pytest.raises(ConfigError, match="env.kwargs must be a mapping"):
        make_env({"id": "prisoners_dilemma-v0", "kwargs": [1, 2]})
    with pytest.raises(UnknownEnvError, match="prisoners_dilemma-v0"):
        make_env({"id": "prisoners_dilema-v0"})


def test_override_key_strips_prefixes_and_skips_hydra_settings():
    assert override_key("+algo.lr=3e-4") == "algo.lr"
    assert override_key("~wandb.tags") == "wandb.tags"
    assert override_key("hydra.run.dir=x") is None and override_key("hydra/job_logging=none") is None


def test_resume_keys_refuses_another_output_dir_and_skips_ignored_keys(tmp_path):
    from alem.cli import resume_keys

    cfg = OmegaConf.create({"output_dir": str(tmp_path / "elsewhere"), "seed": 3})
    keys, refused = resume_keys(
        cfg, tmp_path, ["seed=3", "resume=x", "hydra.run.dir=y", "output_dir=z", "+wandb.tags=[a]"]
    )
    assert keys == ["seed", "wandb.tags"]
    assert len(refused) == 1 and "writes into its own directory" in refused[0]
    same = OmegaConf.create({"output_dir": str(tmp_path)})
    assert resume_keys(same, tmp_path, ["output_dir=."], ignore=()) == ([], [])


_INTERRUPTED_APP = """
import sys

from alem.cli import hydra_app


class HalfBuilt:
    # What a signal landing inside a constructor leaves behind: a finaliser that fails.
    def __del__(self):
        raise AttributeError("_ssock")


def body(cfg):
    keep = HalfBuilt()
    keep.cycle = keep  # collected at exit, after the handler has printed its line
    raise KeyboardInterrupt


hydra_app("alem.train", "config", body)()
"""


def test_ctrl_c_prints_one_line_even_when_teardown_fails(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_APP, f"hydra.run.dir={tmp_path}", "hydra.output_subdir=null"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 130, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("alem.train: interrupted;"), proc.stderr


_IMPORT_INTERRUPTED_APP = """
import os

from alem.cli import hydra_app


def body(cfg):
    if os.environ.get("IMPORT_FAILS") == "plain":  # an import that really fails is not an interrupt
        raise ImportError("initialization failed")
    try:
        raise KeyboardInterrupt  # what tensorstore's module initialisation turns into an ImportError
    except KeyboardInterrupt as e:
        raise ImportError("initialization failed") from e


hydra_app("alem.train", "config", body)()
"""


def test_ctrl_c_inside_a_c_extension_import_is_an_interrupt_not_a_traceback(tmp_path):
    """A SIGINT that lands in a C extension's module initialisation (orbax's tensorstore, loaded
    for checkpoints) surfaces as an ImportError caused by the KeyboardInterrupt: one line and 130,
    as any Ctrl-C (seen once in CI); an ImportError of its own still fails with its traceback."""
    import os
    import subprocess
    import sys

    args = [
        sys.executable,
        "-c",
        _IMPORT_INTERRUPTED_APP,
        f"hydra.run.dir={tmp_path}",
        "hydra.output_subdir=null",
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("alem.train: interrupted;"), proc.stderr
    env = {**os.environ, "IMPORT_FAILS": "plain", "HYDRA_FULL_ERROR": "1"}
    plain = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert plain.returncode == 1 and "ImportError: initialization failed" in plain.stderr
    assert "interrupted" not in plain.stderr


@pytest.mark.parametrize(
    ("config", "args", "said"),
    [
        (
            "config",
            ["algo.lrr=1"],
            "algo.lrr is not an option (did you mean 'algo.lr'?) (a key of your own: +algo.lrr=<value>)",
        ),
        ("config", ["algo=nope"], "algo=nope is not one of the algo files: ['cppo', "),
        ("config", ["env=nope"], "(or env.id=<any registered id>)"),
        # a family with no file of its own: the hint lists its registered ids
        ("config", ["env=smax"], "registered ids of that family: env.id=smax_3m-v0, env.id=smax_2s3z-v0,"),
        (
            "config",
            ["env=overcooked"],
            "env.id=overcooked_cramped_room-v0, env.id=overcooked_asymmetric_advantages-v0",
        ),
        ("config", ["algo.lr=[1"], "cannot parse the overrides: no viable alternative at input '[1'"),
        ("config", ["algo.lr=1,2"], "Ambiguous value for argument 'algo.lr=1,2'; 1. To use it as a list"),
        ("evaluate", ["llm=scripted", "llm.temperature=0.5"], "llm.temperature is not an option"),
        ("partners", ["num_seed=2"], "num_seed is not an option (did you mean 'num_seeds'?)"),
        (
            "config",
            ["sweep.hidden=[8,16]"],
            "hidden is not one of them (a structural knob is swept with Hydra's",
        ),
    ],
)
def test_an_override_hydra_refuses_is_one_line_naming_it(config, args, said):
    """What Hydra says in several lines (and a traceback hint) becomes one line; a good command
    line passes untouched, and a multirun is left to Hydra."""
    from alem.cli import override_problem

    problem = override_problem(config, args)
    assert problem is not None and "\n" not in problem and said in problem
    assert override_problem(config, []) is None
    assert override_problem(config, ["-m", *args]) is None
