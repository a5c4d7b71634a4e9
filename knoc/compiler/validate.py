"""Stage 3, validate: each entity against the spec for its `type@version`.

Structural rules live in the specs; this module only turns JSON Schema errors
into diagnostics, with specific codes where an author benefits from one: the
generic ones here, a kind's own beside the kind (`knoc.kinds.agent_rules`),
which also holds the rules a schema cannot say."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypedDict

from knoc.diagnostics import Diagnostic, SourceFile, Span, diag
from knoc.diagnostics import json_path as _json_path
from knoc.kinds import agent_rules
from knoc.kinds.entity import Entity, Typed
from knoc.kinds.schema import first_error
from knoc.kinds.spec import DECLARATION, SpecSet, property_names
from knoc.rules import slug as slugs
from knoc.rules import ulid
from knoc.rules.masking import masked
from knoc.rules.paths import shown_url

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

UNKNOWN_FIELDS_SHOWN = 20  # per mapping; the rest are counted in one more finding
_UNEXPECTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


class _Where(TypedDict):
    """Where a schema finding points: its file, the path in the entity, the spec."""

    file: str
    json_path: str
    spec: str


def declaration(ent: Entity, specs: SpecSet) -> Typed | Diagnostic:
    src = ent.source
    decl = ent.data.get("$schema")
    if decl is None:
        return diag("KNO-DECL-MISSING", "entity does not declare `$schema`",
                     file=src.rel, span=src.locate(()),
                     hint="start the file with `$schema: <type>@<version>`, e.g. `agent-blueprint@0.4.0`")
    match = DECLARATION.match(decl) if isinstance(decl, str) else None
    spec = specs.by_declaration.get(decl) if match else None
    if spec is not None and match is not None:
        return Typed(ent, match.group(1), match.group(2), spec)
    span = src.locate(("$schema",))
    if match is None:
        return diag("KNO-DECL-FORMAT", f"`$schema: {decl}` is not `<type>@<semver>`",
                     file=src.rel, span=span, hint="write it as e.g. `agent-blueprint@0.4.0`")
    type_, version = match.groups()
    accepted = specs.versions_of(type_)
    if not accepted:
        near = difflib.get_close_matches(type_, specs.types, n=1)
        hint = f"did you mean `{near[0]}`? " if near else ""
        return diag("KNO-TYPE-UNKNOWN", f"unknown entity type `{type_}`: no spec accepts it",
                     file=src.rel, span=span,
                     hint=f"{hint}known types: {', '.join(specs.types)}; or add a spec under specs/")
    return diag("KNO-VERSION-UNACCEPTED",
                 f"`{type_}` version {version} is not accepted by any spec",
                 file=src.rel, span=span,
                 hint=f"accepted versions: {', '.join(accepted)}")


def check(t: Typed, specs: SpecSet) -> Iterable[Diagnostic]:
    if not t.spec.fast.is_valid(t.data):
        detailed = specs.explain(t.spec, t.data)
        for err in detailed:
            yield from schema_diagnostics(t, err, specs)
        if not detailed and (fast_err := first_error(t.spec.fast, t.data)) is not None:
            # the two engines disagree, or explaining took too long: the fast one's first error
            path = tuple(fast_err.instance_path)
            yield diag("KNO-SCHEMA", fast_err.message, file=t.entity.source.rel, span=t.entity.source.locate(path),
                       json_path=_json_path(path), spec=t.spec.slug)
    yield from agent_rules.boundary_wording(t)


def schema_diagnostics(t: Typed, err: ValidationError, specs: SpecSet) -> Iterable[Diagnostic]:
    from jsonschema.exceptions import best_match
    if err.validator in ("anyOf", "oneOf") and err.context:
        err = best_match(err.context)
    src = t.entity.source
    path = tuple(err.absolute_path)
    common: _Where = {"file": src.rel, "json_path": _json_path(path), "spec": t.spec.slug}
    kw, value, instance = err.validator, err.validator_value, err.instance

    if kw in ("unevaluatedProperties", "additionalProperties") and isinstance(instance, dict):
        # After another error, unevaluatedProperties also flags the keys of the
        # subschema that failed: only names defined nowhere here are unknown.
        allowed = sorted(property_names(err.schema, specs.resolver_for(err.schema)))
        unknown = [name for name in _unexpected(err.message, instance) if name not in allowed]
        for i, name in enumerate(unknown):
            if i == UNKNOWN_FIELDS_SHOWN:  # each is one mistake; a flood of them is one too
                yield diag("KNO-SCHEMA-UNKNOWN-FIELD", f"{len(unknown) - i:,} more unknown fields here",
                           span=src.locate(path, key=True),
                           hint=f"{t.spec.slug} defines none of them; remove them or fix their indentation",
                           **common)
                break
            near = difflib.get_close_matches(name, allowed, n=1)
            yield diag("KNO-SCHEMA-UNKNOWN-FIELD", f"unknown field `{name}`",
                        span=src.locate((*path, name), key=True),
                        hint=f"did you mean `{near[0]}`?" if near else
                        f"{t.spec.slug} does not define it here; remove it or fix its indentation",
                        file=common["file"], json_path=_json_path((*path, name)), spec=common["spec"])
        return
    if kw == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        for name in missing:
            if found := agent_rules.schema_finding(kw, path, instance, name):
                yield diag(found.code, found.message, span=src.locate(found.at, key=found.key), hint=found.hint,
                           **common)
                continue
            yield diag("KNO-SCHEMA-REQUIRED", f"missing required field `{name}`",
                        span=src.locate(path, key=True),
                        hint=f"add `{name}:` here ({t.spec.slug} requires it)", **common)
        return
    span = src.locate(path)
    if found := agent_rules.schema_finding(kw, path, instance):
        yield diag(found.code, found.message, span=src.locate(found.at, key=found.key), hint=found.hint, **common)
    elif kw == "enum":
        choices = ", ".join(str(v) for v in value)
        yield diag("KNO-SCHEMA-ENUM", f"`{_show(instance)}` is not one of: {choices}",
                    span=span, hint=_near_hint(instance, value), **common)
    elif kw == "const" and path == ("type",):
        yield diag("KNO-TYPE-MISMATCH",
                    f"`type: {_show(instance)}` does not match `$schema: {t.data.get('$schema')}`",
                    span=span, hint=f"use `type: {value}` or remove `type`", **common)
    elif kw == "pattern" and ulid.CHARS in str(value):
        yield diag("KNO-ID-ULID", f"`{_show(instance)}` is not a ULID", span=span,
                    hint="a ULID is 26 characters of Crockford base32 (no I, L, O, U), e.g. "
                         f"{ulid.EXAMPLE}", **common)
    elif kw == "pattern" and path[-1:] == ("slug",):
        yield diag("KNO-SCHEMA-PATTERN", f"`{_show(instance)}` is not a slug", span=span,
                   hint=f"a slug names the entity in references and output paths: use {slugs.WHAT}", **common)
    elif kw == "type":
        yield diag("KNO-SCHEMA-TYPE",
                    f"expected {_types(value)}, found {_type_name(instance)}",
                    span=span, hint=_type_hint(value, instance, _written(src, span)), **common)
    elif kw == "pattern":  # the value repeated as a URL may be (no user name or password)
        shown = shown_url(instance) if isinstance(instance, str) else _show(instance)
        yield diag("KNO-SCHEMA-PATTERN", f"`{shown}` does not match the pattern `{value}`", span=span,
                   hint=_pattern_hint(str(value)), **common)
    else:
        yield diag(_CODES.get(kw, "KNO-SCHEMA"), err.message, span=span, **common)


def _written(src: SourceFile, span: Span) -> str | None:
    """A scalar as the source writes it (`1.20`, where the value is 1.2), when it ends on its line."""
    if not span.end_column:
        return None
    written = src.line(span.line)[span.column - 1:span.end_column - 1]
    return written.split(None, 1)[-1] if written.startswith("!") else written or None  # `!!float 1.20`: 1.20


def _pattern_hint(pattern: str) -> str:
    """What a value of this pattern looks like, for the patterns knoc's specs use; else where to look."""
    if pattern.startswith("^https?://"):
        return "write an absolute http(s) URL" + (", without spaces, a query (`?`) or a fragment (`#`)"
                                                  if "?#" in pattern else ", without spaces")
    if pattern.startswith("^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"):
        return "write a semantic version, MAJOR.MINOR.PATCH (`1.0.0`)"
    if pattern.startswith("^(kno://"):
        return "write a reference as `kno://<collection>/<slug>`"
    return "write a value the pattern matches; `knoc explain KNO-SCHEMA-PATTERN` says how patterns read"


_CODES = {
    "pattern": "KNO-SCHEMA-PATTERN", "const": "KNO-SCHEMA-CONST",
    "minimum": "KNO-SCHEMA-RANGE", "maximum": "KNO-SCHEMA-RANGE",
    "minItems": "KNO-SCHEMA-SIZE", "maxItems": "KNO-SCHEMA-SIZE", "minLength": "KNO-SCHEMA-SIZE",
    "maxLength": "KNO-SCHEMA-SIZE", "minProperties": "KNO-SCHEMA-SIZE", "maxProperties": "KNO-SCHEMA-SIZE",
}


def _unexpected(message: str, instance: dict[str, object]) -> list[str]:
    inside = message[message.find("(") :]
    names = [n for n in _UNEXPECTED.findall(inside) if n in instance]
    return names or sorted(instance)[:1]


def _show(v: object) -> str:
    return "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)


def _types(value: object) -> str:
    items = value if isinstance(value, list) else [value]
    names = {"object": "a mapping", "array": "a list", "integer": "an integer", "null": "null (an empty value)"}
    return " or ".join(names.get(str(v), f"a {v}") for v in items)


def _type_name(v: object) -> str:
    if v is None:
        return "null (an empty value)"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(v), type(v).__name__)


# Booleans of YAML 1.1 that YAML 1.2 (what knoc reads) keeps as strings.
YAML11_BOOLEANS = {"yes": True, "y": True, "on": True, "no": False, "n": False, "off": False}


def _type_hint(expected: object, instance: object, written: str | None = None) -> str:
    """What to write instead: every type error says it. `written`: the
    value as the source writes it (a number quoted as written: `1.20`
    stays `1.20`, not the number it reads as)."""
    wanted = set(expected if isinstance(expected, list) else [expected])
    if instance is None:
        return "give it a value, or remove the key"
    if "string" in wanted and isinstance(instance, (int, float, bool)):
        shown = written if written is not None and '"' not in written and "\\" not in written else _show(instance)
        return f'quote it: "{shown}"'
    if "boolean" in wanted:
        word = YAML11_BOOLEANS.get(instance.lower()) if isinstance(instance, str) else None
        if word is not None:
            return f"YAML 1.2, which knoc reads, takes `{instance}` as a string: write `{str(word).lower()}`"
        return "write `true` or `false`, without quotes"
    if wanted & {"integer", "number"} and isinstance(instance, str):
        number = instance.strip().replace("_", "")
        if number.lstrip("+-").replace(".", "", 1).isdigit():
            return f"write the number without quotes: {number}"
        return "write a number, e.g. 3"
    if "array" in wanted and not isinstance(instance, list):
        if isinstance(instance, str) and len(instance) > 1 and instance[0] == "-" and not instance[1].isspace():
            item = masked(instance[1:].split(None, 1)[0])[:40]  # masked whole, then cut: no password half-shown
            return f"put a space after each item's `-` (`- {item}`): without it, YAML reads the lines as one text"
        return "write a list: `[a, b]` on one line, or one `- item` per line"
    if "object" in wanted and not isinstance(instance, dict):
        return "write a mapping: one `key: value` per line, indented under its key"
    if "string" in wanted and isinstance(instance, dict):
        return "write one string; quote it if it holds `: ` (YAML reads that as a mapping)"
    return f"write {_types(expected)} here"


def _near_hint(instance: object, choices: list[object]) -> str | None:
    near = difflib.get_close_matches(str(instance), [str(c) for c in choices], n=1)
    return f"did you mean `{near[0]}`?" if near else None
