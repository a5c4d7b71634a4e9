"""What the readers share: their failures, the SDKs' removal of empty
values, and the canonical form (RFC 8785)."""

from __future__ import annotations

from typing import cast

import rfc8785

from knoc.rules.json import JsonReadable

# The SDKs' bound on nesting (a2a-sdk's `_jcs.MAX_DEPTH`): deeper, a card has
# no canonical form. knoc's JSON input rule holds every card to it too.
MAX_DEPTH = 128


class Unreadable(ValueError):
    """The reader cannot read the card at all: its clients cannot use it."""


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


def jcs(value: object) -> bytes:
    """RFC 8785 (JCS), as a2a-sdk 1.x and the JS SDK write the payload."""
    try:  # rfc8785 checks each value's type itself: what is not JSON raises CanonicalizationError
        return rfc8785.dumps(cast(JsonReadable, value if value is not None else {}))
    except rfc8785.CanonicalizationError as exc:
        raise Uncanonical(f"no canonical form: {exc}") from None
