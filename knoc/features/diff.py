"""`knoc diff`: what changed on the wire between two builds, and what it
does to a client. Pure: two publications in, classed changes out (and the
Markdown comment that shows them).

Classes follow the capability stability rules (seed 001): taking something
away that a client may rely on (an agent, a skill, a capability, an
extension, an accepted mode, a domain's agent, a signature, a published
key) or moving it (the url) is `breaking`; adding is `additive`; words and
metadata are `cosmetic`. An agent whose major version went up (for 0.x,
its minor: semver's initial development) announces its breaking changes:
they are reported as intended, and do not fail the gate."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic.alias_generators import to_camel

from knoc.a2a import capability, targets
from knoc.a2a.capability import Contract
from knoc.a2a.extensions import CONTRACT_URI
from knoc.a2a.targets.base import Target
from knoc.features.diff_trust import Found, canonical, requirements, signatures
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.text import code_span

CLASSES = ("breaking", "additive", "cosmetic")
SHOWN = 200  # characters of an old or new value a change shows
COSMETIC_FIELDS = ("name", "description", "provider", "documentationUrl", "iconUrl", "version")
# Capability flags wherever a card states them (core fields or the contract entry).
FLAGS = (*capability.CORE, *capability.CONTRACT_FLAGS)


@dataclass(frozen=True)
class Publication:
    """What one build publishes: each public agent's card JSON by slug, and
    the domain index (domain -> agent slugs)."""

    cards: dict[str, JsonObject]
    domains: dict[str, list[str]]
    target: str | None = None  # the A2A target both builds were made for; None: read cards by their shape
    signed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the key ids of each card's signatures
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the key ids each host's jwks.json publishes
    sources: dict[str, str] = field(default_factory=dict)  # each agent's source file, by slug
    ids: dict[str, str] = field(default_factory=dict)  # each agent's entity id, by slug: what makes it the same agent
    configured: str | None = None  # the A2A target the repo's knoc.toml names (None: not known)
    roots: dict[str, str] = field(default_factory=dict)  # host -> slug of the card it serves at its root
    catalogs: dict[str, JsonObject] = field(default_factory=dict)  # each host's AI Catalog, but its entries


@dataclass(frozen=True)
class Change:
    subject: str  # "repo", "agent", "domain", "extension" or "host"
    name: str  # the agent's or domain's slug, the extension's URI, the host's name
    kind: str  # e.g. "skill-removed"
    cls: str  # one of CLASSES
    message: str
    before: str | None = None  # the old value, as shown (None: there was none)
    after: str | None = None  # the new value
    intended: str = ""  # for a breaking change an agent's major version announces: the bump

    def to_dict(self) -> dict[str, str | None]:
        return {"subject": self.subject, "name": self.name, "kind": self.kind, "class": self.cls,
                "message": self.message, "before": self.before, "after": self.after,
                "intended": self.intended or None}

    @property
    def unannounced(self) -> bool:
        """A breaking change no major version bump announces: what fails the gate."""
        return self.cls == "breaking" and not self.intended



def count(changes: list[Change]) -> dict[str, int]:
    counts = {cls: sum(c.cls == cls for c in changes) for cls in CLASSES}
    counts["intended"] = sum(c.cls == "breaking" and bool(c.intended) for c in changes)
    counts["breaking"] -= counts["intended"]
    return counts


def compare(base: Publication, head: Publication) -> list[Change]:
    changes: list[Change] = []
    if None not in (base.configured, head.configured) and base.configured != head.configured:
        changes.append(Change("repo", "knoc.toml", "target-changed", "breaking",
                              "A2A target changed: every card takes the new version's shape, and clients of "
                              "the old one may not read it", base.configured, head.configured))
    paired = _paired(base, head)  # head slug -> base slug, of one agent
    keys = _rotation(base, head)
    kept = set(paired.values())
    pairs: list[tuple[str | None, str | None]] = [(paired.get(slug), slug) for slug in head.cards]
    pairs += [(slug, None) for slug in base.cards if slug not in kept]  # removed
    for was, now in sorted(pairs, key=lambda p: (p[1] or p[0] or "", p[1] is None)):
        slug = now or was or ""
        old, new = base.cards.get(was) if was else None, head.cards.get(now) if now else None
        if was is not None and was != slug and old is not None and new is not None:
            changes.append(Change("agent", slug, "agent-renamed", "cosmetic", "slug renamed (the same agent)",
                                  was, slug))
        if old is None:
            changes.append(Change("agent", slug, "agent-added", "additive", "agent published", None,
                                  shown((new or {}).get("name"))))
        elif new is None:
            changes.append(Change("agent", slug, "agent-removed", "breaking",
                                  "agent no longer published (deleted, made private or broken)",
                                  shown(old.get("name"))))
        else:
            bump = _bump(old.get("version"), new.get("version"))
            found = [*_card(old, new, targets.get(head.target) if head.target else targets.by_shape(new)),
                     *signatures(base.signed.get(was or slug, ()), head.signed.get(slug, ()), *keys)]
            changes += (Change("agent", slug, kind, cls, msg, shown(was, now), shown(now, was),
                               bump if cls == "breaking" else "")
                        for kind, cls, msg, was, now in found)
    now_named = {old: new for new, old in paired.items()}  # a renamed agent stays routed where it was
    for domain in sorted(base.domains.keys() | head.domains.keys()):
        was_routed = base.domains.get(domain)
        changes += _domain(domain, None if was_routed is None else [now_named.get(a, a) for a in was_routed],
                           head.domains.get(domain))
    for host in sorted(base.keys.keys() | head.keys.keys()):
        changes += _keys(host, base.keys.get(host, ()), head.keys.get(host, ()))
    for host in sorted(base.roots.keys() | head.roots.keys()):
        was_root = base.roots.get(host)
        changes += _root(host, None if was_root is None else now_named.get(was_root, was_root), head.roots.get(host))
    for host in sorted(base.catalogs.keys() & head.catalogs.keys()):  # a host gone or new: its agents say it
        if base.catalogs[host] != head.catalogs[host]:
            changes.append(Change("host", host, "ai-catalog-changed", "cosmetic", "its AI Catalog "
                                  "(`/.well-known/ai-catalog.json`) describes the host otherwise",
                                  shown(base.catalogs[host]), shown(head.catalogs[host])))
    return ordered(changes)


def ordered(changes: list[Change]) -> list[Change]:
    """Changes as a report lists them: by subject, name and class."""
    order = {c: i for i, c in enumerate(CLASSES)}
    subjects = {"repo": 0, "agent": 1, "domain": 2, "extension": 3, "host": 4}
    return sorted(changes, key=lambda c: (subjects[c.subject], c.name, order[c.cls], c.kind, c.message))


def _paired(base: Publication, head: Publication) -> dict[str, str]:
    """Head slug -> base slug, for every agent both sides publish: by its
    entity id where both sides know it (a slug may be renamed, or two
    swapped; another id is another agent, whatever its slug or url), else
    by slug, and for the rest by source file, then by card url (looked up,
    not paired one by one: a diff may add and remove thousands)."""
    by_id = {agent_id: slug for slug, agent_id in base.ids.items() if slug in base.cards}
    paired = {new: by_id[head.ids[new]] for new in head.cards if head.ids.get(new) in by_id}
    taken = set(paired.values())
    for new in head.cards:
        if new not in paired and new in base.cards and new not in taken and not _other_agent(base, head, new, new):
            paired[new] = new
            taken.add(new)
    gone = sorted(s for s in base.cards if s not in taken and s not in base.ids)
    added = sorted(s for s in head.cards if s not in paired and s not in head.ids)
    target = targets.get(head.target) if head.target else None

    def url(card: JsonObject) -> str | None:
        return (target or targets.by_shape(card)).url_of(card)

    for key_of_old, key_of_new in ((base.sources.get, head.sources.get),  # one source file first: the same entity
                                   (lambda slug: url(base.cards[slug]), lambda slug: url(head.cards[slug]))):
        by_key: dict[object, str] = {}
        for old in gone:
            if old not in taken and (key := key_of_old(old)) is not None:
                by_key.setdefault(key, old)  # the first by slug
        for new in added:
            if new not in paired and (key := key_of_new(new)) is not None and key in by_key:
                paired[new] = by_key.pop(key)
                taken.add(paired[new])
    return paired


def _other_agent(base: Publication, head: Publication, old: str, new: str) -> bool:
    """Both sides know the ids, and they differ."""
    return old in base.ids and new in head.ids and base.ids[old] != head.ids[new]


def _bump(old: object, new: object) -> str:
    """"version `1.4.0` → `2.0.0`" when `new` announces breaking changes (its
    major went up, or for 0.x its minor), else ""."""
    was, now = _semver(old), _semver(new)
    if was is None or now is None:
        return ""
    if now[0] > was[0] or (was[0] == now[0] == 0 and now[1] > was[1]):
        return f"version {code_span(old)} → {code_span(new)}"  # a version is free text: in code, as every value
    return ""


def _semver(version: object) -> tuple[int, int] | None:
    match = re.match(r"v?(\d+)(?:\.(\d+))?", str(version)) if version is not None else None
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


def shown(value: object, other: object = None) -> str | None:
    """A value as a change shows it: text as it is, anything else as JSON,
    cut at SHOWN characters; around where it first differs from `other`
    (the change's other side) when they agree further than that."""
    if value is None:
        return None
    text = value if isinstance(value, str) else canonical(value)
    if len(text) <= SHOWN:
        return text
    than = "" if other is None else other if isinstance(other, str) else canonical(other)
    same = next((i for i, (a, b) in enumerate(zip(text, than, strict=False)) if a != b), min(len(text), len(than)))
    start = same - SHOWN // 4 if same >= SHOWN - 2 else 0  # the difference inside what is shown
    cut = text[start:start + SHOWN - 2]
    return ("…" if start else "") + cut + ("…" if start + len(cut) < len(text) else "")


def _card(old: JsonObject, new: JsonObject, target: Target) -> Iterable[Found]:
    was_url, now_url = target.url_of(old), target.url_of(new)
    if was_url != now_url:
        yield "url-changed", "breaking", "url moved", was_url, now_url
    for key in COSMETIC_FIELDS:
        if old.get(key) != new.get(key):
            yield f"{_kebab(key)}-changed", "cosmetic", f"`{key}` changed", old.get(key), new.get(key)
    yield from _interfaces(_endpoints(old), _endpoints(new), (str(was_url), str(now_url)))
    was_c, now_c = target.read(old), target.read(new)
    for flag in FLAGS:
        was, now = was_c.flags.get(flag) is True, now_c.flags.get(flag) is True
        if was != now:
            yield (f"capability-{'on' if now else 'off'}", "additive" if now else "breaking",
                   f"capability `{to_camel(flag)}` turned {'on' if now else 'off'}", was, now)
    yield from _versions(was_c, now_c)
    yield from _modes("input", old.get("defaultInputModes"), new.get("defaultInputModes"))
    yield from _modes("output", old.get("defaultOutputModes"), new.get("defaultOutputModes"))
    yield from _extensions(extension_entries(old), extension_entries(new))
    yield from _skills(_by(old.get("skills"), "id"), _by(new.get("skills"), "id"), old, new)
    if old.get("securitySchemes") != new.get("securitySchemes"):
        yield ("security-changed", "breaking", "`securitySchemes` changed: clients may need new credentials",
               old.get("securitySchemes"), new.get("securitySchemes"))
    yield from requirements(old, new, "security", "")


def _rotation(base: Publication, head: Publication) -> tuple[frozenset[str], frozenset[str]]:
    """The key ids whose every key the base's key sets published the head's
    still publish, and the key ids the head publishes (each key set entry
    is `kid (thumbprint)`: another key under a kid is another key)."""
    before = {e for kids in base.keys.values() for e in kids}
    after = {e for kids in head.keys.values() for e in kids}
    def kid(entry: str) -> str:
        return entry.split(" (", 1)[0]

    return (frozenset(map(kid, before & after)) - frozenset(map(kid, before - after)), frozenset(map(kid, after)))


def _keys(host: str, old: tuple[str, ...], new: tuple[str, ...]) -> Iterable[Change]:
    gone, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    if gone:
        yield Change("host", host, "keys-removed", "breaking", f"jwks.json no longer publishes {_list(gone)}: cards "
                     "signed with them (copies cached elsewhere too) stop verifying", shown(list(old)),
                     shown(list(new)))
    if added:
        yield Change("host", host, "keys-added", "additive", f"jwks.json publishes {_list(added)}",
                     shown(list(old)), shown(list(new)))


def _root(host: str, old: str | None, new: str | None) -> Iterable[Change]:
    """The card a host serves at `/.well-known/agent-card.json`, where A2A
    clients look a host up (`old`: as the head names that agent)."""
    where = f"`https://{host}/.well-known/agent-card.json`"
    if old == new:
        return
    if new is None:
        yield Change("host", host, "root-card-removed", "breaking", f"{where} is no longer served: clients that "
                     "look the host up there find no card", old, None)
    elif old is None:
        yield Change("host", host, "root-card-added", "additive", f"{where} serves {code_span(new)}'s card", None,
                     new)
    else:
        yield Change("host", host, "root-card-changed", "breaking", f"{where} serves another agent's card: "
                     f"clients that look the host up there get {code_span(new)}, not {code_span(old)}", old, new)


def extension_entries(card: JsonObject) -> dict[str, JsonObject]:
    """A card's extension entries by URI, but the capability contract's
    (compared as flags and versions)."""
    caps = card.get("capabilities")
    entries = _by(caps.get("extensions") if isinstance(caps, dict) else None, "uri")
    entries.pop(CONTRACT_URI, None)
    return entries


def _versions(old: Contract, new: Contract) -> Iterable[Found]:
    """A protocol version the card stops accepting breaks its clients on
    that version; a newly accepted one is additive."""
    def ends(c: Contract) -> list[str]:
        return [v for span in c.spans() for v in span]
    dropped = [v for v in dict.fromkeys(ends(old)) if not new.accepts(v)]
    added = [v for v in dict.fromkeys(ends(new)) if not old.accepts(v)]
    was, now = capability.describe_versions(old), capability.describe_versions(new)
    if dropped:
        yield "protocol-narrowed", "breaking", f"no longer accepts A2A {_list(dropped)}", was, now
    if added:
        yield "protocol-widened", "additive", f"now accepts A2A {_list(added)}", was, now


def _by(items: JsonValue, key: str) -> dict[str, JsonObject]:
    return {str(i.get(key)): i for i in _items(items) if isinstance(i, dict)}


def _items(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _modes(which: str, old: JsonValue, new: JsonValue, where: str = "") -> Iterable[Found]:
    was, now = {m for m in _items(old) if isinstance(m, str)}, {m for m in _items(new) if isinstance(m, str)}
    gone, added = sorted(was - now), sorted(now - was)
    verb = "accepts" if which == "input" else "produces"
    if gone:
        yield f"{which}-modes-narrowed", "breaking", f"{where}no longer {verb} {_list(gone)}", old, new
    if added:
        yield f"{which}-modes-widened", "additive", f"{where}now {verb} {_list(added)}", old, new


def _extensions(old: dict[str, JsonObject], new: dict[str, JsonObject]) -> Iterable[Found]:
    for uri in sorted(old.keys() - new.keys()):
        yield "extension-removed", "breaking", f"extension {code_span(uri)} removed", old[uri], None
    for uri in sorted(new.keys() - old.keys()):
        required = bool(new[uri].get("required"))
        yield ("extension-added", "breaking" if required else "additive",
               f"extension {code_span(uri)} added" + (" as required: clients must support it" if required else ""),
               None, new[uri])
    for uri in sorted(old.keys() & new.keys()):
        a, b = old[uri], new[uri]
        if {k: v for k, v in a.items() if k != "description"} != {k: v for k, v in b.items() if k != "description"}:
            yield "extension-changed", "breaking", f"extension {code_span(uri)} changed", a, b
        elif a != b:
            yield ("extension-described", "cosmetic", f"extension {code_span(uri)} description changed",
                   a.get("description"), b.get("description"))


def _endpoints(card: JsonObject) -> set[str]:
    """Each interface a client can pick, both shapes: `url binding version (tenant)`."""
    found = {" ".join(str(i.get(k) or "") for k in ("url", "protocolBinding", "protocolVersion", "tenant")).strip()
             for i in _items(card.get("supportedInterfaces")) if isinstance(i, dict)}
    if "url" in card:
        version = card.get("protocolVersion") or ""
        found.add(f"{card['url']} {card.get('preferredTransport') or 'JSONRPC'} {version}".strip())
        found |= {f"{i.get('url')} {i.get('transport')} {version}".strip()
                  for i in _items(card.get("additionalInterfaces")) if isinstance(i, dict)}
    return found


def _interfaces(old: set[str], new: set[str], moved: tuple[str, str]) -> Iterable[Found]:
    """The interfaces gone and added, but the one the card's url moved
    (`moved`: its url before and after), which "url moved" says."""
    was, now = moved
    same = {gone for gone in old - new if was != now and gone.startswith(f"{was} ")
            and f"{now}{gone[len(was):]}" in new - old}
    for gone in sorted(old - new - same):
        yield "interface-removed", "breaking", f"interface {code_span(gone)} removed", gone, None
    for added in sorted(new - old - {f"{now}{gone[len(was):]}" for gone in same}):
        yield "interface-added", "additive", f"interface {code_span(added)} added", None, added


def _skills(old: dict[str, JsonObject], new: dict[str, JsonObject], old_card: JsonObject | None = None,
            new_card: JsonObject | None = None) -> Iterable[Found]:
    for sid in sorted(old.keys() - new.keys()):
        yield "skill-removed", "breaking", f"skill {code_span(sid)} removed", old[sid].get("name"), None
    for sid in sorted(new.keys() - old.keys()):
        yield "skill-added", "additive", f"skill {code_span(sid)} added", None, new[sid].get("name")
    for sid in sorted(old.keys() & new.keys()):
        a, b = old[sid], new[sid]
        where = f"skill {code_span(sid)} "
        for which, own, default in (("input", "inputModes", "defaultInputModes"),
                                    ("output", "outputModes", "defaultOutputModes")):
            if a.get(own) or b.get(own):  # a skill without modes of its own takes the card's: that row says it
                yield from _modes(which, a.get(own) or (old_card or {}).get(default),
                                  b.get(own) or (new_card or {}).get(default), where)
        yield from requirements(a, b, "skill-security", where)
        for k in ("name", "description", "examples", "tags"):
            if a.get(k) != b.get(k):
                yield "skill-described", "cosmetic", f"{where}`{k}` changed", a.get(k), b.get(k)


def _domain(domain: str, old: list[str] | None, new: list[str] | None) -> Iterable[Change]:
    if new is None:
        yield Change("domain", domain, "domain-removed", "breaking", "domain no longer published")
        return
    if old is None:
        yield Change("domain", domain, "domain-added", "additive", "domain published")
    was, now = shown(old), shown(new)
    for slug in sorted(set(old or []) - set(new)):
        yield Change("domain", domain, "domain-lost-agent", "breaking", f"no longer routed to {code_span(slug)}",
                     was, now)
    for slug in sorted(set(new) - set(old or [])):
        yield Change("domain", domain, "domain-gained-agent", "additive", f"now routed to {code_span(slug)}", was, now)


def _list(items: list[str]) -> str:
    return ", ".join(code_span(i) for i in items)


def _kebab(key: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in key)
