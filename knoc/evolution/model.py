"""What the schema diff hands on: where a change is (its pointer in the
spec, the document path that reaches it), what its rule proposes, and the
walker a keyword rule calls back (`knoc.evolution.walk`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from knoc.kinds.spec import Resolver

Pointer = tuple[str | int, ...]
# What validates nothing (titles, descriptions, examples) or is followed elsewhere.
# `$id`, `$anchor`, `$schema` and `$vocabulary` are not: they change what a `$ref` names or
# which dialect reads the schema, and no rule follows them (a change of one is unknown).
ANNOTATIONS = frozenset({"title", "description", "examples", "default", "$comment", "deprecated", "readOnly",
                         "writeOnly", "format", "contentMediaType", "contentEncoding", "contentSchema",
                         "$defs", "definitions"})


class Delete:
    """The probe that removes the member (a newly required one)."""

    def __repr__(self) -> str:
        return "<delete>"


DELETE = Delete()


@dataclass(frozen=True)
class Step:
    """One step from a document's root to a changed value: the member or
    item, and the old schema of the value there."""

    key: str | int
    schema: object
    resolver: Resolver


@dataclass(frozen=True)
class Change:
    pointer: Pointer  # where in the spec's schema (the new one, or the old where it is gone)
    # "additive"; "widens" (additive unless a probe shows a schema around it
    # refuses); "breaking" and "unknown" (proven breaking by a probe, else
    # unknown); "member" (a member added: additive if the old schema refused
    # it whatever its value, breaking if a probe shows it, else unknown)
    rule: str
    why: str
    steps: tuple[Step, ...] | None  # None: no document path reaches it from this spec's root
    probes: tuple[object, ...] = ()  # values to put at the end of `steps` (DELETE: remove the member)
    through: str | None = None  # the other spec a `$ref` led into


@dataclass(frozen=True)
class Place:
    pointer: Pointer
    steps: tuple[Step, ...] | None
    old_res: Resolver
    new_res: Resolver
    exact: bool = True  # False inside a `oneOf` choice: a wider choice may overlap another and refuse
    through: str | None = None  # the other spec a `$ref` led into
    pinned: bool = False  # past a `$ref` that changed or leads elsewhere: changes are placed at it

    def at(self, *parts: str | int, exact: bool = True) -> Place:
        pointer = self.pointer if self.pinned else self.pointer + parts
        return replace(self, pointer=pointer, exact=self.exact and exact)

    def member(self, key: str | int, old: object, *parts: str | int, exact: bool = True) -> Place:
        steps = None if self.steps is None else (*self.steps, Step(key, old, self.old_res))
        return replace(self.at(*parts, exact=exact), steps=steps)


class Walker(Protocol):
    """What a keyword rule may ask of the walk."""

    def node(self, old: object, new: object, place: Place) -> None: ...

    def found(self, place: Place, rule: str, why: str, values: list[object] | tuple[object, ...] = ()) -> None: ...


def as_schema(value: object) -> dict[str, object]:
    """A schema as a mapping (`false` is `{"not": {}}`, `true` is `{}`)."""
    if value is False:
        return {"not": {}}
    return value if isinstance(value, dict) else {}


def pointer_text(pointer: Pointer) -> str:
    """`#/a/b~1c`: a place in a schema as a JSON pointer."""
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in pointer)
