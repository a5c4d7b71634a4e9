"""The build/ scan that `knoc check` overlaps with the compile gives what
running it inline gives, whichever process did each piece, and a failure
in the child is not swallowed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from knoc.io import background

FORKS = sys.platform == "linux"  # forked only where that is safe


def test_the_value_comes_back_from_the_other_process() -> None:
    parent = os.getpid()
    began, tell = os.pipe()

    def work() -> dict[str, object]:
        os.write(tell, b"1")
        return {"pid": os.getpid(), "files": {"a.json": (1, 2, "ab")}}

    pending = background.start(work)
    if FORKS:
        assert os.read(began, 1) == b"1"  # the child took it before anyone asked
    value = pending()
    assert value["files"] == {"a.json": (1, 2, "ab")}
    assert (value["pid"] != parent) == FORKS


def test_the_caller_takes_the_pieces_the_child_has_not_begun(tmp_path: Path) -> None:
    """While the child is busy with its first piece, the caller does every
    other one: the slowest piece no longer sets the pace alone."""
    done = tmp_path / "done"
    began, tell = os.pipe()

    def first() -> int:
        os.write(tell, b"1")
        deadline = time.monotonic() + 30
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return os.getpid()

    def later(i: int) -> int:
        if i == 5:
            done.touch()
        return os.getpid()

    pending = background.share([first] + [lambda i=i: later(i) for i in range(1, 6)])
    if FORKS:
        assert os.read(began, 1) == b"1"  # the child is in the first piece
    pids = pending()
    assert len(pids) == 6 and done.exists()
    if FORKS:
        assert pids[0] != os.getpid() and pids[1:] == [os.getpid()] * 5


def test_work_that_fails_in_the_child_fails_in_the_caller() -> None:
    def broken() -> None:
        raise PermissionError("build/ is unreadable")

    pending = background.start(broken)
    with pytest.raises(PermissionError, match="unreadable"):
        pending()


@pytest.mark.parametrize("count", [0, background.MAX_PIECES + 1])
def test_a_share_has_one_to_255_pieces(count: int) -> None:
    with pytest.raises(ValueError, match="pieces"):
        background.share([lambda: None] * count)
