"""The registry of diagnostic codes: each declared once, with its severity,
a one-line summary (the SARIF rule's short description and the README's
table) and an explanation (`knoc explain CODE`, the SARIF rule's full
description). The codes themselves are declared by topic in
`codes_sources` (the command line, reading, specs, schemas, resolution)
and `codes_cards` (projection, extensions, tools)."""

from __future__ import annotations

from dataclasses import dataclass

from knoc.diagnostics.model import Severity

E, W = Severity.ERROR, Severity.WARNING


@dataclass(frozen=True)
class Code:
    id: str
    severity: Severity
    summary: str
    explanation: str


CODES: dict[str, Code] = {}


def declare(id_: str, severity: Severity, summary: str, explanation: str) -> None:
    assert id_ not in CODES, id_
    CODES[id_] = Code(id_, severity, summary, " ".join(explanation.split()))
