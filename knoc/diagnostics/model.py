"""The one diagnostic type every stage produces and every reporter reads."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from knoc.rules.json import JsonValue


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Span:
    """A 1-based source position; end_column is exclusive, 0 when unknown."""

    line: int
    column: int
    end_column: int = 0


@dataclass(frozen=True)
class Related:
    """A secondary span, with what it shows ("first set here"): in the
    diagnostic's file, or in `file`."""

    span: Span
    label: str
    file: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    file: str | None = None  # repo-relative, forward slashes
    span: Span | None = None
    hint: str | None = None
    json_path: str | None = None  # for schema errors: where in the entity
    spec: str | None = None  # for schema errors: the spec that rejected it
    detail: str | None = None  # a block shown under the message, e.g. a diff
    related: tuple[Related, ...] = ()  # secondary spans, in this file unless they name another

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        line, col = (self.span.line, self.span.column) if self.span else (0, 0)
        return (self.file or "", line, col, self.code, self.message)

    def to_dict(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.file,
            "line": self.span.line if self.span else None,
            "column": self.span.column if self.span else None,
            "end_column": (self.span.end_column or None) if self.span else None,
            "hint": self.hint,
        }
        if self.json_path is not None:
            out["json_path"] = self.json_path
        if self.spec is not None:
            out["spec"] = self.spec
        if self.detail is not None:
            out["detail"] = self.detail
        if self.related:
            out["related"] = [_related(r) for r in self.related]
        return out


def _related(r: Related) -> JsonValue:
    out: dict[str, JsonValue] = {"line": r.span.line, "column": r.span.column, "end_column": r.span.end_column or None,
                                 "label": r.label}
    if r.file:
        out["file"] = r.file
    return out


def from_dict(d: Mapping[str, object]) -> Diagnostic:
    """The inverse of Diagnostic.to_dict (the cache stores diagnostics so)."""
    line, column = d.get("line"), d.get("column")
    span = Span(line, column, _int(d.get("end_column"))) if isinstance(line, int) and isinstance(column, int) else None
    related = tuple(Related(Span(_int(r["line"]), _int(r["column"]), _int(r.get("end_column"))), str(r["label"]),
                            _text(r.get("file")))
                    for r in _list(d.get("related")) if isinstance(r, Mapping))
    return Diagnostic(str(d["code"]), Severity(str(d["severity"])), str(d["message"]), _text(d.get("file")), span,
                      _text(d.get("hint")), _text(d.get("json_path")), _text(d.get("spec")), _text(d.get("detail")),
                      related)


# What to_dict wrote: a number, a text or None (absent), a list.
def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


@dataclass
class Report:
    """Diagnostics collected across stages, deduplicated and sorted on read."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self.items.extend(diags)

    def drop(self, code: str) -> None:
        self.items = [d for d in self.items if d.code != code]

    def sorted(self) -> list[Diagnostic]:
        return sorted(set(self.items), key=lambda d: d.sort_key)

    @property
    def errors(self) -> int:
        return sum(1 for d in set(self.items) if d.is_error)
