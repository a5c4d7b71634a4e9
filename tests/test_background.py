"""The build/ scan that `knoc check` overlaps with the compile gives what
running it inline gives, and a failure in the child is not swallowed."""

from __future__ import annotations

import os
import sys

import pytest

from knoc.io import background


def test_the_value_comes_back_from_the_other_process() -> None:
    parent = os.getpid()
    pending = background.start(lambda: {"pid": os.getpid(), "files": {"a.json": (1, 2, "ab")}})
    value = pending()
    assert value["files"] == {"a.json": (1, 2, "ab")}
    assert (value["pid"] != parent) == (sys.platform == "linux")  # forked only where that is safe


def test_work_that_fails_in_the_child_fails_in_the_caller() -> None:
    def broken() -> None:
        raise PermissionError("build/ is unreadable")

    pending = background.start(broken)
    with pytest.raises(PermissionError, match="unreadable"):
        pending()


@pytest.mark.parametrize("children", [1, 2, 5])
def test_several_scans_share_the_children_there_are_cores_for(children: int) -> None:
    """On two cores `knoc check` runs both its scans in one child: beside
    the compile, two would take turns with it."""
    works = [lambda i=i: (i, os.getpid()) for i in range(3)]
    values = [pending() for pending in background.start_each(works, children)]
    assert [i for i, _ in values] == [0, 1, 2]
    if sys.platform == "linux":
        assert len({pid for _, pid in values}) == min(children, 3)
        assert os.getpid() not in {pid for _, pid in values}
