"""Packaging: the wheel holds the mapped packages and configs and works outside the repo."""

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


def test_metadata_lives_only_in_pyproject():
    cfg = (ROOT / "setup.cfg").read_text()
    assert "[metadata]" not in cfg and "[options]" not in cfg
    deps = " ".join(PYPROJECT["project"]["dependencies"])
    for name in ("jax", "flax", "optax", "chex", "gymnax", "distrax", "numpy", "hydra-core", "wandb"):
        assert name in deps
    assert "jax==" not in deps, "never pin jax to one version"
    assert set(PYPROJECT["project"]["optional-dependencies"]) >= {"dev", "llm", "notebooks"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
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
            str(ROOT),
        ],
        check=True,
        cwd=out,
    )
    (whl,) = out.glob("alem-*.whl")
    return whl


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "alem/envs/games/matrix.py" in names
    assert "alem/configs/config.yaml" in names
    assert any(n.startswith("alem/configs/env/") and n.endswith(".yaml") for n in names)
    assert not any(n.startswith(("envs/", "algos/", "configs/", "tests/")) for n in names)


def _site_dirs_of_this_interpreter() -> list[str]:
    """The site-packages folders where this interpreter (base or virtualenv) finds its packages."""
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


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


@pytest.mark.slow
def test_wheel_installs_with_its_dependencies_from_the_index(wheel, tmp_path):
    """A fully isolated venv: pip resolves alem's declared dependencies (needs PyPI, minutes)."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], check=True)
    res = subprocess.run([py, "-c", SMOKE], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


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
