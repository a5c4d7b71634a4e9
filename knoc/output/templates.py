"""The jinja2 templates in knoc/output/templates/: `*.html.j2` autoescaped (pages
show what authors wrote), Markdown and YAML ones not."""

from __future__ import annotations

import io
import itertools
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from knoc.io import files
from knoc.rules.text import code_span
from knoc.yaml.yaml12 import ODD_BREAKS

if TYPE_CHECKING:
    import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def get(name: str) -> jinja2.Template:
    return _environment().get_template(name)


def render_bytes(name: str, **context: object) -> bytes:
    """A template rendered to UTF-8 (`render_pieces`, joined)."""
    out = io.BytesIO()
    for piece in render_pieces(name, **context):
        out.write(piece)
    return out.getvalue()  # its buffer, not a copy


def render_pieces(name: str, **context: object) -> Iterator[bytes]:
    """A template rendered to UTF-8 a piece at a time. The catalog page of
    100,000 agents is tens of megabytes: jinja's `render` would hold its
    millions of pieces and the whole text besides the bytes."""
    pieces = get(name).generate(**context)
    while text := "".join(itertools.islice(pieces, 4096)):  # joined a few thousand at a time: fewer encodes
        yield text.encode("utf-8")


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # imported where used: a pre-commit check renders no template

    env = jinja2.Environment(loader=jinja2.FunctionLoader(_source),
                             autoescape=jinja2.select_autoescape(["html.j2"], default_for_string=False),
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["yaml_str"] = yaml_str
    env.filters["cell"] = cell
    env.filters["code"] = lambda s: code_span(_one_line(str(s)))  # outside a table: `cell` it inside one
    env.filters["value"] = _value
    return env


def yaml_str(value: object) -> str:
    """Any text as a double-quoted YAML scalar, each line break YAML 1.1 and
    1.2 disagree on escaped (`ODD_BREAKS`): what knoc writes, it reads back."""
    return json.dumps(str(value), ensure_ascii=False).translate(_ESCAPED)


_ESCAPED = {ord(c): f"\\u{ord(c):04x}" for c in ODD_BREAKS}


def _source(name: str) -> str:
    """A template's text, read from the package (through io, as every file is)."""
    return files.read_source(f"{TEMPLATES}/{name}", str(TEMPLATES)).decode("utf-8")


def _value(value: str | None) -> str:
    """An old or new value in a Markdown table cell: code, or a dash for none."""
    if value is None:
        return "–"
    text = _one_line(value).replace("|", "\\|")
    return code_span(text) if text.strip() else "(empty)"


def cell(value: object) -> str:
    """Text in a Markdown table cell (knoc's words, with values from the
    sources in code spans) that can neither end the cell nor start markup,
    whatever a value holds: each code span stays one, with `|` escaped as
    GFM tables need; everywhere else each character Markdown or HTML acts
    on is backslash-escaped, so a stray backtick, `<!--` or `**` is text."""
    text = _one_line(str(value))
    runs = [(m.start(), m.end()) for m in re.finditer("`+", text)]
    closing: list[int | None] = [None] * len(runs)  # the next run of the same length: what closes a span
    after: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        closing[i], after[length] = after.get(length), i
    out, done, i = [], 0, 0
    while i < len(runs):
        start, close = runs[i][0], closing[i]
        if close is None:  # a run nothing closes: backticks as text
            i += 1
            continue
        out += [_escaped(text[done:start]), text[start:runs[close][1]].replace("|", "\\|")]
        done, i = runs[close][1], close + 1
    return "".join([*out, _escaped(text[done:])])


_MARKUP = re.compile(r"([\\`*_\[\]<>!~&|])")  # what starts or ends Markdown or HTML in a cell


def _escaped(text: str) -> str:
    return _MARKUP.sub(r"\\\1", text)


def _one_line(text: str) -> str:
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
