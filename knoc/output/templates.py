"""The jinja2 templates in knoc/output/templates/: `*.html.j2` autoescaped (pages
show what authors wrote), Markdown and YAML ones not."""

from __future__ import annotations

import io
import itertools
import json
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2


@cache
def get(name: str) -> jinja2.Template:
    return _environment().get_template(name)


def render_bytes(name: str, **context: Any) -> bytes:
    """A template rendered to UTF-8 piece by piece. The catalog page of
    100,000 agents is tens of megabytes: jinja's `render` would hold its
    millions of pieces and the whole text besides the bytes."""
    out, pieces = io.BytesIO(), get(name).generate(**context)
    while text := "".join(itertools.islice(pieces, 4096)):  # joined a few thousand at a time: fewer encodes
        out.write(text.encode("utf-8"))
    return out.getvalue()  # its buffer, not a copy


@cache
def _environment() -> jinja2.Environment:
    import jinja2  # imported where used: a pre-commit check renders no template

    env = jinja2.Environment(loader=jinja2.PackageLoader("knoc.output", "templates"),
                             autoescape=jinja2.select_autoescape(["html.j2"], default_for_string=False),
                             keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["yaml_str"] = lambda s: json.dumps(str(s), ensure_ascii=False)  # a YAML scalar, any text
    env.filters["cell"] = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # a Markdown table cell
    return env
