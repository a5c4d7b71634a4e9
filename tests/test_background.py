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
