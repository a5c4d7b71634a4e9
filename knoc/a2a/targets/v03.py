"""The A2A 0.3 target: the AgentCard of JSON Schema `specification/json/a2a.json`
at v0.3.0, how card fields become one, and how one is read back."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from knoc.a2a import capability
from knoc.a2a.fields import CardFields, LegacyView
from knoc.a2a.targets.base import Card, Dropped, Target
from knoc.a2a.wire import AgentCardSignature, AgentExtension, AgentProvider, AgentSkill, OAuthFlows, Wire
from knoc.rules.json import JsonObject, JsonValue

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


def scheme(s: JsonObject, carried: bool = False) -> JsonObject:
    """A security scheme's fields as the 0.3 model takes them, without what
    only 1.0 has (the device code flow, PKCE; `dropped` warns of those),
    unless `carried` (the compat card's 0.3 fields carry them for 1.x clients)."""
    out = {k: v for k, v in s.items() if k != "in"}
    if "in" in s:
        out["in_"] = s["in"]  # `in` is a Python keyword: the model names it in_
    if isinstance(flows := s.get("flows"), dict) and not carried:
        out["flows"] = {flow: _flow_0_3(flow, fields) for flow, fields in flows.items() if flow not in FLOWS_1_0}
    return out


def _flow_0_3(flow: str, fields: JsonValue) -> JsonValue:
    """An OAuth flow's fields (an object, its schema says) without the one only 1.0 has."""
    if not isinstance(fields, dict):
        return fields
    return {k: v for k, v in fields.items() if k != FLOW_FIELDS_1_0.get(flow)}


def unflowed(f: CardFields) -> set[str]:
    """The OAuth schemes 0.3 cannot carry at all: every flow they have is 1.0's."""
    return {name for name, s in f.schemes.items()
            if isinstance(flows := s.get("flows"), dict) and flows and all(flow in FLOWS_1_0 for flow in flows)}


def without(security: list[dict[str, list[str]]], gone: set[str]) -> list[dict[str, list[str]]]:
    """The alternatives of a requirement list that name no scheme of `gone`."""
    return [r for r in security if not gone & r.keys()]


def refused(f: CardFields) -> Dropped:
    """Requirements a 0.3 card cannot state: a card or skill each of whose
    alternatives needs a scheme 0.3 cannot carry would look open (an error,
    never an open door)."""
    gone = unflowed(f)
    lists = [((("security",)), f.security), *((("skills", i, "security"), s.security or [])
                                               for i, s in enumerate(f.skills))]
    return [(path, f"its security ({', '.join(sorted(gone & {n for r in rs for n in r}))} needs a flow only A2A 1.0 "
                   "has): the 0.3 card would state no requirement at all")
            for path, rs in lists if rs and not without(rs, gone)]


def only_1_0(f: CardFields) -> Dropped:
    found: Dropped = []
    gone = unflowed(f)
    found += [(("security_schemes", name), f"the scheme `{name}` (its only flow is A2A 1.0's), and every "
                                           "requirement alternative that names it") for name in sorted(gone)]
    for name, s in f.schemes.items():
        if name in gone:
            continue
        flows = s.get("flows")
        for flow, fields in (flows if isinstance(flows, dict) else {}).items():  # its schema says an object
            field = FLOW_FIELDS_1_0.get(flow)
            if flow in FLOWS_1_0:
                found.append((("security_schemes", name, "flows", flow), f"the `{flow}` flow of `{name}`"))
            elif field is not None and isinstance(fields, dict) and field in fields:
                found.append((("security_schemes", name, "flows", flow, field), f"`{field}` of `{name}`"))
    return found


def interfaces(view: LegacyView) -> list[AgentInterface] | None:
    """`additionalInterfaces` for a 0.3 client: only interfaces that speak a
    version before 1.0 (a 1.0-only one would answer it UNIMPLEMENTED), the
    main url first (v0.3 5.6.4: the list SHOULD include it); none when the
    main url is the only one."""
    if not view.others:
        return None
    return [AgentInterface(url=u, transport=t) for u, t in [(view.url, view.transport), *view.others]]


def dropped(f: CardFields) -> Dropped:
    found: Dropped = []
    if capability.legacy_version(f.main_versions) is None:
        found.append((("url",), f"the url {f.url} as the card's main url (it speaks only A2A "
                                f"{', '.join(f.main_versions)})"))
    for i, iface in enumerate(f.interfaces):
        if capability.legacy_version(iface["protocol_versions"]) is None:
            found.append((("additional_interfaces", i), f"the interface {iface['url']} (it speaks only A2A "
                                                        f"{', '.join(iface['protocol_versions'])})"))
    return found + legacy_part(f)


def legacy_part(f: CardFields) -> Dropped:
    """What a 0.3-shaped card leaves out that 0.3 clients could have used:
    an interface speaking another version before 1.0 (the card's one
    `protocolVersion` speaks for all it lists), `tenant`, and what only 1.0
    says about security."""
    view = f.legacy_view
    if view is None:
        return []
    listed = {(view.url, view.transport), *view.others}
    found: Dropped = []
    for i, iface in enumerate(f.interfaces):
        early = capability.legacy_version(iface["protocol_versions"])
        if early is None:
            continue
        if (iface["url"], iface["transport"]) not in listed:
            found.append((("additional_interfaces", i), f"the interface {iface['url']} (it speaks A2A {early}, and "
                                                        f"the card's `protocolVersion` says {view.version} for "
                                                        "every interface it lists)"))
        elif iface.get("tenant"):
            found.append((("additional_interfaces", i, "tenant"), f"`tenant` of {iface['url']}"))
    return found + only_1_0(f)


def build(f: CardFields) -> AgentCard:
    view = f.legacy_view
    if view is None:  # the projection refuses such a card first (KNO-PROTOCOL-TARGET)
        raise ValueError("an A2A 0.3 card needs an interface that speaks a version before 1.0")
    return card(f, view)


def card(f: CardFields, view: LegacyView) -> AgentCard:
    """The 0.3 card of `f`, its url the interface `view` picked, without
    the schemes it cannot carry (and the requirements naming them)."""
    gone = unflowed(f)
    return AgentCard(
        protocol_version=view.version, name=f.name, description=f.description, url=view.url,
        preferred_transport=view.transport, additional_interfaces=interfaces(view),
        icon_url=f.icon_url, provider=f.provider, version=f.version,
        documentation_url=f.documentation_url,
        capabilities=AgentCapabilities(streaming=f.streaming, push_notifications=f.push_notifications,
                                       state_transition_history=f.state_transition_history,
                                       extensions=f.extensions or None),
        security_schemes={n: SecurityScheme.model_validate(scheme(s)) for n, s in f.schemes.items()
                          if n not in gone} or None,
        security=without(f.security, gone) or None,
        default_input_modes=f.input_modes, default_output_modes=f.output_modes,
        skills=[s.model_copy(update={"security": without(s.security, gone) or None}) if s.security else s
                for s in f.skills],
        supports_authenticated_extended_card=f.extended_agent_card,
    )


def legacy(f: CardFields) -> AgentCard | None:
    """The 0.3-shaped card for agent.json under a target whose own card
    pre-0.3 clients cannot parse: sent to an interface that speaks a
    version before 1.0, or not written at all (None) when none does, or
    when its requirements would all be gone (`refused`: it would look open)."""
    view = f.legacy_view
    return None if view is None or refused(f) else card(f, view)


def url_of(card: Card) -> str | None:
    return str(card["url"]) if "url" in card else None


TARGET = Target(name="0.3", versions=(PROTOCOL_VERSION,), build=build, read=capability.read_0_3,
                url_of=url_of, versions_in_contract=True, legacy_shaped=True, dropped=dropped, refused=refused)
