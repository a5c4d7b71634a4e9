"""The names of what a build writes beside its output folder: a new tree
being written, an old one moved aside, an update's journal. A run that was
killed leaves them, and the next run removes them by these names only."""

from __future__ import annotations

import re
from pathlib import Path


def beside(out: Path, kind: str) -> str:
    """The name prefix of knoc's folders and files of `kind` (new, old,
    update) beside `out`: `.build.new-knoc`, then mkdtemp's 8 characters.
    `knoc` sets them apart from a user's own `.build.old-20240101`."""
    return f".{out.name}.{kind}-knoc"


def debris(out: Path, kinds: str) -> re.Pattern[str]:
    """The whole names `beside` gives, for the kinds in `kinds` (`new|old`)."""
    return re.compile(rf"\.{re.escape(out.name)}\.({kinds})-knoc[a-z0-9_]{{8}}")
