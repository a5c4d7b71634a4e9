"""Renderers: the same Diagnostic objects as text for people or JSON lines
for machines."""

from __future__ import annotations

import json
import os
from typing import Callable, Iterable, TextIO

from knoc.diagnostics import Diagnostic
from knoc.source import SourceFile

Sources = Callable[[str], SourceFile | None]

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "blue": "\x1b[1;34m", "bold": "\x1b[1m",
           "reset": "\x1b[0m"}


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def text(diags: Iterable[Diagnostic], sources: Sources, color: bool = False) -> str:
    paint = (lambda key, s: f"{_COLORS[key]}{s}{_COLORS['reset']}") if color else (lambda key, s: s)
    blocks = []
    for d in diags:
        lines = [paint(d.severity.value, f"{d.severity.value}[{d.code}]") + paint("bold", f": {d.message}")]
        if d.file:
            where = f"{d.file}:{d.span.line}:{d.span.column}" if d.span else d.file
            source = sources(d.file) if d.span else None
            gutter = " " * len(str(d.span.line)) if d.span else " "
            lines.append(f"{gutter}{paint('blue', '-->')} {where}")
            if source is not None and d.span is not None:
                code_line = source.line(d.span.line).replace("\t", " ")
                width = max(1, (d.span.end_column or d.span.column + 1) - d.span.column)
                lines += [
                    f"{gutter} {paint('blue', '|')}",
                    f"{paint('blue', str(d.span.line))} {paint('blue', '|')} {code_line}",
                    f"{gutter} {paint('blue', '|')} {' ' * (d.span.column - 1)}"
                    + paint(d.severity.value, "^" * width),
                ]
        pad = " " * (len(str(d.span.line)) if d.span else 1)
        if d.detail:
            lines += [f"{pad}   {line}" for line in d.detail.splitlines()]
        if d.hint:
            lines.append(f"{pad} = help: {d.hint}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def json_lines(diags: Iterable[Diagnostic]) -> str:
    return "\n".join(json.dumps(d.to_dict(), ensure_ascii=False, sort_keys=False) for d in diags)


def summary(diags: list[Diagnostic], entities: int, outcome: str) -> str:
    errors = sum(d.is_error for d in diags)
    warnings = len(diags) - errors
    counts = ", ".join(p for p in (_plural(errors, "error"), _plural(warnings, "warning")) if p) or "no problems"
    head = "error" if errors else "ok"
    return f"{head}: {counts} in {_plural(entities, 'entity', 'entities')} ({outcome})"


def _plural(n: int, one: str, many: str | None = None) -> str:
    if n == 0 and one != "entity":
        return ""
    return f"{n} {one if n == 1 else (many or one + 's')}"
