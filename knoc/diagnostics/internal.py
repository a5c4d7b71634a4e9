"""A bug in knoc, reported as one diagnostic instead of a traceback: it
names the file being processed and asks for a report. The traceback
travels in its `detail`; the command line shows it only under `--debug`
(`without_traceback`)."""

from __future__ import annotations

import dataclasses
import traceback

from knoc.diagnostics.codes import diag
from knoc.diagnostics.model import Diagnostic

CODE = "KNO-INTERNAL"


def summary(exc: BaseException) -> str:
    """A bug's exception in a line of a message: its type and the start of
    its text (never its repr, which may hold a whole buffer)."""
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def internal(exc: BaseException, file: str | None = None) -> Diagnostic:
    where = f" while processing {file}" if file else ""
    return diag(CODE, f"knoc failed{where}: {summary(exc)}", file=file,
                hint="this is a bug in knoc, not in your sources: please report it with the file and the "
                     "output of the same command with --debug",
                detail="".join(traceback.format_exception(exc)))


def without_traceback(diags: list[Diagnostic]) -> list[Diagnostic]:
    """The findings as shown without --debug: a bug's traceback left out."""
    return [dataclasses.replace(d, detail=None) if d.code == CODE else d for d in diags]


def has_internal(diags: list[Diagnostic]) -> bool:
    return any(d.code == CODE for d in diags)
