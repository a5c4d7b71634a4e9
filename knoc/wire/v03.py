"""A2A 0.3 AgentCard (JSON Schema `specification/json/a2a.json` at v0.3.0)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from knoc.wire.common import AgentExtension, AgentProvider, AgentSkill, OAuthFlows, Wire

PROTOCOL_VERSION = "0.3.0"


class AgentInterface(Wire):
    url: str
    transport: str


class AgentCapabilities(Wire):
    streaming: bool | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    extensions: list[AgentExtension] | None = None


class SecurityScheme(Wire):
    """OpenAPI-3.0 style, discriminated by `type`; `extra` stays forbidden."""

    type: Literal["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"]
    description: str | None = None
    in_: Literal["header", "query", "cookie"] | None = Field(default=None, alias="in")
    name: str | None = None
    scheme: str | None = None
    bearer_format: str | None = None
    flows: OAuthFlows | None = None
    oauth2_metadata_url: str | None = None
    open_id_connect_url: str | None = None


class AgentCard(Wire):
    protocol_version: str = PROTOCOL_VERSION
    name: str
    description: str
    url: str
    preferred_transport: str
    additional_interfaces: list[AgentInterface] | None = None
    icon_url: str | None = None
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] | None = None
    security: list[dict[str, list[str]]] | None = None
    default_input_modes: list[str]
    default_output_modes: list[str]
    skills: list[AgentSkill] = Field(min_length=1)
    supports_authenticated_extended_card: bool | None = None
