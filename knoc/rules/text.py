"""Text a person is shown otherwise than a program reads it, and text that
holds a key where a setting should name a file."""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Callable

# Direction overrides, embeddings and isolates ("Trojan Source"); zero-width space, word joiner, invisible
# operators, a BOM inside text, the Mongolian vowel separator, interlinear annotation (text shown and
# hidden), blank letters (the Hangul fillers, the Braille blank); the tag characters and the variation
# selectors past U+E0100, invisible letters that carry text past a reader to a language model ("ASCII
# smuggling"); control characters (an escape or a carriage return rewrites what a terminal shows). Not the
# marks right-to-left text needs (LRM, RLM), nor the joiners of emoji and scripts, nor tab and line feed.
_HIDDEN = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u180e\ufff9-\ufffb"
                     "\u115f\u1160\u3164\uffa0\u2800\U000e0000-\U000e007f\U000e0100-\U000e01ef"
                     "\x00-\x08\x0b-\x1f\x7f-\x9f]")  # and the control characters but tab and line feed
# Where those are text as Unicode means it: a subdivision flag's tags (U+1F3F4, tags, U+E007F), and an
# ideograph's variation selector.
_MEANT = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f"
                    "|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f][\U000e0100-\U000e01ef]")


# A variation selector after another, nothing drawn between (a joiner, a format character): one selects a glyph,
# a run of them carries bytes ("emoji smuggling"). The Mongolian free variation selectors too.
_SELECTORS = "\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"
_BETWEEN = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
            "\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f")
_SMUGGLED = re.compile(f"[{_SELECTORS}][{_BETWEEN}]*([{_SELECTORS}])")


def hidden_character(text: str) -> str | None:
    """The first character of `text` that hides or reorders what is shown, as `U+XXXX`; None if none."""
    found = _HIDDEN.search(_MEANT.sub("", text)) if _HIDDEN.search(text) else None
    if found is None and (run := _SMUGGLED.search(text)) is not None:
        return f"U+{ord(run.group(1)):04X}"
    return f"U+{ord(found.group()):04X}" if found is not None else None


# Unicode's default-ignorable characters (nothing is drawn for them), and the blanks `_HIDDEN` names besides.
_UNSHOWN = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U0001bca0-\U0001bca3"
                      "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def unshown(text: str) -> str | None:
    """The first character of `text` a terminal would not show as itself (a
    line break, an escape, one drawn as nothing or that reorders text), as
    `U+XXXX`: stricter than `hidden_character`, for names, not prose."""
    if text.isprintable() and _UNSHOWN.search(text) is None:
        return None
    return next(f"U+{ord(c):04X}" for c in text if not c.isprintable() or _UNSHOWN.match(c))


def one_line(text: str) -> str:
    """`text` with each character that is not printable (a line break, a
    tab, an escape, a format character such as a direction override)
    written `\\uXXXX`: a message quoting a name or value can then neither
    forge a line of the report nor rewrite one on the terminal."""
    return text if text.isprintable() else _written(text, str.isprintable)


def escaped(text: str) -> str:
    """`text` with each character `unshown` would name written `\\uXXXX`: a
    name shown in a message can then neither forge nor hide a line of it."""
    return text if unshown(text) is None else _written(text, lambda c: c.isprintable() and not _UNSHOWN.match(c))


def lines_shown(text: str) -> str:
    """A text of several lines (a report, a diff) each made `one_line`: its
    own line breaks kept, nothing else a terminal would act on."""
    return text if text.isprintable() else "\n".join(map(one_line, text.split("\n")))


def _written(text: str, shown: Callable[[str], bool]) -> str:
    return "".join(c if shown(c) else f"\\u{ord(c):04x}" for c in text)


def inline_pem(value: str) -> bytes | None:
    """The PEM text a setting's value holds, as it is (its line breaks
    written `\\n`, as some CI secret stores keep them, read as such) or
    base64-encoded (as CI secrets often hold the file, wrapped or not);
    None for a value that holds neither (a path, or something else)."""
    if "-----BEGIN" in value:
        return (value if "\n" in value else value.replace("\\n", "\n")).encode("utf-8", "replace")
    decoded = _base64(value)
    return decoded if decoded is not None and b"-----BEGIN" in decoded else None


def _base64(value: str) -> bytes | None:
    """What `value` holds base64- or base64url-encoded (wrapped, as `base64`
    wraps at 76 columns, or not; padded or not); None if it is not that."""
    compact = "".join(value.split())
    if not _ENCODED.fullmatch(compact):
        return None
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), altchars=b"-_" if "-" in compact
                                or "_" in compact else None)
    except ValueError:  # binascii.Error is one
        return None


_ENCODED = re.compile(r"[A-Za-z0-9+/=_-]{24,}")  # base64 (or base64url) text, whitespace taken out


def holds_key(value: str) -> bool:
    """Whether a setting that should name a file (or be an identifier)
    holds key material instead: PEM text (or it base64-encoded), a PEM's
    body (base64 of a DER structure), a JWK (or a set of them) as JSON, or a
    line break. A key
    id as RFC 7638 makes one (base64 of a digest) is none of these."""
    return (inline_pem(value) is not None or not value.isprintable() or value.lstrip()[:1] in ("{", "[")
            or _der(value))


def file_name_or_none(value: str) -> str | None:
    """`value` to repeat in a message as the file it names, when it reads as
    a file's name (it has a `.`, which base64 and hex key material never
    has, and holds no key); None when it may be key material in a form
    `holds_key` does not know (an OpenSSH body, a hex seed)."""
    return value if "." in value and not holds_key(value) else None


def visible(text: str) -> str:
    """A source line as a terminal may show it: each character that hides
    or reorders text (`hidden_character`), or that a terminal acts on (an
    escape, a bell; a tab is left to the caller), shown as U+FFFD, one
    column each."""
    return _HIDDEN.sub("\ufffd", text if text.isprintable() else _ACTED_ON.sub("\ufffd", text))


def code_span(value: object) -> str:
    """A Markdown code span around any text, whatever backticks it holds
    (CommonMark: a fence longer than any run inside it)."""
    text = str(value)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    pad = " " if longest or not text.strip() else ""  # "``" would be no span, but a run a later one closes
    return f"{'`' * (longest + 1)}{pad}{text}{pad}{'`' * (longest + 1)}"


def columns(text: str) -> int:
    """The terminal columns `text` takes: two for a wide or full-width
    character (CJK, most emoji), none for a combining mark, one otherwise."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


# C0 and C1 controls but the tab: what a terminal acts on. (A line separator it only draws; shown as it is,
# it is the line YAML reads.)
_ACTED_ON = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _der(value: str) -> bool:
    """Whether `value` is base64 of a DER SEQUENCE as long as it says (what a key's PEM body is)."""
    raw = _base64(value)
    if raw is None or len(raw) < 2 or raw[0] != 0x30:
        return False
    if raw[1] < 0x80:
        return raw[1] == len(raw) - 2
    size = raw[1] - 0x80  # the long form: that many bytes of length follow
    return 0 < size <= 2 and int.from_bytes(raw[2:2 + size], "big") == len(raw) - 2 - size


PRIVATE_JWK_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")  # what only a private JWK holds (RFC 7518)


def without_keys(text: str) -> str:
    """A text that repeats what a person typed (a command line refused),
    with any key material in it (PEM text, a long base64 run) left out."""
    return _KEYISH.sub("(key material, not shown)", text)


_KEYISH = re.compile(r"-----BEGIN[^\n]*?-----(?:.*?-----END[^\n]*?-----)?|[A-Za-z0-9+/=_-]{40,}", re.DOTALL)
