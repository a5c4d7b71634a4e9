"""Completion, hover, definitions, symbols and quick fixes for one `.kno`
buffer of a repo kept compiled in memory (`LiveRepo`)."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from knoc.diagnostics import Diagnostic
from knoc.features import schemas
from knoc.features.editor import cursor
from knoc.features.editor.schema_walk import Schema
from knoc.incremental.live import Entry, LiveRepo
from knoc.kinds.domain import COLLECTION
from knoc.rules import limits, ulid
from knoc.rules.lines import lines as split_lines
from knoc.rules.masking import masked
from knoc.yaml.yaml12 import compose, load_value

_DECLARED = re.compile(r"^\$schema:\s*[\"']?([a-z0-9-]+@\d+\.\d+\.\d+)", re.MULTILINE)
_ONE_FIX = ("KNO-ID-DUPLICATE", "KNO-RESOLVE-DOMAIN")  # the findings with one obvious fix


@dataclass(frozen=True)
class Place:
    """A position in a file of the repo (0-based line and character)."""

    rel: str
    line: int
    character: int = 0


@dataclass(frozen=True)
class Completion:
    label: str
    kind: str  # "field", "value", "reference"
    detail: str = ""
    documentation: str = ""
    insert: str | None = None
    order: str | None = None  # where an editor lists it (else by label)


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str  # "object", "array", "field"
    line: int
    character: int
    end_line: int
    end_character: int
    children: tuple[Symbol, ...] = ()


@dataclass(frozen=True)
class Fix:
    title: str
    line: int
    start: int
    end: int
    text: str
    diagnostic: Diagnostic


class Assistant:
    def __init__(self, repo: LiveRepo) -> None:
        self.repo = repo
        self._schemas: dict[str, Schema] = {}
        self._specs_seen: object = None

    def schema_of(self, text: str) -> Schema | None:
        """The schema of the entity type the buffer declares."""
        if self._specs_seen is not self.repo.specs:  # the specs were compiled again
            self._schemas, self._specs_seen = {}, self.repo.specs
        found = _DECLARED.search(text)
        spec = self.repo.specs.by_declaration.get(found.group(1)) if found else None
        if found is None or spec is None:
            return None
        decl = found.group(1)
        if decl not in self._schemas:
            self._schemas[decl] = Schema(schemas.bundle(decl, spec, self.repo.specs))
        return self._schemas[decl]

    def complete(self, text: str, line: int, character: int, rel: str = "") -> list[Completion]:
        """What may be written at the position of `rel`, whose text is `text`."""
        if cursor.in_comment(text, line, character):
            return []
        at = cursor.at(text, line, character)
        schema = self.schema_of(text)
        if at.mode == "value" or (at.mode == "item" and not (schema and schema.is_object(at.path))):
            return self._values(at, schema, rel)
        if at.key is None and at.path == () and schema is None:
            decls = self._declarations(rel)
            return [Completion("$schema", "field", "the entity's type@version", insert=f"$schema: {decls[0]}")
                    ] if decls else []
        if schema is None:
            return []
        present = _keys_beside(text, line)
        return [Completion(name, "field", str(sub.get("type", "")), str(sub.get("description", "")), f"{name}: ")
                for name, sub in schema.fields(at.path).items() if name not in present]

    def _declarations(self, rel: str) -> list[str]:
        """Every `type@version` the specs accept, each type's newest first:
        first the types the other entities of `rel`'s folder declare (or
        the one the folder is named after: `extensions`, `extension`)."""
        specs = self.repo.specs
        folder = self.repo.config.layout.collection_of(rel)
        declared = {e.type for e in self._in(folder) if e.rel != rel}
        types = specs.types
        here = sorted(declared.intersection(types)) or [t for t in types if f"{t}s" == folder]
        return [f"{t}@{v}" for t in [*here, *(t for t in types if t not in here)]
                for v in reversed(specs.versions_of(t))]

    def _values(self, at: cursor.Cursor, schema: Schema | None, rel: str) -> list[Completion]:
        path = at.path
        if at.key == "$schema" and path == ("$schema",):
            return [Completion(d, "value", order=f"{i:04d}") for i, d in enumerate(self._declarations(rel))]
        # References carry no documentation: that would parse every target at
        # each keystroke; hovering one shows its title and purpose.
        if _is_domains(path):
            return [Completion(e.slug, "reference", "perception domain") for e in self._in(COLLECTION)]
        if at.key == "xri" or at.prefix.startswith("kno://"):
            return [Completion(f"kno://{e.collection}/{e.slug}", "reference", e.type) for e in self._sorted()]
        if at.key == "uri" and "extensions" in path:
            return [Completion(e.uri, "reference", "extension") for e in self._sorted() if e.uri]
        if schema is None:
            return []
        return [Completion(json.dumps(v) if not isinstance(v, str) else v, "value") for v in schema.values(path)]

    def hover(self, text: str, line: int, character: int) -> str | None:
        target = self._target(text, line, character)
        if target is not None:
            return masked(self._summary(target), bare=False)  # another file's text: no credential in it shown
        key = cursor.key_at(text, line, character)
        schema = self.schema_of(text)
        if key is None or schema is None:
            return None
        path, name = key
        about = schema.description((*path, name))
        return f"**{name}**: {about}" if about else None

    def definition(self, text: str, line: int, character: int) -> Place | None:
        target = self._target(text, line, character)
        if target is None:
            return None
        body = self.repo.text(target.rel) or ""
        found = re.search(r"^slug:", body, re.MULTILINE) if target.type != "extension" else re.search(
            r"^uri:", body, re.MULTILINE)
        return Place(target.rel, body.count("\n", 0, found.start()) if found else 0)

    def symbols(self, text: str) -> list[Symbol]:
        if len(text) > limits.SOURCE_BYTES:  # what a build would not read either
            return []
        try:
            root = compose(text)
        except Exception:  # a buffer being typed: no outline until it parses
            return []
        return list(_symbols(root)) if root is not None else []

    def fixes(self, diagnostics: list[Diagnostic], text: str) -> list[Fix]:
        lines = split_lines(text)
        out = []
        for d in diagnostics:
            if d.code not in _ONE_FIX or d.span is None or d.span.line > len(lines):
                continue
            line = d.span.line - 1
            start, end = _value_span(lines[line], d.span.column - 1)
            if d.code == "KNO-ID-DUPLICATE":
                fresh = ulid.new()
                out.append(Fix(f"Give this entity a fresh id ({fresh})", line, start, end, fresh, d))
            else:
                slug = lines[line][start:end]
                near = difflib.get_close_matches(slug, [e.slug for e in self._in(COLLECTION)], n=1)
                if near:
                    out.append(Fix(f"Change to `{near[0]}`", line, start, end, near[0], d))
        return out

    def _target(self, text: str, line: int, character: int) -> Entry | None:
        """The entity the value under the cursor names: a domain slug in a
        `domains` list, a kno:// reference, or an extension's URI."""
        word = cursor.word_at(text, line, character)
        if not word:
            return None
        if word.startswith("kno://"):
            collection, _, slug = word.removeprefix("kno://").partition("/")
            return next((e for e in self._sorted() if (e.collection, e.slug) == (collection, slug)), None)
        if word.startswith(("http://", "https://")):
            return next((e for e in self._sorted() if e.uri == word), None)
        if _is_domains(cursor.at(text, line, character).path):
            return next((e for e in self._in(COLLECTION) if e.slug == word), None)
        return None

    def _summary(self, entry: Entry) -> str:
        """An entity's title and purpose (and an extension's description), as its source has them."""
        try:
            data = load_value(self.repo.text(entry.rel) or "")
        except Exception:  # the target's buffer is being typed
            data = None
        data = data if isinstance(data, dict) else {}
        title = data.get("title") or entry.slug
        parts = [f"**{title}** ({entry.type} `{entry.slug}`)"]
        parts += [str(data[k]).strip() for k in ("purpose", "description") if isinstance(data.get(k), str)]
        return "\n\n".join(parts)

    def _in(self, collection: str) -> list[Entry]:
        return [e for e in self._sorted() if e.collection == collection]

    def _sorted(self) -> list[Entry]:
        return sorted(self.repo.entries, key=lambda e: (e.collection, e.slug))


def _is_domains(path: cursor.Path) -> bool:
    return len(path) >= 2 and path[-2:] == ("domains", cursor.ITEM) and "perception" in path


def _keys_beside(text: str, line: int) -> set[str]:
    """The keys already written in the mapping the cursor's line is in."""
    lines = split_lines(text)
    lines += [""] * (line + 1 - len(lines))  # the cursor past the last line
    column = _content(lines[line])[1]
    keys: set[str] = set()
    for step in (-1, 1):
        j = line + step
        while 0 <= j < len(lines):
            body, at, indent = _content(lines[j])
            j += step
            if not body or body.startswith("#"):
                continue
            key = cursor.KEY.match(body)
            if indent < column:  # out of the mapping, unless this is the first line of its list item
                if key and at == column and step == -1:
                    keys.add(key.group(1))
                break
            if key and at == column:
                keys.add(key.group(1))
    return keys


def _content(line: str) -> tuple[str, int, int]:
    """A line's text after its indent and any `- `, the column it starts at, and the indent."""
    body = line.lstrip(" ")
    indent = len(line) - len(body)
    dash = cursor.DASH.match(body)
    return (body[dash.end():], indent + dash.end(), indent) if dash else (body, indent, indent)


def _value_span(line: str, start: int) -> tuple[int, int]:
    """The value written at `start` on `line` (quotes left out)."""
    start = max(0, min(start, len(line)))
    while start < len(line) and line[start] in "\"' ":
        start += 1
    end = start
    while end < len(line) and line[end] not in "\"' ,]#":
        end += 1
    return start, end


def _symbols(node: object, seen: set[int] | None = None) -> Iterator[Symbol]:
    """A mapping's keys and what they hold. A node an alias reaches again is
    listed at its anchor only: an alias may point at its own parent, and
    aliases of aliases would list exponentially many."""
    seen = set() if seen is None else seen
    value = getattr(node, "value", None)
    if not isinstance(value, list) or getattr(node, "id", "") != "mapping" or id(node) in seen:
        return
    seen.add(id(node))
    for key, child in value:
        kind = {"mapping": "object", "sequence": "array"}.get(child.id, "field")
        inner: tuple[Symbol, ...] = ()
        if id(child) in seen:  # outlined at its anchor
            pass
        elif child.id == "mapping":
            inner = tuple(_symbols(child, seen))
        elif child.id == "sequence":
            seen.add(id(child))
            inner = tuple(Symbol(f"[{i}]", "object", *_range(item), children=tuple(_symbols(item, seen)))
                          for i, item in enumerate(child.value))
        end = child.end_mark
        yield Symbol(str(key.value), kind, key.start_mark.line, key.start_mark.column, end.line, end.column, inner)


def _range(node: object) -> tuple[int, int, int, int]:
    start, end = node.start_mark, node.end_mark  # type: ignore[attr-defined]
    return start.line, start.column, end.line, end.column
