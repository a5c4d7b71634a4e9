"""Stage 5, project (P10): each public agent becomes an A2A AgentCard for the
target version. One pure transformation: read the card-shaped fields, apply
the derivation rules written in the docs, and build the wire model. Nothing
reaches a card unless a wire model names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from knoc.a2a import capability, targets, wire
from knoc.a2a.extensions import CONTRACT_URI, SERVICE_CLASS_URI
from knoc.a2a.fields import BINDINGS, DEFAULT_MODES, DEFAULT_TRANSPORT, CardFields
from knoc.a2a.protocol import major_minor
from knoc.a2a.targets import v03
from knoc.a2a.targets.base import Target
from knoc.a2a.wire import (
    AgentExtension,
    AgentProvider,
    AgentSkill,
    ContractCapabilities,
    ContractInterface,
    ContractParams,
)
from knoc.compiler.card_checks import (
    auth_urls,
    card_error,
    deprecated,
    unfinished,
    unprotected_values,
    unusable_schemes,
)
from knoc.compiler.interface_checks import client_picks, patch_versions, protocol_checks
from knoc.compiler.legacy_checks import compat_read_raw, legacy_dropped
from knoc.diagnostics import Diagnostic, JsonPath
from knoc.kinds.agent import NO_TWIN, Agent, Projection, Written
from knoc.kinds.aliases import card_aliases
from knoc.output import listing
from knoc.output.canonical import dumps_serialized, sha256
from knoc.output.hosting import locate_url
from knoc.output.index import card_details
from knoc.rules import limits
from knoc.rules.paths import shown_url, unportable

# Legacy `authentication.schemes` names that map onto an HTTP auth scheme.
HTTP_SCHEMES = {"bearer": "bearer", "basic": "basic", "digest": "digest"}


def project(agent: Agent, target_name: str) -> tuple[Projection | None, list[Diagnostic]]:
    """The agent's card for the target, or None when it is private, invalid
    or cannot be projected (the diagnostics say why)."""
    if not agent.typed.valid:
        return None, []
    target = targets.get(target_name)
    diags = list(protocol_checks(agent, target)) + list(patch_versions(agent)) + list(deprecated(agent))
    if not agent.public:
        return None, diags
    diags += [*unfinished(agent), *card_aliases(agent)]
    fields = _fields(agent, target, diags)
    location = _location(agent, diags)
    dropped = list(target.dropped(fields)) if fields is not None else []
    diags += client_picks(agent, fields, target) if fields is not None else ()
    diags += [*auth_urls(agent, (path for path, _ in dropped)), *unusable_schemes(agent, target)]
    for path, what in dropped:
        diags.append(card_error(agent, path, "KNO-PROJECT-DROPPED",
                                f"{what} cannot be carried by an A2A {target.name} card and is left out",
                                _elsewhere(fields, target, path)))
    for path, what in target.refused(fields) if fields is not None else []:
        diags.append(card_error(agent, path, "KNO-PROJECT-AUTH", f"{what}: an A2A {target.name} card cannot say "
                                "who may call this agent", "give the scheme a flow this target has, or build with "
                                f"`--a2a {targets.DEFAULT}`"))
    if fields is None or location is None or any(d.is_error for d in diags):
        return None, diags
    published = set(fields.schemes) - (v03.unflowed(fields) if target.legacy_shaped else set())
    if fields.extended_agent_card and not published:
        diags.append(card_error(agent, ("capabilities", "extended_agent_card"), "KNO-PROJECT-EXTENDED",
                                "the card offers an extended card to authenticated clients, but publishes no "
                                "security scheme they could authenticate with (A2A 1.0 sections 3.1.11, 13.3)",
                                "declare the scheme under `security_schemes` (and `security`), or drop "
                                "`extended_agent_card`"))
    view = fields.legacy_view
    if view is None and capability.speaks_0_3(target.versions) and not target.legacy_shaped:
        # compat: asked for a card 0.3 clients read, it cannot make one (the 0.3 target refuses, 1.0 says so
        # in its summary: a 1.0-only agent has no agent.json)
        diags.append(card_error(agent, ("protocol_versions",), "KNO-LEGACY-VIEW",
                                "no interface speaks A2A 0.3 (or another version before 1.0): the compat card "
                                "carries no 0.3 fields and agent.json is not written, so 0.2 and 0.3 clients "
                                "cannot use this agent",
                                "add \"0.3\" to the `protocol_versions` of an interface that answers 0.3 "
                                "clients, if one does"))
    try:
        model = target.build(fields)
        legacy_model = target.legacy(fields) if target.legacy else None
    except ValidationError as exc:  # a derivation rule let something through: say so
        diags.append(card_error(agent, (), "KNO-PROJECT-WIRE",
                          f"the card does not fit the A2A {target.name} model: {exc.errors()[0]['msg']}",
                          "report this as a knoc bug, with the entity"))
        return None, diags
    diags += legacy_dropped(agent, fields, target, view is not None and (not target.legacy or legacy_model))
    diags += compat_read_raw(agent, fields, target)
    tags = tuple(sorted({t for s in fields.skills for t in s.tags}))
    body, legacy = (dumps_serialized(m.serialized(), m.to_json_dict) if m else b"" for m in (model, legacy_model))
    if len(body) > limits.CARD_BYTES:
        diags.append(card_error(agent, (), "KNO-CARD-SIZE", f"the card would be {len(body):,} bytes; a published card "
                          f"may have at most {limits.CARD_BYTES:,}", "shorten its descriptions and examples, "
                          "or split its skills across agents"))
        return None, diags
    authored = len(agent.card.get("capabilities", {}).get("extensions") or [])
    extensions = tuple((e.uri, bool(e.required), e.params, *_origin(agent, e.uri, i, authored))
                       for i, e in enumerate(fields.extensions))
    skills = tuple(s.name for s in fields.skills)
    diags += unprotected_values(agent)
    written = Written(body, legacy, card_details(fields), listing.entry(agent.slug, fields, tags))
    twin = NO_TWIN if view is None or (target.legacy and not legacy) else sha256(legacy) if legacy else ""
    return Projection(*location, fields.name, fields.url, tags, sha256(body), extensions, skills,
                      twin, *written.pack()), diags


def _origin(agent: Agent, uri: str, i: int, authored: int) -> tuple[JsonPath, bool]:
    """Where extension entry `i` comes from: the authored list, or the field
    knoc generated it from."""
    if i < authored:
        return (*agent.card_path, "capabilities", "extensions", i), False
    return ((("service_class",) if uri == SERVICE_CLASS_URI else (*agent.card_path, "capabilities")), True)


def _fields(agent: Agent, target: Target, diags: list[Diagnostic]) -> CardFields | None:
    c = agent.card
    defaults = capability.defaults(target.versions, agent.states_versions)
    caps = c.get("capabilities") or {}
    description = c.get("description")
    if not description:
        diags.append(card_error(agent, ("name",), "KNO-PROJECT-REQUIRED",
                          "the card has no `description`, which A2A requires",
                          "add `description:` saying what the agent does"))
    provider = None
    if isinstance(c.get("provider"), dict):
        p = c["provider"]
        if not p.get("url"):
            diags.append(card_error(agent, ("provider",), "KNO-PROJECT-REQUIRED",
                              "`provider` has no `url`, which A2A requires",
                              "add `url:` with the provider's website"))
        else:
            provider = AgentProvider(organization=p["organization"], url=p["url"])
    schemes, security = _security(agent, diags)
    extensions = [AgentExtension(**e) for e in caps.get("extensions") or []]
    if agent.service_class is not None:
        if any(e.uri == SERVICE_CLASS_URI for e in extensions):
            diags.append(card_error(agent, ("capabilities", "extensions"), "KNO-SERVICE-CLASS-TWICE",
                              "`service_class` is set and a service-class extension is written by hand",
                              "keep `service_class` and remove the hand-written entry"))
        extensions.append(AgentExtension(uri=SERVICE_CLASS_URI, required=False,
                                         params={"class": agent.service_class}))
    for i, e in enumerate(extensions):
        if e.uri == CONTRACT_URI:
            diags.append(card_error(agent, ("capabilities", "extensions", i, "uri"), "KNO-CONTRACT-BY-HAND",
                              "the capability-contract extension entry is written by hand",
                              "remove the entry: knoc writes it from `min_protocol_version`, "
                              "`max_protocol_version`, `protocol_versions` and the capability flags"))
    contract = _contract_params(c, target)
    if contract is not None:
        extensions.append(AgentExtension(uri=CONTRACT_URI, required=False, params=contract.to_json_dict()))
    _empty_lists(agent, c, diags)
    skills = [s for i, raw in enumerate(c.get("skills") or []) if (s := _skill(agent, i, raw, diags))]
    ids: dict[object, int] = {}
    for i, raw in enumerate(c.get("skills") or []):
        _requirements_declared(agent, ("skills", i, "security"), raw.get("security") or [], schemes, diags)
        if (first := ids.setdefault(raw.get("id"), i)) != i:
            diags.append(card_error(agent, ("skills", i, "id"), "KNO-SKILL-DUPLICATE", f"skill id `{raw.get('id')}` "
                                    f"is also the id of skill {first + 1}: clients tell skills apart by their ids",
                                    "give each skill an id of its own"))
    if not description:
        return None
    return CardFields(
        name=c["name"], description=description, url=c["url"],
        version=str(c["version"]), transport=c.get("preferred_transport") or DEFAULT_TRANSPORT,
        main_versions=capability.main_versions(c, defaults),
        interfaces=[{**i, "protocol_versions": capability.interface_versions(i, defaults)}
                    for i in c.get("additional_interfaces") or []],
        provider=provider,
        documentation_url=c.get("documentation_url"), icon_url=c.get("icon_url"),
        streaming=caps.get("streaming"), push_notifications=caps.get("push_notifications"),
        state_transition_history=caps.get("state_transition_history"),
        extended_agent_card=caps.get("extended_agent_card"), extensions=extensions,
        schemes=schemes, security=security,
        input_modes=list(c.get("default_input_modes") or DEFAULT_MODES),
        output_modes=list(c.get("default_output_modes") or DEFAULT_MODES),
        skills=skills,
    )


def _elsewhere(fields: CardFields | None, target: Target, path: JsonPath) -> str:
    """The hint for a field `target` leaves out: the targets that keep it."""
    keeps = [f"`--a2a {n}`" for n in targets.names() if n != target.name and fields is not None
             and path not in {p for p, _ in targets.get(n).dropped(fields)}]
    return "remove it" + (f", or build with {' or '.join(keeps)}" if keeps else "")


def _contract_params(c: dict[str, Any], target: Target) -> ContractParams | None:
    """The capability-contract entry's params: the contract fields the target's
    core structures cannot state, or None when the card states none."""
    caps = c.get("capabilities") or {}
    flags = {k: caps[k] for k in capability.CONTRACT_FLAGS if k in caps}
    interfaces = []
    if target.versions_in_contract:  # its AgentInterface has no protocol version of its own
        stated = [(c["url"], c.get("protocol_versions"))]
        stated += [(i["url"], i.get("protocol_versions")) for i in c.get("additional_interfaces") or []]
        # an interface that speaks just what the card's `protocolVersion` says needs no entry
        interfaces = [ContractInterface(url=url, protocol_versions=v) for url, v in stated
                      if v and [major_minor(str(x)) for x in v] != list(target.versions)]
    low, high = (major_minor(v) if isinstance(v, str) else v
                 for v in (c.get("min_protocol_version"), c.get("max_protocol_version")))
    if not (flags or interfaces or low or high):
        return None
    return ContractParams(min_protocol_version=low, max_protocol_version=high,
                          capabilities=ContractCapabilities(**flags) if flags else None,
                          interfaces=interfaces or None)


# An empty list the SDKs read apart (a2a-sdk 0.3: none; 1.x and the JS SDK: not given), and what knoc
# publishes instead: (what it is left as, what to do).
_EMPTY = {
    "default_input_modes": ('published as ["text/plain"], A2A\'s default: a card takes at least one mode',
                            "list the modes the agent takes, or remove the line"),
    "input_modes": ("left out: a2a-sdk 0.3 reads an empty list as no modes, a2a-sdk 1.x and the JS SDK as none "
                    "given, so the card's `default_input_modes`", "list the skill's modes, or remove the line"),
    "security": ("left out: a2a-sdk 1.x and the JS SDK read a skill without requirements as taking the card's",
                 "remove the line; a skill open to clients without credentials is `security: [{}]`"),
}
_EMPTY["default_output_modes"] = _EMPTY["default_input_modes"]
_EMPTY["output_modes"] = (_EMPTY["input_modes"][0].replace("input", "output"), _EMPTY["input_modes"][1])


def _empty_lists(agent: Agent, c: Mapping[str, object], diags: list[Diagnostic]) -> None:
    """Each empty list the card would carry where clients read it apart,
    and an empty binding: left out (or defaulted), with a warning at it."""
    skills = c.get("skills")
    places: list[tuple[tuple[str | int, ...], Mapping[str, object], tuple[str, ...]]] = [
        ((), c, ("default_input_modes", "default_output_modes"))]
    places += [(("skills", i), raw, ("input_modes", "output_modes", "security"))
               for i, raw in enumerate(skills if isinstance(skills, list) else []) if isinstance(raw, dict)]
    for path, fields, keys in places:
        for key in keys:
            if fields.get(key) == []:
                done, hint = _EMPTY[key]
                diags.append(card_error(agent, (*path, key), "KNO-PROJECT-DROPPED", f"`{key}: []` is {done}", hint))
    if c.get("preferred_transport") == "":
        diags.append(card_error(agent, ("preferred_transport",), "KNO-PROJECT-DROPPED", "`preferred_transport: \"\"` "
                                f"is published as {DEFAULT_TRANSPORT}, A2A's default", "name the main url's binding "
                                f"({', '.join(BINDINGS)}), or remove the line"))


def _skill(agent: Agent, i: int, raw: dict[str, Any], diags: list[Diagnostic]) -> AgentSkill | None:
    missing = [k for k in ("description", "tags") if not raw.get(k)]
    for key in missing:
        what = "description" if key == "description" else "tags"
        diags.append(card_error(agent, ("skills", i, "id"), "KNO-PROJECT-REQUIRED",
                          f"skill `{raw.get('id')}` has no {what}, which A2A requires",
                          f"add `{key}:` to the skill"))
    if missing:
        return None
    return AgentSkill(id=raw["id"], name=raw["name"], description=raw["description"],
                      tags=list(raw["tags"]), examples=raw.get("examples"),
                      input_modes=raw.get("input_modes") or None, output_modes=raw.get("output_modes") or None,
                      security=[dict(r) for r in raw["security"]] if raw.get("security") else None)


def _flow_fields(agent: Agent, name: str, scheme: dict[str, Any], diags: list[Diagnostic]) -> dict[str, Any]:
    """The scheme with each OAuth flow holding only what that flow carries;
    a field of another flow is named and left out."""
    flows = scheme.get("flows")
    if not isinstance(flows, dict):
        return scheme
    kept: dict[str, Any] = {}
    for flow, fields in flows.items():
        allowed = wire.FLOW_FIELDS.get(flow)
        if allowed is None or not isinstance(fields, dict):
            kept[flow] = fields
            continue
        for field in sorted(set(fields) - set(allowed)):
            diags.append(card_error(agent, ("security_schemes", name, "flows", flow, field), "KNO-PROJECT-DROPPED",
                                    f"`{field}` belongs to another OAuth flow: the `{flow}` flow of `{name}` "
                                    "cannot carry it, and it is left out of every card",
                                    f"remove it, or move it to the flow it belongs to ({_owner(field)})"))
        kept[flow] = {k: v for k, v in fields.items() if k in allowed}
    return {**scheme, "flows": kept}


def _owner(field: str) -> str:
    return " or ".join(f"`{flow}`" for flow, fields in wire.FLOW_FIELDS.items() if field in fields) or "none"


def _security(agent: Agent, diags: list[Diagnostic]) -> tuple[dict[str, dict[str, Any]], list[dict[str, list[str]]]]:
    c = agent.card
    schemes: dict[str, dict[str, Any]] = {name: _flow_fields(agent, name, s, diags)
                                          for name, s in (c.get("security_schemes") or {}).items()}
    security: list[dict[str, list[str]]] = [dict(r) for r in c.get("security") or []]
    legacy = c.get("authentication")
    if isinstance(legacy, dict) and legacy.get("schemes"):
        if schemes:
            diags.append(card_error(agent, ("authentication",), "KNO-PROJECT-AUTH",
                              "both `authentication` (legacy) and `security_schemes` are set",
                              "declare security once: move the legacy schemes into `security_schemes`"))
        for j, name in enumerate(legacy["schemes"]):
            http = HTTP_SCHEMES.get(str(name).lower())
            if http is None:
                diags.append(card_error(agent, ("authentication", "schemes", j), "KNO-PROJECT-AUTH",
                                  f"legacy scheme `{name}` cannot be mapped to an A2A security scheme",
                                  "only Bearer, Basic and Digest map directly; declare others under "
                                  "`security_schemes` (e.g. type: oauth2 with its flows)"))
                continue
            schemes[http] = {"type": "http", "scheme": http}
            security.append({http: []})
    _requirements_declared(agent, ("security",), security, schemes, diags)
    return schemes, security


def _requirements_declared(agent: Agent, path: JsonPath, security: list[dict[str, list[str]]],
                           schemes: dict[str, dict[str, Any]], diags: list[Diagnostic]) -> None:
    """Every security requirement (the card's or a skill's) names a declared scheme."""
    for j, requirement in enumerate(security):
        for name in requirement:
            if name not in schemes:
                diags.append(card_error(agent, (*path, j), "KNO-PROJECT-AUTH",
                                  f"security requirement names `{name}`, which is not in `security_schemes`",
                                  f"declare `{name}` under `security_schemes`"))


def _location(agent: Agent, diags: list[Diagnostic]) -> tuple[str, str] | None:
    url = str(agent.card.get("url", ""))
    location = locate_url(url)
    if isinstance(location, str):
        diags.append(card_error(agent, ("url",), "KNO-PROJECT-URL",
                          f"url `{shown_url(url)}` cannot be mapped to a card path: {location}",
                          "use an absolute https URL whose host is a DNS name, without `.`, `..` or `%` segments"))
        return None
    why = next((w for s in location[1].split("/") if (w := unportable(s)) is not None), None)
    if why is not None:
        diags.append(card_error(agent, ("url",), "KNO-PROJECT-URL-PORTABLE", f"url `{shown_url(url)}` puts the card "
                                f"in a folder Windows cannot name: {why}, so a clone of the repo on Windows cannot "
                                "check out its build", "if the repo is cloned on Windows, give the agent a url "
                                "without it; if not, accept the code in knoc.toml's [accept]"))
    return location
