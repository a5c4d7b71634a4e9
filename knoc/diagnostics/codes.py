"""Every diagnostic code knoc emits (`CODES`, declared by topic in
`codes_sources` and `codes_cards`), and `diag`, the one way to make a
diagnostic of one."""

from __future__ import annotations

from knoc.diagnostics import codes_cards, codes_sources  # noqa: F401  (each declares its codes)
from knoc.diagnostics.model import Diagnostic, Related, Span
from knoc.diagnostics.registry import CODES, Code
from knoc.rules.masking import masked
from knoc.rules.text import lines_shown, one_line

__all__ = ["CODES", "Code", "diag"]


def diag(code: str, message: str, *, file: str | None = None, span: Span | None = None,
         hint: str | None = None, json_path: str | None = None, spec: str | None = None,
         detail: str | None = None, related: tuple[Related, ...] = ()) -> Diagnostic:
    """A diagnostic of a declared code, with the code's severity (KeyError
    for an undeclared code: a knoc bug the tests catch). No url's user
    name or password is repeated in what it says (`masked`), and what it
    quotes cannot forge or rewrite a line of the report (`one_line`; a
    detail keeps its own lines)."""
    return Diagnostic(code, CODES[code].severity, one_line(masked(message)), file and one_line(masked(file)), span,
                      hint and one_line(masked(hint)), json_path and one_line(masked(json_path)), spec,
                      detail and lines_shown(masked(detail)), related)
