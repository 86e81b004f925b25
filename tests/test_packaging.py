"""Packaging: the wheel holds the mapped packages and configs, works outside the repo, and its core
install (no extras) is the lean env package; every extra is declared and named by alem.extras."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MAPPED = PYPROJECT["tool"]["setuptools"]["package-dir"]

SMOKE = """
import alem, jax, pathlib
print(alem.__file__)
assert "site-packages" in alem.__file__, alem.__file__
import alem.envs.games.matrix as m
assert "site-packages" in m.__file__, m.__file__
env = alem.make("iterated_stag_hunt-v0")
state, ts = env.reset(jax.random.key(0))
state, ts = env.step(jax.random.key(1), state, jax.numpy.array([0, 0]))
assert ts.reward.tolist() == [2.0, 2.0]
from hydra import compose, initialize_config_module
with initialize_config_module(config_module="alem.configs", version_base=None):
    cfg = compose(config_name="config")
print("OK", cfg.env.id)
"""


def _package_dirs() -> set[str]:
    """Every folder with an __init__.py under the mapped roots, as a dotted package name."""
    found = set()
    for pkg, folder in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    return found


def test_every_package_folder_is_listed_in_pyproject():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert _package_dirs() == listed


def _dist_names(requirements: list[str]) -> set[str]:
    import re

    return {re.split(r"[<>=!\[; ]", d, maxsplit=1)[0].lower().replace("_", "-") for d in requirements}


def _extra_closure(extra: str) -> set[str]:
    """The distributions an extra declares, with the ``alem[...]`` extras it names."""
    import re

    out: set[str] = set()
    for req in PYPROJECT["project"]["optional-dependencies"][extra]:
        if req.startswith("alem["):
            for sub in re.findall(r"[\w-]+", req[len("alem[") : req.index("]")]):
                out |= _extra_closure(sub)
        else:
            out |= _dist_names([req])
    return out


def test_metadata_lives_only_in_pyproject():
    cfg = (ROOT / "setup.cfg").read_text()
    assert "[metadata]" not in cfg and "[options]" not in cfg
    deps = _dist_names(PYPROJECT["project"]["dependencies"])
    assert deps == {"jax", "numpy", "jaxtyping"}, "the core install is the env package only"
    assert "jax==" not in " ".join(PYPROJECT["project"]["dependencies"]), "never pin jax to one version"
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(extras) >= {
        "train",
        "wandb",
        "arena",
        "llm",
        "llmtrain",
        "interop",
        "render",
        "gymnax",
        "dev",
        "all",
    }
    assert {"flax", "optax", "distrax", "hydra-core", "omegaconf", "orbax-checkpoint"} <= _extra_closure(
        "train"
    )
    assert "wandb" not in _extra_closure("train")


def test_every_extra_that_alem_names_provides_its_modules():
    """alem.extras.EXTRAS (what a feature checks before it runs) agrees with pyproject's extras."""
    from alem.extras import EXTRAS

    dist = {"orbax.checkpoint": "orbax-checkpoint", "hydra": "hydra-core", "PIL": "pillow"}
    for extra, modules in EXTRAS.items():
        declared = _extra_closure(extra)
        for module in modules:
            assert dist.get(module, module).lower() in declared, f"{module} is not in the {extra!r} extra"
    for extra in EXTRAS:
        if extra not in ("llmtrain", "verifiers"):  # all leaves out torch and verifiers' stack
            assert _extra_closure(extra) <= _extra_closure("all"), f"alem[all] misses part of {extra!r}"


# the checkout's own leftovers (the .gitignore'd folders at its root), which a build never reads
_ROOT_LEFTOVERS = {"build", "dist", ".git", ".venv", "venv", "runs", "outputs", "multirun", "site", "wandb"}


def _not_source(folder: str, names: list[str]) -> set[str]:
    skip = {n for n in names if n == "__pycache__" or n.endswith((".egg-info", "_cache"))}
    return skip | (_ROOT_LEFTOVERS & set(names) if Path(folder) == ROOT else set())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the tree: setuptools writes build/ and *.egg-info into the
    folder it builds, so two xdist workers building the checkout itself race on those (CI failed
    so once), and a read-only checkout could not be built at all."""
    import shutil

    src = tmp_path_factory.mktemp("source") / "alem"
    shutil.copytree(ROOT, src, ignore=_not_source)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
        cwd=out,
    )
    (whl,) = out.glob("alem-*.whl")
    return whl


@pytest.mark.integration  # builds the wheel
def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "alem/envs/games/matrix.py" in names
    assert "alem/configs/config.yaml" in names
    assert any(n.startswith("alem/configs/env/") and n.endswith(".yaml") for n in names)
    # the shipped partner pools, every file of them (orbax's data files have no suffix)
    pools = ROOT / "alem" / "pools"
    shipped = {str(f.relative_to(ROOT)) for f in pools.rglob("*") if f.is_file()}
    assert shipped and shipped <= set(names)
    assert not any(n.startswith(("envs/", "algos/", "configs/", "tests/", "examples/")) for n in names)
    # the torch scripts live in the repository's examples/, not in the wheel
    assert not any("grpo_demo" in n or "lora_policy" in n or n.endswith("torch") for n in names)


def _site_dirs_of_this_interpreter() -> list[str]:
    """The site-packages folders where this interpreter (base or virtualenv) finds its packages."""
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


@pytest.mark.integration  # builds the wheel
def test_wheel_works_in_a_fresh_venv(wheel, tmp_path):
    """A venv that sees this interpreter's dependencies but gets alem only from the wheel.

    ``venv.create(system_site_packages=True)`` would expose the *base* interpreter's packages,
    not those of the virtualenv the suite runs in (where jax is). Instead a ``.pth`` file adds
    this interpreter's site folders after the new venv's own: plain path entries, so the
    ``.pth`` hooks inside them (the editable install of alem) are not run and ``import alem``
    must come from the wheel.
    """
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    site = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "outer_site.pth").write_text("\n".join(_site_dirs_of_this_interpreter()) + "\n")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    res = subprocess.run([py, "-c", SMOKE], cwd=tmp_path, capture_output=True, text=True, env=clean)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[-1] == "OK mpe/simple_spread-v0"
    assert lines[0].startswith(str(env_dir)), f"alem was not imported from the wheel: {lines[0]}"


#: Every id in a lean venv: made, reset and stepped under jit (``trace``: traced with
#: ``jax.eval_shape``, which runs every import and line of reset and step but compiles nothing).
LEAN = """
import sys, jax, jax.numpy as jnp, alem
from alem.rollout import random_actions
from alem.wrappers import BatchedAutoReset, EpisodeStats
trace = sys.argv[1:] == ["trace"]
ok, needs_extra = 0, []
for env_id in sorted(alem.registry()):
    try:
        env = alem.make(env_id)
    except alem.DependencyNotInstalled as e:
        assert 'pip install "alem[' in str(e), e
        needs_extra.append(env_id)
        continue
    p = env.default_params
    if trace:
        def reset_and_step(k, p, env=env):
            state, ts = env.reset(k, p)
            return env.step(k, state, random_actions(env, k, ts), p)
        jax.eval_shape(reset_and_step, jax.random.key(0), p)
        ok += 1
        continue
    state, ts = jax.jit(env.reset)(jax.random.key(0), p)
    state, ts = jax.jit(env.step)(jax.random.key(1), state, random_actions(env, jax.random.key(2), ts), p)
    assert bool(jnp.isfinite(ts.reward).all()), env_id
    ok += 1
env = alem.make("iterated_prisoners_dilemma-v0")  # the wrappers and vmap, on one small env
batch = BatchedAutoReset(EpisodeStats(env), num_envs=4)
bs, bts = jax.jit(batch.reset)(jax.random.key(3), env.default_params)
acts = jax.vmap(lambda k, t: random_actions(env, k, t))(jax.random.split(jax.random.key(4), 4), bts)
bs, bts = jax.jit(batch.step)(jax.random.key(5), bs, acts, env.default_params)
assert bts.reward.shape == (4, 2)
print(ok, " ".join(needs_extra))
"""


@pytest.mark.integration
def test_core_wheel_is_lean_and_traces_every_env(wheel, tmp_path):
    """``pip install alem`` alone, from the index in an isolated venv: at most 25 distributions,
    every env id but the gymnax adapters (extra ``gymnax``) makes, and traces its reset and step
    (every import and line they run; compiling and stepping every id in a lean venv is the test
    below, on the oldest JAX, and on the newest in the default tier's smoke), the wrappers compile
    and step under vmap, and a feature of an extra fails with one line naming its install."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], check=True)
    freeze = subprocess.run(
        [py, "-m", "pip", "list", "--format=freeze"], check=True, capture_output=True, text=True
    )
    dists = [line.split("==")[0].lower() for line in freeze.stdout.splitlines() if line.strip()]
    installed = [d for d in dists if d not in ("pip", "setuptools", "wheel")]
    assert len(installed) <= 25, installed
    assert not {"flax", "optax", "hydra-core", "wandb", "orbax-checkpoint"} & set(installed), installed
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # the check is that every id compiles and steps, not how fast: LLVM -O0 compiles ~35% sooner
    lean_env = {**clean, "XLA_FLAGS": "--xla_backend_optimization_level=0"}
    res = subprocess.run(
        [py, "-c", LEAN, "trace"], cwd=tmp_path, capture_output=True, text=True, env=lean_env
    )
    assert res.returncode == 0, res.stderr[-3000:]
    ok, *needs_extra = res.stdout.split()
    import alem

    assert needs_extra == sorted(k for k in alem.registry() if k.startswith("gymnax/"))
    assert int(ok) == len(alem.registry()) - len(needs_extra)
    train = subprocess.run([py, "-m", "alem.train"], cwd=tmp_path, capture_output=True, text=True, env=clean)
    assert train.returncode == 2 and train.stdout == ""
    assert train.stderr.strip().splitlines() == [
        'error: python -m alem.train needs the "train" extra (missing: flax, optax, distrax, hydra, '
        'omegaconf, orbax.checkpoint): pip install "alem[train]"'
    ]


def test_every_third_party_import_of_the_package_is_a_declared_dependency():
    """Each module the package imports from outside the standard library is in pyproject's
    dependencies or an optional extra (orbax-checkpoint and scipy were imported undeclared once)."""
    import ast
    import re
    import sys
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[<>=!\\[; ]", d, maxsplit=1)[0].lower() for d in meta["dependencies"]}
    for extra in meta.get("optional-dependencies", {}).values():
        declared |= {re.split(r"[<>=!\\[; ]", d, maxsplit=1)[0].lower() for d in extra}
    # import name -> distribution name, where they differ
    dist = {"orbax": "orbax-checkpoint", "hydra": "hydra-core", "PIL": "pillow", "yaml": "pyyaml"}
    missing = set()
    for folder in ("alem", "envs", "algos"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top in sys.stdlib_module_names or top in ("alem", "__future__"):
                        continue
                    if dist.get(top, top).lower().replace("_", "-") not in {
                        d.replace("_", "-") for d in declared
                    }:
                        missing.add(f"{top} ({path.relative_to(ROOT)})")
    assert not missing, f"imported but not declared in pyproject.toml: {sorted(missing)}"


def _declared_jax_floor() -> str:
    import re
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (jax_dep,) = [d for d in deps if re.match(r"jax\s*[<>=]", d)]
    return re.search(r">=\s*([\d.]+)", jax_dep).group(1)


@pytest.mark.integration
def test_core_wheel_runs_every_env_on_the_oldest_declared_jax(wheel, tmp_path):
    """The lean core against the oldest JAX pyproject.toml admits (jax and jaxlib at the floor of
    ``jax>=``), in an isolated venv: every id but the gymnax adapters makes, resets and steps
    under jit (the same script as above). A floor that no longer works fails here."""
    floor = _declared_jax_floor()
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [py, "-m", "pip", "install", "-q", f"jax=={floor}", f"jaxlib=={floor}", str(wheel)], check=True
    )
    version = subprocess.run([py, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    assert version.stdout.strip() == floor
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    lean_env = {**clean, "XLA_FLAGS": "--xla_backend_optimization_level=0"}
    res = subprocess.run([py, "-c", LEAN], cwd=tmp_path, capture_output=True, text=True, env=lean_env)
    assert res.returncode == 0, res.stderr[-3000:]
    ok, *needs_extra = res.stdout.split()
    import alem

    assert int(ok) == len(alem.registry()) - len(needs_extra)
