"""Positions in a `.kno` buffer as knoc counts them and as a language
server client does, and knoc's findings and symbols in the protocol's terms."""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.workspace import PositionCodec

from knoc.diagnostics import Diagnostic, Severity
from knoc.features.editor.assist import Symbol
from knoc.rules.lines import lines_with_ends

_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning}
_SYMBOL = {"object": lsp.SymbolKind.Object, "array": lsp.SymbolKind.Array, "field": lsp.SymbolKind.Field}


class Positions:
    """A text's positions as knoc counts them (0-based lines as Python
    splits them, columns in characters) and as the client does (in its
    units: UTF-16 unless it asked for another)."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text, self._codec = text, codec
        self.lines = lines_with_ends(text)

    def out(self, line: int, character: int) -> lsp.Position:
        return self._codec.position_to_client_units(self.lines, lsp.Position(line, character))

    def inward(self, position: lsp.Position) -> tuple[int, int]:
        if position.line >= len(self.lines):
            return position.line, 0
        at = self._codec.position_from_client_units(self.lines, position)
        return at.line, at.character

    def range(self, line: int, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.out(line, start), self.out(line, end))

    def diagnostic(self, d: Diagnostic) -> lsp.Diagnostic:
        """A finding as the protocol has it: the rest of the line when its end is not known."""
        line = (d.span.line - 1) if d.span else 0
        start = (d.span.column - 1) if d.span else 0
        whole = len(self.lines[line].rstrip("\r\n")) if line < len(self.lines) else start
        end = (d.span.end_column - 1) if d.span and d.span.end_column else whole
        message = d.message + (f"\n{d.hint}" if d.hint else "")
        return lsp.Diagnostic(self.range(line, start, max(start, end)), message, code=d.code, source="knoc",
                              severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Information))

    def symbol(self, s: Symbol) -> lsp.DocumentSymbol:
        whole = lsp.Range(self.out(s.line, s.character), self.out(s.end_line, s.end_character))
        name = self.range(s.line, s.character, s.character + len(s.name))
        return lsp.DocumentSymbol(s.name, _SYMBOL[s.kind], whole, name, children=[self.symbol(c) for c in s.children])
