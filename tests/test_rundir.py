"""alem.rundir: who may write a run directory (an exclusive claim) and where new runs go."""

import json
import os
import re

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
