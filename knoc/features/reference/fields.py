"""The authoring reference: for each entity type a spec defines, every
field an entity may write, read from the spec's JSON Schema (built-in or
a repo's own specs): its type, whether it is required, its default, the
values it allows, its description and an example. `knoc.cli.reference`
writes one Markdown page per type from these."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from knoc.io import files
from knoc.rules.json import JsonArray, JsonObject, JsonValue
from knoc.yaml import yaml12

SPEC_URI = "kno://specs/"
NO_DEFAULT = object()


@dataclass
class Field:
    """One field an entity may write, at a dotted path (`[]` for a list's items)."""

    path: str
    type: str
    required: bool
    description: str
    default: object = NO_DEFAULT  # a JSON value, or NO_DEFAULT
    allowed: str = ""
    when: str = ""  # a condition the field depends on (`type` is `oauth2`)
    examples: JsonArray = field(default_factory=list)
    deprecated: bool = False

    @property
    def parent(self) -> str:
        return self.path.rsplit(".", 1)[0] if "." in self.path else ""

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]


@dataclass
class EntityType:
    """An entity type as its spec defines it."""

    name: str  # `agent-blueprint`
    spec: str  # the spec's slug
    version: str  # the spec's version
    accepts: list[str]  # the declared versions it accepts (`agent-blueprint@0.4.0`)
    title: str
    purpose: str
    status: str
    changelog: list[JsonObject]
    fields: list[Field]


def load_specs(folder: Path) -> dict[str, JsonObject]:
    """Every spec entity under `folder`, by slug."""
    specs = {}
    for rel in files.discover(folder, ["."]):
        if rel.endswith(".kno"):
            data = yaml12.load_value(files.read_bytes(folder / rel).decode("utf-8"))
            if isinstance(data, dict) and data.get("type") == "spec":
                specs[str(data["slug"])] = data
    return specs


def entity_types(specs: dict[str, JsonObject]) -> list[EntityType]:
    """The entity types the specs accept, by name (a spec with no `$schema`
    enum, such as the shared envelope, defines none of its own)."""
    found = []
    for slug, data in sorted(specs.items()):
        spec = _object(data["spec"])
        schema = _object(spec["schema"])
        accepts = [str(a) for a in _list(_object(_object(schema.get("properties")).get("$schema")).get("enum"))]
        if not accepts:
            continue
        name = accepts[0].split("@", 1)[0]
        walker = _Walker(specs)
        walker.object(schema, slug, "", "")
        found.append(EntityType(name, slug, str(data.get("version", "")), accepts, str(data.get("title", "")),
                                str(data.get("purpose", "")).strip(), str(spec.get("status", "")),
                                [c for c in _list(spec.get("changelog")) if isinstance(c, dict)], walker.fields))
    return sorted(found, key=lambda t: t.name)


# Knoc's own specs are what the reference is made of: each well-formed JSON
# Schema, so a keyword of another shape (none) would count as absent.
def _object(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: JsonValue) -> JsonArray:
    return value if isinstance(value, list) else []


class _Walker:
    """Walks a schema's objects, following `$ref` (inside a spec, and
    `kno://specs/<slug>#/...` across specs), `allOf` and `if`/`then`."""

    def __init__(self, specs: dict[str, JsonObject]) -> None:
        self.specs = specs
        self.fields: list[Field] = []
        self.seen: set[str] = set()

    def resolve(self, node: JsonObject, slug: str) -> tuple[JsonObject, str]:
        """The node a `$ref` leads to (its siblings laid over it), and the spec it is in."""
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node, slug
        target, _, pointer = ref.partition("#")
        if target.startswith(SPEC_URI):
            slug = target[len(SPEC_URI):]
        here = _object(_object(self.specs[slug]["spec"])["schema"])
        for part in filter(None, pointer.split("/")):
            here = _object(here[part])
        resolved, slug = self.resolve(here, slug)
        return {**resolved, **{k: v for k, v in node.items() if k != "$ref"}}, slug

    def object(self, node: JsonObject, slug: str, path: str, when: str) -> None:
        node, slug = self.resolve(node, slug)
        required = _names(node.get("required"))
        conditional = []
        for each in _list(node.get("allOf")):  # a shared base (the envelope) first
            part, part_slug = self.resolve(_object(each), slug)
            if "if" in part:
                conditional.append((part, part_slug))
            else:
                self.object(part, part_slug, path, when)
        for name, child in _object(node.get("properties")).items():
            self.field(_object(child), slug, f"{path}.{name}" if path else name, name in required, when)
        for part, part_slug in conditional:
            self.object(_object(part.get("then", {})), part_slug, path, _condition(_object(part["if"])))
        for choice in (*_list(node.get("oneOf")), *_list(node.get("anyOf"))):
            self.object(_object(choice), slug, path, when)

    def field(self, node: JsonObject, slug: str, path: str, required: bool, when: str) -> None:
        resolved, at = self.resolve(node, slug)
        merged = _merged(resolved, at, self)
        existing = next((f for f in self.fields if f.path == path), None)
        if existing is not None:  # stated twice (an envelope field a spec narrows): one entry, both facts
            existing.required |= required
            if "enum" in merged or "const" in merged:  # the spec narrows the shared field: its rule holds
                existing.type, existing.allowed = _type(merged, self, at), _allowed(merged)
            existing.description = existing.description or str(merged.get("description", "")).strip()
            return
        described = str(merged.get("description", "")).strip()
        self.fields.append(Field(path, _type(merged, self, at), required, described,
                                 merged.get("default", NO_DEFAULT), _allowed(merged), when,
                                 list(_list(merged.get("examples"))), bool(merged.get("deprecated"))))
        key = f"{at}#{path}"
        if key in self.seen:  # a recursive shape: its fields are listed once
            return
        self.seen.add(key)
        if _is_object(merged):
            self.object(merged, at, path, "")
        items = merged.get("items")
        if isinstance(items, dict):
            item, item_at = self.resolve(items, at)
            item = _merged(item, item_at, self)
            if _is_object(item):
                self.object(item, item_at, f"{path}[]", "")
        extra = merged.get("additionalProperties")
        if isinstance(extra, dict):
            value, value_at = self.resolve(extra, at)
            if _is_object(value):
                self.object(value, value_at, f"{path}.<name>", "")


def _merged(node: JsonObject, slug: str, walker: _Walker) -> JsonObject:
    """A field's schema with its `allOf` parts laid in (their properties and
    required lists joined), so one entry says everything about it."""
    out = {k: v for k, v in node.items() if k != "allOf"}
    for each in _list(node.get("allOf")):
        part, _ = walker.resolve(_object(each), slug)
        if "if" in part:
            conditions = out.setdefault("allOf", [])
            if isinstance(conditions, list):
                conditions.append(part)
            continue
        for key, value in part.items():
            if key == "properties":
                out["properties"] = {**_object(value), **_object(out.get("properties"))}
            elif key == "required":
                out["required"] = [*sorted(_names(out.get("required")) | _names(value))]
            else:
                out.setdefault(key, value)
    return out


def _names(value: JsonValue) -> set[str]:
    return {name for name in _list(value) if isinstance(name, str)}


def _is_object(node: JsonObject) -> bool:
    return bool(node.get("properties") or node.get("allOf") or node.get("oneOf") or node.get("anyOf"))


def _condition(test: JsonObject) -> str:
    """`if: {properties: {type: {const: oauth2}}}` as words."""
    said = [f"`{name}` is `{rule['const']}`" for name, rule in _object(test.get("properties")).items()
            if isinstance(rule, dict) and "const" in rule]
    return " and ".join(said) or "a condition holds"


def _type(node: JsonObject, walker: _Walker, slug: str) -> str:
    """A field's type in words: `string`, `list of string`, `mapping of names to list of string`."""
    def inner(child: JsonObject) -> str:
        resolved, at = walker.resolve(child, slug)
        return _type(_merged(resolved, at, walker), walker, at)

    if "const" in node:
        return f"constant {_json(node['const'])}"
    if "enum" in node:
        return "one of the listed values"
    kind = node.get("type")
    if isinstance(kind, list):
        return " or ".join(map(str, kind))
    if kind == "array":
        items = node.get("items")
        return f"list of {inner(items) if isinstance(items, dict) else 'any value'}"
    if kind == "object" or _is_object(node):
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not node.get("properties"):
            return f"mapping of names to {inner(extra)}"
        return "mapping"
    if kind:
        return str(kind)
    alternatives = node.get("oneOf") or node.get("anyOf")
    if alternatives:
        return " or ".join(inner(_object(a)) for a in _list(alternatives))
    return "any value"


def _allowed(node: JsonObject) -> str:
    """The rules a value must keep, in words."""
    said = []
    if "enum" in node:
        said.append(", ".join(f"`{_json(v)}`" for v in _list(node["enum"])))
    if "pattern" in node:
        said.append(f"matches `{node['pattern']}`")
    for low, high, one, many in (("minItems", "maxItems", "item", "items"),
                                 ("minProperties", "maxProperties", "entry", "entries")):
        if low in node and node[low] == node.get(high):  # "exactly 1 entry", not "at least 1; at most 1"
            said.append(f"exactly {node[low]} {one if node[low] == 1 else many}")
            node = {k: v for k, v in node.items() if k not in (low, high)}
    for key, words in (("minLength", "at least {} characters"), ("maxLength", "at most {} characters"),
                       ("minItems", "at least {} items"), ("maxItems", "at most {} items"),
                       ("minProperties", "at least {} entries"), ("maxProperties", "at most {} entries"),
                       ("minimum", "at least {}"), ("maximum", "at most {}"), ("format", "format {}")):
        if key in node:
            text = words.format(node[key])
            said.append(text if node[key] != 1 else
                        text.replace("characters", "character").replace("items", "item").replace("entries", "entry"))
    if node.get("uniqueItems"):
        said.append("no item twice")
    if node.get("additionalProperties") is False and node.get("properties"):
        said.append("no other fields")
    return "; ".join(said)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)
