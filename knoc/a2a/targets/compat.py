"""The dual-format card a2a-sdk's own server publishes for agents that also
speak 0.3: the 1.0 card, plus the 0.3 top-level `url`, `protocolVersion`,
`preferredTransport` and `security`, with each security scheme carrying both
the 1.0 wrapper key and the 0.3 `type` fields (the SDK merges the two)."""

from __future__ import annotations

from knoc.a2a import capability, wire
from knoc.a2a.fields import CardFields
from knoc.a2a.targets import v03, v10
from knoc.a2a.targets.base import Dropped, Target
from knoc.a2a.wire import Wire

PROTOCOL_VERSION = "0.3"


class OAuthFlows(Wire):
    """A scheme's 0.3 `flows`, with what only 1.0 has (the device code flow,
    PKCE) too: a2a-sdk 1.x rebuilds a compat card's scheme from its 0.3
    fields (the ones `type` marks), not from its 1.0 wrapper, so that is
    where 1.x clients read them. 0.3 clients ignore them, as A2A 0.3 allows."""

    authorization_code: v10.AuthorizationCodeOAuthFlow | None = None
    client_credentials: wire.ClientCredentialsOAuthFlow | None = None
    device_code: v10.DeviceCodeOAuthFlow | None = None


class SecurityScheme(v10.SecurityScheme, v03.SecurityScheme):
    flows: OAuthFlows | None = None  # type: ignore[assignment]


class AgentSkill(v10.AgentSkill):
    security: list[dict[str, list[str]]] | None = None  # the 0.3 view of its requirements


class AgentCard(v10.AgentCard):
    security_schemes: dict[str, SecurityScheme] | None = None  # type: ignore[assignment]
    skills: list[AgentSkill]  # type: ignore[assignment]
    # The 0.3 view: what a 0.3 client reads of the same card.
    url: str
    preferred_transport: str
    additional_interfaces: list[v03.AgentInterface] | None = None
    protocol_version: str = PROTOCOL_VERSION
    security: list[dict[str, list[str]]] | None = None
    supports_authenticated_extended_card: bool | None = None


def build(f: CardFields) -> AgentCard | v10.AgentCard:
    """The dual-format card; a plain 1.0 card when no interface speaks a
    version before 1.0 (its 0.3 fields would send a 0.3 client to an
    endpoint that cannot answer it; a warning says so)."""
    view = f.legacy_view
    if view is None:
        return v10.build(f)
    gone = v03.unflowed(f)  # their 0.3 fields hold no flow: no 0.3 requirement names them
    skills = [v10.skill(s, AgentSkill, security=v03.without(s.security or [], gone) or None) for s in f.skills]
    return AgentCard.model_validate({
        **v10.card_kwargs(f, skills),
        "security_schemes": {n: SecurityScheme.model_validate({**v10.scheme(s), **v03.scheme(s, carried=True)})
                             for n, s in f.schemes.items()} or None,
        "url": view.url, "preferred_transport": view.transport, "protocol_version": view.version,
        "additional_interfaces": v03.interfaces(view), "security": v03.without(f.security, gone) or None,
        "supports_authenticated_extended_card": f.extended_agent_card,
    })


def refused(f: CardFields) -> Dropped:
    """The 0.3 fields' requirements, when they would all be gone."""
    return v03.refused(f) if f.legacy_view is not None else []


# Read as its 1.0 view (its supported interfaces), which states every version;
# the main url is the 0.3 top-level one, the same as the first interface's.
TARGET = Target(name="compat", versions=("1.0", PROTOCOL_VERSION), build=build,
                read=capability.read_1_0, url_of=v03.url_of,
                unsupported_flags=frozenset({"state_transition_history"}), dropped=v10.dropped,
                refused=refused)
