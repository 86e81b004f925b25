"""Multi-process training on JAX's distributed runtime (``distributed.*`` of ``python -m alem.train``).

Every process runs the same command with its own ``distributed.process_id``; process 0 hosts the
coordinator (``distributed.coordinator=HOST:PORT``). :func:`connect` calls
:func:`jax.distributed.initialize` before JAX touches a device, after which ``jax.devices()``
lists every process's devices and the run's mesh (``devices=all``) spans them: the env batch is
split over all of them, XLA's collectives average the gradients, and every process holds the
same replicated parameters. Process 0 alone writes the run directory (config, metrics,
results); every process writes its shards of each checkpoint (orbax), so the output folder
must be one filesystem that every process sees. ``distributed.num_processes=auto`` lets JAX
read the cluster from its environment (SLURM, Open MPI, Kubernetes...).

On CPU the processes exchange data through gloo (``jax_cpu_collectives_implementation``),
which this module selects unless the environment chose another.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import sys
import time
from collections.abc import Iterator
from typing import Any

from alem.errors import ConfigError, PeerLost

__all__ = ["Processes", "DistributedConfig", "check", "connect", "peers_watched"]

#: ``distributed.*`` options (configs/config.yaml).
OPTIONS = ("num_processes", "process_id", "coordinator", "timeout_s")


@dataclasses.dataclass(frozen=True)
class DistributedConfig:
    """Checked ``distributed.*``: ``num_processes`` (an int, or ``None`` for ``auto``)."""

    num_processes: int | None = 1
    process_id: int | None = None
    coordinator: str | None = None
    timeout_s: int = 60

    @property
    def multi(self) -> bool:
        return self.num_processes is None or self.num_processes > 1


@dataclasses.dataclass(frozen=True)
class Processes:
    """Which process this is: ``index`` of ``count``; process 0 writes the run directory."""

    index: int = 0
    count: int = 1

    @property
    def writer(self) -> bool:
        return self.index == 0


def _int(value: Any, name: str, low: int, high: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < low
        or (high is not None and value > high)
    ):
        where = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise ConfigError(f"distributed.{name} must be {where}, got {value!r}")
    return value


def check(node: Any) -> DistributedConfig:
    """``distributed.*`` checked, before any JAX call (each mistake one line naming the option)."""
    if node is None:
        return DistributedConfig()
    given = dict(node)
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise ConfigError(f"distributed.{unknown[0]} is not an option; the options are {list(OPTIONS)}")
    n = given.get("num_processes", 1)
    timeout = _int(given.get("timeout_s", 60), "timeout_s", 1)
    pid, coord = given.get("process_id"), given.get("coordinator")
    if n == "auto":
        if pid is not None or coord is not None:
            raise ConfigError(
                "distributed.num_processes=auto reads the process id and coordinator from the cluster; "
                "drop distributed.process_id and distributed.coordinator, or give num_processes"
            )
        return DistributedConfig(None, None, None, timeout)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"distributed.num_processes must be an integer >= 1 or 'auto', got {n!r}")
    if n == 1:
        if pid not in (None, 0) or coord is not None:
            raise ConfigError(
                "distributed.process_id and distributed.coordinator belong to a multi-process run; "
                f"give distributed.num_processes too (got num_processes=1, process_id={pid!r}, coordinator={coord!r})"
            )
        return DistributedConfig(1, None, None, timeout)
    if pid is None:
        raise ConfigError(
            f"distributed.num_processes={n}: give this process's distributed.process_id in [0, {n - 1}]"
        )
    pid = _int(pid, "process_id", 0, n - 1)
    if not isinstance(coord, str) or not _host_port(coord):
        raise ConfigError(
            f"distributed.num_processes={n}: distributed.coordinator must be HOST:PORT of process 0 "
            f"(e.g. 10.0.0.1:12355), got {coord!r}"
        )
    return DistributedConfig(n, pid, coord, timeout)


def _host_port(address: str) -> tuple[str, int] | None:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


def _wait_for(address: str, timeout_s: float) -> None:
    """Block until something accepts TCP connections at ``address`` (the coordinator), at most
    ``timeout_s``: JAX's own wait ends in a process abort with a stack trace, not a message."""
    host, port = _host_port(address)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, port), timeout=min(5.0, timeout_s)):
                return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise ConfigError(
                    f"distributed.coordinator={address}: nothing answered there for {timeout_s:g} s "
                    f"({e.strerror or e}); start process 0 (it hosts the coordinator) or fix the address"
                ) from None
            time.sleep(0.25)


#: This process's place in its run (:func:`_take_slot`), held until the process exits.
_SLOTS: list[socket.socket] = []


def _take_slot(dc: DistributedConfig) -> None:
    """Refuse a second process with this ``process_id`` on this host, and a process 0 whose port
    is taken, in one line: JAX's runtime would let both register and abort every process with
    a C++ stack trace after ``timeout_s``. The slot is an abstract Unix socket (Linux; no file,
    gone when the process dies); a duplicate on another host is left to JAX's runtime."""
    _, port = _host_port(dc.coordinator)
    if sys.platform.startswith("linux"):
        slot = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            slot.bind(f"\0alem-distributed-port{port}-process{dc.process_id}")
        except OSError:
            slot.close()
            raise ConfigError(
                f"distributed.process_id={dc.process_id}: another process on this host already runs as "
                f"process {dc.process_id} of the run coordinated at {dc.coordinator}; give each process its "
                f"own distributed.process_id in [0, {dc.num_processes - 1}]"
            ) from None
        _SLOTS.append(slot)
    if dc.process_id == 0:  # it hosts the coordinator: the port must be free
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed run's TIME_WAIT is no use
        try:
            probe.bind(("", port))
        except OSError as e:
            raise ConfigError(
                f"distributed.coordinator={dc.coordinator}: port {port} is in use on this host "
                f"({e.strerror or e}); process 0 hosts the coordinator there: pick a free port"
            ) from None
        finally:
            probe.close()


def connect(dc: DistributedConfig) -> Processes:
    """Join the multi-process run ``dc`` describes (nothing to do for one process).

    Must run before JAX initialises a backend; a process other than 0 first waits (at most
    ``timeout_s``) for the coordinator to accept connections, so a wrong address or a missing
    process 0 is one line. Process 0 waits ``timeout_s`` for the others inside JAX, whose
    runtime aborts the process if they never come.
    """
    if not dc.multi:
        return Processes()
    import jax

    if "JAX_CPU_COLLECTIVES_IMPLEMENTATION" not in os.environ:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    kwargs: dict[str, Any] = {"initialization_timeout": dc.timeout_s}
    if dc.num_processes is not None:
        _take_slot(dc)
        if dc.process_id != 0:
            _wait_for(dc.coordinator, dc.timeout_s)
        kwargs.update(
            coordinator_address=dc.coordinator, num_processes=dc.num_processes, process_id=dc.process_id
        )
    try:
        jax.distributed.initialize(**kwargs)
    except (RuntimeError, ValueError) as e:  # JAX in use already; no cluster found for 'auto'
        raise ConfigError(f"distributed: {str(e).splitlines()[0]}") from None
    return Processes(jax.process_index(), jax.process_count())


def _failed_exchange(e: BaseException) -> BaseException | None:
    """The failed exchange between processes behind ``e``, if any: a collective's
    :class:`jax.errors.JaxRuntimeError`, or the ``ValueError`` orbax turns a checkpoint's failed
    gloo all-gather into (seen in its context: :class:`CheckpointError` is raised ``from None``)."""
    import jax

    found, seen = None, e
    while seen is not None:  # the innermost: its first line is the exchange's own message
        if isinstance(seen, jax.errors.JaxRuntimeError) or "Gloo" in str(seen):
            found = seen
        seen = seen.__cause__ or seen.__context__
    return found


@contextlib.contextmanager
def peers_watched(procs: Processes, run_dir: Any) -> Iterator[None]:
    """In a multi-process run, a failed exchange between the processes (most often: another
    process stopped), in a step or in a checkpoint's save, becomes :class:`~alem.errors.PeerLost`,
    one line saying how to resume."""
    if procs.count == 1:
        yield
        return
    try:
        yield
    except Exception as e:
        if (cause := _failed_exchange(e)) is None:
            raise
        first = (str(cause).splitlines() or [type(cause).__name__])[0][:300]
        raise PeerLost(
            f"process {procs.index} of {procs.count}: the processes stopped exchanging data ({first}); "
            f"most often another process stopped. The checkpoints in {run_dir} are kept: start every "
            f"process again with resume={run_dir}"
        ) from None
