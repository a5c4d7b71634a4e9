"""What a command returns, and the one error that stops a command early."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from pathlib import Path

from knoc.diagnostics import Diagnostic, Span, diag
from knoc.diagnostics.internal import has_internal
from knoc.io import files, lock, pool, writing
from knoc.io.cache import DIR as CACHE_DIR
from knoc.io.cache import CacheDamaged


class UsageError(Exception):
    """A problem with the invocation or the environment (exit code 2);
    `file` and `span`: where in the repo, when it is in one of its files."""

    def __init__(self, code: str, message: str, hint: str | None = None, file: str | None = None,
                 span: Span | None = None, root: Path | None = None) -> None:
        super().__init__(message)
        self.code, self.hint, self.file, self.span = code, hint, file, span
        self.root = root  # the folder `file` is in, for the line it is about

    def finding(self) -> Diagnostic:
        """The error as a finding, for every reporter."""
        return diag(self.code, str(self), file=self.file, span=self.span, hint=self.hint)


# What a Ctrl-C leaves: every write is made aside and moved in whole, or
# held from Ctrl-C until it is done (`knoc.io.journal`).
INTERRUPTED = "interrupted: nothing was left half-written (build/ is as it was, or as this run finished writing it)"


def as_usage(exc: Exception) -> UsageError | None:
    """What to tell the user of an exception that is the invocation's or the
    environment's doing, not a bug in knoc; None for a bug."""
    if isinstance(exc, UsageError):
        return exc
    if isinstance(exc, CacheDamaged):  # found as it was read, too late to compute it afresh
        return UsageError("KNO-CACHE", f"knoc stopped: {exc}",
                          f"run it again: the damaged file was dropped (deleting {CACHE_DIR}/ is always safe)"
                          if exc.dropped else f"delete {CACHE_DIR}/ (always safe), then run it again")
    if isinstance(exc, lock.Locked):
        return UsageError("KNO-LOCKED", f"{exc}; nothing was written",
                          "let it finish (or stop it), then run this again")
    if isinstance(exc, pool.WorkerLost):
        return UsageError("KNO-MACHINE", f"knoc stopped: {exc}",
                          "run it again; if it happens again, give knoc more memory or fewer processes (--jobs)")
    if isinstance(exc, writing.Unsafe):
        return UsageError("KNO-WRITE", str(exc), exc.hint)
    if isinstance(exc, files.Exists):
        return UsageError("KNO-EXISTS", f"{exc} already exists; knoc does not replace it")
    if isinstance(exc, OSError) and exc.errno in MACHINE:
        where = f" ({exc.filename})" if exc.filename else ""
        return UsageError("KNO-MACHINE", f"the system refused: {exc.strerror or MACHINE[exc.errno]}{where}",
                          MACHINE[exc.errno])
    return None


# What the machine, not knoc, got wrong: each with what to do about it.
MACHINE = {
    errno.ENOSPC: "free some disk space, then run it again",
    errno.EDQUOT: "your disk quota is used up: free some space, then run it again",
    errno.EACCES: "knoc may not read or write there: check the permissions",
    errno.EPERM: "the operation is not permitted there: check the permissions",
    errno.EROFS: "the file system is read-only: work on a writable copy",
    errno.EMFILE: "too many files are open: raise the limit (ulimit -n)",
    errno.ENFILE: "the system has too many files open: try again later",
    errno.ENOMEM: "the machine is out of memory",
    errno.EIO: "the disk reported an input/output error: check the disk",
    errno.EFBIG: "a file grew past the size this system allows (ulimit -f): raise the limit",
}


@dataclass
class Outcome:
    command: str  # "knoc build": names the run (JUnit's suite)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)  # every file the command read
    # What happened, for the summary line ("wrote 7 cards ..."); None: the
    # command answers on stdout and prints no summary.
    summary: str | None = None
    notes: list[str] = field(default_factory=list)  # progress lines for people, before the findings
    answer: str | None = None  # the command's own output on stdout (a diff, a discovery answer)
    report_format: str | None = None  # how findings are reported when the answer owns stdout
    failed: bool = False  # the command failed whatever its findings say (exit code 1)
    # The code of each finding knoc.toml's [accept] kept from a command's own verdict, for the summary.
    accepted: list[str] = field(default_factory=list)


def exit_code(outcome: Outcome, fail_on_warning: bool) -> int:
    """0 clean, 1 findings at or above the threshold (or the command's own
    failure), 3 a bug in knoc."""
    if has_internal(outcome.diagnostics):
        return 3
    return 1 if outcome.failed or fails(outcome.diagnostics, fail_on_warning) else 0


def fails(diags: list[Diagnostic], fail_on_warning: bool) -> bool:
    """Whether these findings make a run fail (exit code 1)."""
    return any(d.is_error or fail_on_warning for d in diags)
