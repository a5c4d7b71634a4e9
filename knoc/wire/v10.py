"""A2A 1.0 AgentCard (ProtoJSON of lf.a2a.v1.AgentCard, proto at v1.0.1)."""

from __future__ import annotations

from pydantic import Field, model_validator

from knoc.wire import common
from knoc.wire.common import AgentExtension, AgentProvider, AgentSkill, Wire


class AgentInterface(Wire):
    url: str
    protocol_binding: str
    protocol_version: str
    tenant: str | None = None


class AgentCapabilities(Wire):
    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool | None = None


class APIKeySecurityScheme(Wire):
    description: str | None = None
    location: str
    name: str


class HTTPAuthSecurityScheme(Wire):
    description: str | None = None
    scheme: str
    bearer_format: str | None = None


class OAuthFlows(common.OAuthFlows):
    @model_validator(mode="after")
    def _one_flow(self) -> "OAuthFlows":
        if (self.authorization_code is None) == (self.client_credentials is None):
            raise ValueError("OAuthFlows is a oneof: exactly one flow")
        return self


class OAuth2SecurityScheme(Wire):
    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(Wire):
    description: str | None = None
    open_id_connect_url: str


class MutualTlsSecurityScheme(Wire):
    description: str | None = None


class SecurityScheme(Wire):
    """A proto oneof: exactly one wrapper key, no `type` field."""

    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None

    @model_validator(mode="after")
    def _one_scheme(self) -> "SecurityScheme":
        if sum(v is not None for v in (self.api_key_security_scheme, self.http_auth_security_scheme,
                                       self.oauth2_security_scheme,
                                       self.open_id_connect_security_scheme,
                                       self.mtls_security_scheme)) != 1:
            raise ValueError("SecurityScheme is a oneof: exactly one scheme")
        return self


class StringList(Wire):
    list_: list[str] = Field(default_factory=list, alias="list")


class SecurityRequirement(Wire):
    schemes: dict[str, StringList]


class AgentCard(Wire):
    name: str
    description: str
    supported_interfaces: list[AgentInterface] = Field(min_length=1)
    provider: AgentProvider | None = None
    version: str
    documentation_url: str | None = None
    capabilities: AgentCapabilities
    security_schemes: dict[str, SecurityScheme] | None = None
    security_requirements: list[SecurityRequirement] | None = None
    default_input_modes: list[str] = Field(min_length=1)
    default_output_modes: list[str] = Field(min_length=1)
    skills: list[AgentSkill] = Field(min_length=1)
    icon_url: str | None = None
