"""The perception-domain kind: its slug is the domain's name; the runtime
index maps each public domain to the public agents that perceive it."""

from __future__ import annotations

from dataclasses import dataclass, field

from knoc.kinds.agent import Agent

COLLECTION = "perception-domains"  # the folder under content/ agents name their domains from


@dataclass(eq=False)
class Domain:
    slug: str
    public: bool
    category: str | None = None


@dataclass
class Repo:
    """The resolved repo: its agents and domains, each sorted by slug."""

    agents: list[Agent] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)

    def agents_by_slug(self) -> dict[str, Agent]:
        return {a.slug: a for a in self.agents}

    def public_domains(self) -> set[str]:
        return {d.slug for d in self.domains if d.public}
