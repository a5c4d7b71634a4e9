"""The A2A 0.3 target: the AgentCard of JSON Schema `specification/json/a2a.json`
at v0.3.0, how card fields become one, and how one is read back."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from knoc.a2a import capability
from knoc.a2a.fields import CardFields
from knoc.a2a.targets.base import Card, Dropped, Target
from knoc.a2a.wire import AgentCardSignature, AgentExtension, AgentProvider, AgentSkill, OAuthFlows, Wire

PROTOCOL_VERSION = "0.3"


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
    signatures: list[AgentCardSignature] | None = None  # added by knoc.output.signed


FLOWS_1_0 = ("device_code",)  # OAuth flows 0.3 lacks
FLOW_FIELDS_1_0 = {"authorization_code": "pkce_required"}  # and fields of its flows


def scheme(s: dict[str, Any]) -> dict[str, Any]:
    """A security scheme's fields as the 0.3 model takes them, without what
    only 1.0 has (the device code flow, PKCE): `dropped` warns of those."""
    out = {k: v for k, v in s.items() if k != "in"}
    if "in" in s:
        out["in_"] = s["in"]  # `in` is a Python keyword: the model names it in_
    if isinstance(s.get("flows"), dict):
        out["flows"] = {flow: {k: v for k, v in fields.items() if k != FLOW_FIELDS_1_0.get(flow)}
                        for flow, fields in s["flows"].items() if flow not in FLOWS_1_0}
    return out


def _only_1_0(f: CardFields) -> Dropped:
    found: Dropped = []
    for name, s in f.schemes.items():
        for flow, fields in (s.get("flows") or {}).items():
            field = FLOW_FIELDS_1_0.get(flow)
            if flow in FLOWS_1_0:
                found.append((("security_schemes", name, "flows", flow), f"the `{flow}` flow of `{name}`"))
            elif field is not None and field in fields:
                found.append((("security_schemes", name, "flows", flow, field), f"`{field}` of `{name}`"))
    return found


def interfaces(f: CardFields, with_main: bool = True) -> list[AgentInterface] | None:
    """`additionalInterfaces` for a 0.3 client: only interfaces that speak
    0.3 (a 1.0-only one would answer it UNIMPLEMENTED), and the main url
    first (v0.3 5.6.4: the list SHOULD include it) unless `with_main` is
    off (compat: a2a-sdk's server leaves it out of its 0.3 view)."""
    others = [AgentInterface(url=i["url"], transport=i["transport"])
              for i in f.interfaces if capability.speaks_0_3(i["protocol_versions"])]
    main = [AgentInterface(url=f.url, transport=f.transport)] if with_main else []
    return [*main, *others] if others else None


def dropped(f: CardFields) -> Dropped:
    found: Dropped = []
    for i, iface in enumerate(f.interfaces):
        if not capability.speaks_0_3(iface["protocol_versions"]):
            found.append((("additional_interfaces", i), f"the interface {iface['url']} (it speaks only A2A "
                                                        f"{', '.join(iface['protocol_versions'])})"))
        elif iface.get("tenant"):
            found.append((("additional_interfaces", i, "tenant"), "`tenant`"))
    return found + _only_1_0(f)


def build(f: CardFields) -> AgentCard:
    return AgentCard(
        name=f.name, description=f.description, url=f.url, preferred_transport=f.transport,
        additional_interfaces=interfaces(f),
        icon_url=f.icon_url, provider=f.provider, version=f.version,
        documentation_url=f.documentation_url,
        capabilities=AgentCapabilities(streaming=f.streaming, push_notifications=f.push_notifications,
                                       state_transition_history=f.state_transition_history,
                                       extensions=f.extensions or None),
        security_schemes={n: SecurityScheme(**scheme(s)) for n, s in f.schemes.items()} or None,
        security=f.security or None,
        default_input_modes=f.input_modes, default_output_modes=f.output_modes, skills=f.skills,
        supports_authenticated_extended_card=f.extended_agent_card,
    )


def legacy(f: CardFields) -> AgentCard:
    """The 0.3-shaped card for agent.json under a target whose own card
    pre-0.3 clients cannot parse. Its protocolVersion is the main url's, so
    a 1.0-only agent does not claim 0.3."""
    version = PROTOCOL_VERSION if capability.speaks_0_3(f.main_versions) else f.main_versions[0]
    return build(f).model_copy(update={"protocol_version": version})


def url_of(card: Card) -> str | None:
    return str(card["url"]) if "url" in card else None


TARGET = Target(name="0.3", versions=(PROTOCOL_VERSION,), build=build, read=capability.read_0_3,
                url_of=url_of, versions_in_contract=True, dropped=dropped)
