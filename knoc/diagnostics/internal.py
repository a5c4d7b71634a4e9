"""A bug in knoc, reported as one diagnostic instead of a traceback: it
names the file being processed and asks for a report. The traceback is
kept only under `--debug` (`DEBUG`)."""

from __future__ import annotations

import traceback

from knoc.diagnostics.codes import diag
from knoc.diagnostics.model import Diagnostic

CODE = "KNO-INTERNAL"
DEBUG = False  # set by the CLI's --debug


def internal(exc: BaseException, file: str | None = None) -> Diagnostic:
    where = f" while processing {file}" if file else ""
    return diag(CODE, f"knoc failed{where}: {type(exc).__name__}: {str(exc)[:200]}", file=file,
                hint="this is a bug in knoc, not in your sources: please report it with the file"
                     + ("" if DEBUG else " and the output of the same command with --debug"),
                detail="".join(traceback.format_exception(exc)) if DEBUG else None)


def has_internal(diags: list[Diagnostic]) -> bool:
    return any(d.code == CODE for d in diags)
