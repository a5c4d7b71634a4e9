"""An extension's `params_schema` at two refs, decided as a spec change is
(`knoc.evolution.verdict`): whether params a card could state under the
old schema are refused by the new one. Its URI promises they are not
(`evolution: additive`: params only grow; `versioned`: a breaking change
mints a new URI), so a narrowing under the same URI breaks its clients."""

from __future__ import annotations

from collections.abc import Sequence

from knoc.evolution.sample import same
from knoc.evolution.verdict import Finding, compare
from knoc.kinds.entity import Entity
from knoc.kinds.schema import NOT_COMPILED, compile_schema
from knoc.kinds.spec import Spec, SpecSet
from knoc.rules.json import JsonObject

_SLUG = "extension-params"  # each schema compared alone, under one name


def params_change(old: tuple[Entity, JsonObject], new: tuple[Entity, JsonObject], params: Sequence[object]
                  ) -> Finding | None:
    """The change of the extension's params schema that matters most to a
    client: one that may refuse what the old one accepted (breaking, with
    a counterexample; else unknown), else one that accepts more (additive);
    None when the two accept the same params. `params`: what the cards
    state, which counterexamples are built on."""
    if same(old[1], new[1]):
        return None
    try:
        before, after = _alone(*old), _alone(*new)
    except NOT_COMPILED:  # a schema the build refuses: its own finding says so
        return None
    change = compare(before.specs[_SLUG], after.specs[_SLUG], before, after, params)
    return next((f for cls in ("breaking", "unknown", "additive") for f in change.findings if f.cls == cls), None)


def _alone(entity: Entity, schema: JsonObject) -> SpecSet:
    """A spec set holding only `schema`, compiled as the build compiles params schemas."""
    spec = Spec(entity, _SLUG, schema, [], fast=compile_schema(schema))
    return SpecSet(specs={_SLUG: spec}, registered=[spec])
