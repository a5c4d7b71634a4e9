"""ULIDs: the id of every entity (document-schema's `id` pattern)."""

from __future__ import annotations

import re
import secrets
import time

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CHARS = "0-9A-HJKMNP-TV-Z"  # Crockford base32 as a regex class: no I, L, O, U
PATTERN = re.compile(rf"^[0-7][{CHARS}]{{25}}$")  # 48-bit time first: at most 7ZZ...
EXAMPLE = "01KKSY7MK56WAKNP2QVKKZ1RXP"


def is_ulid(value: str) -> bool:
    return PATTERN.match(value) is not None


def new(now_ms: int | None = None) -> str:
    """A fresh ULID: 48 bits of milliseconds since the epoch, then 80 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | secrets.randbits(80)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
