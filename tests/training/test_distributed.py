"""Multi-process training (``distributed.*``): the options' checks, and two real CPU processes on
127.0.0.1 (integration) whose run, stopped and resumed, equals one process with the same batch."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from omegaconf import OmegaConf

from alem.errors import ConfigError
from alem.training import distributed
from tests.tiny_runs import TINY_RUN


@pytest.mark.parametrize(
    ("given", "match"),
    [
        ({"num_processes": 0}, r"distributed.num_processes must be an integer >= 1 or 'auto', got 0"),
        ({"num_processes": "two"}, r"distributed.num_processes must be .* got 'two'"),
        (
            {"num_processes": 2, "coordinator": "h:1"},
            r"give this process's distributed.process_id in \[0, 1\]",
        ),
        (
            {"num_processes": 2, "process_id": 2, "coordinator": "h:1"},
            r"process_id must be an integer in \[0, 1\], got 2",
        ),
        ({"num_processes": 2, "process_id": -1, "coordinator": "h:1"}, r"process_id must be .* got -1"),
        ({"num_processes": 2, "process_id": 0}, r"coordinator must be HOST:PORT .* got None"),
        ({"num_processes": 2, "process_id": 0, "coordinator": "h:99999"}, r"got 'h:99999'"),
        (
            {"num_processes": 2, "process_id": 0, "coordinator": "h", "timeout_s": 0},
            r"timeout_s must be an integer >= 1",
        ),
        ({"num_processes": 1, "process_id": 1}, r"belong to a multi-process run"),
        ({"num_processes": "auto", "process_id": 0}, r"num_processes=auto reads the process id"),
        ({"num_process": 2}, r"distributed.num_process is not an option"),
    ],
)
def test_bad_distributed_options_are_one_line_naming_the_option(given, match):
    with pytest.raises(ConfigError, match=match):
        distributed.check(OmegaConf.create(given))


def test_the_options_that_name_a_run_of_several_processes():
    dc = distributed.check(
        OmegaConf.create({"num_processes": 4, "process_id": 3, "coordinator": "10.0.0.1:1234"})
    )
    assert dc.multi and (dc.num_processes, dc.process_id, dc.coordinator) == (4, 3, "10.0.0.1:1234")
    assert distributed.check(OmegaConf.create({"num_processes": "auto"})).multi
    assert (
        not distributed.check(None).multi
        and not distributed.check(OmegaConf.create({"num_processes": 1})).multi
    )
    assert distributed.connect(distributed.check(None)) == distributed.Processes(0, 1)


def test_a_failed_exchange_in_a_step_or_a_checkpoint_save_is_peer_lost_other_errors_pass():
    from alem.errors import CheckpointError, PeerLost

    def save():  # what checkpoint.save raises when orbax's gloo all-gather loses its peer
        try:
            raise ValueError("UNKNOWN: Gloo AllGather failed: Connection closed by peer\nmore")
        except ValueError:
            raise CheckpointError("checkpoint c could not be written (...)") from None

    two = distributed.Processes(0, 2)
    lost = r"^process 0 of 2: .* data \(UNKNOWN: Gloo AllGather failed: Conn"
    with pytest.raises(PeerLost, match=lost), distributed.peers_watched(two, "r"):
        save()
    one = distributed.Processes(0, 1)  # one process: nothing to lose
    with pytest.raises(CheckpointError), distributed.peers_watched(one, "r"):
        save()
    with pytest.raises(ValueError, match="not an exchange"), distributed.peers_watched(two, "r"):
        raise ValueError("not an exchange")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_coordinator_is_one_line_after_a_bounded_wait():
    address = f"127.0.0.1:{_free_port()}"  # nothing listens there
    t0 = time.monotonic()
    with pytest.raises(
        ConfigError, match=rf"distributed.coordinator={address}: nothing answered there for 1 s"
    ):
        distributed._wait_for(address, 1)
    assert time.monotonic() - t0 < 10


# ---------------------------------------------------------------------------- two processes
RUN = ["env=coordination", *TINY_RUN, "algo.total_steps=256"]  # 4 chunks of 2 updates
CPU = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}


def _train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "alem.train", *args], capture_output=True, text=True, env=CPU, timeout=timeout
    )


def _launch(*args: str, order: tuple[int, int] = (1, 0)) -> list[subprocess.Popen]:
    """``python -m alem.train args`` as processes 0 and 1 of one run (a coordinator on 127.0.0.1),
    started in ``order``; returned as ``[process 0, process 1]``."""
    common = ["distributed.num_processes=2", f"distributed.coordinator=127.0.0.1:{_free_port()}"]
    procs = {
        i: subprocess.Popen(
            [sys.executable, "-m", "alem.train", *args, *common, f"distributed.process_id={i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=CPU,
        )
        for i in order
    }
    return [procs[0], procs[1]]


def _two_processes(*args: str) -> list[subprocess.CompletedProcess]:
    """Processes 0 and 1 of one run (process 1 first: it waits for the coordinator), to the end."""
    out = []
    for p in _launch(*args):
        stdout, stderr = p.communicate(timeout=300)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def _losses(run_dir) -> np.ndarray:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return np.array([[r["policy_loss"], r["value_loss"]] for r in rows])


@pytest.mark.integration  # five processes, each compiling a tiny run
def test_two_processes_stopped_and_resumed_train_as_one_process_with_the_same_batch(tmp_path):
    one = _train(*RUN, f"output_dir={tmp_path / 'one'}")
    assert one.returncode == 0, one.stderr[-2000:]

    run_dir = tmp_path / "two"
    first = _two_processes(*RUN, f"output_dir={run_dir}", "stop_after_chunks=2")
    for p in first:  # both stop after chunk 2, as a kill would; nothing is lost
        assert p.returncode == 1 and "stopped after chunk 2/4" in p.stderr, p.stderr[-2000:]
    assert sorted(x.name for x in (run_dir / "checkpoints").iterdir()) == ["chunk_000001", "chunk_000002"]
    second = _two_processes(f"resume={run_dir}")
    for p in second:
        assert p.returncode == 0, p.stderr[-2000:]
    assert "process 1 of 2; process 0 writes" in second[1].stdout

    # process 0 alone wrote the run directory: one metrics row per chunk, one results file
    assert sorted(x.name for x in run_dir.iterdir()) == [
        ".alem-run",
        "checkpoints",
        "config.yaml",
        "metrics.jsonl",
        "results.json",
    ]
    res = json.loads((run_dir / "results.json").read_text())
    ref = json.loads((tmp_path / "one" / "results.json").read_text())
    assert res["processes"] == 2 and len(res["jax_devices"]) == 2 and res["resumed_from_chunk"] == 2
    assert ref["processes"] == 1 and "distributed" not in res["config"]
    # the env batch split over two processes' devices: the same updates, to float tolerance
    np.testing.assert_allclose(_losses(run_dir), _losses(tmp_path / "one"), rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(res["trained_return_per_seed"], ref["trained_return_per_seed"], atol=0.05)


@pytest.mark.integration
def test_a_process_whose_coordinator_never_answers_stops_in_one_line_and_writes_nothing(tmp_path):
    port = _free_port()
    res = _train(
        *RUN,
        f"output_dir={tmp_path / 'run'}",
        "distributed.num_processes=2",
        "distributed.process_id=1",
        f"distributed.coordinator=127.0.0.1:{port}",
        "distributed.timeout_s=2",
        timeout=120,
    )
    assert res.returncode == 2, res.stderr[-2000:]
    lines = res.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and f"distributed.coordinator=127.0.0.1:{port}: nothing answered there for 2 s" in lines[0]
    )
    assert not (tmp_path / "run").exists()
    # a multi-process run names its output folder (each process writes its checkpoint shards there)
    res = _train(
        *RUN, "distributed.num_processes=2", "distributed.process_id=1", "distributed.coordinator=h:1"
    )
    assert res.returncode == 2 and "a multi-process run needs output_dir=" in res.stderr


@pytest.mark.integration
def test_a_process_killed_mid_run_stops_the_other_in_one_line_and_the_run_resumes(tmp_path):
    """SIGKILL of process 1 after its first checkpoint: process 0 stops at its next exchange with
    one line and exit status 1 (it used to print a traceback and then hang in JAX's shutdown,
    waiting for the dead process); the checkpoints are kept and both processes resume the run."""
    run_dir = tmp_path / "run"
    args = [*RUN, "algo.total_steps=640", "chunk_updates=1", f"output_dir={run_dir}"]  # 20 chunks
    procs = _launch(*args, order=(0, 1))
    deadline = time.monotonic() + 240
    while not (run_dir / "checkpoints" / "chunk_000001").exists():
        assert time.monotonic() < deadline and procs[0].poll() is None, "no first checkpoint"
        time.sleep(0.05)
    procs[1].kill()
    procs[1].communicate(timeout=60)
    _, stderr = procs[0].communicate(timeout=120)  # no hang
    lines = stderr.strip().splitlines()
    assert procs[0].returncode == 1, stderr[-2000:]
    assert len(lines) == 1 and "the processes stopped exchanging data" in lines[0], stderr[-2000:]
    assert f"resume={run_dir}" in lines[0]
    assert not (run_dir / "results.json").exists()
    for p in _two_processes(f"resume={run_dir}"):
        assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((run_dir / "results.json").read_text())
    assert res["resumed_from_chunk"] >= 1 and len(_losses(run_dir)) == 20


@pytest.mark.integration
def test_sigterm_to_every_process_stops_each_after_the_same_chunk_and_the_run_resumes(tmp_path, fault_report):
    """``scancel`` sends SIGTERM to every process: each used to log JAX's "SIGTERM caught" and
    train to the end (once process 0 hung at a barrier). Every process stops after one agreed
    chunk with one line and status 143, that chunk's checkpoint saved; the run resumes to its end."""
    run_dir = tmp_path / "run"
    args = [*RUN, "algo.total_steps=1280", "chunk_updates=1", f"output_dir={run_dir}"]  # 40 chunks
    procs = _launch(*args, order=(0, 1))
    deadline = time.monotonic() + 240
    while not (run_dir / "checkpoints" / "chunk_000002").exists():
        assert time.monotonic() < deadline and procs[0].poll() is None, "no second checkpoint"
        time.sleep(0.05)
    for p in procs:
        p.terminate()
    outs = [p.communicate(timeout=120) for p in procs]
    stopped = set()
    for p, (_, stderr) in zip(procs, outs, strict=True):
        # JAX's runtime logs its own "SIGTERM caught" line from C++ (not alem's to silence)
        lines = [line for line in stderr.strip().splitlines() if "SIGTERM caught" not in line]
        assert p.returncode == 143, stderr[-2000:]
        assert len(lines) == 1 and "on SIGTERM" in lines[0] and f"resume={run_dir}" in lines[0], stderr[-2000:]
        stopped.add(lines[0].split("stopped after chunk ")[1].split("/")[0])
    assert len(stopped) == 1  # the same chunk on both
    chunk = int(stopped.pop())
    assert 2 <= chunk < 40 and (run_dir / "checkpoints" / f"chunk_{chunk:06d}").is_dir()
    assert not (run_dir / "results.json").exists() and len(_losses(run_dir)) == chunk
    for p in _two_processes(f"resume={run_dir}"):
        assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((run_dir / "results.json").read_text())
    assert res["resumed_from_chunk"] == chunk and len(_losses(run_dir)) == 40
    fault_report(killed=2)


@pytest.mark.integration
@pytest.mark.parametrize("process_id", [0, 1])
def test_a_second_process_with_the_same_id_is_one_line_naming_the_id(process_id, tmp_path, fault_report):
    """Two processes given one ``distributed.process_id`` used to both register and then abort with
    a C++ stack trace after ``timeout_s``: the second is refused at once, writing nothing."""
    common = [
        *RUN,
        f"output_dir={tmp_path / 'run'}",
        "distributed.num_processes=2",
        f"distributed.coordinator=127.0.0.1:{_free_port()}",
        "distributed.timeout_s=60",
        f"distributed.process_id={process_id}",
    ]
    first = subprocess.Popen(
        [sys.executable, "-m", "alem.train", *common], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CPU
    )
    try:
        time.sleep(8)  # the first has taken its place (it waits for the missing process)
        assert first.poll() is None
        t0 = time.monotonic()
        second = _train(*common, timeout=120)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 2 and len(lines) == 1, second.stderr[-2000:]
        assert f"another process on this host already runs as process {process_id}" in lines[0]
        assert time.monotonic() - t0 < 30  # not after timeout_s
    finally:
        first.kill()
        first.communicate()
    fault_report(faults=1)


@pytest.mark.integration
def test_process_0_on_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = _train(
            *RUN,
            f"output_dir={tmp_path / 'run'}",
            "distributed.num_processes=2",
            "distributed.process_id=0",
            f"distributed.coordinator=127.0.0.1:{port}",
            timeout=120,
        )
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and f"port {port} is in use on this host" in lines[0], res.stderr
    assert not (tmp_path / "run").exists()
