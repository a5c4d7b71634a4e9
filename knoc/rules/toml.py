"""Where in a TOML text (knoc.toml) a problem is: tomllib gives the place
of a syntax error only in its message, and none for a value read fine but
wrong for knoc, so the key is found in the text by its table and name."""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from collections.abc import Iterable

from knoc.rules.lines import lines

Place = tuple[int, int]  # 1-based line and column

_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$")  # a table, or an array of tables


def shown_key(key: str) -> str:
    """A key as a message shows it: a bare key in backticks, any other
    (empty, or with a backtick, a space or a control) as TOML quotes it."""
    return f"`{key}`" if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def near(key: str, known: Iterable[str]) -> str:
    """` (did you mean `x`?)` for a known key close to `key`, else nothing."""
    found = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean `{found[0]}`?)" if found else ""


class Unreadable(ValueError):
    """TOML that tomllib cannot read: what is wrong, and where (`at`)."""

    def __init__(self, message: str, at: Place | None) -> None:
        super().__init__(message)
        self.at = at


def parse(text: str) -> dict[str, object]:
    """A TOML document's tables and values; Unreadable for one that is not."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = syntax_error_place(exc)
        said = re.sub(r" \(at (?:line \d+, column \d+|end of document)\)$", "", str(exc))  # `at` says where
        split = lines(text)
        if at is None and said != str(exc):  # at the end: the last line
            at = (len(split), len(split[-1]) + 1) if split else (1, 1)
        line = split[at[0] - 1] if at and 0 < at[0] <= len(split) else ""
        advice = ("a table is either `[name]` or `[[name]]` (a list of tables), not both"
                  if line.lstrip().startswith("[[") and said.startswith("Cannot") else
                  next((what for start, what in _ADVICE if said.startswith(start)), None))
        raise Unreadable(said + (f"; {advice}" if advice else ""), at) from None
    except RecursionError:  # tomllib reads nested values by recursion: 1 KB of `[[[...` is enough
        raise Unreadable("values nest hundreds deep; flatten them", deepest_place(text)) from None


# What to do about tomllib's commonest errors, by how its message starts.
_ADVICE = (
    ("Cannot overwrite a value", "a key is set twice: set it once (several keys to pin are one list, "
                                 "`public = [..., ...]`)"),
    ("Cannot declare", "a table's header appears once: move the keys under the second one up under the first"),
    ("Expected ']' at the end of a table", "close the table's header on its line: `[name]`"),
    ("Expected ']]' at the end of an array", "close the header on its line: `[[name]]`"),
    ("Expected '=' after a key", "write `key = value` (a key with a space or a dot in it is quoted)"),
    ("Expected newline or end of document", "one setting per line, and text in quotes: `key = \"text\"`"),
    ("Invalid value", "quote text: `key = \"text\"` (numbers, `true` and `false` go without quotes)"),
    ("Invalid statement", "each line is a `[table]` header, a `key = value` setting or a `# comment`"),
    ("Illegal character '\\n'", "close the quote on its line (text on several lines goes between `\"\"\"`s)"),
    ("Unterminated string", "close the string: on its line, or, for a text between `\"\"\"`s, with the same "
                            "three quotes"),
    ("Unescaped '\\' in a string", "write a backslash twice (`\\\\`), or quote the text with single quotes"),
    ("Unclosed array", "close the list's `[` with `]`"),
    ("Unclosed inline table", "close the `{` with `}` on the same line"),
)


def syntax_error_place(exc: tomllib.TOMLDecodeError) -> Place | None:
    """Where tomllib stopped: its attributes (Python 3.14 on), else its message."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if isinstance(line, int) and isinstance(column, int):
        return line, column
    found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
    return (int(found.group(1)), int(found.group(2))) if found else None


def key_place(text: str, table: str, key: str | None) -> Place | None:
    """Where `key` is set in `table` ("" for the top level; the table's own
    header when `key` is None): the first line that sets it, or a key under
    it, as a bare, quoted or dotted key (`knoc.output` at the top level is
    `[knoc]`'s `output`). Lines inside a multi-line string are text, not
    settings. None where it is set otherwise (an inline table)."""
    want = [table] if key is None else [table, key] if table else [key]
    current: list[str] = []
    inside = ""  # the quotes of the multi-line string a line continues, if any
    for number, line in enumerate(lines(text), 1):
        if inside:
            if _closing(line, inside, 0) >= 0:
                inside = ""
            continue
        header = _TABLE.match(line)
        if header is not None:
            current = _dotted(header.group(1))
            if current == want or (key is not None and current[:len(want)] == want):  # the table, or under the key
                return number, line.index("[") + 1
            continue
        name, equals, value = line.partition("=")
        if not equals:
            continue
        if key is not None and [*current, *_dotted(name)][:len(want)] == want:  # the key, or a dotted key under it
            return number, len(name) - len(name.lstrip()) + 1
        inside = _left_open(value)
    return None


def _left_open(value: str) -> str:
    """The quotes of a multi-line string `value` begins and does not close
    on its line ("" if none): read past one-line strings and a comment."""
    i = 0
    while i < len(value):
        if value[i] == "#":
            return ""
        quotes = value[i:i + 3]
        if quotes in ('"""', "'''"):
            end = _closing(value, quotes, i + 3)
            if end < 0:
                return quotes
            i = end + 3
        elif value[i] in "\"'":
            j = i + 1
            while j < len(value) and value[j] != value[i]:
                j += 2 if value[i] == '"' and value[j] == "\\" else 1  # an escape in a basic string
            i = j + 1
        else:
            i += 1
    return ""


def _dotted(name: str) -> list[str]:
    """A key or table name's parts: `a."b.c"` is a, then b.c."""
    return [part.strip().strip("\"'") for part in _PART.findall(name.strip())]


_PART = re.compile(r'\s*(?:"[^"]*"|\'[^\']*\'|[^.\s"\']+)\s*')


def _closing(line: str, quotes: str, start: int) -> int:
    """Where `quotes` close a multi-line string on `line`, from `start`
    (-1: they do not); in a basic string, an escaped quote closes none."""
    at = line.find(quotes, start)
    while at >= 0 and quotes == _BASIC and (len(line[:at]) - len(line[:at].rstrip("\\"))) % 2:
        at = line.find(quotes, at + 1)
    return at


_BASIC = '"' * 3  # a multi-line basic string's quotes


def byte_place(data: bytes, at: int) -> Place:
    """The line and column of byte `at`."""
    before = data[:at]
    return before.count(b"\n") + 1, len(before.rpartition(b"\n")[2]) + 1


_DEEP = re.compile(r"[\[{](?:[^\]}\n\"']*?[\[{]){31}")  # 32 arrays or inline tables opened, none closed


def deepest_place(text: str | None) -> Place | None:
    """Where values start to nest past any need (for a file tomllib could
    not read for their depth): the first of 32 brackets opened on one line,
    none closed between."""
    found = _DEEP.search(text or "")
    if found is None:
        return None
    before = (text or "")[:found.start()]
    return before.count("\n") + 1, len(before.rpartition("\n")[2]) + 1
