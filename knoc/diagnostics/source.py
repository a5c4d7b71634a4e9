"""Source files and their positions.

Loading takes the fast path (C parser straight to Python values). Positions
are recovered only when a diagnostic needs one, by composing the file's node
tree once and walking it: the happy path pays nothing for line numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from knoc.diagnostics.codes import diag
from knoc.diagnostics.model import Diagnostic, Related, Span
from knoc.io.files import read_source
from knoc.rules.bare_secrets import may_hold_bare_secret
from knoc.rules.lines import lines
from knoc.rules.masking import credential_param
from knoc.yaml.yaml12 import MappingNode, Node, ScalarNode, SequenceNode, compose

JsonPath = Sequence[str | int]


@dataclass(eq=False, slots=True)  # slots: one per source, a hundred thousand in a large repo
class SourceFile:
    path: str  # where to read it (a plain string: cheaper than a Path, per file)
    rel: str  # repo-relative, forward slashes: what diagnostics show
    # None: not read yet (the cache vouched for the file); read when a
    # diagnostic needs a position in it.
    _text: str | None
    digest: str = ""  # sha256 of the file's bytes
    _root: Node | None = field(default=None, repr=False)
    _lines: list[str] | None = field(default=None, repr=False)  # split once: a report may quote thousands

    @property
    def text(self) -> str:
        if self._text is None:  # read as a build reads it: never from outside the repo it is listed in
            root = self.path[:-len(self.rel) - 1] if self.path.endswith(f"/{self.rel}") else None
            self._text = read_source(self.path, root).decode("utf-8", errors="replace").removeprefix("\ufeff")
        return self._text

    def ascii_only(self) -> bool:
        """Whether every string parsed from the text is ASCII: the text, as
        read, is ASCII and holds no backslash, which would begin an escape
        (`"\\u202e"`) of any character. False when not read: not known."""
        return self._text is not None and self._text.isascii() and "\\" not in self._text

    def may_hold_credentials(self) -> bool:
        """Whether a url in the text may hold a user name or password (an
        `@` after a slash or backslash on one line: `https://u:p@h`) or a
        parameter that carries a credential (`?api_key=`), or any backslash
        (an escape of any character), or a credential written bare
        (`Bearer <token>`). True when not read: not known. (Every
        blueprint has an `@`, in its `$schema`.)"""
        text = self._text
        return (text is None or "\\" in text or _USERINFO.search(text) is not None
                or credential_param(text) is not None or may_hold_bare_secret(text))

    def line(self, number: int) -> str:
        if self._lines is None:
            self._lines = lines(self.text)
        found = self._lines
        return found[number - 1] if 0 < number <= len(found) else ""

    def locate(self, path: JsonPath, *, key: bool = False) -> Span:
        """Where the value at `path` is written; with key=True, its key.

        Block collections are located at their key, since the collection
        itself only starts on the next line. Unreachable paths fall back to
        the deepest node found, so a position is always given (1:1 in a
        text that does not parse).
        """
        return self.find(path, key=key) or Span(1, 1)

    def find(self, path: JsonPath, *, key: bool = False) -> Span | None:
        """`locate`, or None in a text that does not parse."""
        node = self._node()
        if node is None:
            return None
        key_node: Node | None = None
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            key_node, node = child
        if key_node is not None and (key or not isinstance(node, ScalarNode)):
            return span_of(key_node)
        return span_of(node)

    def _node(self) -> Node | None:
        if self._root is None:
            try:
                self._root = compose(self.text)
            except Exception:  # the load stage already reported it
                return None
        return self._root


def _child(node: Node, part: str | int) -> tuple[Node | None, Node] | None:
    if isinstance(node, MappingNode) and isinstance(part, str):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and str(k.value) == part:
                return k, v
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        item = node.value[part]
        return (item if isinstance(item, ScalarNode) else None), item
    return None


def span_of(node: Node) -> Span:
    """Where a node is written (its end column when it ends on its first line)."""
    start, end = node.start_mark, node.end_mark
    end_col = end.column + 1 if end.line == start.line and end.column > start.column else 0
    return Span(start.line + 1, start.column + 1, end_col)



def at(source: SourceFile, path: JsonPath, code: str, message: str, hint: str | None = None, *,
       key: bool = False, json_path: str | None = None, spec: str | None = None, detail: str | None = None,
       related: tuple[Related, ...] = ()) -> Diagnostic:
    """A diagnostic of `code` at the value written at `path` in `source` (its
    key with key=True): the one way to point a diagnostic into an entity."""
    return diag(code, message, file=source.rel, span=source.locate(path, key=key), hint=hint, json_path=json_path,
                spec=spec, detail=detail, related=related)


def json_path(path: Sequence[str | int]) -> str:
    """`$.a.b[0]`: how a path into a value is shown to an author."""
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def reader(root: Path) -> Callable[[str], SourceFile | None]:
    """Source files by repo-relative path, for excerpts in reports; None for
    a file that cannot be read (the report then shows no excerpt)."""
    @functools.cache
    def read(rel: str) -> SourceFile | None:
        source = SourceFile(f"{root}/{rel}", rel, None)
        try:
            _ = source.text  # read now: a file that is gone shows no excerpt
        except OSError:
            return None
        return source

    return read


_USERINFO = re.compile(r"[/\\][^/\\@\n]*@")  # a slash, then an `@` before the next slash or line's end
