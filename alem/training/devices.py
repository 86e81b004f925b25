"""Where a run runs: the device mesh its env batch is split over (``devices=``) and the memory
check made before anything is written (:mod:`alem.training.distributed` joins the processes
whose devices the mesh may span)."""

from __future__ import annotations

import math
import os
from typing import Any

import jax
import numpy as np
from omegaconf import DictConfig

from alem.core import MultiAgentEnv
from alem.errors import ConfigError
from alem.training.loop import Schedule, seed_keys

__all__ = ["device_mesh", "check_memory"]


def device_mesh(cfg: DictConfig):
    """A 1-d mesh ``("data",)`` over the devices the config asks for, or None for one device.

    ``devices=auto`` (the default) is one device in a one-process run and every device of every
    process in a multi-process one (:mod:`alem.training.distributed`), where nothing else fits.
    """
    devices = cfg.get("devices", "auto")
    available = jax.devices()  # global: every process's devices after jax.distributed.initialize()
    processes = jax.process_count()
    if devices == "auto":
        devices = 1 if processes == 1 else "all"
    if devices == "all":
        devices = len(available)
    if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= len(available):
        raise ConfigError(
            f"devices must be 'auto', 'all' or an integer in [1, {len(available)}], got {devices!r}"
        )
    if processes > 1 and devices != len(available):
        raise ConfigError(
            f"devices={devices}: a run of {processes} processes splits its envs over every device of "
            f"every process ({len(available)}); use devices=auto or devices=all"
        )
    if devices == 1:
        return None
    if cfg.algo.num_envs % devices:
        raise ConfigError(f"algo.num_envs={cfg.algo.num_envs} must be divisible by devices={devices}")
    from jax.sharding import Mesh

    return Mesh(np.array(available[:devices]), ("data",))


def check_memory(env: MultiAgentEnv, learner: Any, schedule: Schedule, mesh: Any, lcfg: Any = None) -> None:
    """Refuse sizes whose learner state (plus, for PPO, one rollout's observations) alone exceed
    the memory of the devices: XLA would abort (or the OOM killer strike) after the run dir is
    written. A lower bound from shapes only (``jax.eval_shape``; nothing is allocated or compiled)."""
    available = _memory_bytes(1 if mesh is None else mesh.size)
    if available is None:
        return
    s = schedule
    state = jax.eval_shape(lambda: jax.vmap(learner.init)(seed_keys(s.seed, s.rows)))
    need = sum(_nbytes(x) for x in jax.tree.leaves(state))
    if lcfg is not None:
        _, ts = jax.eval_shape(env.reset, jax.random.key(0), env.default_params)
        need += s.rows * lcfg.num_steps * lcfg.num_envs * _nbytes(ts.obs)
    if need > available:
        # Name every factor of the row count: a vmapped sweep multiplies it as seeds do.
        sweep = f" x {s.configs:,} configurations of the sweep (sweep.*)" if s.configs > 1 else ""
        lower = "fewer sweep.* values, algo.num_envs, algo.num_steps or num_seeds" if sweep else (
            "algo.num_envs, algo.num_steps or num_seeds"
        )
        raise ConfigError(
            f"these sizes need at least {need / 2**30:,.1f} GiB (the learner state of algo.num_envs="
            f"{learner.num_envs if lcfg is None else lcfg.num_envs} envs x num_seeds={s.num_seeds}{sweep}"
            f"{'' if lcfg is None else ' and one rollout of observations'}), more than the "
            f"{available / 2**30:,.1f} GiB of {jax.default_backend()} memory here; lower {lower}"
        )


def _nbytes(x: Any) -> int:
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return math.prod(x.shape) * 8  # threefry keys: two uint32
    return math.prod(x.shape) * np.dtype(x.dtype).itemsize


def _memory_bytes(num_devices: int) -> int | None:
    """Memory of the devices a run uses (host RAM on CPU); None where it cannot be read."""
    dev = jax.local_devices()[0]  # another process's devices cannot be asked
    stats = dev.memory_stats() if hasattr(dev, "memory_stats") else None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"]) * num_devices
    if dev.platform == "cpu":
        try:  # each process's host (processes on one host overcount: the check is a lower bound)
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * jax.process_count()
        except (ValueError, OSError, AttributeError):
            return None
    return None
