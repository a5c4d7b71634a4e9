"""`knoc diff`: what changed on the wire between two builds, and what it
does to a client. Pure: two publications in, classed changes out (and the
Markdown comment that shows them).

Classes follow the capability stability rules (seed 001): taking something
away that a client may rely on (an agent, a skill, a capability, an
extension, an accepted mode, a domain's agent) or moving it (the url) is
`breaking`; adding is `additive`; words and metadata are `cosmetic`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from knoc.a2a import capability, targets
from knoc.a2a.capability import Contract
from knoc.a2a.extensions import CONTRACT_URI
from knoc.a2a.targets.base import Target
from knoc.output import templates

CLASSES = ("breaking", "additive", "cosmetic")
COSMETIC_FIELDS = ("name", "description", "provider", "documentationUrl", "iconUrl", "version")
# Capability flags wherever a card states them (core fields or the contract entry).
FLAGS = (*capability.CORE, *capability.CONTRACT_FLAGS)


@dataclass(frozen=True)
class Publication:
    """What one build publishes: each public agent's card JSON by slug, and
    the domain index (domain -> agent slugs)."""

    cards: dict[str, dict[str, Any]]
    domains: dict[str, list[str]]
    target: str | None = None  # the A2A target both builds were made for; None: read cards by their shape


@dataclass(frozen=True)
class Change:
    subject: str  # "agent" or "domain"
    name: str  # the agent's or domain's slug
    kind: str  # e.g. "skill-removed"
    cls: str  # one of CLASSES
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"subject": self.subject, "name": self.name, "kind": self.kind,
                "class": self.cls, "message": self.message}


def count(changes: list[Change]) -> dict[str, int]:
    return {cls: sum(c.cls == cls for c in changes) for cls in CLASSES}


def compare(base: Publication, head: Publication) -> list[Change]:
    changes: list[Change] = []
    for slug in sorted(base.cards.keys() | head.cards.keys()):
        old, new = base.cards.get(slug), head.cards.get(slug)
        if old is None:
            changes.append(Change("agent", slug, "agent-added", "additive", "agent published"))
        elif new is None:
            changes.append(Change("agent", slug, "agent-removed", "breaking",
                                  "agent no longer published (deleted, made private or broken)"))
        else:
            changes += (Change("agent", slug, kind, cls, msg)
                        for kind, cls, msg in _card(old, new, targets.get(head.target) if head.target
                                                    else targets.by_shape(new)))
    for domain in sorted(base.domains.keys() | head.domains.keys()):
        changes += _domain(domain, base.domains.get(domain), head.domains.get(domain))
    order = {c: i for i, c in enumerate(CLASSES)}
    return sorted(changes, key=lambda c: (c.subject != "agent", c.name, order[c.cls], c.kind, c.message))


def _card(old: dict[str, Any], new: dict[str, Any], target: Target) -> Iterable[tuple[str, str, str]]:
    was_url, now_url = target.url_of(old), target.url_of(new)
    if was_url != now_url:
        yield "url-changed", "breaking", f"url moved from `{was_url}` to `{now_url}`"
    for key in COSMETIC_FIELDS:
        if old.get(key) != new.get(key):
            shown = f" from `{old.get(key)}` to `{new.get(key)}`" if key == "version" else ""
            yield f"{_kebab(key)}-changed", "cosmetic", f"`{key}` changed{shown}"
    was_c, now_c = target.read(old), target.read(new)
    for flag in FLAGS:
        was, now = was_c.flags.get(flag) is True, now_c.flags.get(flag) is True
        if was != now:
            yield (f"capability-{'on' if now else 'off'}", "additive" if now else "breaking",
                   f"capability `{to_camel(flag)}` turned {'on' if now else 'off'}")
    yield from _versions(was_c, now_c)
    yield from _modes("input", old.get("defaultInputModes"), new.get("defaultInputModes"))
    yield from _modes("output", old.get("defaultOutputModes"), new.get("defaultOutputModes"))
    yield from _extensions(_extension_entries(old), _extension_entries(new))
    yield from _skills(_by(old.get("skills"), "id"), _by(new.get("skills"), "id"))
    for key in ("securitySchemes", "security", "securityRequirements"):
        if old.get(key) != new.get(key):
            yield "security-changed", "breaking", f"`{key}` changed: clients may need new credentials"


def _extension_entries(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """By URI; the capability-contract entry is compared as flags and versions."""
    entries = _by((card.get("capabilities") or {}).get("extensions"), "uri")
    entries.pop(CONTRACT_URI, None)
    return entries


def _versions(old: Contract, new: Contract) -> Iterable[tuple[str, str, str]]:
    """A protocol version the card stops accepting breaks its clients on
    that version; a newly accepted one is additive."""
    def ends(c: Contract) -> list[str]:
        return [v for span in c.spans() for v in span]
    dropped = [v for v in dict.fromkeys(ends(old)) if not new.accepts(v)]
    added = [v for v in dict.fromkeys(ends(new)) if not old.accepts(v)]
    was, now = capability.describe_versions(old), capability.describe_versions(new)
    if dropped:
        yield "protocol-narrowed", "breaking", f"no longer accepts A2A {_list(dropped)} (was {was}, now {now})"
    if added:
        yield "protocol-widened", "additive", f"now accepts A2A {_list(added)} (was {was}, now {now})"


def _by(items: Any, key: str) -> dict[str, dict[str, Any]]:
    return {str(i.get(key)): i for i in items or [] if isinstance(i, dict)}


def _modes(which: str, old: Any, new: Any, where: str = "") -> Iterable[tuple[str, str, str]]:
    gone, added = sorted(set(old or []) - set(new or [])), sorted(set(new or []) - set(old or []))
    verb = "accepts" if which == "input" else "produces"
    if gone:
        yield f"{which}-modes-narrowed", "breaking", f"{where}no longer {verb} {_list(gone)}"
    if added:
        yield f"{which}-modes-widened", "additive", f"{where}now {verb} {_list(added)}"


def _extensions(old: dict[str, Any], new: dict[str, Any]) -> Iterable[tuple[str, str, str]]:
    for uri in sorted(old.keys() - new.keys()):
        yield "extension-removed", "breaking", f"extension `{uri}` removed"
    for uri in sorted(new.keys() - old.keys()):
        required = bool(new[uri].get("required"))
        yield ("extension-added", "breaking" if required else "additive",
               f"extension `{uri}` added" + (" as required: clients must support it" if required else ""))
    for uri in sorted(old.keys() & new.keys()):
        a, b = old[uri], new[uri]
        if {k: v for k, v in a.items() if k != "description"} != {k: v for k, v in b.items() if k != "description"}:
            yield "extension-changed", "breaking", f"extension `{uri}` changed ({_json(a)} -> {_json(b)})"
        elif a != b:
            yield "extension-described", "cosmetic", f"extension `{uri}` description changed"


def _skills(old: dict[str, Any], new: dict[str, Any]) -> Iterable[tuple[str, str, str]]:
    for sid in sorted(old.keys() - new.keys()):
        yield "skill-removed", "breaking", f"skill `{sid}` removed"
    for sid in sorted(new.keys() - old.keys()):
        yield "skill-added", "additive", f"skill `{sid}` added"
    for sid in sorted(old.keys() & new.keys()):
        a, b = old[sid], new[sid]
        where = f"skill `{sid}` "
        yield from _modes("input", a.get("inputModes"), b.get("inputModes"), where)
        yield from _modes("output", a.get("outputModes"), b.get("outputModes"), where)
        words = [k for k in ("name", "description", "examples", "tags") if a.get(k) != b.get(k)]
        if words:
            yield "skill-described", "cosmetic", f"{where}{', '.join(f'`{k}`' for k in words)} changed"


def _domain(domain: str, old: list[str] | None, new: list[str] | None) -> Iterable[Change]:
    if new is None:
        yield Change("domain", domain, "domain-removed", "breaking", "domain no longer published")
        return
    if old is None:
        yield Change("domain", domain, "domain-added", "additive", "domain published")
    for slug in sorted(set(old or []) - set(new)):
        yield Change("domain", domain, "domain-lost-agent", "breaking", f"no longer routed to `{slug}`")
    for slug in sorted(set(new) - set(old or [])):
        yield Change("domain", domain, "domain-gained-agent", "additive", f"now routed to `{slug}`")


def _list(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _kebab(key: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in key)


def markdown(changes: list[Change], base: str, head: str, target: str) -> str:
    """The changes as a pull-request comment (templates/diff.md.j2)."""
    groups: dict[tuple[str, str], list[Change]] = {}
    for c in changes:
        groups.setdefault((c.subject, c.name), []).append(c)
    return templates.get("diff.md.j2").render(
        base=base, head=head, target=target,
        counts=count(changes),
        groups=[{"subject": s, "name": n, "changes": cs} for (s, n), cs in groups.items()]).rstrip() + "\n"
