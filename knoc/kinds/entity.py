"""A loaded entity and a typed one (its declaration named a known spec)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knoc.diagnostics.source import SourceFile
from knoc.kinds.spec import Spec

AGENT_TYPES = {"agent-blueprint", "agent-card"}
# What the link stage reads of any entity (`kinds.facts`).
ENTITY_KEYS = ("id", "slug", "visibility", "subtype", "category", "relationships")


@dataclass(eq=False, slots=True)  # slots: the link stage holds one per source
class Entity:
    """A loaded .kno document: a mapping, with the file it came from."""

    source: SourceFile
    data: dict[str, Any]
    collection: str  # "specs", or the folder under content/ ("agent-blueprints", ...)

    @property
    def slug(self) -> str:
        return str(self.data.get("slug", ""))


@dataclass(eq=False, slots=True)
class Typed:
    """An entity whose declaration named a known spec."""

    entity: Entity
    type: str
    version: str
    spec: Spec
    valid: bool = True

    @property
    def data(self) -> dict[str, Any]:
        return self.entity.data

    @property
    def source(self) -> SourceFile:
        return self.entity.source


BUILTIN = "knoc:"  # how knoc's own files (its built-in specs) are named in messages


@dataclass(frozen=True)
class Layout:
    """Where a repo keeps its specs and its content (knoc.toml's settings,
    normalised), which says what collection a source belongs to."""

    specs: str = "specs"
    content: str = "content"

    def collection_of(self, rel: str) -> str:
        """"specs", or the folder under the content folder ("agent-blueprints", ...)."""
        if rel.startswith((f"{self.specs}/", f"{BUILTIN}specs/")):
            return "specs"
        if rel.startswith(f"{self.content}/"):
            parts = rel[len(self.content) + 1:].split("/")
            return parts[0] if len(parts) > 1 else ""
        return rel.split("/", 1)[0]


DEFAULT_LAYOUT = Layout()


def is_public(t: Typed) -> bool:
    return bool(t.data.get("visibility", "public") != "private")


def kind_of(t: Typed) -> str:
    """"agent" for blueprints and legacy agents, else the entity's type."""
    if t.type in AGENT_TYPES or (t.type == "service-config" and t.data.get("subtype") == "agent-card"):
        return "agent"
    return t.type
