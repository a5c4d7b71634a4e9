"""`knoc explain CODE`: what a diagnostic code means."""

from __future__ import annotations

import difflib
import textwrap

from knoc.app.outcome import UsageError
from knoc.diagnostics import CODES


def explain(code: str | None) -> str:
    """One code's explanation; with no code, the list of every code, and
    with a code's start (`KNO-YAML`), the list of the codes it starts."""
    if code is None:
        return _listed(list(CODES))
    wanted = code.upper().rstrip("-*")
    wanted = wanted if wanted.startswith("KNO-") or wanted == "KNO" else f"KNO-{wanted}"
    if wanted in ("KNO", "KNO-"):  # `knoc explain KNO-`: every code
        return _listed(list(CODES))
    found = CODES.get(wanted)
    family = [c for c in CODES if c.startswith(wanted + "-")]
    if found is None and family:  # `knoc explain yaml`: every KNO-YAML-* code
        return _listed(family)
    if found is None:
        near = difflib.get_close_matches(wanted, list(CODES), n=1)
        raise UsageError("KNO-CONFIG", f"no diagnostic code `{code}`",
                         f"did you mean `{near[0]}`?" if near else "`knoc explain` lists every code")
    body = textwrap.fill(found.explanation, width=78, break_on_hyphens=False)
    more = f"\nThe codes it starts:\n{_listed(family)}" if family else ""
    return f"{found.id} ({found.severity.value}): {found.summary}\n\n{body}\n{more}"


def _listed(codes: list[str]) -> str:
    """Codes, one a line, with their severity and summary."""
    width = max(map(len, codes))
    return "".join(f"{c:<{width}}  {CODES[c].severity.value:<7}  {CODES[c].summary}\n" for c in codes)
