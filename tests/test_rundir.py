"""alem.rundir: who may write a run directory (an exclusive claim) and where new runs go."""

import json
import os
import re
import subprocess
import sys

import pytest

from alem import rundir
from alem.cli import default_run_dir
from alem.rundir import CLAIM_MARKER, RunDirError, claim, release


def test_a_claimed_directory_is_refused_to_the_next_run(tmp_path):
    run = claim(tmp_path / "r", cli="alem.train")
    assert json.loads((run / CLAIM_MARKER).read_text()) == {
        "cli": "alem.train",
        "pid": os.getpid(),
        "created": True,
    }
    with pytest.raises(RunDirError, match="already holds a run"):
        claim(tmp_path / "r", cli="alem.train")


def test_of_two_runs_that_pass_the_check_together_only_one_claims(tmp_path, monkeypatch, fault_report):
    """Both runs saw an empty directory (the check and the create are two steps); the exclusive
    create decides: the second is refused and the first's marker is untouched."""
    claim(tmp_path / "r", cli="alem.train")
    before = (tmp_path / "r" / CLAIM_MARKER).read_bytes()
    monkeypatch.setattr(rundir, "refuse_occupied", lambda *a, **k: None)  # it passed the check too
    with pytest.raises(RunDirError, match="claimed by another run started at the same moment"):
        claim(tmp_path / "r", cli="alem.evaluate")
    assert (tmp_path / "r" / CLAIM_MARKER).read_bytes() == before
    fault_report(faults=1)


def test_a_released_claim_leaves_nothing_and_another_process_claim_is_kept(tmp_path):
    made = claim(tmp_path / "new", cli="alem.train")
    release(made)
    assert not made.exists()  # the claim made it, and it is empty again
    (tmp_path / "mine").mkdir()
    release(claim(tmp_path / "mine", cli="alem.train"))
    assert (tmp_path / "mine").is_dir() and not any((tmp_path / "mine").iterdir())  # the user's dir stays
    theirs = claim(tmp_path / "theirs", cli="alem.train")
    marker = theirs / CLAIM_MARKER
    marker.write_text(json.dumps({"cli": "alem.train", "pid": os.getpid() + 1, "created": True}))
    release(theirs)
    assert marker.exists()  # not this process's claim


def test_default_run_dirs_differ_within_one_second_and_a_named_dir_is_used_as_it_is():
    """outputs/<date>/<time>.<microseconds>-<pid>: two processes started in the same second differ
    by their pid, and by the microseconds."""
    assert re.fullmatch(
        rf"outputs/\d{{4}}-\d\d-\d\d/\d\d-\d\d-\d\d\.\d{{6}}-{os.getpid()}", default_run_dir()
    )
    assert default_run_dir("runs/x") == "runs/x"
    assert default_run_dir(None, "runs/old") == "runs/old"  # a resume: Hydra's dir is the run's


def test_a_jsonl_line_that_is_valid_json_but_not_an_object_is_damage(tmp_path, fault_report):
    """`[1, 2]` or `3` in the middle of a run file used to reach the readers as a record and end
    in a traceback (``'list' object has no attribute 'get'``)."""
    from alem.rundir import CorruptFileError, read_jsonl

    path = tmp_path / "episodes.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n{"b": 2}\n')
    with pytest.raises(CorruptFileError, match="line 2 is not a JSON record"):
        list(read_jsonl(path))
    seen = []
    assert list(read_jsonl(path, on_corrupt=lambda k, text: seen.append(k))) == [{"a": 1}, {"b": 2}]
    assert seen == [2]
    fault_report(faults=1)


def test_the_process_knows_whether_it_wrote_into_a_run_directory(tmp_path):
    """What the exit status rests on (alem.cli.hydra_app): 2 when a command stopped before it
    wrote anything, 1 after."""
    from alem.rundir import JsonlWriter, claim, forget_writes, write_atomic, wrote_anything

    for write in (
        lambda: claim(tmp_path / "a", cli="alem.train"),
        lambda: write_atomic(tmp_path / "b.json", "{}"),
        lambda: JsonlWriter(tmp_path / "c.jsonl").close(),
    ):
        forget_writes()
        assert not wrote_anything()
        write()
        assert wrote_anything()
    forget_writes()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunDirError):
        claim(blocker / "run", cli="alem.train")  # refused: nothing was written
    assert not wrote_anything()


def _holder(path) -> subprocess.Popen:
    """Another process that holds ``path`` (:func:`rundir.hold`) until it is killed."""
    code = "import sys, time; from alem.rundir import hold; hold(sys.argv[1]); print('held', flush=True); time.sleep(120)"
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_run_dir_held_by_a_live_process_is_refused_to_a_resume_and_free_once_it_died(
    tmp_path, fault_report
):
    """Two resumes of one run at once used to both write it (metrics rewritten, a checkpoint rename
    failing); the second is refused, writing nothing, and a killed holder leaves no stale lock."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "metrics.jsonl").write_text('{"chunk": 0}\n')
    holder = _holder(run_dir)
    try:
        with pytest.raises(RunDirError, match=r"resume=.* is in use by another process"):
            rundir.hold(run_dir)
    finally:
        holder.kill()
        holder.wait()
    assert rundir.hold(run_dir) == run_dir.resolve()  # kill -9 released it
    assert rundir.hold(run_dir) == run_dir.resolve()  # holding twice in one process is a no-op
    assert sorted(p.name for p in run_dir.iterdir()) == ["metrics.jsonl"]
    fault_report(faults=1)


def test_a_new_run_holds_its_directory_as_a_resume_does(tmp_path):
    run_dir = claim(tmp_path / "r", cli="alem.train")
    code = "import sys; from alem.rundir import hold; hold(sys.argv[1])"
    proc = subprocess.run([sys.executable, "-c", code, str(run_dir)], capture_output=True, text=True)
    assert proc.returncode == 1 and "is in use by another process" in proc.stderr
    release(run_dir)  # a released claim lets go of the directory too
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_file_that_cannot_be_written_is_one_line_naming_it_and_the_old_file_stays(tmp_path):
    with pytest.raises(RunDirError, match=r"cannot write .*nowhere.*results.json"):
        rundir.write_atomic(tmp_path / "nowhere" / "results.json", "{}")
    (tmp_path / "config.yaml").mkdir()  # something that is not a file is in the way
    with pytest.raises(RunDirError, match="cannot write"):
        rundir.write_atomic(tmp_path / "config.yaml", "a: 1\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]  # no temporary file left


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('algo:\n  name: "ipp', r"its config.yaml cannot be read, torn or edited \(ScannerError"),
        ("env:\n  id: x-v0\nalgo:\n  num_envs: 4\n", r"its config.yaml has no algo.name, seed\b"),
        (
            "algo:\n  name: ippo\nenv:\n  id: x-v0\nseed: 0\nwandb:\n  project: ${oc.env:SECRET}\n",
            r"holds an interpolation at wandb.project .*an \$\{oc.env:...\} there",
        ),
    ],
)
def test_a_torn_or_edited_config_is_one_line_naming_what_is_wrong(tmp_path, text, match):
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(RunDirError, match=match) as info:
        rundir.read_run_config(tmp_path, cli="alem.train", required=("algo.name", "env.id", "seed"))
    assert "\n" not in str(info.value) and "${{" not in str(info.value)
