"""a2a-sdk 0.3 (Python): its pydantic `AgentCard`, validated from the card
(by camelCase alias or snake_case name, unknown fields ignored), then
`canonicalize_agent_card`: dumped without `signatures`, default and None
values, empty values removed, `json.dumps` with sorted keys (ASCII, not
JCS). The models below repeat a2a-sdk 0.3.26's field for field, defaults
included: a default is left out of the payload, so it decides what a
signature covers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError
from pydantic.alias_generators import to_camel

from knoc.a2a.readers.common import Uncanonical, Unreadable, clean_empty


def _alias(name: str) -> str:
    return to_camel(name.rstrip("_"))


class _Model(BaseModel):
    model_config = ConfigDict(validate_by_name=True, validate_by_alias=True, serialize_by_alias=True,
                              alias_generator=_alias, defer_build=True)


class In(str, Enum):  # noqa: UP042 -- as the SDK declares it (its JSON dump is the value)
    cookie = "cookie"
    header = "header"
    query = "query"


class AgentInterface(_Model):
    transport: str
    url: str


class AgentProvider(_Model):
    organization: str
    url: str


class AgentExtension(_Model):
    description: str | None = None
    params: dict[str, Any] | None = None
    required: bool | None = None
    uri: str


class AgentCapabilities(_Model):
    extensions: list[AgentExtension] | None = None
    push_notifications: bool | None = None
    state_transition_history: bool | None = None
    streaming: bool | None = None


class AgentSkill(_Model):
    description: str
    examples: list[str] | None = None
    id: str
    input_modes: list[str] | None = None
    name: str
    output_modes: list[str] | None = None
    security: list[dict[str, list[str]]] | None = None
    tags: list[str]


class AgentCardSignature(_Model):
    header: dict[str, Any] | None = None
    protected: str
    signature: str


class APIKeySecurityScheme(_Model):
    description: str | None = None
    in_: In
    name: str
    type: Literal["apiKey"] = "apiKey"


class HTTPAuthSecurityScheme(_Model):
    bearer_format: str | None = None
    description: str | None = None
    scheme: str
    type: Literal["http"] = "http"


class AuthorizationCodeOAuthFlow(_Model):
    authorization_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]
    token_url: str


class ClientCredentialsOAuthFlow(_Model):
    refresh_url: str | None = None
    scopes: dict[str, str]
    token_url: str


class ImplicitOAuthFlow(_Model):
    authorization_url: str
    refresh_url: str | None = None
    scopes: dict[str, str]


class PasswordOAuthFlow(_Model):
    refresh_url: str | None = None
    scopes: dict[str, str]
    token_url: str


class OAuthFlows(_Model):
    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None


class OAuth2SecurityScheme(_Model):
    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None
    type: Literal["oauth2"] = "oauth2"


class OpenIdConnectSecurityScheme(_Model):
    description: str | None = None
    open_id_connect_url: str
    type: Literal["openIdConnect"] = "openIdConnect"


class MutualTLSSecurityScheme(_Model):
    description: str | None = None
    type: Literal["mutualTLS"] = "mutualTLS"


class SecurityScheme(RootModel[APIKeySecurityScheme | HTTPAuthSecurityScheme | OAuth2SecurityScheme
                               | OpenIdConnectSecurityScheme | MutualTLSSecurityScheme]):
    model_config = ConfigDict(defer_build=True)


class AgentCard(_Model):
    additional_interfaces: list[AgentInterface] | None = None
    capabilities: AgentCapabilities
    default_input_modes: list[str]
    default_output_modes: list[str]
    description: str
    documentation_url: str | None = None
    icon_url: str | None = None
    name: str
    preferred_transport: str | None = "JSONRPC"
    protocol_version: str | None = "0.3.0"
    provider: AgentProvider | None = None
    security: list[dict[str, list[str]]] | None = None
    security_schemes: dict[str, SecurityScheme] | None = None
    signatures: list[AgentCardSignature] | None = None
    skills: list[AgentSkill]
    supports_authenticated_extended_card: bool | None = None
    url: str
    version: str


def read(card: object) -> AgentCard:
    try:
        return AgentCard.model_validate(card)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) if isinstance(p, int) or p.isidentifier() else repr(p)[:60]  # a key may be hostile
                         for p in first["loc"]) or "the card"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise Unreadable(f"a2a-sdk 0.3 cannot read it: {where}: {first['msg']}{more}"[:300]) from None
    except RecursionError:
        raise Unreadable("a2a-sdk 0.3 cannot read it: it nests too deeply") from None


def payload(card: Mapping[str, object]) -> bytes:
    dumped: dict[str, object] = read(card).model_dump(exclude={"signatures"}, exclude_defaults=True,
                                                      exclude_none=True, by_alias=True)
    try:
        return json.dumps(clean_empty(dumped), separators=(",", ":"), sort_keys=True).encode("ascii")
    except (ValueError, RecursionError) as exc:
        raise Uncanonical(f"no canonical form: {exc}") from None

