"""The card fields of one agent after defaults and derivations, in no
target's shape yet: what every target's `build` turns into its wire model."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from knoc.a2a import capability
from knoc.a2a.wire import AgentExtension, AgentProvider, AgentSkill
from knoc.rules.json import JsonObject

DEFAULT_MODES = ["text/plain"]
DEFAULT_TRANSPORT = "JSONRPC"
BINDINGS = ("JSONRPC", "GRPC", "HTTP+JSON")  # the bindings A2A names; clients compare them exactly
# What cards in the wild call a binding, by its letters and digits only (`json-rpc`, `HTTP/JSON`, ` GRPC `).
_BINDING_SPELLINGS = {"JSONRPC": "JSONRPC", "JSONRPC2": "JSONRPC", "JSONRPC20": "JSONRPC", "GRPC": "GRPC",
                      "GRPCPROTO": "GRPC", "HTTPJSON": "HTTP+JSON", "REST": "HTTP+JSON", "HTTPREST": "HTTP+JSON"}


def a2a_binding(binding: str) -> str | None:
    """The binding A2A names that `binding` means (`grpc`, `REST`, `HTTP/JSON`
    too), or None for a custom one."""
    return _BINDING_SPELLINGS.get(re.sub(r"[^A-Z0-9]", "", binding.upper()))


def named_binding(binding: str) -> str | None:
    """The name A2A gives a binding written otherwise (`grpc`, `REST`), or None."""
    named = a2a_binding(binding)
    return named if named is not None and named != binding else None


@dataclass
class CardFields:
    name: str
    description: str
    url: str
    version: str
    transport: str
    main_versions: tuple[str, ...]  # protocol versions of the main url
    # each as the card states it (its schema checked `url`, `transport`, `tenant`), with its `protocol_versions`
    interfaces: list[dict[str, Any]]
    provider: AgentProvider | None
    documentation_url: str | None
    icon_url: str | None
    streaming: bool | None
    push_notifications: bool | None
    state_transition_history: bool | None
    extended_agent_card: bool | None
    extensions: list[AgentExtension]
    schemes: dict[str, JsonObject]  # security schemes, 0.3-style (`type`), snake_case
    security: list[dict[str, list[str]]]
    input_modes: list[str]
    output_modes: list[str]
    skills: list[AgentSkill] = field(default_factory=list)

    @functools.cached_property
    def legacy_view(self) -> LegacyView | None:
        """Where a client of a 0.3-shaped card (a 0.3 card, compat's 0.3
        fields, agent.json) is sent: the first interface, main url first,
        that speaks a version before 1.0; the others that speak that
        version, beside it (the card states one version for all).
        None when none does: such a card would send an old client to an
        endpoint that cannot answer it. (Each target reads it several
        times a card: worked out once.)"""
        speaking = [(url, transport, v, versions) for url, transport, versions in self.all_interfaces()
                    if (v := capability.legacy_version(versions)) is not None]
        if not speaking:
            return None
        (url, transport, version, _), *rest = speaking
        # one `protocolVersion` speaks for every interface the view lists: only those that speak it
        return LegacyView(url, transport, version, tuple((u, t) for u, t, _, vs in rest if version in vs))

    def all_interfaces(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """(url, binding, protocol versions) of the main url, then of each other interface."""
        return [(self.url, self.transport, self.main_versions),
                *((i["url"], i["transport"], tuple(i["protocol_versions"])) for i in self.interfaces)]


@dataclass(frozen=True)
class LegacyView:
    url: str
    transport: str
    version: str  # the protocol version the card states for it
    others: tuple[tuple[str, str], ...]  # (url, binding) of the other interfaces that speak a version before 1.0
