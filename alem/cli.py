"""What alem's command-line programs share (``python -m alem.train``, ``python -m alem.evaluate``).

- :func:`hydra_app`: the entry point wrapper: ``env=<registered id>`` shorthand, quiet
  library loggers, and an :class:`~alem.errors.AlemError` printed as one line: exit status 2
  when the command was refused before it wrote anything, 1 when a run failed after it began.
- :class:`ArgumentParser`: the argparse CLIs' parser (``alem.render``, the exporter, ...): a
  mistake is one line, exit status 2, as a Hydra CLI's.
- :func:`make_env`: an env from an ``env`` config group (``id`` + ``kwargs``).
- :func:`plain`, :func:`override_key`, :func:`hydra_run_dir`, :func:`hydra_overrides`:
  what a resume needs to compare the command line with the saved run.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from alem.errors import AlemError, ConfigError, PeerLost

__all__ = [
    "ArgumentParser",
    "hydra_app",
    "make_env",
    "plain",
    "override_key",
    "hydra_run_dir",
    "hydra_overrides",
    "env_shorthand",
    "resume_keys",
]

#: ``env=<name>-vN`` on the command line: a registered id rather than a ``configs/env`` file.
_VERSIONED_ID = re.compile(r"^env=([a-z][a-z0-9_/]*-v\d+)$")
#: Libraries whose INFO lines Hydra's root logger would otherwise print (backend probing, orbax saves).
_QUIET_LOGGERS = ("jax", "absl", "httpx")


def env_shorthand(argv: list[str]) -> list[str]:
    """``argv`` with ``env=<name>-vN`` (a registered id) rewritten to ``env.id=<name>-vN``.

    Hydra reads ``env=<name>`` as the config file ``configs/env/<name>.yaml``; ids carry a
    version suffix, which no config file name has, so the two never clash.
    """
    return [_VERSIONED_ID.sub(r"env.id=\1", a) for a in argv]


def default_run_dir(output_dir: Any = None, resume: Any = None) -> str:
    """A run's directory: the one named (``output_dir``, or the run that ``resume`` continues);
    else ``outputs/<date>/<time>.<microseconds>-<pid>``, unique for runs started in the same
    second (the directory's claim is exclusive besides, :func:`alem.rundir.claim`)."""
    if output_dir or resume:
        return str(output_dir or resume)
    now = datetime.datetime.now()
    return f"outputs/{now:%Y-%m-%d}/{now:%H-%M-%S.%f}-{os.getpid()}"


def hydra_app(prog: str, config_name: str, body: Callable[[Any], None]) -> Callable[[], None]:
    """A console entry point that runs ``body(cfg)`` as the Hydra app ``config_name``.

    The shorthand ``env=<registered id>`` works, and an :class:`AlemError` (bad value, occupied
    run dir, dead endpoint, ...) ends the program with ``<prog>: error: <message>`` instead of a
    traceback, with exit status 2 when nothing was written yet (the command was refused, as
    argparse refuses bad arguments) and 1 when a run that had begun writing failed. Ctrl-C ends it with one line saying what was kept and how to
    continue (the shell sees status 130).
    """
    import hydra

    def _app(cfg: Any) -> None:
        for name in _QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        from alem.rundir import wrote_anything

        def _exit(code: int, peer_lost: bool = False) -> None:
            if peer_lost:  # a clean exit would wait for the lost peer in JAX's shutdown, then abort
                sys.stdout.flush()
                os._exit(code)
            sys.exit(code)

        try:
            _refuse_empty_paths(cfg)
            body(cfg)
        except AlemError as e:
            print(f"{prog}: error: {e}", file=sys.stderr, flush=True)
            code = getattr(e, "exit_status", None) or (1 if wrote_anything() else 2)
            _exit(code, isinstance(e, PeerLost))
        except (KeyboardInterrupt, ImportError) as e:
            # A Ctrl-C inside a C extension's module initialisation (orbax's tensorstore) comes
            # out as "ImportError: initialization failed", caused by the KeyboardInterrupt.
            if isinstance(e, ImportError) and not isinstance(e.__cause__ or e.__context__, KeyboardInterrupt):
                raise
            print(f"{prog}: interrupted; {_kept(prog, cfg)}", file=sys.stderr, flush=True)
            # The signal can land inside a constructor (an asyncio loop of a checkpoint save,
            # JAX's GC callback); collecting that half-built object at exit would print an
            # "Exception ignored" traceback under the one line. Nothing in it is the user's.
            sys.unraisablehook = lambda _unraisable: None
            _exit(130)  # the shell's code for a SIGINT

    # Hydra names the job (and its log file, ``<job>.log``) after the task function's module.
    _app.__module__ = prog
    _app = hydra.main(version_base=None, config_path="pkg://alem.configs", config_name=config_name)(_app)

    def main() -> None:
        from alem.rundir import forget_writes

        forget_writes()
        sys.argv = env_shorthand(sys.argv)
        problem = override_problem(config_name, sys.argv[1:])
        if problem is not None:
            print(f"{prog}: error: {problem}", file=sys.stderr, flush=True)
            sys.exit(2)
        _app()

    main.__doc__ = f"Entry point of ``python -m {prog}`` (Hydra app ``configs/{config_name}.yaml``)."
    return main


def _refuse_empty_paths(cfg: Any) -> None:
    """``resume=`` or ``output_dir=`` given empty (most often an unset shell variable, ``resume=$RUN``)
    would start a new run in a new directory instead of the one meant: refused."""
    for key, wanted in (("resume", "the run directory to continue"), ("output_dir", "a folder for the run")):
        value = cfg.get(key) if hasattr(cfg, "get") else None
        if isinstance(value, str) and not value.strip():
            raise ConfigError(
                f"{key}= is empty (an unset shell variable?); give {wanted}, e.g. {key}=outputs/my-run, "
                f"or leave {key} out"
            )


def _kept(prog: str, cfg: Any) -> str:
    """What an interrupted run leaves: its directory and how to continue it, or that it wrote nothing."""
    from alem.rundir import CLAIM_MARKER

    try:
        run_dir = Path(cfg.get("resume") or cfg.get("output_dir") or hydra_run_dir()).resolve()
    except Exception:  # no Hydra config: the body was called directly
        return "see the run directory"
    if not (run_dir / CLAIM_MARKER).exists() and not (run_dir / "config.yaml").exists():
        return "nothing was written"
    return f"what is in {run_dir} is kept; continue with `python -m {prog} resume={run_dir}`"


def override_problem(config_name: str, args: list[str]) -> str | None:
    """One line on what is wrong with command-line overrides that Hydra would refuse in several
    lines (an unknown option, a preset that does not exist, a value it cannot parse), or None.
    Runs before the app; a multirun or Hydra's own flags are left to Hydra."""
    if any(a.startswith("-") or a.startswith("hydra.") for a in args):
        return None
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException

    def composed(overrides: list[str]) -> Any:
        with initialize_config_module(config_module="alem.configs", version_base=None):
            return compose(config_name=config_name, overrides=overrides)

    try:
        composed(args)
        return None
    except HydraException as err:
        e, text = err, str(err)
    unknown = re.match(r"Could not override '([^']+)'", text)
    if unknown:
        from omegaconf import OmegaConf

        from alem.errors import did_you_mean

        key = unknown.group(1)
        parent, _, leaf = key.rpartition(".")
        try:
            base = composed([a for a in args if a.split("=", 1)[0].lstrip("+~") != key])
            node = OmegaConf.select(base, parent) if parent else base
            known = [str(k) for k in node] if hasattr(node, "keys") else []
        except HydraException:
            known = []
        if parent == "sweep":  # a knob that changes the program: the multirun sweeps it
            return (
                f"{key}: a vmapped sweep varies {known} in one compiled program; {leaf} is not one of "
                f"them (a structural knob is swept with Hydra's multirun: python -m alem.train -m algo.{leaf}=<a>,<b>)"
            )
        hint = did_you_mean(leaf, known)
        if parent and hint:
            hint = hint.replace("'", f"'{parent}.", 1)
        return f"{key} is not an option{hint} (a key of your own: +{key}=<value>)"
    missing = re.match(r"In '[^']*': Could not find '([^/']+)/([^']+)'", text)
    if missing:
        group, name = missing.groups()
        choices = re.findall(r"^\t(\w+)$", text.split("Config search path")[0], re.M)
        choices = [c for c in choices if not c.startswith("_")]
        also = _family_ids(name) if group == "env" else ""
        return f"{group}={name} is not one of the {group} files: {choices}{also}"
    lines = [line.strip() for line in text.split("Config search path")[0].splitlines() if line.strip()]
    return (
        "cannot parse the overrides: " if type(e).__name__ == "OverrideParseException" else ""
    ) + "; ".join(lines)


def _family_ids(name: str) -> str:
    """The hint after an unknown ``env=<name>``: the registered ids of the family it names
    (``env=smax`` -> ``env.id=smax_3m-v0``, ...), else how to name any registered id."""
    import alem

    stem = name.lower().split("-v")[0].rstrip("_")
    ids = [i for i in alem.registry() if stem and (i.startswith(stem) or i.split("/")[-1].startswith(stem))]
    if not ids:
        return " (or env.id=<any registered id>)"
    shown = ", ".join(f"env.id={i}" for i in ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")
    return f"; registered ids of that family: {shown}"


class ArgumentParser(argparse.ArgumentParser):
    """The argparse CLIs' parser: a mistake is one line, ``<prog>: error: <what>``, exit status 2
    (argparse's usage block above it would push the one line that matters out of a short log;
    ``--help`` prints the usage)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def refuse_bad_args(parser: Any, rules: Iterable[tuple[str, Any, bool, str]]) -> None:
    """``parser.error`` (one line, exit 2) for the first ``(option, value, ok, wanted)`` that is
    not ok: ``argument --steps: must be an integer >= 1, got 0``."""
    for option, value, ok, wanted in rules:
        if not ok:
            parser.error(f"argument {option}: must be {wanted}, got {value}")


def refuse_unwritable(parser: Any, path: str | Path) -> None:
    """``parser.error`` when ``path`` cannot be created: its folder is missing or not writable."""
    folder = Path(path).parent
    if not folder.is_dir():
        parser.error(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        parser.error(f"cannot write {path}: the folder {folder} is not writable")


def make_env(env_cfg: Mapping[str, Any]) -> Any:
    """The env named by an ``env`` config group: ``id`` (a registered id) and ``kwargs``.

    A malformed group or a constructor that refuses a value raises :class:`ConfigError`
    naming it (an :class:`AlemError` from ``alem.make`` passes through as it is).
    """
    import alem

    env_id = env_cfg.get("id")
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(f"env.id must be a registered env id string, got {env_id!r}")
    kwargs = plain(env_cfg.get("kwargs")) or {}
    if not isinstance(kwargs, dict):
        raise ConfigError(f"env.kwargs must be a mapping of constructor keywords, got {kwargs!r}")
    try:
        return alem.make(env_id, **kwargs)
    except AlemError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"env {env_id}: {e}") from None


def plain(value: Any) -> Any:
    """An OmegaConf node as plain Python (dicts, lists), anything else as it is: for comparing values."""
    from omegaconf import DictConfig, ListConfig, OmegaConf

    return (
        OmegaConf.to_container(value, resolve=True) if isinstance(value, DictConfig | ListConfig) else value
    )


def override_key(override: str) -> str | None:
    """The dotted key of a Hydra override (``+a.b=1`` -> ``a.b``); None for Hydra's own settings."""
    key = override.split("=", 1)[0].lstrip("+~").strip()
    return None if key.startswith(("hydra.", "hydra/")) or key == "hydra" else key


#: This process's default run dir, fixed at its first use (the run and its Ctrl-C message agree).
_DEFAULT_RUN_DIR: list[str] = []


def hydra_run_dir() -> str:
    """Where a run started without ``output_dir`` writes: a multirun job's directory (Hydra's),
    ``hydra.run.dir`` where the command line sets it, else :func:`default_run_dir` (the configs
    keep Hydra's own run dir at ``.``, so Hydra creates no directory before alem's checks)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    hc = HydraConfig.get()
    if hc.mode == RunMode.MULTIRUN or Path(hc.runtime.output_dir).resolve() != Path.cwd().resolve():
        return hc.runtime.output_dir
    if not _DEFAULT_RUN_DIR:
        _DEFAULT_RUN_DIR.append(default_run_dir())
    return _DEFAULT_RUN_DIR[0]


def hydra_overrides() -> list[str]:
    """The running Hydra app's command-line overrides (what a resume compares with the saved run)."""
    from hydra.core.hydra_config import HydraConfig

    return list(HydraConfig.get().overrides.task)


def resume_keys(
    cfg: Any, run_dir: Path, overrides: Iterable[str], ignore: Iterable[str] = ("resume",)
) -> tuple[list[str], list[str]]:
    """The dotted keys of a resume's command-line ``overrides`` that the CLI must judge, and the
    refusals known already: an ``output_dir`` naming another directory than ``run_dir``.

    Hydra's own settings and the keys in ``ignore`` are left out.
    """
    keys, refused = [], []
    for override in overrides:
        key = override_key(override)
        if key is None or key in ignore:
            continue
        if key == "output_dir":
            new = cfg.get("output_dir")
            if new is not None and Path(new).resolve() != Path(run_dir).resolve():
                refused.append(f"output_dir={new} (a resumed run writes into its own directory)")
            continue
        keys.append(key)
    return keys, refused
