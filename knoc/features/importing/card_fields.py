"""`knoc import`, field by field: each A2A card field of any version (0.1 to
1.0, or a mix) converted to the blueprint's snake_case, every drop and
conversion recorded as a `Change` with its JSON path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from knoc.a2a.extensions import CONTRACT_URI, SERVICE_CLASS_URI, SERVICE_CLASSES
from knoc.features.importing.card_contract import contract, regenerated
from knoc.features.importing.card_security import requirements, security_schemes
from knoc.features.importing.card_service import against_base
from knoc.features.importing.imported import (
    Imported,
    ImportedSkill,
    boolean,
    http_url,
    list_of,
    member,
    not_a_url,
)
from knoc.rules import slug as slugs
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.paths import shown_url, web_link
from knoc.rules.text import unshown

FLAGS = {"streaming": "streaming", "pushNotifications": "push_notifications",
         "stateTransitionHistory": "state_transition_history", "extendedAgentCard": "extended_agent_card"}
RENAMED: dict[str, Literal["documentation_url", "icon_url"]] = {"documentationUrl": "documentation_url",
                                                                 "iconUrl": "icon_url"}
MODES: dict[str, Literal["default_input_modes", "default_output_modes"]] = {
    "defaultInputModes": "default_input_modes", "defaultOutputModes": "default_output_modes"}
SKILL_LISTS: tuple[tuple[str, Literal["examples", "input_modes", "output_modes"]], ...] = (
    ("examples", "examples"), ("inputModes", "input_modes"), ("outputModes", "output_modes"))
SKILL_KEYS = {"id", "name", "description", "tags", "examples", "inputModes", "outputModes", "security",
              "securityRequirements"}
DEFAULT_VERSION = "0.1.0"
WHY_DROPPED: dict[str, str] = {}
LEGACY_FIELDS = ("protocolVersion", "supportsAuthenticatedExtendedCard")  # read by `service`, `extended_card`


Converter = Callable[[JsonObject, Imported], None]  # one top-level field of the card, into `out.card`


def json_kind(value: object) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def text_field(raw: JsonObject, out: Imported, key: Literal["description"], fallback: str) -> None:
    value = raw.get(key)
    if isinstance(value, str) and value.strip():
        out.card[key] = value
    else:
        out.card[key] = fallback
        out.convert(f"$.{key}", f"no `{key}`; A2A requires one, so the name stands in: write a real one")


def version_field(raw: JsonObject, out: Imported) -> None:
    value = raw.get("version")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.card["version"] = str(value)
        out.convert("$.version", f"the number {value} to the string \"{value}\"")
    elif isinstance(value, str) and value.strip():
        out.card["version"] = value
    else:
        out.card["version"] = DEFAULT_VERSION
        out.convert("$.version", f"no `version`; wrote {DEFAULT_VERSION}: set the agent's real version")


def _provider(raw: JsonObject, out: Imported) -> None:
    p = raw["provider"]
    if isinstance(p, dict):
        org = p.get("organization") if isinstance(p.get("organization"), str) else p.get("name")
        if isinstance(org, str) and org and isinstance(url := p.get("url"), str) and http_url(url):
            if "organization" not in p:
                out.convert("$.provider.name", "`name` to `organization`")
            out.card["provider"] = {"organization": org, "url": url}
            for key in sorted(set(p) - {"organization", "name", "url"}):
                out.drop(member("$.provider", key), "A2A's provider has only organization and url")
            return
    url = p.get("url") if isinstance(p, dict) else None
    hidden = f" (its url: {not_a_url(url)})" if isinstance(url, str) and unshown(url) else ""
    out.drop("$.provider", f"A2A's provider needs an organization and an http(s) url{hidden}")


def _renamed(key: str) -> Converter:
    def run(raw: JsonObject, out: Imported) -> None:
        if isinstance(value := raw[key], str) and value:
            out.card[RENAMED[key]] = value
        else:  # an empty one: every SDK reads it as none
            out.drop(f"$.{key}", "an empty string" if value == "" else "not a string")
    return run


def links(out: Imported, base_url: str | None) -> None:
    """The documentation and icon urls as a card viewer follows them: a
    relative or templated one resolved against the base url, said so; one
    that is still no http(s) URL (nor, for an icon, a `data:image/` one),
    left out, said so (the build refuses it: KNO-CARD-LINK)."""
    for camel_key, key in RENAMED.items():
        url = out.card.get(key)
        if not isinstance(url, str):
            continue
        if (resolved := against_base(url, base_url)) is not None:
            out.convert(f"$.{camel_key}", f"`{shown_url(url)}` resolved against the base url: {shown_url(resolved)}")
            out.card[key] = url = resolved
        if not web_link(url, image=key == "icon_url"):
            del out.card[key]
            out.drop(f"$.{camel_key}", "not an http(s) URL (card viewers show it as a link)"
                     + ("; give --url to resolve relative ones" if url.startswith(("/", "{")) else ""))


def modes(raw: JsonObject, out: Imported) -> None:
    """The default input and output modes; where a card has none, A2A 1.0
    requires some: text/plain, said so (a client read "none" before)."""
    for key, snake in MODES.items():
        found = _strings(raw[key], f"$.{key}", out) if key in raw else None
        if found:
            out.card[snake] = found
        else:
            out.convert(f"$.{key}", "no modes (A2A requires at least one); the blueprint's default text/plain "
                                    "is published: state the agent's real modes")


def extended_card(raw: JsonObject, out: Imported) -> None:
    """0.3's `supportsAuthenticatedExtendedCard`, as every SDK reads it: 1.0's
    `capabilities.extendedAgentCard` unless that says otherwise."""
    flag = raw.get("supportsAuthenticatedExtendedCard")
    if flag is None:
        return
    value = boolean(flag, "$.supportsAuthenticatedExtendedCard", out)
    caps = out.card.setdefault("capabilities", {})
    if value and "extended_agent_card" not in caps:
        caps["extended_agent_card"] = True
    elif value is not None and caps.get("extended_agent_card", value) != value:
        out.drop("$.supportsAuthenticatedExtendedCard", "`capabilities.extendedAgentCard` says otherwise; kept that")
    if not caps:
        del out.card["capabilities"]


def _strings(value: JsonValue, path: str, out: Imported) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        out.convert(path, "a single string to a list")
        return [value]
    if not isinstance(value, list):
        out.drop(path, "not a list of strings")
        return None
    kept = []
    for i, v in enumerate(value):
        if isinstance(v, str) and v:
            kept.append(v)
        else:  # a blueprint's lists hold non-empty strings
            out.drop(f"{path}[{i}]", "an empty string" if v == "" else "not a string")
    return kept


def _capabilities(raw: JsonObject, out: Imported) -> None:
    caps = raw["capabilities"]
    if not isinstance(caps, dict):
        out.drop("$.capabilities", "a list of names, not A2A's capability flags")
        return
    kept: JsonObject = {}
    for key, value in caps.items():
        path = member("$.capabilities", key)
        if key == "extensions":
            continue  # with the top-level ones, in _extensions
        if key not in FLAGS:
            out.drop(path, "not an A2A capability flag")
        elif (flag := boolean(value, path, out)) is not None:
            if key == "stateTransitionHistory" and not flag:
                out.drop(path, "false is its default, and A2A 1.0 has no such flag")
            else:
                kept[FLAGS[key]] = flag
    if kept:
        out.card["capabilities"] = kept


def extensions(raw: JsonObject, out: Imported) -> None:
    found: list[tuple[str, JsonValue]] = []
    caps = raw.get("capabilities")
    if isinstance(caps, dict) and "extensions" in caps:
        found += [(f"$.capabilities.extensions[{i}]", e) for i, e in enumerate(list_of(caps["extensions"]))]
    if "extensions" in raw:
        top = list_of(raw["extensions"])
        found += [(f"$.extensions[{i}]", e) for i, e in enumerate(top)]
        if top:
            out.convert("$.extensions", "extensions at the top level moved to `capabilities.extensions`")
    kept: list[JsonValue] = []
    for path, ext in found:
        if not isinstance(ext, dict) or not isinstance(uri := ext.get("uri"), str) or not uri:
            out.drop(path, "an extension needs a `uri`")
            continue
        if uri == CONTRACT_URI:  # knoc's own entry (a card it built): back into the fields it is made of
            contract(ext.get("params"), f"{path}.params", out)
            regenerated(ext, path, out)
            continue
        if uri.rstrip("/") == SERVICE_CLASS_URI:
            params = ext.get("params")
            cls = params.get("class") if isinstance(params, dict) else None
            if isinstance(cls, str) and cls in SERVICE_CLASSES:
                out.service_class = cls
                out.convert(path, f"the service-class extension to `service_class: {cls}`")
                regenerated(ext, path, out, {"class"})
            else:
                out.drop(path, f"service class `{cls}` is not one of {', '.join(SERVICE_CLASSES)}")
            continue
        entry: JsonObject = {"uri": uri}
        for key in ("description", "required", "params"):
            if key not in ext or ext[key] is None:
                continue
            value = boolean(ext[key], f"{path}.{key}", out) if key == "required" else ext[key]
            ok = {"description": str, "params": dict}.get(key, bool)
            if isinstance(value, ok):
                entry[key] = value
            elif key != "required":
                out.drop(f"{path}.{key}", f"not a {ok.__name__}")
        for key in sorted(set(ext) - {"uri", "description", "required", "params"}):
            out.drop(member(path, key), "not a field of an A2A extension entry")
        kept.append(entry)
    if kept:
        out.card.setdefault("capabilities", {})["extensions"] = kept


def _authentication(raw: JsonObject, out: Imported) -> None:
    """Pre-0.3 `authentication`, which no current SDK reads. Beside
    `securitySchemes` (what they read) it is left out; alone, it becomes the
    schemes and requirement it meant, which they will read: both said."""
    auth = raw["authentication"]
    schemes = auth.get("schemes") if isinstance(auth, dict) else None
    if isinstance(auth, dict) and auth.get("credentials") is not None:
        out.drop("$.authentication.credentials", "it can hold secrets; knoc never carries it into a card")
    if "securitySchemes" in raw:
        out.drop("$.authentication", "pre-0.3 `authentication` is read by no current client, which read "
                                     "`securitySchemes` instead: those are kept")
        return
    listed = schemes if isinstance(schemes, list) else []
    usable = [s for s in listed if isinstance(s, str) and s.lower() in ("bearer", "basic", "digest")]
    if not usable:
        out.drop("$.authentication", "no scheme knoc can map to an A2A security scheme (bearer, basic, digest)")
        return
    if usable != schemes:
        out.drop("$.authentication.schemes", "schemes other than bearer, basic and digest")
    out.card["authentication"] = {"schemes": usable}
    out.convert("$.authentication", "pre-0.3 `authentication`, which current SDKs do not read (they see no "
                                    "requirement): the card now states it as security schemes and a requirement, "
                                    "which they read; check that the agent requires it")


def whole_agent_skill(out: Imported) -> None:
    """A skill standing for the whole agent, for a card that declares none
    (the official SDK reads such cards; A2A 1.0 requires a skill)."""
    sid = slugs.slugify(out.card["name"]) or "agent"
    out.card["skills"] = [{"id": sid, "name": out.card["name"], "description": out.card["description"],
                           "tags": [sid]}]
    out.convert("$.skills", "no skill; A2A requires one, so one standing for the whole agent was written: "
                            "describe what it really offers")


def _skills(raw: JsonObject, out: Imported) -> None:
    skills: list[ImportedSkill] = []
    seen: set[str] = set()
    for i, s in enumerate(list_of(raw["skills"])):
        path = f"$.skills[{i}]"
        if isinstance(s, str) and s.strip():
            s = {"name": s}
            out.convert(path, "a skill given as a string to a skill with that name")
        if not isinstance(s, dict):
            out.drop(path, "not a skill object")
            continue
        sid = given if isinstance(given := s.get("id"), str) and given else None
        name = named if isinstance(named := s.get("name"), str) and named else None
        if sid is None and name is None:
            out.drop(path, "a skill needs an id or a name")
            continue
        if sid is None:
            sid = slugs.slugify(str(name)) or f"skill-{i + 1}"
            out.convert(f"{path}.id", f"no id; made `{sid}` from the name")
        if name is None:
            name = sid
            out.convert(f"{path}.name", "no name; the id stands in")
        if sid in seen:
            out.drop(path, f"skill id `{sid}` appears twice")
            continue
        seen.add(sid)
        skill: ImportedSkill = {"id": sid, "name": name}
        if isinstance(description := s.get("description"), str) and description.strip():
            skill["description"] = description
        else:
            skill["description"] = name
            out.convert(f"{path}.description", "no description; A2A requires one, so the name stands in")
        tags = _strings(s.get("tags"), f"{path}.tags", out)
        if tags:
            skill["tags"] = tags
        else:
            skill["tags"] = [sid]
            out.convert(f"{path}.tags", f"no tags; A2A requires some, so the id stands in: [{sid}]")
        for key, snake in SKILL_LISTS:
            values = _strings(s.get(key), f"{path}.{key}", out)
            if values:
                skill[snake] = values
            elif s.get(key) == [] and key != "examples":  # the SDKs read it apart: none (0.3), or the card's (1.x, JS)
                out.drop(f"{path}.{key}", "an empty list: a2a-sdk 0.3 reads it as no modes, a2a-sdk 1.x and the JS "
                         "SDK as none given, so the card's defaults, which the blueprint's skill takes")
        secured = requirements(s, path, out)
        if secured:
            skill["security"] = secured
        for key in ("securityRequirements", "security"):
            if s.get(key) == [] and not secured:  # OpenAPI's "no credentials here"; a card cannot carry it
                out.drop(f"{path}.{key}", "an empty list: under OpenAPI's rules, this skill needs no credentials, "
                         "but an A2A 1.0 card cannot carry an empty list (ProtoJSON leaves it out), so clients "
                         "read the card's requirements for it; state `[{}]` (no credentials, as an alternative) "
                         "if that is meant")
        for key in sorted(set(s) - SKILL_KEYS):
            out.drop(member(path, key), "not a field of an A2A skill")
        skills.append(skill)
    if not isinstance(raw["skills"], list):
        out.drop("$.skills", "not a list")
    out.card["skills"] = skills


CONVERTERS: dict[str, Converter] = {
    "provider": _provider, **{k: _renamed(k) for k in RENAMED}, "capabilities": _capabilities,
    "authentication": _authentication, "securitySchemes": security_schemes, "skills": _skills,
}


