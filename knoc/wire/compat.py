"""The dual-format card a2a-sdk's own server publishes for agents that also
speak 0.3: the 1.0 card, plus the 0.3 top-level `url`, `protocolVersion`,
`preferredTransport` and `security`, with each security scheme carrying both
the 1.0 wrapper key and the 0.3 `type` fields (the SDK merges the two)."""

from __future__ import annotations

from knoc.wire import v03, v10

PROTOCOL_VERSION = "0.3"


class SecurityScheme(v10.SecurityScheme, v03.SecurityScheme):
    pass


class AgentCard(v10.AgentCard):
    security_schemes: dict[str, SecurityScheme] | None = None  # type: ignore[assignment]
    url: str
    preferred_transport: str
    protocol_version: str = PROTOCOL_VERSION
    security: list[dict[str, list[str]]] | None = None
