"""Text a person is shown otherwise than a program reads it, and text that
holds a key where a setting should name a file."""

from __future__ import annotations

import base64
import re

# Direction overrides, embeddings and isolates ("Trojan Source"); zero-width space, word joiner, invisible
# operators, a BOM inside text, the Hangul fillers (blank letters); the tag characters and the variation
# selectors past U+E0100, invisible letters that carry text past a reader to a language model ("ASCII
# smuggling"). Not the marks right-to-left text needs (LRM, RLM), nor the joiners of emoji and scripts.
_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u115f\u1160\u3164\uffa0"
                     "\U000e0000-\U000e007f\U000e0100-\U000e01ef]")


def hidden_character(text: str) -> str | None:
    """The first character of `text` that hides or reorders what is shown, as `U+XXXX`; None if none."""
    found = _HIDDEN.search(text)
    return f"U+{ord(found.group()):04X}" if found is not None else None


def inline_pem(value: str) -> bytes | None:
    """The PEM text a setting's value holds, as it is (its line breaks
    written `\\n`, as some CI secret stores keep them, read as such) or
    base64-encoded (as CI secrets often hold the file, wrapped or not);
    None for a value that holds neither (a path, or something else)."""
    if "-----BEGIN" in value:
        return (value if "\n" in value else value.replace("\\n", "\n")).encode("utf-8", "replace")
    compact = "".join(value.split())  # `base64` wraps its output at 76 columns
    if not _ENCODED.fullmatch(compact):
        return None
    try:
        decoded = base64.b64decode(compact + "=" * (-len(compact) % 4), altchars=b"-_" if "-" in compact
                                   or "_" in compact else None)
    except ValueError:  # binascii.Error is one
        return None
    return decoded if b"-----BEGIN" in decoded else None


_ENCODED = re.compile(r"[A-Za-z0-9+/=_-]{24,}")  # base64 (or base64url) text, whitespace taken out
