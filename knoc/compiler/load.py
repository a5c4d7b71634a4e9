"""Stage 1, load: every *.kno file under specs/ and content/ becomes a
SourceFile plus its YAML value, or a diagnostic. Never a crash or a hang."""

from __future__ import annotations

import hashlib
import math
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ruamel.yaml.constructor import ConstructorError, DuplicateKeyError, SafeConstructor
from ruamel.yaml.cyaml import CSafeLoader
from ruamel.yaml.error import YAMLError

from knoc.compiler.bounds import OutOfBounds, check_text, check_value, needs_walk
from knoc.diagnostics import Diagnostic, SourceFile, Span, diag
from knoc.diagnostics.model import Related
from knoc.io import limits
from knoc.io.files import Refused
from knoc.io.files import read_source as read_file
from knoc.kinds.entity import DEFAULT_LAYOUT, Entity, Layout


def read_source(root: Path, relpath: str, shown: str | None = None) -> SourceFile | Diagnostic:
    """The file's text and the sha256 of its bytes (what the cache is keyed
    by); `shown` names it in messages instead of its repo-relative path."""
    path = f"{root}/{relpath}"
    try:
        raw = read_file(path, str(root))
    except Refused as exc:
        return diag("KNO-IO-REFUSED", f"knoc does not read this file: {exc}", file=relpath, hint=exc.hint)
    except OSError as exc:
        return diag("KNO-IO-READ", f"cannot read file: {exc.strerror}", file=relpath)
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
    except _Limit as exc:
        mark = exc.problem_mark
        return diag(exc.code, str(exc.problem), file=relpath, span=Span(mark.line + 1, mark.column + 1),
                    hint=exc.hint)
    except YAMLError as exc:
        return yaml_diagnostic(exc, source)
    except OutOfBounds as exc:
        return diag(exc.code, str(exc), file=relpath, span=Span(exc.line, 1), hint=exc.hint)
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
    """The file's YAML value, within the bounds of knoc.io.limits."""
    check_text(text)
    loader = _Loader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    if needs_walk(text):
        check_value(data)
    return data


def yaml_diagnostic(exc: YAMLError, source: SourceFile) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    span = Span(mark.line + 1, mark.column + 1) if mark is not None else Span(1, 1)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    file = source.rel
    if isinstance(exc, DuplicateKeyError):
        return _duplicate_key(exc, source, span)
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
    if isinstance(exc, ConstructorError):
        return diag(
            "KNO-YAML-TAG",
            problem,
            file=file,
            span=span,
            hint="entities hold plain mappings, lists, strings, numbers and booleans; remove the tag",
        )
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context else problem
    return diag("KNO-YAML-SYNTAX", f"invalid YAML: {message}", file=file, span=span,
                 hint="fix the YAML syntax at this position")


def _duplicate_key(exc: DuplicateKeyError, source: SourceFile, fallback: Span) -> Diagnostic:
    """At the key set a second time, with the first one as a secondary span."""
    found = _DUPLICATE.search(str(getattr(exc, "problem", "")))
    name = found.group(1) if found else "?"
    mapping = getattr(exc, "context_mark", None)
    spans = source.keys_named(name, mapping.line + 1, mapping.column + 1) if mapping is not None and found else []
    span, related = (spans[1], (Related(spans[0], "first set here"),)) if len(spans) > 1 else (fallback, ())
    return diag("KNO-YAML-DUPLICATE-KEY", f"`{name}` is set twice in one mapping", file=source.rel, span=span,
                hint="a key may appear once per mapping: remove or rename one of them", related=related)


_DUPLICATE = re.compile(r'duplicate key "(.*?)" with value')


def _tab_indented_line(text: str) -> tuple[int, int] | None:
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        if stripped.startswith("\t"):
            return number, len(line) - len(stripped) + 1
    return None


def _kind(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


class _Limit(ConstructorError):
    """A value past one of knoc.io.limits, with its own code."""

    def __init__(self, code: str, message: str, hint: str, mark: Any) -> None:
        super().__init__(None, None, message, mark)
        self.code, self.hint = code, hint


class _Loader(CSafeLoader):
    """The C-backed safe loader, narrowed to JSON values within bounds."""

    def construct_yaml_map(self, node: Any) -> Iterator[dict[str, Any]]:
        if len(node.value) > limits.MAPPING_KEYS:
            raise _Limit("KNO-YAML-LIMIT", f"a mapping holds {len(node.value):,} keys; the limit is "
                         f"{limits.MAPPING_KEYS:,}", "split the mapping, or move the data out of the entity",
                         node.start_mark)
        data: dict[str, Any] = {}
        yield data
        value = self.construct_mapping(node)
        data.update((k if type(k) is str else _key(k), v) for k, v in value.items())

    def construct_yaml_int(self, node: Any) -> int:
        digits = sum(c.isdigit() for c in str(node.value))
        if digits > limits.INTEGER_DIGITS:
            raise _Limit("KNO-YAML-LIMIT", f"an integer of {digits:,} digits; the limit is {limits.INTEGER_DIGITS}",
                         "quote it if it is an identifier, not a number", node.start_mark)
        return int(SafeConstructor.construct_yaml_int(self, node))

    def construct_yaml_float(self, node: Any) -> float:
        with warnings.catch_warnings():  # ruamel warns on stderr about YAML 1.1 floats JSON allows (1e5)
            warnings.simplefilter("ignore")
            value = float(SafeConstructor.construct_yaml_float(self, node))
        if not math.isfinite(value):
            raise _Limit("KNO-YAML-NUMBER", f"`{node.value}` is not a finite number, which JSON cannot carry",
                         "write a finite number, or quote it as a string", node.start_mark)
        return value

    def reject(self, node: Any) -> None:
        raise ConstructorError(None, None, f"the tag {node.tag!r} is not supported", node.start_mark)


def _key(k: Any) -> str:
    if k is None:
        return "null"
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_yaml_map)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)
for _tag in ("binary", "set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _Loader.reject)

__all__ = ["parse", "parse_source", "read_source"]
