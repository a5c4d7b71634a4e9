"""`knoc discover`: safe discovery (seed 001's `safe_discover`) over a
compiled catalog: which public agents qualify for a request, and why each
other one does not. The engine reads published cards only, exactly as a
client would."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import NamedTuple

from knoc.a2a import capability, targets
from knoc.a2a.capability import Verdict
from knoc.a2a.extensions import SERVICE_CLASSES
from knoc.output.hosting import SITE
from knoc.output.tree import CATALOG
from knoc.rules.json import JsonObject
from knoc.rules.paths import has_userinfo, shown_url

QUALIFYING = ("compatible", "deprecated_capability")
CATALOG_CLASSES = (*SERVICE_CLASSES, "unknown")  # "unknown": neither declared nor inferred


class Request(NamedTuple):
    requires: tuple[str, ...] = ()
    protocol: str | None = None
    domain: str | None = None
    service_class: str | None = None

    def problems(self) -> list[tuple[str, str]]:
        """What is wrong with the request itself (a usage error), and what to do."""
        out = []
        listed = f"capabilities: {', '.join(capability.vocabulary())}"
        for name in self.requires:
            if not capability.known_requirement(name):
                near = difflib.get_close_matches(name, capability.vocabulary(), n=1)
                out.append((f"`{name}` is not a capability" + (f" (did you mean `{near[0]}`?)" if near else ""),
                            listed))
            elif name.startswith(capability.EXT_PREFIX) and has_userinfo(name[len(capability.EXT_PREFIX):]):
                shown = capability.EXT_PREFIX + shown_url(name[len(capability.EXT_PREFIX):])
                out.append((f"`{shown}` holds a user name or password: no card knoc publishes declares "
                            "such an extension uri", "give the extension's uri without them"))
        if self.protocol is not None and not capability.VERSION.match(self.protocol):
            out.append((f"`{self.protocol}` is not a protocol version", "give Major.Minor, such as 1.0 or 0.3"))
        return out


class Candidate(NamedTuple):
    """One catalog entry with its published card."""

    slug: str
    name: str
    url: str
    domains: list[str]
    service_class: str  # the catalog's class: declared, inferred or "unknown"
    card: JsonObject


class Answer(NamedTuple):
    slug: str
    name: str
    url: str
    verdict: str  # a capability verdict, or "excluded" by --domain / --class
    reason: str

    @property
    def qualifies(self) -> bool:
        return self.verdict in QUALIFYING

    def to_dict(self) -> dict[str, str | bool]:
        return {"slug": self.slug, "name": self.name, "url": self.url, "qualifies": self.qualifies,
                "verdict": self.verdict, "reason": self.reason}


def evaluate(candidate: Candidate, request: Request, target: str | None = None) -> Answer:
    """One candidate's answer; its card is read as `target`'s when known,
    else by its shape, as a client that knows nothing of it would."""
    reader = targets.get(target) if target else targets.by_shape(candidate.card)
    contract = reader.read(candidate.card)
    verdict = _scope(candidate, request) or capability.judge(contract, request.requires, request.protocol)
    return Answer(candidate.slug, candidate.name, candidate.url, *verdict)


def discover(candidates: list[Candidate], request: Request, target: str | None = None) -> list[Answer]:
    """Every candidate's answer: qualifying ones first, each group by slug."""
    answers = [evaluate(c, request, target) for c in candidates]
    return sorted(answers, key=lambda a: (not a.qualifies, a.slug))


def _scope(candidate: Candidate, request: Request) -> Verdict | None:
    if request.domain is not None and request.domain not in candidate.domains:
        return Verdict("excluded", f"does not perceive domain `{request.domain}`")
    if request.service_class is not None and candidate.service_class != request.service_class:
        return Verdict("excluded", f"service class is {candidate.service_class}, not {request.service_class}")
    return None


def catalog(read: Callable[[str], bytes]) -> list[Candidate]:
    """The candidates of a compiled output tree; `read` gives a file by its
    path under the build directory."""
    entries = json.loads(read(CATALOG))["agents"]
    return [Candidate(e["slug"], e["name"], e["url"], e["domains"], e["service_class"]["class"],
                      json.loads(read(f"{SITE}{e['card']}")))
            for e in entries]


def text(answers: list[Answer], request: Request) -> str:
    """The answer for people: who qualifies, then who does not and why."""
    asked = [*request.requires, *([f"protocol {request.protocol}"] if request.protocol else []),
             *([f"domain {request.domain}"] if request.domain else []),
             *([f"class {request.service_class}"] if request.service_class else [])]
    width = max((len(a.slug) for a in answers), default=0)
    lines = [f"request: {', '.join(asked) or 'anything'}"]
    for title, group in (("qualify", [a for a in answers if a.qualifies]),
                         ("do not qualify", [a for a in answers if not a.qualifies])):
        lines.append(f"{len(group)} {title}" + (":" if group else ""))
        lines += [f"  {a.slug:<{width}}  {a.verdict}" + (f": {a.reason}" if a.reason else "") for a in group]
    return "\n".join(lines) + "\n"
