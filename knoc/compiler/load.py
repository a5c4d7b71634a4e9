"""Stage 1, load: a source's bytes become a SourceFile (`source_file`), and
its YAML an Entity (`parse_source`), or a diagnostic. Never a crash or a
hang."""

from __future__ import annotations

import hashlib
from typing import Any

from knoc.compiler.bounds import OutOfBounds, check_text, check_value, needs_walk
from knoc.compiler.yaml_errors import yaml_diagnostic
from knoc.diagnostics import Diagnostic, SourceFile, Span, diag
from knoc.kinds.entity import DEFAULT_LAYOUT, Entity, Layout
from knoc.yaml import yaml12


def source_file(path: str, relpath: str, raw: bytes, shown: str | None = None) -> SourceFile | Diagnostic:
    """A source from its bytes: its text and their sha256 (what the cache
    is keyed by); `shown` names it in messages instead of `relpath`."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        return diag(
            "KNO-YAML-ENCODING",
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            file=relpath,
            span=Span(line, col, col + 1),
            hint="save the file as UTF-8",
        )
    return SourceFile(path, shown or relpath, text, hashlib.sha256(raw).hexdigest())


def parse_source(source: SourceFile, layout: Layout = DEFAULT_LAYOUT) -> Entity | Diagnostic:
    relpath, text = source.rel, source.text
    try:
        data = parse(text)
    except yaml12.YAMLError as exc:
        return yaml_diagnostic(exc, source)
    except OutOfBounds as exc:
        return exc.at(relpath)
    if data is None:
        return diag(
            "KNO-YAML-EMPTY",
            "file holds no YAML document",
            file=relpath,
            span=Span(1, 1),
            hint="add the entity, starting with `$schema: <type>@<version>`, or delete the file",
        )
    if not isinstance(data, dict):
        return diag(
            "KNO-YAML-NOT-MAPPING",
            f"the top level is a {_kind(data)}, not a mapping",
            file=relpath,
            span=source.locate(()),
            hint="an entity is a mapping of keys, starting with `$schema: <type>@<version>`",
        )
    return Entity(source, data, layout.collection_of(relpath))


def parse(text: str) -> Any:
    """The file's YAML value, within the bounds of knoc.rules.limits."""
    check_text(text)
    data = yaml12.load(text)
    if needs_walk(text):
        check_value(data)
    return data


def _kind(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


__all__ = ["parse", "parse_source", "source_file"]
