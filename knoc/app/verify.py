"""`knoc verify`: check the signatures of any A2A card (knoc's or not)
against a key set: given with --jwks (a file or a URL), or fetched from
each signature's `jku` when --allow-jku says a card may make knoc fetch.
Every download keeps the hardening limits (size, time)."""

from __future__ import annotations

import json

from knoc.a2a import signing
from knoc.app.outcome import Outcome, UsageError
from knoc.tools import keysets


def verify(source: str, jwks: str | None, allow_jku: bool, *, fmt: str) -> Outcome:
    try:
        return _verify(source, jwks, allow_jku, fmt)
    except keysets.Unreadable as exc:
        raise UsageError("KNO-CONFIG", str(exc)) from None


def _verify(source: str, jwks: str | None, allow_jku: bool, fmt: str) -> Outcome:
    card = keysets.load_json(source, "the card", card=True)
    if not isinstance(card, dict):
        raise UsageError("KNO-CONFIG", f"{source} is not an A2A card (a JSON object)")
    signatures = card.get("signatures") or []
    if jwks is None and not allow_jku and signatures:
        raise UsageError("KNO-CONFIG", "no key set to verify against",
                         "give one with --jwks FILE_OR_URL, or let the card name it: --allow-jku")
    keys = keysets.key_set(jwks) if jwks is not None else keysets.named_by(signatures) if allow_jku else []
    checks = signing.verify(card, keys)
    valid = [c for c in checks if c.view is not None]
    if fmt == "json":
        answer = json.dumps({"source": source, "valid": bool(valid), "signatures": [
            {"index": c.index, "kid": c.kid, "view": c.view, "valid": c.view is not None,
             **({"problem": c.problem} if c.problem else {})} for c in checks]}, indent=2) + "\n"
    else:
        lines = [f"signature {c.index}: " + (f"valid (the card's {c.view} view, key {c.kid})" if c.view
                                             else f"invalid: {c.problem}") for c in checks]
        verdict = (f"valid: {len(valid)} of {len(checks)} signature{'s' if len(checks) != 1 else ''} "
                   f"verif{'ies' if len(valid) == 1 else 'y'}"
                   if valid else "invalid: the card is unsigned" if not checks else "invalid: no signature verifies")
        answer = "\n".join([*lines, verdict]) + "\n"
    return Outcome("knoc verify", inputs=[source], answer=answer, failed=not valid)
