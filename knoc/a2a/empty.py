"""What every A2A SDK removes from a card before it canonicalizes it for a
signature (section 8.4.1): empty strings, lists and objects. Apart from
the readers (`knoc.a2a.readers`), so that what checks a card for values no
signature protects (`knoc.a2a.unprotected`, on every build) does not load
the SDKs' models."""

from __future__ import annotations

# The SDKs' bound on nesting (a2a-sdk's `_jcs.MAX_DEPTH`): deeper, a card has
# no canonical form. knoc's JSON input rule holds every card to it too.
MAX_DEPTH = 128


class Uncanonical(ValueError):
    """The reader reads the card, but has no canonical form of it (a number
    outside JSON's safe range, say): none of its signatures can verify."""


def clean_empty(value: object, depth: int = 1) -> object:
    """Empty strings, lists and objects removed, recursively (None: all of
    `value` was empty), as every SDK does before canonicalizing."""
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        raise Uncanonical(f"nested deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        kept = {k: c for k, v in value.items() if (c := clean_empty(v, depth + 1)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [c for v in value if (c := clean_empty(v, depth + 1)) is not None]
        return items or None
    return None if value == "" and isinstance(value, str) else value
