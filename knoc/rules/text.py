"""Text a person is shown otherwise than a program reads it."""

from __future__ import annotations

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
