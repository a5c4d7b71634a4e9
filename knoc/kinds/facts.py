"""The facts of an entity: the part of it the link stage reads, gathered
from what each kind says it needs. Resolution always runs on facts, cached
or fresh, so a warm cache cannot change its outcome."""

from __future__ import annotations

from knoc.kinds import agent, extension
from knoc.kinds.entity import ENTITY_KEYS

FACT_KEYS = (*ENTITY_KEYS, *agent.FACT_KEYS, *extension.FACT_KEYS)


def facts(data: dict[str, object]) -> dict[str, object]:
    out = {k: data[k] for k in FACT_KEYS if k in data}
    agent.card_facts(data, out)
    if data.get("type") == "extension":  # its page (knoc.output.pages)
        out.update({k: data[k] for k in extension.PAGE_KEYS if k in data})
    return out
