"""The bounds a loaded YAML value must keep (knoc.rules.limits), checked
without recursion: how deeply it nests, how far its aliases expand, how
many keys a mapping holds. Every later stage may then walk it freely."""

from __future__ import annotations

import re

from knoc.diagnostics import Diagnostic, Span, diag
from knoc.rules import limits
from knoc.rules.lines import LINE_BREAK
from knoc.yaml.yaml12 import ODD_BREAKS, TOO_DEEP


class OutOfBounds(Exception):
    def __init__(self, code: str, message: str, hint: str, line: int = 1, column: int = 1, width: int = 0) -> None:
        super().__init__(message)
        self.code, self.hint, self.line, self.column, self.width = code, hint, line, column, width

    def at(self, file: str) -> Diagnostic:
        """The finding, in `file` (`width` 0: to the end of the line)."""
        end = self.column + self.width if self.width else 0
        return diag(self.code, str(self), file=file, span=Span(self.line, self.column, end), hint=self.hint)


_ODD_BREAKS = re.compile(f"[{''.join(ODD_BREAKS)}]")


def check_text(text: str) -> None:
    """Before parsing: a line break only YAML 1.1 knows (`ODD_BREAKS`);
    flow collections nested past the limit (`[[[[...`), which would exhaust
    the C parser's stack. Both are refused unparsed."""
    if not text.isascii() and (odd := _ODD_BREAKS.search(text)) is not None:
        raise _odd_break(text, odd.start())
    if text.count("[") + text.count("{") < limits.NESTING_DEPTH:
        return  # too few brackets to nest that deep
    depth, line, quote = 0, 1, ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'" and (i == 0 or text[i - 1] in " \t\n[{,:"):
            quote = c
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "[{":
            depth += 1
            if depth > limits.NESTING_DEPTH:
                raise _too_deep(line, i - text.rfind("\n", 0, i))
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1


_CHAIN = re.compile(r"(?:[-?][ \t]+){8}")  # `- - - ...`: block levels on one line


def needs_walk(text: str) -> bool:
    """Whether the parsed value could break a bound the parser does not
    check. Without an alias, a value nests at most as deep as its deepest
    indentation, plus block entries chained on one line, plus its brackets:
    when all three are small the limit cannot be reached, and the walk (a
    cost on every file) is skipped."""
    third = limits.NESTING_DEPTH // 3
    return ("*" in text or text.count("[") + text.count("{") >= third or "\n" + " " * third in text
            or (("- -" in text or "? " in text) and _CHAIN.search(text) is not None))


def check_value(data: object) -> None:
    """After parsing: depth, and what aliases expand to (nodes and text),
    counting a shared node once per place it appears."""
    sizes: dict[int, tuple[int, int, int]] = {}  # id -> (nodes, text, depth) of a finished node
    on_path: set[int] = set()
    stack: list[tuple[object, list[object] | None]] = [(data, None)]
    while stack:
        value, children = stack[-1]
        if not isinstance(value, (dict, list)):
            stack.pop()
            continue
        key = id(value)
        if children is None:
            if key in sizes:
                stack.pop()
                continue
            if key in on_path:
                raise OutOfBounds("KNO-YAML-ALIAS-CYCLE", "an alias refers to a node that contains it "
                                  "(a recursive value)", "replace the recursive alias with the value it should hold")
            if len(on_path) >= limits.NESTING_DEPTH:
                raise _too_deep()
            on_path.add(key)
            items = list(value.items()) if isinstance(value, dict) else value
            children = [v for _, v in items] if isinstance(value, dict) else list(items)
            stack[-1] = (value, children)
            stack.extend((c, None) for c in reversed(children) if isinstance(c, (dict, list)) and id(c) not in sizes)
            continue
        stack.pop()
        on_path.discard(key)
        nodes, text, depth = 1, 0, 1
        pairs = value.items() if isinstance(value, dict) else ((None, c) for c in value)
        for k, c in pairs:
            text += len(k) if isinstance(k, str) else 0
            if isinstance(c, (dict, list)):
                cn, ct, cd = sizes[id(c)]
                nodes, text, depth = nodes + cn, text + ct, max(depth, cd + 1)
            else:
                nodes, text = nodes + 1, text + (len(c) if isinstance(c, str) else 0)
        if nodes > limits.ALIAS_NODES:
            raise OutOfBounds("KNO-YAML-ALIAS-LIMIT", f"aliases expand this file to more than "
                              f"{limits.ALIAS_NODES:,} nodes", "write the values out, or use fewer nested aliases")
        if text > limits.EXPANDED_BYTES:
            raise OutOfBounds("KNO-YAML-ALIAS-LIMIT", f"aliases expand this file to more than "
                              f"{limits.EXPANDED_BYTES:,} characters of text",
                              "write the values out, or use fewer aliases of long text")
        sizes[key] = (nodes, text, depth)


def _odd_break(text: str, at: int) -> OutOfBounds:
    return refused_character(text, at, "KNO-YAML-LINE-BREAK", f"{ODD_BREAKS[text[at]]} is written here as a raw "
                             "character: YAML 1.1 parsers (libyaml, PyYAML) read it as a line break, the YAML 1.2 "
                             "spec as text, so tools disagree on the value and on every line number after it")


def refused_character(text: str, at: int, code: str, message: str) -> OutOfBounds:
    """The character at `at` refused where it is (lines counted as YAML
    counts them), with the escape a double-quoted string writes it as."""
    lines = LINE_BREAK.split(text[:at])  # those before it, and its own up to it
    char = ord(text[at])
    escape = f"\\u{char:04x}" if char <= 0xFFFF else f"\\U{char:08x}"
    return OutOfBounds(code, message, "remove it (it is invisible in most editors), or write it as an escape inside "
                       f"a double-quoted string: \"{escape}\"", len(lines), len(lines[-1]) + 1, width=1)


def _too_deep(line: int = 1, column: int = 1) -> OutOfBounds:
    return OutOfBounds("KNO-YAML-LIMIT", *TOO_DEEP, line, column, width=1)
