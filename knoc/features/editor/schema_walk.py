"""A bundled schema (`knoc.features.schemas.bundle`) read the way an
author needs it at one place in an entity: which fields a mapping there
may have, which values a field takes, and what the spec says of it."""

from __future__ import annotations

import re
from collections.abc import Iterator

from knoc.features.editor.cursor import ITEM, Path
from knoc.rules.json import JsonObject, JsonValue


class Schema:
    def __init__(self, root: JsonObject) -> None:
        self.root = root

    def at(self, path: Path) -> list[JsonObject]:
        """Every subschema that may apply at `path` (through `$ref`s and combinators)."""
        nodes = self._expand(self.root)
        for step in path:
            nodes = [n for node in nodes for n in self._expand_all(self._child(node, step))]
        return nodes

    def fields(self, path: Path) -> dict[str, JsonObject]:
        """The fields a mapping at `path` may have, each with its subschema."""
        out: dict[str, JsonObject] = {}
        for node in self.at(path):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, sub in props.items():
                    if isinstance(sub, dict):
                        merged = self._expand(sub)
                        out.setdefault(name, merged[0] if merged else sub)
        return out

    def values(self, path: Path) -> list[JsonValue]:
        """The values a field at `path` takes, when the spec lists them."""
        found: list[JsonValue] = []
        for node in self.at(path):
            if "const" in node:
                found.append(node["const"])
            enum = node.get("enum")
            if isinstance(enum, list):
                found += enum
            if node.get("type") == "boolean":
                found += [True, False]
        return list(dict.fromkeys(v for v in found if isinstance(v, str | bool | int | float)))

    def is_object(self, path: Path) -> bool:
        return any(n.get("type") == "object" or "properties" in n for n in self.at(path))

    def description(self, path: Path) -> str | None:
        for node in self.at(path):
            text = node.get("description")
            if isinstance(text, str):
                return text
        return None

    def _child(self, node: JsonObject, step: str | int) -> list[JsonValue]:
        if step == ITEM or isinstance(step, int):
            items = node.get("items")
            prefix = node.get("prefixItems")
            return [items] + (prefix if isinstance(prefix, list) else [])
        props = node.get("properties")
        if isinstance(props, dict) and step in props:
            return [props[step]]
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict):
            hits = [sub for pattern, sub in patterns.items() if _matches(pattern, step)]
            if hits:
                return hits
        extra = node.get("additionalProperties")
        return [extra] if isinstance(extra, dict) else []

    def _expand_all(self, nodes: list[JsonValue]) -> Iterator[JsonObject]:
        for node in nodes:
            yield from self._expand(node)

    def _expand(self, node: JsonValue, seen: frozenset[int] = frozenset()) -> list[JsonObject]:
        """`node` and what it brings in: its `$ref`'s target, its `allOf`,
        `anyOf`, `oneOf` and conditional branches."""
        if not isinstance(node, dict) or id(node) in seen:
            return []
        seen = seen | {id(node)}
        out = [node]
        ref = node.get("$ref")
        if isinstance(ref, str):
            out += self._expand(self._pointer(ref), seen)
        for key in ("allOf", "anyOf", "oneOf"):
            subs = node.get(key)
            if isinstance(subs, list):
                for sub in subs:
                    out += self._expand(sub, seen)
        for key in ("then", "else"):
            out += self._expand(node.get(key), seen)
        return out

    def _pointer(self, ref: str) -> JsonValue:
        if not ref.startswith("#"):
            return None
        node: JsonValue = self.root
        for part in filter(None, ref[1:].split("/")):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                node = node.get(part)
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


def _matches(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False
