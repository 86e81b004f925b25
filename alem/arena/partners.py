"""Partner pools as data: ``python -m alem.partners build env.id=<id> ...`` (``configs/partners.yaml``).

A pool differs by seed, by learner and by design: one training run per learner of ``algos=``
(``num_seeds`` seeds vmapped in one program, :mod:`alem.training.command`), each seed a
partner (``checkpoint:<learner>`` with ``seed_index``), plus the env's scripted players
(``scripted=true``: every registered player but ``random``, ``llm`` and ``checkpoint``). The
training runs are ordinary run directories inside the pool's folder; ``partners.json``
(:func:`alem.pools.write_manifest`) is written last, with the splits and the
checkpoints' digests, so a pool without a manifest is an unfinished build.

Everything is checked before the first write: the env, each learner's plan on it (a learner
that does not fit the env is named), and the folder (a new build refuses one that holds
anything). The build's settings are recorded in ``build.yaml`` when it starts. ``resume=true``
finishes a killed build in the same folder with the same settings (any that differ from the
record are refused, by name, before anything is written): finished runs are kept, an
interrupted one continues from its last checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from alem.arena.crossplay import check_cooperative
from alem.cli import hydra_app, hydra_run_dir, make_env, override_key, plain
from alem.errors import AlemError, ConfigError
from alem.players import player_names
from alem.pools import read_pool, write_manifest
from alem.rundir import CLAIM_MARKER, claim, read_run_config, write_atomic

__all__ = ["build", "export_pool", "main", "NOT_PARTNERS"]

#: Registered players that are not partners of a pool: the floor, the LLM and the loader.
NOT_PARTNERS = frozenset({"random", "llm", "checkpoint"})
CLI = "alem.partners"
#: The build's settings, recorded in the pool's folder when it starts; ``resume=true`` must repeat them.
BUILD_RECORD = "build.yaml"
SETTINGS = ("env", "algos", "num_seeds", "seed", "scripted", "split_seed", "train_overrides")


def _training_config(cfg: DictConfig, algo: str) -> DictConfig:
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    extra = plain(cfg.get("train_overrides")) or []
    if not isinstance(extra, list) or not all(isinstance(x, str) for x in extra):
        raise ConfigError(f"train_overrides must be a list of key=value strings, got {extra!r}")
    bad = [
        x
        for x in extra
        if x.split("=", 1)[0].lstrip("+") in ("algo", "env", "seed", "num_seeds", "output_dir")
    ]
    if bad:
        raise ConfigError(
            f"train_overrides may not set what the pool sets (algo, env, seed, num_seeds): {bad}"
        )
    overrides = [f"algo={algo}", f"seed={cfg.seed}", f"num_seeds={cfg.num_seeds}", *extra]
    try:
        if GlobalHydra.instance().is_initialized():  # inside the command
            tcfg = compose(config_name="config", overrides=overrides)
        else:  # called from Python
            with initialize_config_module(config_module="alem.configs", version_base=None):
                tcfg = compose(config_name="config", overrides=overrides)
    except Exception as e:  # Hydra's errors for an unknown preset or key
        from importlib.resources import files

        presets = sorted(
            f.name.removesuffix(".yaml")
            for f in files("alem.configs").joinpath("algo").iterdir()
            if f.name.endswith(".yaml") and not f.name.startswith("_")
        )
        if algo not in presets:
            raise ConfigError(f"learner {algo!r} is not a preset; choose from {presets}") from None
        raise ConfigError(f"learner {algo!r}: {str(e).splitlines()[0]}") from None
    OmegaConf.set_struct(tcfg, False)
    tcfg.env = cfg.env
    return tcfg


def _recorded(record: Path) -> dict[str, Any]:
    try:
        was = plain(OmegaConf.load(record))
    except Exception as e:  # yaml and omegaconf raise several types, over several lines
        raise ConfigError(
            f"resume=true: {record} cannot be read ({' '.join(str(e).split())[:200]})"
        ) from None
    if not isinstance(was, dict):
        raise ConfigError(f"resume=true: {record} cannot be read (not a mapping of settings)")
    return was


def _changed_settings(out: Path, now: dict[str, Any], runs: list[tuple[str, DictConfig]]) -> list[str]:
    """What a resume would change: ``now`` against the pool's record, or, for a build begun
    before the record was kept, each run's own settings against its ``config.yaml``."""
    if (out / BUILD_RECORD).is_file():
        was = _recorded(out / BUILD_RECORD)
        return [f"{k}={now[k]!r} (the pool has {was.get(k)!r})" for k in SETTINGS if now[k] != was.get(k)]
    changed = []
    extra = [override_key(x) for x in now["train_overrides"] or []]
    for algo, tcfg in runs:
        if not (out / algo / "config.yaml").is_file():
            continue  # killed before its config: it starts anew
        saved = read_run_config(out / algo, cli="alem.train", required=("env.id",), what="resume=true:")
        for key in ("env", "seed", "num_seeds", *(k for k in extra if k)):
            new, was = (plain(OmegaConf.select(c, key, default=None)) for c in (tcfg, saved))
            if new != was:
                changed.append(f"{key}={new!r} (the run {algo} has {was!r})")
    return changed


def build(cfg: DictConfig, output_dir: str | Path) -> dict[str, Any]:
    """Train and list a pool as ``cfg`` says (module docstring); return the manifest."""
    from alem.training.command import check_unread, plan, run

    env = make_env(cfg.env)
    check_cooperative(env, "a partner pool is for cross-play, which measures")
    algos = plain(cfg.algos) or []
    if isinstance(algos, str):
        algos = [algos]
    if not isinstance(algos, list) or not all(isinstance(a, str) and a for a in algos):
        raise ConfigError(f"algos must be a list of learner presets like algos=[ippo,mappo], got {algos!r}")
    if len(set(algos)) != len(algos):
        raise ConfigError(f"algos names a learner twice: {algos}")
    if not isinstance(cfg.num_seeds, int) or isinstance(cfg.num_seeds, bool) or cfg.num_seeds < 1:
        raise ConfigError(f"num_seeds must be a positive integer, got {cfg.num_seeds!r}")
    if not isinstance(cfg.seed, int) or isinstance(cfg.seed, bool) or cfg.seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {cfg.seed!r}")
    split_seed = cfg.get("split_seed", 0)
    if not isinstance(split_seed, int) or isinstance(split_seed, bool) or split_seed < 0:
        raise ConfigError(f"split_seed must be a non-negative integer, got {split_seed!r}")
    for key in ("scripted", "resume"):
        if not isinstance(cfg.get(key), bool):
            raise ConfigError(f"{key} must be true or false, got {cfg.get(key)!r}")
    runs = []
    for algo in algos:
        tcfg = _training_config(cfg, algo)
        try:
            check_unread(tcfg, plain(cfg.get("train_overrides")) or [], plan(tcfg, env).lcfg)
        except ConfigError as e:
            raise ConfigError(f"learner {algo!r} on {env.id}: {e}") from None
        runs.append((algo, tcfg))
    scripted = sorted(set(player_names(env)) - NOT_PARTNERS) if cfg.scripted else []
    partners: list[tuple[str, str, dict]] = [
        (f"{algo}_s{cfg.seed + k}", f"checkpoint:{algo}", {"seed_index": k})
        for algo in algos
        for k in range(cfg.num_seeds)
    ] + [(name, name, {}) for name in scripted]
    if len(partners) < 2:
        raise ConfigError(
            f"a pool needs at least two partners; algos={algos} and scripted give {len(partners)}"
        )
    settings = {k: plain(cfg.get(k)) for k in SETTINGS} | {"algos": algos, "split_seed": split_seed}
    out = Path(output_dir).resolve()
    if cfg.get("resume"):
        if not out.is_dir():
            raise ConfigError(f"resume=true finishes a build in {out}, which does not exist")
        if (out / "partners.json").exists():
            raise ConfigError(f"{out} holds a finished pool (partners.json); nothing to resume")
        try:  # only a folder this command claimed is resumed
            owner = json.loads((out / CLAIM_MARKER).read_text()).get("cli")
        except (OSError, ValueError, AttributeError):
            owner = None
        if owner != CLI:
            raise ConfigError(f"{out} was not made by python -m {CLI} build; nothing of it is resumed")
        changed = _changed_settings(out, settings, runs)
        if changed:
            raise ConfigError(
                f"resume=true finishes the build in {out} as it was configured; these settings would "
                f"change it: {'; '.join(changed)}. Start a new pool (another output_dir) for other settings"
            )
    else:
        out = claim(out, cli=CLI)
        out.mkdir(parents=True, exist_ok=True)
    if not (out / BUILD_RECORD).is_file():
        write_atomic(out / BUILD_RECORD, OmegaConf.to_yaml(OmegaConf.create(settings)))
    for algo, tcfg in runs:
        run_dir = out / algo
        if (run_dir / "results.json").exists():
            print(f"{CLI}: {algo} is trained ({run_dir}); kept", flush=True)
            continue
        if run_dir.exists():
            tcfg.resume = str(run_dir)
        print(f"{CLI}: training {algo} ({cfg.num_seeds} seeds) into {run_dir}", flush=True)
        run(tcfg, run_dir)
    return write_manifest(out / "partners.json", env, partners, seed=cfg.split_seed)


def export_pool(pool: str | Path, out: str | Path) -> dict[str, Any]:
    """Copy the pool at ``pool`` to the new folder ``out`` with its trained partners as exported
    actors (:mod:`alem.algos.actor_export`: each run's actors, a sixth to a third of its
    checkpoint, no training state); scripted partners are kept as they are. The manifest is
    written anew with the same names, keywords and split seed, so the same splits; a checkpoint
    spec names its run by where it really is inside the pool (``./r0/../r0`` becomes ``r0``), and
    a run outside the pool (a symlink or path out of it) is refused. Everything is read and
    checked (the manifest, every digest) before ``out`` is made."""
    from alem.algos.actor_export import export_actor
    from alem.registry import make

    pool, out = Path(pool), Path(out)
    manifest_path = pool / "partners.json" if pool.is_dir() else pool
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        env = make(manifest["env_id"])
    except (OSError, ValueError, KeyError, TypeError, AlemError) as e:
        raise ConfigError(f"{pool}: not a readable partner pool ({type(e).__name__}: {e})") from None
    read_pool(manifest_path, env, option="pool")  # format, seats, every checkpoint's digest
    if out.exists() or out.is_symlink():  # a dangling link too: the rename would fail on it
        what = f"is a symlink to {os.readlink(out)}" if out.is_symlink() else "exists"
        raise ConfigError(f"{out} {what}; an exported pool is written to a new folder")
    root = manifest_path.parent.resolve()
    specs = {}  # name -> its checkpoint spec in the export: the run's place inside the pool
    for p in manifest["partners"]:
        kind, _, rest = p["spec"].partition(":")
        if kind != "checkpoint":
            continue
        if "#" in rest:
            raise ConfigError(
                f"partner {p['name']!r} is a self-play snapshot ({p['spec']}); snapshots are not exported"
            )
        where = (root / rest).resolve()  # where it really is: symlinks followed, `..` undone
        if where == root or not where.is_relative_to(root):
            raise ConfigError(
                f"partner {p['name']!r}: {rest} is outside the pool's folder ({where}); "
                "export copies the pool's own runs"
            )
        specs[p["name"]] = f"checkpoint:{where.relative_to(root).as_posix()}"
    if not out.parent.is_dir():
        raise ConfigError(f"cannot write {out}: the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")  # renamed to out when whole
    try:
        tmp.mkdir()
        for spec in sorted(set(specs.values())):
            run = spec.partition(":")[2]
            export_actor(root / run, tmp / run)
        entries = [
            (p["name"], specs.get(p["name"], p["spec"]), p.get("kwargs") or {}) for p in manifest["partners"]
        ]
        written = write_manifest(tmp / "partners.json", env, entries, seed=manifest["seed"])
        tmp.rename(out)
    except OSError as e:  # an unwritable folder: nothing is left behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise ConfigError(f"cannot write {out} ({e.strerror or e})") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return written


def _app(cfg: DictConfig) -> None:
    out = Path(cfg.get("output_dir") or hydra_run_dir()).resolve()
    manifest = build(cfg, out)
    counts = {
        s: sum(p["split"] == s for p in manifest["partners"]) for s in ("train", "validation", "heldout")
    }
    print(
        f"{len(manifest['partners'])} partners for {manifest['env_id']} "
        f"({', '.join(f'{k} {v}' for k, v in counts.items())})",
        flush=True,
    )
    print(f"Pool written to {out / 'partners.json'}", flush=True)


main = hydra_app(CLI, "partners", _app)
