"""User names and passwords (and a url's credential parameters, such as
`?api_key=`) masked in any text a message repeats, in time
linear in the text: a source line or a value quoted in a finding may be a
megabyte an attacker wrote, and regular expressions that try a match at
every `[` or `http:` of it take hours. Each credential ends at an `@`, so
the text is read once from each `@` back to where its credential can
begin, and a little more is masked rather than any of it shown."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from knoc.rules.bare_secrets import NOT_A_SECRET, bare_secrets, looks_random

# A web scheme, as a browser reads one before an authority (`https:/u:p@h`, `https:\u:p@h` too).
_SCHEME = r"(?<!\w)(?i:https?|wss?|ftp):"
_SCHEME_BEFORE = re.compile(_SCHEME + r"\Z")
_LEAD_IN_RUN = re.compile(_SCHEME + r"\\*|\\\\")  # a lead inside a run: a scheme and backslashes, or `\\`
_QUOTED_LEAD = re.compile(r"([\"'])" + _SCHEME + r"[/\\]*")
_MARK = re.compile(r"[(\[,]")  # where a bare `name:secret@` may begin inside a word
_ESCAPED_AT = re.compile(r"\\(?:u0040|x40|U00000040)")
# What an authority holds: anything but a path's, query's or fragment's start and white space, though a tab or
# a line break is dropped from a url, not read as its end.
_AUTHORITY = re.compile(r"(?:[^/?#\s]|[\t\n\r])+")
_WORD = re.compile(r"[^\s\"'`/\\?#]+")  # what a bare `name:secret@host` is written in


# A url's query or fragment parameter that carries a credential (`?api_key=`, `#access_token=`, a presigned
# url's signature): its value is masked as a password is. A match begins at the `?`, `&`, `#` or `;` (or a
# YAML or JSON escape of one) before the name, so a try fails at once anywhere else; `_` and `-` may be
# percent-encoded. A name that also means other things (`key`, `token`, `sig`, `auth`, `code`) counts only before
# a value that looks like a secret: 16 or more characters of a token's alphabet, digits and letters both.
_SEP = r"(?:[-_]|%5[fF]|%2[dD])?"
_ESCAPE_LEAD = r"\\(?:x|u00|U000000)"  # how YAML and JSON begin the escape of a character below U+0100
_SEPARATOR = rf"(?:[?&#;]|{_ESCAPE_LEAD}(?:26|23|3[fFbB]))"  # `&`, `#`, `?`, `;`, or an escape of one
_EQUALS = rf"(?:=|{_ESCAPE_LEAD}3[dD])"
# A token's character: base64's and base64url's, `+`, `/`, `=` and `~` percent-encoded too (a SAS url's `sig`);
# any other escape (`%20`) ends it, so `?key=getting%20started` is text.
_TOKEN = r"(?:[\w.~+/=-]|%2[bBfF]|%3[dD]|%7[eE])"
_WEAK_VALUE = re.compile(rf"(?={_TOKEN}*\d)(?={_TOKEN}*[A-Za-z]){_TOKEN}{{16,}}")
# A credential's own name, after any words that say whose (`db_password`, `dbPassword`, `user[password]`,
# `pass[]`); the names that also mean other things only as they are (`pass`, `signature`).
_OWN = (rf"(?:api|auth|access|private|secret|session|client|refresh|id|bearer|oauth){_SEP}(?:key|token|secret)"
        rf"|x{_SEP}api{_SEP}key|subscription{_SEP}key|x{_SEP}amz{_SEP}(?:signature|credential|security{_SEP}token)"
        rf"|x{_SEP}goog{_SEP}(?:signature|credential)|(?:j|php)?sess(?:ion)?{_SEP}id|password|passwd|passphrase"
        rf"|passcode|secret|jwt|credential|client{_SEP}assertion|x{_SEP}vercel{_SEP}protection{_SEP}bypass")
CREDENTIAL_NAME = re.compile(rf"(?i:(?:(?:[a-z0-9]*(?:[-_.\[]|%5[fFbB]|%2[dD]))*[a-z0-9]*(?:{_OWN})(?:\]|%5[dD])?"
                             r"|pass|pwd|authorization|signature)(?:\[\d*\]|%5[bB]\d*%5[dD])?)")
# A value as a url holds it: a quote between letters (`it's`) and an escaped character are in it.
_VALUE = r"['\"`<]?(?:[^&#;\s\"'<>`\\]|\\\S|(?<=\w)['`](?=\w))+"
# `app_key`, `sas_token`, `hmac`; not a key or token public by design (a page's, a cache's, Stripe's publishable).
_WEAK_NAME = re.compile(r"(?i:(?!(?:next[-_]?)?page[-_]?|continuation[-_]?|cache[-_]?|idempotency[-_]?|publishable[-_]?"
                        r"|sort[-_]?|partition[-_]?|primary[-_]?)(?:[a-z0-9]*[-_])*[a-z0-9]*(?:key|token)"
                        r"|sig|auth|code|hmac|appid|ticket)")
CREDENTIAL_PARAM = re.compile(
    _SEPARATOR + rf"(?:(?P<name>{CREDENTIAL_NAME.pattern}){_EQUALS}[ \t]*(?P<value>{_VALUE})"
    rf"|(?P<weak>{_WEAK_NAME.pattern}){_EQUALS}(?P<weak_value>{_WEAK_VALUE.pattern}))")
# The words a url parameter that may carry a credential is named by, as parts of its name (`api_key`,
# `X-Auth-Token`, `sessionId`), whatever its value: what `knoc import` leaves out of a url it keeps (a card
# from the wild is committed as it is), and what a source excerpt masks. `code` only as the whole name.
_SECRET_PARTS = frozenset({"key", "apikey", "hapikey", "token", "accesstoken", "secret", "pass", "passwd", "password",
                           "passphrase", "passcode", "pwd", "sig", "signature", "auth", "authorization", "credential",
                           "credentials", "session", "sessionid", "sess", "sid", "jsessionid", "phpsessid", "jwt",
                           "bearer", "cookie", "assertion"})
_NAME_PARTS = re.compile(r"[-_.\[\]\s]+|(?<=[a-z0-9])(?=[A-Z])")
# A url parameter as a text holds it: a name and a value, each up to the next separator (a parameter in a
# parameter's value, `?next=/cb?pass=...`, is one too), a YAML or JSON escape in them read as one character.
_ESCAPE = rf"(?!{_ESCAPE_LEAD}(?:26|23|3[fFbBdD]))\\(?:x[0-9A-Fa-f]{{2}}|u[0-9A-Fa-f]{{4}}|U[0-9A-Fa-f]{{8}})"
_NAMED_PARAM = re.compile(rf"{_SEPARATOR}(?P<name>(?:[^=&#;?\s\"'<>`\\]|{_ESCAPE})+){_EQUALS}[ \t]*"
                          rf"(?P<value>(?:[^&#;?\s\"'<>`\\]|{_ESCAPE})+)")
_ESCAPES = re.compile(_ESCAPE)
_PATH_PARAM = re.compile(r"/(?P<name>[^/=?#&;\s\"'<>`]+)=(?P<value>[^/?#&;\s\"'<>`\\]+)")
_PATH_VALUE = re.compile(r"(?=[^/]*\d)(?=[^/]*[A-Za-z])[\w.~+=-]{8,}")  # token-like: letters and digits, 8 or more
# A part of a page's name, a version or a path: a word, a number, or a word and its number (`v2`, `python3`).
_WORD_PART = re.compile(r"[A-Za-z][a-z]+[0-9]*|[A-Z]+[0-9]*|[a-z][0-9]+|[0-9]+")
# How well-known secrets begin (GitHub's, Slack's, OpenAI's, Stripe's, AWS's, Google's, GitLab's): never words.
_KNOWN_SECRET = re.compile(r"gh[pousr]_|github_pat_|xox[abposr]-|sk-|[sr]k_(?:live|test)_|AKIA|AIza|glpat-")

def _words(value: str) -> bool:
    """Whether a weak name's value is words, not a token: parts that are
    each a word, a number or both (`getting-started-v2`, `ISO-3166-1`,
    `reports/2024/q1.pdf`, `agent-card-v0.3.0`), one of them a word of
    three letters. A token's parts mix them (`H7KQ2-9MXPT`, a UUID's)."""
    parts = [p for p in re.split(r"[-_./]+", value) if p]
    return len(parts) >= 2 and not _KNOWN_SECRET.match(value) and all(_WORD_PART.fullmatch(p) for p in parts) and any(
        re.match(r"[A-Za-z]{3}", p) for p in parts)


def _name_parts(name: str) -> set[str]:
    """The words of a parameter's name (`X-Auth-Token`, `sessionId`), lowercase."""
    return {p.lower() for p in _NAME_PARTS.split(name) if p}


def _secret_name(name: str) -> bool:
    """Whether a url parameter's name (decoded) holds a word a credential goes by (`_SECRET_PARTS`)."""
    return name.lower() == "code" or not _name_parts(name).isdisjoint(_SECRET_PARTS) or \
        CREDENTIAL_NAME.fullmatch(name) is not None


def _credentials(text: str, nested: int = 2) -> Iterator[tuple[str, tuple[int, int]]]:
    """The name and the value's span of each url parameter in `text` that
    carries a credential. A name written with escapes (`?%70ass=`, YAML's
    `\\x70ass`) is read as a server reads it, decoded once; so is a value
    that is a url itself (`?next=https%3A...%3Fpassword%3D...`): a
    credential in it (a parameter, a user name and password) is its
    parameter's (`nested`: looked for so many levels down)."""
    if "=" not in text and "\\" not in text and "%" not in text:  # an `=` may be written as an escape
        return
    for m in CREDENTIAL_PARAM.finditer(text):
        strong = m.group("value") is not None
        named, valued = ("name", "value") if strong else ("weak", "weak_value")
        if _secret(strong, m.group(valued)) and not _echoes(m.group(named), m.group(valued)):
            yield m.group(named), m.span(valued)
    if "/" in text:  # `.../api_key=.../`: a parameter written as a path segment (a matrix or a router's)
        for m in _PATH_PARAM.finditer(text):
            if _path_secret(decoded := _decoded(m.group("name")), m.group("value")):
                yield decoded, m.span("value")
    if "%" in text or "\\" in text:
        for m in _NAMED_PARAM.finditer(text):
            if ("%" in m.group("name") or "\\" in m.group("name")) and \
                    (name := _credential_name(_decoded(m.group("name")), m.group("value"))) is not None:
                yield name, m.span("value")
            elif nested and "%" in m.group("value") and (found := _carried(m.group("value"), nested)) is not None:
                yield found or m.group("name"), m.span("value")


def _carried(value: str, times: int) -> str | None:
    """The credential a parameter's value carries as an encoded url (a
    redirect's), decoded up to `times` times: the name of its parameter,
    "" for a user name and password, None for none."""
    for _ in range(times):
        value = unquote(value)
        found = next(_credentials(value, 0), None)
        if found is not None:
            return found[0]
        if "@" in value and masked(value, bare=False) != value:
            return ""
        if "%" not in value:
            return None
    return None


def _credential_name(name: str, value: str) -> str | None:
    """`name` if, read as a parameter's name before `value`, it names a credential."""
    if CREDENTIAL_NAME.fullmatch(name) is not None:
        return name if _secret(True, value) else None
    weak = _WEAK_VALUE.match(value) if _WEAK_NAME.fullmatch(name) else None
    return name if weak is not None and _secret(False, weak.group()) else None


def _path_secret(name: str, value: str) -> bool:
    """Whether a parameter written as a path segment carries a credential:
    a credential's own name before a token-like value (a page's path says
    `password=reset`, `signature=v2`, `key=3f2a9c1d`: no name that also
    means other things counts there)."""
    return CREDENTIAL_NAME.fullmatch(name) is not None and NOT_A_SECRET.fullmatch(value) is None and (
        _KNOWN_SECRET.match(value) is not None or _PATH_VALUE.fullmatch(value) is not None)


def _echoes(name: str, value: str) -> bool:
    """Whether a value only repeats its name's last words, as a sample does
    (`?client_secret=secret`, `?access_token=AccessToken`, `?api_key=KEY`)."""
    plain = re.sub(r"[-_.\s]|%5[fF]|%2[dD]", "", value).lower()
    return len(plain) >= 3 and re.sub(r"[-_.\s\[\]]|%5[fFbBdD]|%2[dD]", "", name).lower().endswith(plain)


def _secret(strong: bool, value: str) -> bool:
    """Whether a value after a credential's name (`strong`) or after a name
    that also means other things is a secret: not a yes or no; not words."""
    return NOT_A_SECRET.fullmatch(value) is None and (strong or not _words(value))


def _decoded(name: str) -> str:
    """A parameter's name as a server reads it: its YAML or JSON escapes, then its percent-escapes."""
    return unquote(_ESCAPES.sub(lambda m: chr(min(int(m.group()[2:], 16), 0x10FFFF)), name) if "\\" in name else name)


def credential_param(text: str) -> str | None:
    """The name of the first url parameter in `text` that carries a credential, or None."""
    return next((name for name, _ in _credentials(text)), None)


def secret_param(param: str) -> bool:
    """Whether a url parameter (`name=value`) may carry a credential: by its
    value (`credential_param`), or by a word in its name (`_secret_name`)."""
    if credential_param(f"?{param}") is not None:
        return True
    name, value = (unquote(part) for part in param.partition("=")[::2])
    return _named_secret(name, value)


def _named_secret(name: str, value: str) -> bool:
    """Whether a parameter `name` (decoded) makes `value` one to leave out."""
    if not _secret_name(name) or NOT_A_SECRET.fullmatch(value) is not None:
        return False
    # A name that is a credential's word itself (`key`, `code`) drops any value; one that holds it beside others
    # (`sort_key`, `token_type`) keeps a plain one: words, a number, a short lowercase word.
    whole = len(_name_parts(name)) == 1
    return whole or not (_words(value) or re.fullmatch(r"[0-9]+|[a-z]{1,12}", value) is not None)


def masked(text: str, keep_width: bool = False, bare: bool = True, named: bool = False) -> str:
    """`text` with every user name and password it holds masked: a URL's,
    from after `scheme:` and its slashes (`https:/u:p@h` and `https:\\u:p@h`
    too) or after `//` or `\\\\`, up to the last `@` before its path; in a
    quoted url (a YAML or JSON value), up to the last `@` inside the
    quotes, spaces and all; and a bare `name:secret@` (a gRPC address),
    from the start of its word to its last `@`. An `@` written as an
    escape (`\\u0040`, `\\x40`) counts as one, and a tab or line break
    inside an authority (browsers drop them) does not end it. `keep_width`:
    one `*` per character masked, so that columns after it stay where they
    were. `bare`: the bare form too (prose, where `support:team@example.com`
    is a label and an address, says False). `named`: also the value of any
    url parameter `knoc import` leaves out by its name (a source excerpt, which may show a
    card whose url `knoc import` left such a parameter out of)."""
    written_bare = bare_secrets(text)
    if "@" not in text and "\\" not in text and "=" not in text and not written_bare:
        return text
    seen = _at_read(text)
    spans = [*_in_urls(seen), *_in_quoted_urls(seen), *(_bare(seen) if bare else ())] if "@" in seen else []
    if "=" in text or "\\" in text:
        spans += [span for _, span in _credentials(text)]
        if named:
            spans += [m.span("value") for m in _NAMED_PARAM.finditer(text)
                      if _named_secret(_decoded(m.group("name")), unquote(m.group("value")))]
    spans += written_bare
    if not spans:
        return text
    out, done = [], 0
    for start, end in _merged(spans):
        out += [text[done:start], "*" * (end - start) if keep_width else "***"]
        done = end
    return "".join([*out, text[done:]])


def holds_credential(text: str) -> bool:
    """Whether prose (a card's text, a page's) holds a credential: a url's
    user name and a password that is no placeholder (a user name alone,
    `ssh://git@host/`, is an address; `https://<user>:<token>@` a
    placeholder), a parameter that carries one, or one written bare. What
    `masked` hides besides is no finding."""
    if bare_secrets(text) or (("=" in text or "\\" in text) and next(_credentials(text), None) is not None):
        return True
    if "@" not in text and "\\" not in text:
        return False
    seen = _at_read(text)
    for start, end in [*_in_urls(seen), *_in_quoted_urls(seen)]:
        user, colon, password = (part.strip() for part in seen[start:end].partition(":"))
        if (colon and password and not _PLACEHOLDER_PASSWORD.fullmatch(password)) or (not colon and looks_random(user)):
            return True  # a password, or a token given as the user name (`https://<token>@github.com/...`)
    return False


# A password a page shows as a sample: a placeholder, or the word for it (`user:password@`, `user:[password]@`).
_PLACEHOLDER_PASSWORD = re.compile(rf"{NOT_A_SECRET.pattern}|(?i:pass(?:word)?|pwd|token|secret|api[-_]?key|\[\w+\])")


def _at_read(text: str) -> str:
    """`text` with each escaped `@` (YAML's, JSON's) read as one, of the same
    width: a value's credential is found in its source and in a card's JSON
    as in the value."""
    return _ESCAPED_AT.sub(lambda m: "@" + "\x01" * (len(m.group()) - 1), text) if "\\" in text else text


def credential_shown(text: str, width: int = 100) -> str:
    """What a message quotes of a text that holds a credential: the part
    around the first one, masked, on one line."""
    shown = masked(text, bare=False)
    first = next((i for i, (a, b) in enumerate(zip(text, shown, strict=False)) if a != b), 0)
    start = max(0, first - width // 2)
    return ("…" if start else "") + " ".join(shown[start:start + width].split()) + \
        ("…" if start + width < len(shown) else "")


def masked_line(line: str, following: str) -> str:
    """A source line masked, column for column, as the start of what goes
    on in the `following` line when it ends in an escaped line break (a
    quoted YAML value continued there: its `@` may be on the next line);
    and any private key material in it (`_key_material`)."""
    if not line.endswith("\\"):
        return _key_material(masked(line, keep_width=True, named=True))
    return _key_material(masked(f"{line}\n{following.lstrip()}", keep_width=True, named=True)[:len(line)])


# A private JWK member's value, however it is written (`"d": "..."`, TOML's `d = """..."""`, YAML's `d: ...`,
# its quote left open), and a run of a PEM block's base64.
_JWK_PRIVATE = re.compile(r"""(?<![\w-])(["']?)(?:d|p|q|dp|dq|qi|k)\1\s*[:=]\s*["']{0,3}(?P<value>[\w+/=-]{8,})""")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{32,}={0,2}")
# A random-looking run (upper and lower case and digits, 32 or more: a key's base64url, a token), whatever names it
# (an escaped `"\u0064"`, a key knoc does not know), and the value of a setting named as a secret (`passphrase`).
_RANDOM_RUN = re.compile(r"(?<![\w+/=-])(?=[\w-]*[A-Z])(?=[\w-]*[a-z])(?=[\w-]*[0-9])[A-Za-z0-9_-]{32,}(?![\w+/=-])")
_SECRET_SETTING = re.compile(r"(?<![\w-])(?i:(?:[\w-]*[_-])?(?:password|passwd|passphrase|secret|token|api[_-]?key"
                             r"""|private[_-]?key))["']?[ \t]*[:=][ \t]*["']{0,3}"""
                             r"""(?P<value>(?!\w+://)[^"'\s#,{}\[\]]+(?: [^"'\s#,{}\[\]]+)*)""")


def _key_material(line: str) -> str:
    """A line as an excerpt may show it: a key or secret pasted where a
    setting or a value goes (a private JWK, a PEM block's lines, a token, a
    setting named as a secret) masked, column for column."""
    if "PRIVATE KEY" in line or _BASE64_RUN.fullmatch(line.strip()):
        line = _BASE64_RUN.sub(_stars, line)
    line = _SECRET_SETTING.sub(_value_stars, _RANDOM_RUN.sub(_stars, line))
    return _JWK_PRIVATE.sub(_value_stars, line)


def _stars(m: re.Match[str]) -> str:
    return "*" * len(m.group())


def _value_stars(m: re.Match[str]) -> str:
    """The match with its `value` group masked, column for column."""
    return m.group()[:m.start("value") - m.start()] + "*" * len(m.group("value"))


def _in_urls(text: str) -> list[tuple[int, int]]:
    """After a lead (a scheme and slashes, `//`, `\\\\`), up to the last `@`
    of the authority: each run of characters an authority holds is read
    once, with the lead before it or in it."""
    spans = []
    for start, last in _to_last_at(_AUTHORITY, text):
        slash = start
        while slash > 0 and text[slash - 1] in "/\\":
            slash -= 1
        slashes = text[slash:start]
        if "//" in slashes or "\\\\" in slashes or (slashes and _SCHEME_BEFORE.search(text, max(0, slash - 6), slash)):
            spans.append((start, last))
            continue
        lead = _LEAD_IN_RUN.search(text, start, last)
        if lead is not None and lead.end() < last:
            spans.append((lead.end(), last))
    return spans


def _in_quoted_urls(text: str) -> list[tuple[int, int]]:
    """A quoted url's authority, spaces and all, up to its last `@` before
    the closing quote, a path or a backslash. A span ends at its own kind
    of quote, so the spans of one kind never overlap: each character is
    read at most twice."""
    spans = []
    for lead in _QUOTED_LEAD.finditer(text):
        quote, start = lead.group(1), lead.end()
        end = start
        while end < len(text) and text[end] != quote and text[end] not in "/?#\\":
            end += 1
        last = text.rfind("@", start, end)
        if last >= 0:
            spans.append((start, last))
    return spans


def _bare(text: str) -> list[tuple[int, int]]:
    """`name:secret@` from the start of its word (after white space, a
    quote or a path's punctuation) to the word's last `@` (a secret may
    hold one), or from after a `(`, `[` or `,` in it when the word is a
    `mailto:` address: each word is read once."""
    spans = []
    for start, last in _to_last_at(_WORD, text):
        colon = text.rfind(":", start, last)
        while colon > start and text[start:start + 7].lower() == "mailto:":  # an address, but what follows a mark
            mark = _MARK.search(text, start, colon)
            start = mark.end() if mark is not None else colon
        if start < colon:
            spans.append((start, last))
    return spans


def _to_last_at(runs: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """(start, its last `@`) of each run of `runs` that holds an `@`."""
    for run in runs.finditer(text):
        last = text.rfind("@", run.start(), run.end())
        if last >= 0:
            yield run.start(), last


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans, overlapping or touching ones joined, in order."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
