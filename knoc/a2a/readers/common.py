"""What the readers share: their failures, the SDKs' removal of empty
values (`knoc.a2a.empty`), and the canonical form (RFC 8785)."""

from __future__ import annotations

from typing import cast

import rfc8785

from knoc.a2a.empty import Uncanonical, clean_empty
from knoc.rules.json import JsonReadable

__all__ = ["Uncanonical", "Unreadable", "clean_empty", "jcs"]


class Unreadable(ValueError):
    """The reader cannot read the card at all: its clients cannot use it."""


def jcs(value: object) -> bytes:
    """RFC 8785 (JCS), as a2a-sdk 1.x and the JS SDK write the payload."""
    try:  # rfc8785 checks each value's type itself: what is not JSON raises CanonicalizationError
        return rfc8785.dumps(cast(JsonReadable, value if value is not None else {}))
    except rfc8785.CanonicalizationError as exc:
        raise Uncanonical(f"no canonical form: {exc}") from None
