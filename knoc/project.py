"""Stage 5, project (P10): each public agent becomes an A2A AgentCard for the
target version. One pure transformation: read the card-shaped fields, apply
the derivation rules written in the docs, and build the wire model. Nothing
reaches a card unless a wire model names it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, NamedTuple
from urllib.parse import urlsplit

from pydantic import ValidationError

from knoc import capability
from knoc.canonical import dumps, sha256
from knoc.capability import CONTRACT_URI, DEPRECATED, TARGET_VERSIONS, in_range, version_key
from knoc.diagnostics import Diagnostic, error, warning
from knoc.resolve import Agent
from knoc.source import JsonPath
from knoc.wire import compat, v03, v10
from knoc.wire.common import (AgentExtension, AgentProvider, AgentSkill, ContractCapabilities, ContractInterface,
                              ContractParams, Wire)

SERVICE_CLASS_URI = "https://connect.actex.ai/extensions/service-class"
SERVICE_CLASSES = ("utility", "principal", "ephemeral")  # what `service_class` may declare
DEFAULT_MODES = ["text/plain"]
DEFAULT_TRANSPORT = "JSONRPC"
# Legacy `authentication.schemes` names that map onto an HTTP auth scheme.
HTTP_SCHEMES = {"bearer": "bearer", "basic": "basic", "digest": "digest"}


class Projection(NamedTuple):
    """One agent's card, rendered, with what the catalog reads from it. It
    depends on the agent's own entity only, so the cache keeps it (a plain
    tuple: ten thousand of them load at every warm check)."""

    host: str
    path: str  # url path without leading or trailing slash, "" for the root
    body: bytes  # the card JSON, as written
    name: str
    url: str
    tags: tuple[str, ...]
    digest: str  # sha256 of `body`
    # capabilities.extensions as published: (uri, required, params, where the
    # entry comes from in the entity, whether knoc generated it)
    extensions: tuple[tuple[str, bool, dict[str, Any] | None, JsonPath, bool], ...] = ()
    skills: tuple[str, ...] = ()  # skill names, for the catalog page

    @property
    def summary(self) -> tuple[object, ...]:
        """All of it but the body: what the link stage (publish, index,
        contract) reads."""
        return (self.host, self.path, self.name, self.url, self.tags, self.extensions, self.skills)

    @property
    def site_dir(self) -> str:
        return _join(self.host, self.path)


@dataclass(frozen=True)
class Card:
    """A published card: whose it is and its projection."""

    slug: str  # the agent's
    source: str  # the agent's source file, repo-relative
    projection: Projection


@dataclass
class _Fields:
    """The card fields after defaults and derivations, target-neutral."""

    name: str
    description: str
    url: str
    version: str
    transport: str
    main_versions: tuple[str, ...]  # protocol versions of the main url
    interfaces: list[dict[str, Any]]
    provider: AgentProvider | None
    documentation_url: str | None
    icon_url: str | None
    streaming: bool | None
    push_notifications: bool | None
    state_transition_history: bool | None
    extended_agent_card: bool | None
    extensions: list[AgentExtension]
    schemes: dict[str, dict[str, Any]]
    security: list[dict[str, list[str]]]
    input_modes: list[str]
    output_modes: list[str]
    skills: list[AgentSkill] = field(default_factory=list)


def project(agent: Agent, target: str) -> tuple[Projection | None, list[Diagnostic]]:
    """The agent's card for `target`, or None when it is private, invalid or
    cannot be projected (the diagnostics say why)."""
    if not agent.typed.valid:
        return None, []
    diags = list(_protocol_checks(agent, target)) + list(_deprecated(agent))
    if not agent.public:
        return None, diags
    fields = _fields(agent, target, diags)
    location = _location(agent, diags)
    if fields is not None and target == "1.0" and fields.state_transition_history:
        diags.append(_warn(agent, ("capabilities", "state_transition_history"), "KNO-PROJECT-DROPPED",
                           "`state_transition_history` does not exist in A2A 1.0 and is left out",
                           "remove it, or build with `--a2a 0.3` or `--a2a compat`"))
    if fields is None or location is None or any(d.is_error for d in diags):
        return None, diags
    try:
        model = BUILDERS[target](fields)
    except ValidationError as exc:  # a derivation rule let something through: say so
        diags.append(_err(agent, (), "KNO-PROJECT-WIRE",
                          f"the card does not fit the A2A {target} model: {exc.errors()[0]['msg']}",
                          "report this as a knoc bug, with the entity"))
        return None, diags
    tags = tuple(sorted({t for s in fields.skills for t in s.tags}))
    body = dumps(model.to_json_dict())
    authored = len(agent.card.get("capabilities", {}).get("extensions") or [])
    extensions = tuple((e.uri, bool(e.required), e.params, *_origin(agent, e.uri, i, authored))
                       for i, e in enumerate(fields.extensions))
    skills = tuple(s.name for s in fields.skills)
    return Projection(*location, body, fields.name, fields.url, tags, sha256(body), extensions, skills), diags


def publish(projected: Iterable[tuple[Agent, Projection]]) -> tuple[list[Card], list[Diagnostic]]:
    """The cards to publish, in slug order. Two agents cannot share a card
    path: the first by slug keeps it, the other gets an error."""
    cards: list[Card] = []
    diags: list[Diagnostic] = []
    by_location: dict[tuple[str, str], Agent] = {}
    for agent, proj in sorted(projected, key=lambda pair: pair[0].slug):
        owner = by_location.setdefault((proj.host, proj.path), agent)
        if owner is not agent:
            diags.append(_err(agent, ("url",), "KNO-URL-DUPLICATE",
                              f"url `{proj.url}` is also the url of `{owner.slug}`",
                              "two public agents cannot share one card path: give each its own url"))
            continue
        cards.append(Card(agent.slug, agent.typed.entity.source.rel, proj))
    return cards, diags


def _origin(agent: Agent, uri: str, i: int, authored: int) -> tuple[JsonPath, bool]:
    """Where extension entry `i` comes from: the authored list, or the field
    knoc generated it from."""
    if i < authored:
        return (*agent.card_path, "capabilities", "extensions", i), False
    return ((("service_class",) if uri == SERVICE_CLASS_URI else (*agent.card_path, "capabilities")), True)


def _fields(agent: Agent, target: str, diags: list[Diagnostic]) -> _Fields | None:
    c = agent.card
    caps = c.get("capabilities") or {}
    description = c.get("description")
    if not description:
        diags.append(_err(agent, ("name",), "KNO-PROJECT-REQUIRED",
                          "the card has no `description`, which A2A requires",
                          "add `description:` saying what the agent does"))
    provider = None
    if isinstance(c.get("provider"), dict):
        p = c["provider"]
        if not p.get("url"):
            diags.append(_err(agent, ("provider",), "KNO-PROJECT-REQUIRED",
                              "`provider` has no `url`, which A2A requires",
                              "add `url:` with the provider's website"))
        else:
            provider = AgentProvider(organization=p["organization"], url=p["url"])
    schemes, security = _security(agent, diags)
    extensions = [AgentExtension(**e) for e in caps.get("extensions") or []]
    if agent.service_class is not None:
        if any(e.uri == SERVICE_CLASS_URI for e in extensions):
            diags.append(_err(agent, ("capabilities", "extensions"), "KNO-SERVICE-CLASS-TWICE",
                              "`service_class` is set and a service-class extension is written by hand",
                              "keep `service_class` and remove the hand-written entry"))
        extensions.append(AgentExtension(uri=SERVICE_CLASS_URI, required=False,
                                         params={"class": agent.service_class}))
    for i, e in enumerate(extensions):
        if e.uri == CONTRACT_URI:
            diags.append(_err(agent, ("capabilities", "extensions", i, "uri"), "KNO-CONTRACT-BY-HAND",
                              "the capability-contract extension entry is written by hand",
                              "remove the entry: knoc writes it from `min_protocol_version`, "
                              "`max_protocol_version`, `protocol_versions` and the capability flags"))
    contract = _contract_params(c, target)
    if contract is not None:
        extensions.append(AgentExtension(uri=CONTRACT_URI, required=False, params=contract.to_json_dict()))
    skills = [s for i, raw in enumerate(c.get("skills") or []) if (s := _skill(agent, i, raw, diags))]
    if not description:
        return None
    return _Fields(
        name=c["name"], description=description, url=c["url"].rstrip("/") or c["url"],
        version=str(c["version"]), transport=c.get("preferred_transport") or DEFAULT_TRANSPORT,
        main_versions=capability.main_versions(c, target),
        interfaces=[{**i, "protocol_versions": capability.interface_versions(i, target)}
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


def _contract_params(c: dict[str, Any], target: str) -> ContractParams | None:
    """The capability-contract entry's params: the contract fields the target's
    core structures cannot state, or None when the card states none."""
    caps = c.get("capabilities") or {}
    flags = {k: caps[k] for k in capability.CONTRACT_FLAGS if k in caps}
    interfaces = []
    if target == "0.3":  # a 0.3 AgentInterface has no protocol version of its own
        stated = [(c["url"].rstrip("/") or c["url"], c.get("protocol_versions"))]
        stated += [(i["url"], i.get("protocol_versions")) for i in c.get("additional_interfaces") or []]
        interfaces = [ContractInterface(url=url, protocol_versions=v) for url, v in stated if v]
    low, high = c.get("min_protocol_version"), c.get("max_protocol_version")
    if not (flags or interfaces or low or high):
        return None
    return ContractParams(min_protocol_version=low, max_protocol_version=high,
                          capabilities=ContractCapabilities(**flags) if flags else None,
                          interfaces=interfaces or None)


def _protocol_checks(agent: Agent, target: str) -> Iterable[Diagnostic]:
    """The declared protocol range holds together: min <= max, and every
    version an interface speaks lies inside it."""
    c = agent.card
    low = capability.optional_str(c.get("min_protocol_version"))
    high = capability.optional_str(c.get("max_protocol_version"))
    if low and high and version_key(low) > version_key(high):
        yield _err(agent, ("max_protocol_version",), "KNO-PROTOCOL-RANGE",
                   f"max_protocol_version {high} is below min_protocol_version {low}",
                   "swap them, or widen the range so it holds at least one version")
        return
    main = capability.main_versions(c, target)
    stated: list[tuple[JsonPath, str, tuple[str, ...], bool]] = [
        (("protocol_versions",), "main url", main, bool(c.get("protocol_versions")))]
    for i, iface in enumerate(c.get("additional_interfaces") or []):
        stated.append((("additional_interfaces", i, "protocol_versions"), f"interface {iface.get('url')}",
                       capability.interface_versions(iface, target), bool(iface.get("protocol_versions"))))
    for path, what, versions, declared in stated:
        for j, v in enumerate(versions):
            if in_range(v, low, high):
                continue
            bound = "min_protocol_version" if low and version_key(v) < version_key(low) else "max_protocol_version"
            yield _err(agent, (*path, j) if declared else (bound,), "KNO-PROTOCOL-RANGE",
                       f"the {what} speaks A2A {v}" + ("" if declared else f" (the {target} build target's)")
                       + f", outside the declared range {low or '*'} to {high or '*'}",
                       f"widen `{bound}` to include {v}" + ("" if declared else
                       ", or state the interface's `protocol_versions`"))
    if target in ("0.3", "compat") and not any(version_key(v)[:2] == (0, 3) for v in main):
        yield _err(agent, ("protocol_versions",), "KNO-PROTOCOL-TARGET",
                   f"an A2A {target} card states protocol 0.3 for its url, but `protocol_versions` "
                   f"({', '.join(main)}) does not list it",
                   f"add \"{TARGET_VERSIONS[target][-1]}\" to `protocol_versions`, or build with `--a2a 1.0`")


def _deprecated(agent: Agent) -> Iterable[Diagnostic]:
    caps = agent.card.get("capabilities") or {}
    for name, replacement in DEPRECATED.items():
        if caps.get(name) is True:
            yield _warn(agent, ("capabilities", name), "KNO-CAP-DEPRECATED",
                        f"`{name}` is a deprecated capability (tier 3)",
                        f"declare `{replacement}`, which replaces it; keep `{name}` only while "
                        "old clients still need it")


def _skill(agent: Agent, i: int, raw: dict[str, Any], diags: list[Diagnostic]) -> AgentSkill | None:
    missing = [k for k in ("description", "tags") if not raw.get(k)]
    for key in missing:
        what = "a description" if key == "description" else "tags"
        diags.append(_err(agent, ("skills", i, "id"), "KNO-PROJECT-REQUIRED",
                          f"skill `{raw.get('id')}` has no {what}, which A2A requires",
                          f"add `{key}:` to the skill"))
    if missing:
        return None
    return AgentSkill(id=raw["id"], name=raw["name"], description=raw["description"],
                      tags=list(raw["tags"]), examples=raw.get("examples"),
                      input_modes=raw.get("input_modes"), output_modes=raw.get("output_modes"))


def _security(agent: Agent, diags: list[Diagnostic]) -> tuple[dict[str, dict[str, Any]], list[dict[str, list[str]]]]:
    c = agent.card
    schemes: dict[str, dict[str, Any]] = dict(c.get("security_schemes") or {})
    security: list[dict[str, list[str]]] = [dict(r) for r in c.get("security") or []]
    legacy = c.get("authentication")
    if isinstance(legacy, dict) and legacy.get("schemes"):
        if schemes:
            diags.append(_err(agent, ("authentication",), "KNO-PROJECT-AUTH",
                              "both `authentication` (legacy) and `security_schemes` are set",
                              "declare security once: move the legacy schemes into `security_schemes`"))
        for j, name in enumerate(legacy["schemes"]):
            http = HTTP_SCHEMES.get(str(name).lower())
            if http is None:
                diags.append(_err(agent, ("authentication", "schemes", j), "KNO-PROJECT-AUTH",
                                  f"legacy scheme `{name}` cannot be mapped to an A2A security scheme",
                                  "only Bearer, Basic and Digest map directly; declare others under "
                                  "`security_schemes` (e.g. type: oauth2 with its flows)"))
                continue
            schemes[http] = {"type": "http", "scheme": http}
            security.append({http: []})
    for j, requirement in enumerate(security):
        for name in requirement:
            if name not in schemes:
                diags.append(_err(agent, ("security", j), "KNO-PROJECT-AUTH",
                                  f"security requirement names `{name}`, which is not in `security_schemes`",
                                  f"declare `{name}` under `security_schemes`"))
    return schemes, security


def _location(agent: Agent, diags: list[Diagnostic]) -> tuple[str, str] | None:
    url = str(agent.card.get("url", ""))
    location = url_location(url)
    if location is None:
        diags.append(_err(agent, ("url",), "KNO-PROJECT-URL",
                          f"url `{url}` cannot be mapped to a card path",
                          "use an absolute https URL without `.` or `..` segments"))
    return location


def url_location(url: str) -> tuple[str, str] | None:
    """(host, path) of an http(s) URL as a folder under build/site/, or None
    when it cannot be one safely."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    try:
        port = parts.port  # ValueError for "host:PORT"
    except ValueError:
        return None
    if not parts.hostname or any(s in (".", "..") or "\\" in s for s in segments):
        return None
    host = parts.hostname + (f":{port}" if port else "")
    return host, "/".join(segments)


def site_dir(url: str) -> str | None:
    """The folder under build/site/ that serves `url`."""
    location = url_location(url)
    return None if location is None else _join(*location)


def _join(host: str, path: str) -> str:
    return f"{host}/{path}" if host and path else host or path


# --- targets -------------------------------------------------------------


def _v10_scheme(s: dict[str, Any]) -> dict[str, Any]:
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


def _v03_scheme(s: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in s.items() if k != "in"}
    if "in" in s:
        out["in_"] = s["in"]  # `in` is a Python keyword: the model names it in_
    return out


def _capabilities_v10(f: _Fields) -> v10.AgentCapabilities:
    return v10.AgentCapabilities(streaming=f.streaming, push_notifications=f.push_notifications,
                                 extensions=f.extensions or None,
                                 extended_agent_card=f.extended_agent_card)


def _v10_kwargs(f: _Fields) -> dict[str, Any]:
    interfaces = [v10.AgentInterface(url=f.url, protocol_binding=f.transport, protocol_version=v)
                  for v in f.main_versions]
    interfaces += [v10.AgentInterface(url=i["url"], protocol_binding=i["transport"],
                                      protocol_version=v, tenant=i.get("tenant"))
                   for i in f.interfaces for v in i["protocol_versions"]]
    return dict(
        name=f.name, description=f.description, supported_interfaces=interfaces,
        provider=f.provider, version=f.version, documentation_url=f.documentation_url,
        capabilities=_capabilities_v10(f),
        security_requirements=[v10.SecurityRequirement(schemes={n: v10.StringList(list=s)
                                                                for n, s in r.items()})
                               for r in f.security] or None,
        default_input_modes=f.input_modes, default_output_modes=f.output_modes,
        skills=f.skills, icon_url=f.icon_url,
    )


def to_v10(f: _Fields) -> v10.AgentCard:
    return v10.AgentCard(**_v10_kwargs(f),
                         security_schemes={n: v10.SecurityScheme(**_v10_scheme(s))
                                           for n, s in f.schemes.items()} or None)


def to_compat(f: _Fields) -> compat.AgentCard:
    return compat.AgentCard(
        **_v10_kwargs(f),
        security_schemes={n: compat.SecurityScheme(**_v10_scheme(s), **_v03_scheme(s))
                          for n, s in f.schemes.items()} or None,
        url=f.url, preferred_transport=f.transport, security=f.security or None,
    )


def to_v03(f: _Fields) -> v03.AgentCard:
    return v03.AgentCard(
        name=f.name, description=f.description, url=f.url, preferred_transport=f.transport,
        additional_interfaces=[v03.AgentInterface(url=i["url"], transport=i["transport"])
                               for i in f.interfaces] or None,
        icon_url=f.icon_url, provider=f.provider, version=f.version,
        documentation_url=f.documentation_url,
        capabilities=v03.AgentCapabilities(streaming=f.streaming,
                                           push_notifications=f.push_notifications,
                                           state_transition_history=f.state_transition_history,
                                           extensions=f.extensions or None),
        security_schemes={n: v03.SecurityScheme(**_v03_scheme(s)) for n, s in f.schemes.items()} or None,
        security=f.security or None,
        default_input_modes=f.input_modes, default_output_modes=f.output_modes, skills=f.skills,
        supports_authenticated_extended_card=f.extended_agent_card,
    )


BUILDERS: dict[str, Callable[[_Fields], Wire]] = {"1.0": to_v10, "0.3": to_v03, "compat": to_compat}


def _err(agent: Agent, path: JsonPath, code: str, message: str, hint: str,
         make: Callable[..., Diagnostic] = error) -> Diagnostic:
    """A diagnostic at `path` inside the agent's card fields."""
    src = agent.typed.entity.source
    return make(code, message, file=src.rel, span=src.locate((*agent.card_path, *path)), hint=hint)


def _warn(agent: Agent, path: JsonPath, code: str, message: str, hint: str) -> Diagnostic:
    return _err(agent, path, code, message, hint, make=warning)
