"""The A2A 1.0 target: the AgentCard as ProtoJSON of lf.a2a.v1.AgentCard
(proto at v1.0.1), how card fields become one, and how one is read back."""

from __future__ import annotations

from pydantic import Field, model_validator

from knoc.a2a import capability, wire
from knoc.a2a.fields import CardFields
from knoc.a2a.targets import v03
from knoc.a2a.targets.base import Card, Dropped, Target
from knoc.a2a.wire import AgentExtension, AgentProvider, Wire
from knoc.rules.json import JsonObject


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


class AuthorizationCodeOAuthFlow(wire.AuthorizationCodeOAuthFlow):
    pkce_required: bool | None = None


class DeviceCodeOAuthFlow(Wire):
    device_authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class OAuthFlows(Wire):
    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: wire.ClientCredentialsOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None

    @model_validator(mode="after")
    def _one_flow(self) -> OAuthFlows:
        if sum(f is not None for f in (self.authorization_code, self.client_credentials, self.device_code)) != 1:
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
    def _one_scheme(self) -> SecurityScheme:
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


class AgentSkill(wire.SkillFields):
    security_requirements: list[SecurityRequirement] | None = None


def requirements(security: list[dict[str, list[str]]] | None) -> list[SecurityRequirement] | None:
    """0.3-style requirements (scheme name -> scopes) as 1.0 writes them."""
    return [SecurityRequirement(schemes={n: StringList(list=s) for n, s in r.items()}) for r in security or []] or None


def skill(s: wire.AgentSkill, model: type[AgentSkill] = AgentSkill, **more: object) -> AgentSkill:
    """A skill as 1.0 writes it (`model`: a subclass with `more` fields, compat's)."""
    fields = {name: getattr(s, name) for name in wire.SkillFields.model_fields}  # plain values: no dump needed
    return model.model_validate({**fields, "security_requirements": requirements(s.security), **more})


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
    signatures: list[wire.AgentCardSignature] | None = None  # added by knoc.output.signed


def scheme(s: JsonObject) -> JsonObject:
    """A 0.3-style security scheme as 1.0's oneof wrapper."""
    desc = {"description": s["description"]} if s.get("description") else {}
    kind = s["type"]
    if kind == "apiKey":
        return {"api_key_security_scheme": {**desc, "location": s["in"], "name": s["name"]}}
    if kind == "http":
        return {"http_auth_security_scheme": {**desc, "scheme": s["scheme"],
                                              "bearer_format": s.get("bearer_format")}}
    if kind == "oauth2":
        return {"oauth2_security_scheme": {**desc, "flows": s["flows"],
                                           "oauth2_metadata_url": s.get("oauth2_metadata_url")}}
    if kind == "openIdConnect":
        return {"open_id_connect_security_scheme": {**desc, "open_id_connect_url": s["open_id_connect_url"]}}
    return {"mtls_security_scheme": desc}


def card_kwargs(f: CardFields, skills: list[AgentSkill] | None = None) -> dict[str, object]:
    """Every 1.0 card field but the security schemes (compat shapes those,
    and its skills, its own way)."""
    interfaces = [AgentInterface(url=f.url, protocol_binding=f.transport, protocol_version=v)
                  for v in f.main_versions]
    interfaces += [AgentInterface(url=i["url"], protocol_binding=i["transport"],
                                  protocol_version=v, tenant=i.get("tenant"))
                   for i in f.interfaces for v in i["protocol_versions"]]
    return dict(
        name=f.name, description=f.description, supported_interfaces=interfaces,
        provider=f.provider, version=f.version, documentation_url=f.documentation_url,
        capabilities=AgentCapabilities(streaming=f.streaming, push_notifications=f.push_notifications,
                                       extensions=f.extensions or None,
                                       extended_agent_card=f.extended_agent_card),
        security_requirements=requirements(f.security),
        default_input_modes=f.input_modes, default_output_modes=f.output_modes,
        skills=[skill(s) for s in f.skills] if skills is None else skills, icon_url=f.icon_url,
    )


def build(f: CardFields) -> AgentCard:
    return AgentCard.model_validate({
        **card_kwargs(f),
        "security_schemes": {n: SecurityScheme.model_validate(scheme(s)) for n, s in f.schemes.items()} or None})


def url_of(card: Card) -> str | None:
    """The main url: the first supported interface's."""
    interfaces = card.get("supportedInterfaces")
    first = interfaces[0] if isinstance(interfaces, list) and interfaces else {}
    url = first.get("url") if isinstance(first, dict) else None
    return str(url) if url is not None else None


def dropped(f: CardFields) -> Dropped:
    """0.3's `stateTransitionHistory` has no 1.0 field."""
    if f.state_transition_history is None:
        return []
    return [(("capabilities", "state_transition_history"), "`state_transition_history`")]


TARGET = Target(name="1.0", versions=("1.0",), build=build, read=capability.read_1_0,
                url_of=url_of, unsupported_flags=frozenset({"state_transition_history"}), dropped=dropped,
                legacy=v03.legacy)
