"""What an author reads when a source is not YAML knoc reads: libyaml's
error turned into a diagnostic that says where the mistake is (often a
line above where libyaml stopped) and what to do about it. Pure."""

from __future__ import annotations

import re

from knoc.compiler.bounds import refused_character
from knoc.diagnostics import Diagnostic, SourceFile, Span, diag
from knoc.diagnostics.model import Related
from knoc.diagnostics.source import span_of
from knoc.rules.lines import LINE_BREAK, MERGE_CONFLICT
from knoc.rules.lines import lines as split_lines
from knoc.yaml import yaml12
from knoc.yaml.yaml12 import Mark


def yaml_diagnostic(exc: yaml12.YAMLError, source: SourceFile) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    span = Span(mark.line + 1, mark.column + 1) if mark is not None else Span(1, 1)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    file = source.rel
    if isinstance(exc, yaml12.Refusal):
        return diag(exc.code, problem, file=file, span=span, hint=exc.hint)
    if isinstance(exc, yaml12.DuplicateKey):
        return diag("KNO-YAML-DUPLICATE-KEY", exc.problem or "", file=file, span=span_of(exc.second),
                    hint="a key may appear once per mapping: remove or rename one of them",
                    related=(Related(span_of(exc.first), "first set here"),))
    char = getattr(exc, "character", None)
    # The reader's error: a character YAML does not allow. The first one of
    # it in the text is where it stopped (libyaml gives a byte offset, the
    # pure-Python reader a character's: neither is needed).
    at = source.text.find(chr(char)) if isinstance(char, int) and 0 <= char <= 0x10FFFF else -1
    if isinstance(char, int) and at >= 0:
        return refused_character(source.text, at, "KNO-YAML-SYNTAX", f"invalid YAML: U+{char:04X} is not allowed "
                                 f"in a YAML file ({getattr(exc, 'reason', '')})").at(file)
    conflict = MERGE_CONFLICT.search(source.text)
    if conflict is not None:  # what libyaml says of it (an indentation, lines later) does not help
        line = len(LINE_BREAK.split(source.text[:conflict.start()]))  # lines counted as YAML counts them
        return diag("KNO-YAML-SYNTAX", f"an unresolved merge conflict: git's `{conflict.group()}` marker", file=file,
                    span=Span(line, 1, 8), hint="resolve the conflict: keep the lines each side should keep, and "
                    "remove the `<<<<<<<`, `=======` and `>>>>>>>` lines")
    tab_line = _tab_indented_line(source.text)
    if tab_line:
        line, col = tab_line
        return diag(
            "KNO-YAML-TAB",
            "a tab is used for indentation; YAML allows only spaces",
            file=file,
            span=Span(line, col, col + 1),
            hint="replace the tab with spaces",
        )
    if isinstance(exc, yaml12.ConstructorError):
        return diag(
            "KNO-YAML-TAG",
            problem,
            file=file,
            span=span,
            hint="entities hold plain mappings, lists, strings, numbers and booleans; remove the tag",
        )
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context else problem
    if "Unicode character escape" in problem:  # JSON's surrogate pairs (`\ud83d\ude00`), or past U+10FFFF
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                    hint="write the character itself, or its escape: `\\u00e9` up to U+FFFF, `\\U0001F600` past "
                         "it, at most U+10FFFF (YAML has no surrogate pairs)")
    if "escape" in problem or "hexdecimal" in problem:  # `\d`, `C:\dir`, `\xZZ` in double quotes
        where = "" if "escape" in problem else " in a `\\x`, `\\u` or `\\U` escape"
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}{where}", file=file, span=span,
                    hint="in double quotes a backslash starts an escape (`\\n`, `\\u00e9`): write it twice "
                         "(`\\\\`), or quote the text with single quotes, where a backslash is itself")
    started = getattr(exc, "context_mark", None)
    opened = f"line {started.line + 1}, column {started.column + 1}" if started is not None else "above"
    if "cannot start any token" in problem:  # `@name`, a backtick, `%`: reserved where a plain value starts
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                    hint="quote the value (\"...\" or '...'): a plain value cannot start with `@`, a backtick "
                         "or `%`")
    quoted = _after_quoted(source.text, span)
    if quoted is not None:  # `title: "Quick" Summarizer`: libyaml stops after the closing quote
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: text after a quoted value ({message}): a value that "
                    "starts with a quote ends at its closing quote", file=file, span=quoted,
                    hint="quote the whole value: single quotes around text that holds `\"` (a `'` inside "
                         "written `''`), double quotes around text that holds `'`; or leave the quotes out")
    if context in ("while parsing a flow sequence", "while parsing a flow mapping"):
        bracket = "[" if "sequence" in context else "{"
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                    hint=f"the `{bracket}` at {opened} is not closed: close it, or quote the value if the "
                         "bracket is text")
    if context == "while scanning a block scalar":
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                    hint=f"`|` or `>` at {opened} begins text on the lines below it, indented; only `-`, `+` "
                         "or a digit may follow it: quote the value if it is text")
    unclosed = _unclosed_quote(source.text, span.line)
    if unclosed is not None:  # libyaml read on to the next quote, and stopped lines later
        n, col, quote = unclosed
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: the {quote} that starts this value is not closed on its line "
                    f"(YAML reads on to the next {quote}, and stopped at line {span.line}: {problem})", file=file,
                    span=Span(n, col, col + 1), hint=f"close it on line {n}; for text on several lines, use `|`")
    keyless = _keyless_line(source.text, span.line, started, context, problem)
    scanning = context == "while scanning a simple key"  # else YAML read the line on, with the next key
    text_lines = split_lines(source.text)
    rest = text_lines[keyless.line - 1][keyless.column - 1:] if keyless is not None else ""
    if keyless is not None and scanning and ":" in rest and len(rest.split(": ", 1)[0].rstrip(":")) > 1024:
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: a key longer than YAML allows ({message})", file=file,
                    span=keyless, hint="a key on one line is at most 1,024 characters: shorten it")
    if keyless is not None and scanning:
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: this line holds no `key: value` ({message})", file=file,
                    span=keyless, hint=_item_or("put `: ` after its key; a value that goes on from the line "
                                                "above is indented under it", source.text, keyless))
    if keyless is not None:
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: this line holds no `key: value` ({message})", file=file,
                    span=keyless, related=(Related(span, "YAML read on to here, and took this `:` for a key's"),),
                    hint=f"put `: ` after its key; or, if it and line {span.line} are one text, quote the text or "
                         "write it on the lines after `|` (in plain text, `: ` ends a key)")
    held = text_lines[span.line - 1][:span.column - 1] if 0 < span.line <= len(text_lines) else ""
    if context is None and problem.startswith("mapping values are not allowed") and re.search(r"\S: ", held):
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}: this value holds `: `", file=file, span=span,
                    hint="quote the value (\"...\" or '...'): in plain text, `: ` ends a key")
    misaligned = _misaligned(source.text, span.line, started, problem)
    if misaligned is not None:
        return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}: the indentation does not line up", file=file,
                    span=span, hint=misaligned)
    return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                 hint="fix the YAML syntax at this position")


# A quoted value, whole: what a closing quote ends.
_QUOTED = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^']|'')*'""")
# What may come before a value on its line: a key's `: `, a list item's `- `, a flow collection's `[`, `{` or `,`.
_BEFORE_VALUE = re.compile(r"""\s*(?:-\s+)?(?:[^\s#'"][^#'"]*?:\s+)?|.*[\[{,]\s*""")


def _after_quoted(text: str, span: Span) -> Span | None:
    """Where a value that opens with a quote goes on past its closing
    quote on the same line, when libyaml stopped at what follows it: from
    the opening quote to the line's end."""
    lines = split_lines(text)
    if not 0 < span.line <= len(lines):
        return None
    line = lines[span.line - 1]
    after = line[span.column - 1:span.column]
    if not after or after in "#,]}:" or not line[:span.column - 1].rstrip().endswith(("'", '"')):
        return None
    end = len(line[:span.column - 1].rstrip())
    opened = next((m.start() for m in _QUOTED.finditer(line) if m.end() == end), None)
    if opened is None or not _BEFORE_VALUE.fullmatch(line[:opened]):
        return None
    return Span(span.line, opened + 1, len(line.rstrip()) + 1)


# A value that opens with a quote: after a key's `: ` or a list item's `- `.
_OPENS_QUOTED = re.compile(r"""^\s*(?:-\s+)?(?:[^\s#'"-][^#'"]*?:\s+)?(["'])""")


def _unclosed_quote(text: str, line: int) -> tuple[int, int, str] | None:
    """The nearest line a few above `line` (or at it) whose value opens a
    quote its line does not close, and that the next quote closes only on
    `line` or after (where libyaml stopped): (line, column, quote). A value
    quoted across lines that closes above `line`, and text in a `|` or `>`
    block, are not it."""
    lines = split_lines(text)
    for n in range(min(line, len(lines)), max(0, line - 20), -1):
        found = _OPENS_QUOTED.match(lines[n - 1])
        if found is None or _in_block(lines, n):
            continue
        quote = found.group(1)
        closing = re.compile(r'(?<!\\)"' if quote == '"' else r"'(?!')")
        if closing.search(lines[n - 1][found.end():].replace("''", "")) is not None:
            continue  # closed on its line
        after = "\n".join(lines[n - 1:])[found.end():]
        closed = closing.search(after.replace("''", "  "))
        if closed is None or n + after.count("\n", 0, closed.start()) >= line:
            return n, found.start(1) + 1, quote
        return None
    return None


def _in_block(lines: list[str], n: int) -> bool:
    """Whether line `n` is text of a `|` or `>` block scalar: the nearest
    line above it that is indented less ends with one."""
    indent = len(lines[n - 1]) - len(lines[n - 1].lstrip(" "))
    for above in reversed(lines[:n - 1]):
        if above.strip() and len(above) - len(above.lstrip(" ")) < indent:
            return re.search(r"[|>][-+0-9]*\s*(?:#.*)?$", above) is not None
    return False



def _misaligned(text: str, line: int, context: Mark | None, problem: str) -> str | None:
    """What to fix when a syntax error is an indentation mistake: the line
    does not start where the keys (or items) of a block above it do, or it
    is deeper than the key above it; often the line above is the one out
    of place (a list item out of line with the items before it, say)."""
    lines = split_lines(text)
    here = _indent(lines[line - 1]) if 0 < line <= len(lines) else None
    if here is None:
        return None
    above = [(n, i) for n in range(line - 1, 0, -1) if (i := _indent(lines[n - 1])) is not None][:2]
    lead = f"line {line} starts at column {here + 1}"
    odd_item = next((said for n in (line, *(n for n, _ in above[:1])) if (said := _odd_item(lines, n))), None)
    if context is None:
        keys = _key_column(lines[above[0][0] - 1]) if above else None
        if not problem.startswith("mapping values are not allowed") or keys is None or keys >= here:
            return None
        hint = (f"{lead}, deeper than the keys of line {above[0][0]} (column {keys + 1}): YAML reads it as the "
                f"rest of that line's value. Start it at column {keys + 1} if it is a key of the same mapping")
        if odd_item:
            return f"{hint}; or {odd_item}"
        dashed = lines[above[0][0] - 1].lstrip(" ").startswith("- ")
        return hint + (f"; or move line {above[0][0]}'s `-` so its keys start at column {here + 1}" if dashed else "")
    block = _block_column(lines, context, lines[line - 1][here:])
    if here == block and not odd_item:
        return None
    open_columns = _open_columns(lines, line)
    lower = max(((c, n) for c, n in open_columns if c < here), default=None)
    higher = min(((c, n) for c, n in open_columns if c > here), default=None)
    if odd_item:
        hint = f"items of one list start in the same column: {odd_item}"
    elif lower and higher:
        hint = (f"keys of one mapping (and items of one list) start in the same column: {lead}, between the "
                f"blocks above it at column {lower[0] + 1} (line {lower[1]}) and column {higher[0] + 1} "
                f"(line {higher[1]}); move it to the one it belongs to")
    else:
        hint = (f"keys of one mapping (and items of one list) start in the same column: {lead}, but the block "
                f"it belongs to, begun on line {context.line + 1}, at column {block + 1}")
    item = lines[above[0][0] - 1].lstrip(" ").startswith("- ") if above else False  # its keys start further in
    odd = not odd_item and above and not item and above[0][1] < here and (
        above[0][1] != block or (len(above) > 1 and above[1][1] == here))
    if odd:  # the line above breaks a run of lines at this one's column: it is the odd one out
        hint += f"; line {above[0][0]}, at column {above[0][1] + 1}, may be the one out of place"
    return hint + ". Indent with spaces, two per level"


def _key_column(line: str) -> int | None:
    """Where a line's keys start: after a list item's dash."""
    indent = _indent(line)
    if indent is None:
        return None
    return _after_dash(line, indent) if line[indent:].startswith("- ") else indent


def _after_dash(line: str, dash: int) -> int:
    """The column of what follows the list item's dash at `dash`."""
    after = line[dash + 1:]
    return dash + 1 + len(after) - len(after.lstrip(" "))


def _odd_item(lines: list[str], n: int) -> str | None:
    """For a list item (line `n`) out of line with the items before it in
    the same list: which line, where it starts and where they do."""
    dash = _indent(lines[n - 1])
    if dash is None or not lines[n - 1][dash:].startswith("- "):
        return None
    for m in range(n - 1, 0, -1):
        i = _indent(lines[m - 1])
        if i is None or i > dash + 2:  # blank, or inside an item above
            continue
        if i < dash - 2:  # out of the list
            return None
        if lines[m - 1][i:].startswith("- ") and i != dash:
            return (f"line {n}'s item starts at column {dash + 1}, but the items of its list above it "
                    f"(line {m}) at column {i + 1}; line {n} may be the one out of place")
        if i <= dash:
            return None
    return None


def _block_column(lines: list[str], context: Mark, rest: str) -> int:
    """Where the keys (or items) of the block the parser was in start: a
    list item's keys start after its dash."""
    begun = lines[context.line] if context.line < len(lines) else ""
    column = context.column
    return _after_dash(begun, column) if begun[column:column + 1] == "-" and not rest.startswith("-") else column


def _open_columns(lines: list[str], line: int) -> list[tuple[int, int]]:
    """The columns of the blocks still open at `line` (0-based), with the
    line each begins on: every line above shallower than all below it, and
    a list item's keys."""
    found: list[tuple[int, int]] = []
    least = None
    for n in range(line - 1, 0, -1):
        i = _indent(lines[n - 1])
        if i is None or (least is not None and i >= least):
            continue
        least = i
        if lines[n - 1][i:].startswith("- "):
            found.append((_after_dash(lines[n - 1], i), n))
        found.append((i, n))
    return found


_KEY = re.compile(r"[^\s:#'\"\[\]{},&*!|>%@`-][^\s:]*:(?:\s|$)")  # `key:`, the key without a space
_ITEM = re.compile(r" *- +")
_OPENS_BLOCK = re.compile(r".*:[ \t]*(?:#.*)?")
_DOCUMENT_START = re.compile(r"---(?:\s|$)|%")  # the `---` a document may start with, or a directive before it


def _keyless_line(text: str, line: int, started: Mark | None, context: str | None, problem: str) -> Span | None:
    """Where a key lacks its `:`: the simple key libyaml was scanning; or,
    when libyaml read a line without its `:` as one value with the next
    line's key (a mapping's first key, a list item's, the file's first line)
    and stopped at that key's `:`, the first of the lines it read so."""
    if context == "while scanning a simple key" and started is not None:
        return Span(started.line + 1, started.column + 1)
    late = (context is None and problem.startswith("mapping values are not allowed")) or (
        context == "while parsing a block mapping" and problem.startswith("did not find expected key"))
    lines = split_lines(text)
    here = _indent(lines[line - 1]) if late and 0 < line <= len(lines) else None
    if here is None or not _KEY.match(lines[line - 1], here):
        return None
    first = None
    for n in range(line - 1, 0, -1):  # up the lines YAML read as one value, blank and comment lines aside
        t, indent = lines[n - 1], _indent(lines[n - 1])
        if indent is None:
            continue
        if _DOCUMENT_START.match(t):
            break
        item = _ITEM.match(t)
        if ":" in t or indent != here:
            if item and item.end() == here and ":" not in t:
                return Span(n, here + 1)  # an item's first key
            break
        first = n
    if first is None:
        return None
    for t in reversed(lines[:first - 1]):  # what it is in: a block a key opens, or a key beside it
        indent = _indent(t)
        if _DOCUMENT_START.match(t):
            break
        if indent is not None and indent <= here:
            opens = _OPENS_BLOCK.fullmatch(t) if indent < here else _KEY.match(t, here)
            return Span(first, here + 1) if opens else None
    return Span(first, 1) if here == 0 else None  # the file's first line


def _item_or(hint: str, text: str, at: Span) -> str:
    """`hint`, or first that a line below a list's items is one without its `- `."""
    above = next((t for t in reversed(split_lines(text)[:at.line - 1]) if _indent(t) is not None), "")
    item = _ITEM.match(above)
    return f"if it is an item of the list above, start it with `- `; or {hint}" if \
        item is not None and _indent(above) == at.column - 1 else hint


def _indent(line: str) -> int | None:
    """The leading spaces of a line with content (None: blank or a comment)."""
    stripped = line.lstrip(" ")
    return None if not stripped or stripped.startswith("#") else len(line) - len(stripped)


def _tab_indented_line(text: str) -> tuple[int, int] | None:
    for number, line in enumerate(split_lines(text), 1):
        stripped = line.lstrip(" ")
        if stripped.startswith("\t"):
            return number, len(line) - len(stripped) + 1
    return None


__all__ = ["yaml_diagnostic"]
