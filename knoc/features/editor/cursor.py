"""Where the cursor is in a `.kno` file, read from its indentation: the
path of keys (and list items) that leads there, and whether a key or a
value is being written. A buffer being typed is seldom valid YAML, so
this never parses it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from knoc.rules.lines import lines as split_lines

ITEM = -1  # a list item, whichever it is
Path = tuple[str | int, ...]

KEY = re.compile(r"^([A-Za-z0-9_$][\w$.-]*)\s*:(?:\s|$)")
DASH = re.compile(r"^-(?:\s+|$)")


@dataclass(frozen=True)
class Cursor:
    path: Path  # of the value being written (mode "value"), or of the mapping a key is written in ("key")
    mode: Literal["key", "value", "item"]  # "item": a list item begun, a key or a value
    prefix: str  # what is written of the key or value so far, up to the cursor
    key: str | None  # the key whose value is being written


def in_comment(text: str, line: int, character: int) -> bool:
    """Whether the cursor is in a comment (after a `#` that starts one: at
    the start of the line or after a space, outside quotes)."""
    lines = split_lines(text)
    before = lines[line][:character] if line < len(lines) else ""
    quote = None
    for i, char in enumerate(before):
        if quote is None and char in "\"'":
            quote = char
        elif char == quote:
            quote = None
        elif quote is None and char == "#" and (i == 0 or before[i - 1] in " \t"):
            return True
    return False


def at(text: str, line: int, character: int) -> Cursor:
    lines = split_lines(text)
    lines += [""] * (line + 1 - len(lines))  # the cursor past the last line
    current = lines[line]
    before = current[:character]
    indent = len(before) - len(before.lstrip(" "))
    rest = before[indent:]
    container: Path
    dash = DASH.match(rest)
    if dash:  # a list item starts on this line
        container = (*_parents(lines, line, indent, True), ITEM)
        rest = rest[dash.end():]
    else:
        container = _parents(lines, line, indent, False)
    key = KEY.match(rest)
    if key:
        value = rest[key.end():].lstrip()
        path: Path = (*container, key.group(1))
        if value.startswith("["):  # a flow list: the item after the last comma
            return Cursor((*path, ITEM), "value", _unquoted(re.split(r"[\[,]", value)[-1]), key.group(1))
        return Cursor(path, "value", _unquoted(value), key.group(1))
    return Cursor(container, "item" if dash else "key", _unquoted(rest), None)


def key_at(text: str, line: int, character: int) -> tuple[Path, str] | None:
    """The key under the cursor (its mapping's path, and the key)."""
    lines = split_lines(text)
    if line >= len(lines) or in_comment(text, line, character):
        return None
    current = lines[line]
    indent = len(current) - len(current.lstrip(" "))
    rest, offset, item = current[indent:], indent, False
    dash = DASH.match(rest)
    if dash:
        rest, offset, item = rest[dash.end():], indent + dash.end(), True
    key = KEY.match(rest)
    if not key or not offset <= character <= offset + len(key.group(1)):
        return None
    container = _parents(lines, line, indent, item)
    return ((*container, ITEM) if item else container), key.group(1)


def word_at(text: str, line: int, character: int) -> str:
    """The value under the cursor: the run of characters around it that a
    slug, a kno:// reference or a URI is made of."""
    lines = split_lines(text)
    if line >= len(lines) or in_comment(text, line, character):
        return ""
    current = lines[line]
    start = end = min(character, len(current))
    allowed = re.compile(r"[\w.:/@~%+#?=&-]")
    while start > 0 and allowed.match(current[start - 1]):
        start -= 1
    while end < len(current) and allowed.match(current[end]):
        end += 1
    return current[start:end].rstrip(":")


def _parents(lines: list[str], line: int, need: int, item: bool) -> Path:
    """The path of the mapping whose keys start at column `need` on `line`
    (with `item`: of the list whose item starts there)."""
    path: list[str | int] = []
    pending_list = item
    for j in range(line - 1, -1, -1):
        text = lines[j]
        stripped = text.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(text) - len(stripped)
        if need == 0 and not pending_list:
            break
        dash = DASH.match(stripped)
        if dash:
            content = indent + dash.end()
            key = KEY.match(stripped[dash.end():])
            if indent < need or (content <= need and not pending_list):
                if key and content < need and not pending_list:
                    path.append(key.group(1))
                path.append(ITEM)
                need, pending_list = indent, True
            continue
        key = KEY.match(stripped)
        if key and (indent < need or (pending_list and indent == need)):
            path.append(key.group(1))
            need, pending_list = indent, False
    return tuple(reversed(path))


def _unquoted(value: str) -> str:
    return value.strip().strip("\"'")
