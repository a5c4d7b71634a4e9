"""The wire models shared by every A2A target (the same JSON in 0.3 and 1.0),
and the capability-contract extension's params. Every model forbids extra
fields: only a field named here can reach a published card."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, JsonValue
from pydantic.alias_generators import to_camel

from knoc.rules.json import JsonObject


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True,
                              frozen=True, defer_build=True, ser_json_inf_nan="constants")

    def to_json_dict(self) -> JsonObject:
        dumped: JsonObject = self.model_dump(by_alias=True, exclude_none=True, mode="json")
        return dumped

    def serialized(self) -> bytes:
        """`to_json_dict()` as pydantic writes it with indent=2 (for
        knoc.output.canonical.dumps_serialized)."""
        return self.__pydantic_serializer__.to_json(self, indent=2, by_alias=True, exclude_none=True)


class AgentCardSignature(Wire):
    """A JWS over the card (A2A 1.0 section 8.4), its payload left out."""

    protected: str
    signature: str
    header: dict[str, JsonValue] | None = None


class AgentProvider(Wire):
    organization: str
    url: str


class AgentExtension(Wire):
    uri: str
    description: str | None = None
    required: bool | None = None
    params: dict[str, JsonValue] | None = None


# The fields each OAuth flow carries in A2A (1.0's, the widest set). The
# specs share one flow shape, so a field of another flow is left out, with
# a warning (tests hold this to the 1.0 target's models).
FLOW_FIELDS = {
    "authorization_code": ("authorization_url", "token_url", "refresh_url", "scopes", "pkce_required"),
    "client_credentials": ("token_url", "refresh_url", "scopes"),
    "device_code": ("device_authorization_url", "token_url", "refresh_url", "scopes"),
}


class AuthorizationCodeOAuthFlow(Wire):
    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class ClientCredentialsOAuthFlow(Wire):
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class OAuthFlows(Wire):
    """0.3 allows several flows at once; 1.0 narrows this to a oneof."""

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None


class SkillFields(Wire):
    """A skill's fields in every A2A version."""

    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None


class AgentSkill(SkillFields):
    """A 0.3 skill, and how card fields carry one: its security
    requirements as 0.3 writes them (1.0 wraps them)."""

    security: list[dict[str, list[str]]] | None = None


class ContractCapabilities(Wire):
    """Tier 2 and 3 flags no A2A version defines (knoc.a2a.capability)."""

    streaming_message: bool | None = None
    pause_resume: bool | None = None
    context_reuse: bool | None = None
    multi_tenant: bool | None = None
    message_history_injection: bool | None = None
    artifact_streaming: bool | None = None


class ContractInterface(Wire):
    url: str
    protocol_versions: list[str]


class ContractParams(Wire):
    """`params` of the capability-contract extension entry: what a card states
    about itself that its target's core structures have no field for."""

    min_protocol_version: str | None = None
    max_protocol_version: str | None = None
    capabilities: ContractCapabilities | None = None
    interfaces: list[ContractInterface] | None = None
