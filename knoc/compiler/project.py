"""Stage 5, project (P10): each public agent becomes an A2A AgentCard for the
target version. One pure transformation: read the card-shaped fields, apply
the derivation rules written in the docs, and build the wire model. Nothing
reaches a card unless a wire model names it."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from knoc.a2a import capability, targets
from knoc.a2a.capability import DEPRECATED, in_range, version_key
from knoc.a2a.extensions import CONTRACT_URI, SERVICE_CLASS_URI
from knoc.a2a.fields import DEFAULT_MODES, DEFAULT_TRANSPORT, CardFields
from knoc.a2a.targets.base import Target
from knoc.a2a.wire import (
    AgentExtension,
    AgentProvider,
    AgentSkill,
    ContractCapabilities,
    ContractInterface,
    ContractParams,
)
from knoc.diagnostics import Diagnostic, JsonPath, at
from knoc.io import limits
from knoc.kinds.agent import NO_TWIN, PLACEHOLDERS, Agent, Projection, Written
from knoc.output import listing
from knoc.output.canonical import dumps_serialized, sha256
from knoc.output.hosting import locate_url
from knoc.output.index import card_details
from knoc.rules.paths import split_url
from knoc.rules.version import major_minor

# Legacy `authentication.schemes` names that map onto an HTTP auth scheme.
HTTP_SCHEMES = {"bearer": "bearer", "basic": "basic", "digest": "digest"}


def project(agent: Agent, target_name: str) -> tuple[Projection | None, list[Diagnostic]]:
    """The agent's card for the target, or None when it is private, invalid
    or cannot be projected (the diagnostics say why)."""
    if not agent.typed.valid:
        return None, []
    target = targets.get(target_name)
    diags = list(_protocol_checks(agent, target)) + list(_patch_versions(agent)) + list(_deprecated(agent))
    if not agent.public:
        return None, diags
    diags += _unfinished(agent)
    fields = _fields(agent, target, diags)
    location = _location(agent, diags)
    for path, what in target.dropped(fields) if fields is not None else []:
        diags.append(card_error(agent, path, "KNO-PROJECT-DROPPED",
                                f"{what} cannot be carried by an A2A {target.name} card and is left out",
                                _elsewhere(fields, target, path)))
    for path, what in target.refused(fields) if fields is not None else []:
        diags.append(card_error(agent, path, "KNO-PROJECT-AUTH", f"{what}: an A2A {target.name} card cannot say "
                                "who may call this agent", "give the scheme a flow this target has, or build with "
                                f"`--a2a {targets.DEFAULT}`"))
    if fields is None or location is None or any(d.is_error for d in diags):
        return None, diags
    view = fields.legacy_view()
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
    written = Written(body, legacy, card_details(fields), listing.entry(agent.id, fields, tags))
    twin = NO_TWIN if view is None else sha256(legacy) if legacy else ""
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
    skills = [s for i, raw in enumerate(c.get("skills") or []) if (s := _skill(agent, i, raw, diags))]
    for i, raw in enumerate(c.get("skills") or []):
        _requirements_declared(agent, ("skills", i, "security"), raw.get("security") or [], schemes, diags)
    if not description:
        return None
    return CardFields(
        name=c["name"], description=description, url=c["url"].rstrip("/") or c["url"],
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
        stated = [(c["url"].rstrip("/") or c["url"], c.get("protocol_versions"))]
        stated += [(i["url"], i.get("protocol_versions")) for i in c.get("additional_interfaces") or []]
        interfaces = [ContractInterface(url=url, protocol_versions=v) for url, v in stated if v]
    low, high = (major_minor(v) if isinstance(v, str) else v
                 for v in (c.get("min_protocol_version"), c.get("max_protocol_version")))
    if not (flags or interfaces or low or high):
        return None
    return ContractParams(min_protocol_version=low, max_protocol_version=high,
                          capabilities=ContractCapabilities(**flags) if flags else None,
                          interfaces=interfaces or None)


def _protocol_checks(agent: Agent, target: Target) -> Iterable[Diagnostic]:
    """The declared protocol range holds together: min <= max, and every
    version an interface speaks lies inside it."""
    c = agent.card
    low = capability.optional_str(c.get("min_protocol_version"))
    high = capability.optional_str(c.get("max_protocol_version"))
    if low and high and version_key(low) > version_key(high):
        yield card_error(agent, ("max_protocol_version",), "KNO-PROTOCOL-RANGE",
                   f"max_protocol_version {high} is below min_protocol_version {low}",
                   "swap them, or widen the range so it holds at least one version")
        return
    defaults = capability.defaults(target.versions, agent.states_versions)
    main = capability.main_versions(c, defaults)
    stated: list[tuple[JsonPath, str, tuple[str, ...], bool]] = [
        (("protocol_versions",), "main url", main, bool(c.get("protocol_versions")))]
    for i, iface in enumerate(c.get("additional_interfaces") or []):
        stated.append((("additional_interfaces", i, "protocol_versions"), f"interface {iface.get('url')}",
                       capability.interface_versions(iface, defaults), bool(iface.get("protocol_versions"))))
    for path, what, versions, declared in stated:
        for j, v in enumerate(versions):
            if in_range(v, low, high):
                continue
            bound = "min_protocol_version" if low and version_key(v) < version_key(low) else "max_protocol_version"
            yield card_error(agent, (*path, j) if declared else (bound,), "KNO-PROTOCOL-RANGE",
                       f"the {what} speaks A2A {v}" + ("" if declared else " (not stated: the default)")
                       + f", outside the declared range {low or '*'} to {high or '*'}",
                       f"widen `{bound}` to include {v}" + ("" if declared else
                       ", or state the interface's `protocol_versions`"))
    unstated = [(path, what, versions) for path, what, versions, declared in stated if not declared]
    if unstated and not agent.states_versions and defaults != capability.STATED_DEFAULT and agent.public:
        path, what, versions = unstated[0]
        yield card_error(agent, path[:-1] if path[-1] == "protocol_versions" and len(path) > 1 else path,
                   "KNO-PROTOCOL-UNSTATED",
                   f"the {what}{' and others' if len(unstated) > 1 else ''} state no protocol versions: this A2A "
                   f"{target.name} card claims A2A {', '.join(versions)}, as the target's default",
                   "state `protocol_versions` (each interface's too), or declare agent-blueprint@0.4.0, where "
                   "an unstated interface speaks A2A 1.0 under every target")
    if target.legacy_shaped and agent.public and not any(capability.legacy_version(v) for _, _, v, _ in stated):
        yield card_error(agent, ("protocol_versions",), "KNO-PROTOCOL-TARGET",
                   f"an A2A {target.name} card sends its clients to an interface that speaks A2A 0.3 (or "
                   f"another version before 1.0), and none does ({', '.join(main)} for the url)",
                   f"add \"0.3\" to the `protocol_versions` of the interface that answers 0.3 clients, or build "
                   f"with `--a2a {targets.DEFAULT}`")


def _patch_versions(agent: Agent) -> Iterable[Diagnostic]:
    """A warning for each protocol version written with a patch number."""
    c = agent.card
    bounds = ("min_protocol_version", "max_protocol_version")
    written: list[tuple[JsonPath, object]] = [((k,), c.get(k)) for k in bounds]
    lists: list[tuple[JsonPath, object]] = [(("protocol_versions",), c.get("protocol_versions"))]
    lists += [(("additional_interfaces", i, "protocol_versions"), iface.get("protocol_versions"))
              for i, iface in enumerate(c.get("additional_interfaces") or []) if isinstance(iface, dict)]
    written += [((*path, j), v) for path, vs in lists if isinstance(vs, list) for j, v in enumerate(vs)]
    for path, v in written:
        if isinstance(v, str) and major_minor(v) != v:
            yield card_error(agent, path, "KNO-PROTOCOL-PATCH",
                             f"protocol version {v} is published as {major_minor(v)}",
                             f"write \"{major_minor(v)}\": cards name protocol versions without a patch number")


def _unfinished(agent: Agent) -> Iterable[Diagnostic]:
    """Warnings for what a public card should not go out with: a skeleton's
    placeholder text, a url only this machine can reach, plain http."""
    c = agent.card
    fields: list[tuple[JsonPath, Any, str]] = [(("description",), c.get("description"), "description")]
    for i, skill in enumerate(c.get("skills") or []):
        if isinstance(skill, dict):
            fields += [(("skills", i, "name"), skill.get("name"), "skill_name"),
                       (("skills", i, "description"), skill.get("description"), "skill_description")]
    for path, value, key in fields:
        if value == PLACEHOLDERS[key]:
            yield card_error(agent, path, "KNO-CARD-PLACEHOLDER", f"`{value}` is the skeleton's placeholder text",
                       "say what the agent really does: clients choose agents by these words")
    url = c.get("url")
    where = split_url(url)
    if where is not None and _local(where.hostname or ""):
        yield card_error(agent, ("url",), "KNO-CARD-URL-LOCAL", f"url `{url}` can be reached only from this machine "
                   "or network", "publish the url clients will use, or keep the agent private while it is local")
    elif where is not None and where.scheme == "http":
        yield card_error(agent, ("url",), "KNO-CARD-URL-HTTP", f"url `{url}` is plain http: tasks and credentials "
                   "travel unencrypted", "serve the agent over https")
    for i, iface in enumerate(c.get("additional_interfaces") or []):
        grpc = split_url(iface.get("url")) if iface.get("transport") == "GRPC" else None
        if grpc is not None and grpc.hostname:
            address = f"{grpc.hostname}:{grpc.port or (443 if grpc.scheme == 'https' else 80)}"
            yield card_error(agent, ("additional_interfaces", i, "url"), "KNO-CARD-GRPC-ADDRESS",
                       f"gRPC interface url `{iface['url']}` is not an address a gRPC channel can dial",
                       f"write its host:port, `{address}` (A2A: a gRPC interface's url is hostname:port)")


def _local(host: str) -> bool:
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified


def _deprecated(agent: Agent) -> Iterable[Diagnostic]:
    caps = agent.card.get("capabilities") or {}
    for name, replacement in DEPRECATED.items():
        if caps.get(name) is True:
            yield card_error(agent, ("capabilities", name), "KNO-CAP-DEPRECATED",
                        f"`{name}` is a deprecated capability (tier 3)",
                        f"declare `{replacement}`, which replaces it; keep `{name}` only while "
                        "old clients still need it")


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
                      input_modes=raw.get("input_modes"), output_modes=raw.get("output_modes"),
                      security=[dict(r) for r in raw["security"]] if raw.get("security") else None)


def _security(agent: Agent, diags: list[Diagnostic]) -> tuple[dict[str, dict[str, Any]], list[dict[str, list[str]]]]:
    c = agent.card
    schemes: dict[str, dict[str, Any]] = dict(c.get("security_schemes") or {})
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
                          f"url `{url}` cannot be mapped to a card path: {location}",
                          "use an absolute https URL whose host is a DNS name, without `.`, `..` or `%` segments"))
        return None
    return location


def card_error(agent: Agent, path: JsonPath, code: str, message: str, hint: str) -> Diagnostic:
    """A diagnostic at `path` inside the agent's card fields."""
    return at(agent.typed.source, (*agent.card_path, *path), code, message, hint)
