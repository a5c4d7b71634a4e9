"""How far a long run has got: the stages call a `Progress` with (stage,
done, total); the command line hands them a bar, anything else `quiet`.
Here, below the stages, so that reporting progress is a call down."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

Progress = Callable[[str, int, int], None]


def quiet(stage: str, done: int, total: int) -> None:
    """The progress of a run nobody watches."""


class ProgressBar:
    """A bar on `stream`, shown only once the run has taken two seconds
    (a quick run prints nothing), and cleared before the report."""

    AFTER, WIDTH = 2.0, 30  # seconds before it shows; characters of bar

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled, self.shown, self.start = enabled, False, time.monotonic()
        self.stream = stream or sys.stderr

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < self.AFTER:
            return
        filled = self.WIDTH * done // max(total, 1)
        self._write(f"\r{stage} {done:,}/{total:,} [{'#' * filled}{'.' * (self.WIDTH - filled)}] ")
        self.shown = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.shown:  # clear the line for the report
            self._write("\r" + " " * (self.WIDTH + 40) + "\r")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
