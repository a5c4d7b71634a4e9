"""Credentials written bare in text, outside any url: an Authorization
header's value, a JWT, a key that begins as a well-known service's do.
What `knoc.rules.masking` masks beside the user names, passwords and url
parameters it finds; and what no credential is (a placeholder)."""

from __future__ import annotations

import re

# A value no credential is: a yes or no, a digit, a version, or a placeholder a page's reader fills in
# (`YOUR_API_KEY`, `your-access-token`, `my-api-key`, `<token>`, `{api_key}`, `{{api_key}}`, `${API_KEY}`,
# `$db_password`, `%API_KEY%`, `xxxxxxxx`, `•••`, `…`, `demo`, `[redacted]`). Not a word a real password may be
# (`changeme`, `test`).
NOT_A_SECRET = re.compile(r"(?i:true|false|yes|no|on|off|null|none|all|\d|v\d+|your[-_.][\w.-]+"
                          r"|(?:my|the|some)[-_.](?:api[-_]?key|key|token|secret|password|access[-_]?token)"
                          r"|demo|sample|example|placeholder|redacted|\[redacted\]|value|string)"
                          r"|<[^>]*>?|\$?\{\{?[^}]*\}\}?|\$[A-Za-z_]+|%[A-Za-z_]+%|[xX*.\u2022]{3,}|\u2026+"
                          r"|[A-Z]+(?:_[A-Z]+)+|pk_(?:live|test)_\w+")  # Stripe's publishable key

# A credential written bare in text, outside any url: an Authorization header's value (`Bearer <token>`, `Basic
# <base64>`, its line broken after the word or not), a JWT, or a token that begins as a well-known secret does.
# What each holds is judged after (`_bare_value`): one pattern, no lookahead, so a search stays linear.
_JWT = r"eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*"  # a header and claims (base64url JSON) and a signature, maybe empty
_BARE_SECRET = re.compile(r"(?<![A-Za-z0-9_-])(?:(?i:bearer|basic):?(?:[ \t\u00a0\u3000]|\\?\n)+"
                          rf"(?P<header>[\w.~+/-]+=*)|(?P<jwt>{_JWT})"
                          r"|(?P<known>(?:gh[pousr]_|github_pat_|xox[abposr]-|sk-|[sr]k_live_|AIza|glpat-)[\w-]+"
                          r"|(?:AKIA|ASIA)[0-9A-Z]{16}))(?![\w-])")
# A text holds none of them unless it holds one of these: substring tests, cheaper than one search (a build's hot
# path: about 10 µs a source). A test key (`sk_test_`) is left: it reaches no one's money or data.
_BARE_MARKS = ("earer", "EARER", "asic", "ASIC", "eyJ", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox",
               "sk-", "k_live_", "AKIA", "ASIA", "AIza", "glpat-")


def may_hold_bare_secret(text: str) -> bool:
    """Whether `text` may hold a bare credential (`_BARE_SECRET`): False rules it out."""
    return any(mark in text for mark in _BARE_MARKS)


def bare_secrets(text: str) -> list[tuple[int, int]]:
    """The span of each bare credential in `text`, and in it as YAML or
    JSON read its escapes (`\\x42earer`, `sk\\x2d...`: a source line's)."""
    spans = []
    if may_hold_bare_secret(text):
        spans = [m.span(kind) for m in _BARE_SECRET.finditer(text) for kind in ("header", "jwt", "known")
                 if m.group(kind) is not None and _bare_value(kind, m.group(kind))]
    if "\\" in text:
        read, at = _unescaped(text)
        spans += [(at[start], at[end]) for start, end in bare_secrets(read)] if read != text else []
    return spans


_ANY_ESCAPE = re.compile(r"\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_ESCAPED_CHARS = {"t": "\t", "n": "\n", "r": "\r", "_": "\u00a0", "N": "\x85", "L": "\u2028", "P": "\u2029"}


def _unescaped(text: str) -> tuple[str, list[int]]:
    """`text` with each escape read as the character it is, and where in
    `text` each character of that (and its end) is."""
    read: list[str] = []
    at: list[int] = []
    done = 0
    for m in _ANY_ESCAPE.finditer(text):
        read += text[done:m.start()]
        at += range(done, m.start())
        code = m.group()[1:]
        read.append(chr(min(int(code[1:], 16), 0x10FFFF)) if len(code) > 1 else _ESCAPED_CHARS.get(code, code))
        at.append(m.start())
        done = m.end()
    read += text[done:]
    at += [*range(done, len(text)), len(text)]
    return "".join(read), at


def _bare_value(kind: str, value: str) -> bool:
    """Whether a value found where a bare credential goes is one: not a
    placeholder, a documented example or a JWT's header alone (what docs
    show, `eyJhbGciOi...`); random-looking (`looks_random`), but a JWT, an AWS
    key id, or a `Basic` value padded as base64 is (`YWRtaW46YWRtaW4=`)."""
    if NOT_A_SECRET.fullmatch(value) or "example" in value.lower() or len(set(value)) < 6:
        return False
    if kind == "jwt" or value.startswith(("AKIA", "ASIA")):
        return True
    if value.startswith("eyJ"):  # after `Bearer`: a whole JWT is one; its header alone, or cut short, is not
        return re.fullmatch(_JWT, value.rstrip(".")) is not None
    return looks_random(value) or (kind == "header" and len(value) >= 12 and value.endswith("="))


_RUNS = re.compile(r"[A-Za-z0-9]{16,}")


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def looks_random(value: str) -> bool:
    """Whether `value` holds what a token is made of and words are not: a
    UUID, or a run of 16 or more letters and digits, mixing digits and
    letters or upper and lower case (`ISO-8601/RFC-3339`, `GPT-4o-mini`,
    `SHA256withRSA` and `sk-learn-compatible-v2` are words); after `sk-`
    (a name's start as often as a key's), a run of 32 or more, as OpenAI's keys have."""
    if _UUID.search(value):
        return True
    least = 32 if value.startswith("sk-") else 16
    return any(len(run) >= least and ((re.search(r"\d", run) and re.search(r"[A-Za-z]", run))
                                      or (run.lower() != run and run.upper() != run))
               for run in _RUNS.findall(value))
