"""Where in a TOML text (knoc.toml) a problem is: tomllib gives the place
of a syntax error only in its message, and none for a value read fine but
wrong for knoc, so the key is found in the text by its table and name."""

from __future__ import annotations

import re
import tomllib

Place = tuple[int, int]  # 1-based line and column

_TABLE = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]\s*(#.*)?$")


def syntax_error_place(exc: tomllib.TOMLDecodeError) -> Place | None:
    """Where tomllib stopped: its attributes (Python 3.14 on), else its message."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if isinstance(line, int) and isinstance(column, int):
        return line, column
    found = re.search(r"\(at line (\d+), column (\d+)\)$", str(exc))
    return (int(found.group(1)), int(found.group(2))) if found else None


def key_place(text: str, table: str, key: str) -> Place | None:
    """Where `key` is set in `table` ("" for the top level; a table itself
    when `key` is ""): the first line that sets it, bare or quoted. None
    where it is written otherwise (a dotted key, an inline table)."""
    names = {key, f'"{key}"', f"'{key}'"}
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        header = _TABLE.match(line)
        if header is not None:
            current = header.group(1).strip("\"'")
            if not key and current == table:
                return number, line.index("[") + 1
            continue
        name, equals, _ = line.partition("=")
        if key and current == table and equals and name.strip() in names:
            return number, len(name) - len(name.lstrip()) + 1
    return None
