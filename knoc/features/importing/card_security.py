"""`knoc import`, security: schemes of either A2A shape (0.3's `type`, 1.0's
wrappers) and requirements (0.3's `security`, 1.0's `securityRequirements`,
for the card and for each skill), snake_case. What cannot be kept is a
recorded drop, never a silent one: a lost requirement can make an agent
look open."""

from __future__ import annotations

import json

from knoc.a2a.readers import js, sdk03
from knoc.a2a.readers.common import Unreadable
from knoc.a2a.schemes import TOKEN
from knoc.features.importing.imported import UNFRAGMENTED, Imported, boolean, endpoint_url, list_of, member, not_a_url
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.text import unshown


def security_schemes(raw: JsonObject, out: Imported) -> None:
    schemes = raw["securitySchemes"]
    if not isinstance(schemes, dict):
        out.drop("$.securitySchemes", "not a map of named schemes")
        return
    kept: dict[str, JsonObject] = {}
    for name, s in schemes.items():
        path = member("$.securitySchemes", name)
        scheme = _scheme(s, path, out) if isinstance(s, dict) else None
        if scheme is None:
            out.drop(path, _WHY_NOT.get(str(_kind(s) or s.get("type")) if isinstance(s, dict) else "",
                                        "not a security scheme knoc can carry (apiKey, http, oauth2, "
                                        "openIdConnect, mutualTLS)"))
        else:
            kept[name] = scheme
    if kept:
        out.card["security_schemes"] = kept


# Every member of a 0.3 scheme (A2A 0.3 section 5.5.2, OpenAPI's security scheme object).
_MEMBERS = frozenset({"type", "description", "in", "name", "scheme", "bearerFormat", "flows", "openIdConnectUrl",
                      "oauth2MetadataUrl"})
_INNER = (_MEMBERS - {"type", "in"}) | {"location"}  # a 1.0 wrapper's: its kind is the wrapper's, `in` is `location`
# Why a scheme of a known kind is not carried: what it lacks.
_WHY_NOT = {"apiKey": "an `apiKey` scheme needs `in` (header, query or cookie) and a `name`",
            "http": "an `http` scheme needs a `scheme`, an HTTP authentication scheme's name (`Bearer`, say)",
            "openIdConnect": "an `openIdConnect` scheme needs an absolute http(s) `openIdConnectUrl`",
            "oauth2": "an `oauth2` scheme needs a flow knoc can carry"}

FLOWS = {"authorizationCode": "authorization_code", "clientCredentials": "client_credentials",
         "deviceCode": "device_code"}
FLOW_URLS = {"authorizationCode": "authorizationUrl", "deviceCode": "deviceAuthorizationUrl"}
_FLOW_MEMBERS = {name: {"tokenUrl", "refreshUrl", "scopes", *extra} for name, extra in (
    ("authorizationCode", ("authorizationUrl", "pkceRequired")), ("clientCredentials", ()),
    ("deviceCode", ("deviceAuthorizationUrl",)))}


WRAPPERS = (("apiKeySecurityScheme", "apiKey"), ("httpAuthSecurityScheme", "http"),
            ("oauth2SecurityScheme", "oauth2"), ("openIdConnectSecurityScheme", "openIdConnect"),
            ("mtlsSecurityScheme", "mutualTLS"))


def _scheme(s: JsonObject, path: str, out: Imported) -> JsonObject | None:
    """A 0.3 (`type`) or 1.0 (`httpAuthSecurityScheme`, ...) scheme, snake_case.
    With both, read as a2a-sdk 1.x and 0.3 read it, from the 0.3 fields;
    where the 1.0 wrapper says otherwise (the JS SDK reads that), a warning."""
    wrapper, kind = next(((w, k) for w, k in WRAPPERS if isinstance(s.get(w), dict)), ("", ""))
    for key in sorted(set(s) - _MEMBERS - {w for w, _ in WRAPPERS}):  # no client reads it: said, not kept
        out.drop(member(path, key), "not a field of an A2A security scheme")
    if not wrapper:
        return _fields(s, path, out)
    inner = s[wrapper]
    assert isinstance(inner, dict)
    for key in sorted(set(inner) - _INNER):
        out.drop(member(f"{path}.{wrapper}", key), "not a field of an A2A security scheme")
    as_1_0 = {**inner, "type": kind, "in": inner.get("location", inner.get("in"))}
    if "type" not in s:
        return _fields(as_1_0, f"{path}.{wrapper}", out)
    kept = _fields(s, path, out)
    if _fields(as_1_0, f"{path}.{wrapper}", Imported({})) != kept:
        out.drop(f"{path}.{wrapper}", "it says otherwise than the scheme's 0.3 fields, which a2a-sdk 1.x and 0.3 "
                 "read when `type` is there (the JS SDK reads this wrapper): kept the 0.3 fields")
    return kept


def _fields(s: JsonObject, path: str, out: Imported) -> JsonObject | None:
    """A scheme given as 0.3 fields (`type`, `in`, `flows`, ...), snake_case."""
    kind = s.get("type")
    text = _text(s, "description", path, out)
    desc = {"description": text} if text is not None else {}
    where = s.get("in")
    if isinstance(where, str) and where.lower() in ("header", "query", "cookie") and where != where.lower():
        out.convert(f"{path}.{'location' if 'location' in s else 'in'}", f"`{where}` to `{where.lower()}`, as A2A "
                    "spells it (a2a-sdk 0.3 refuses any other spelling)")
        where = where.lower()
    if kind == "apiKey" and where in ("header", "query", "cookie") and isinstance(s.get("name"), str):
        return {"type": kind, "in": where, "name": s["name"], **desc}
    if kind == "http" and isinstance(scheme := s.get("scheme"), str) and TOKEN.match(scheme):
        bearer = _text(s, "bearerFormat", path, out)
        fmt = {"bearer_format": bearer} if bearer is not None else {}
        return {"type": kind, "scheme": scheme, **fmt, **desc}
    if kind in ("oauth2", "openIdConnect"):
        s = _unfragmented(s, path, out)
    if kind == "openIdConnect" and endpoint_url(s.get("openIdConnectUrl")):
        return {"type": kind, "open_id_connect_url": s["openIdConnectUrl"], **desc}
    if kind == "mutualTLS":
        return {"type": kind, **desc}
    if kind == "oauth2" and isinstance(stated := s.get("flows"), dict):
        flows = {name: f for name, raw in stated.items()
                 if (f := _flow(name, raw, f"{path}.flows.{name}", out)) is not None}
        for name, raw in stated.items():
            if name not in flows:
                urls = raw.items() if isinstance(raw, dict) else ()
                hidden = next((f" (its `{k}`: {not_a_url(u)})" for k, u in urls if k in _ENDPOINTS
                               and isinstance(u, str) and unshown(u)), "")
                out.drop(f"{path}.flows.{name}", "not an OAuth flow knoc can carry (authorization code, client "
                                                 f"credentials, device code, each with http(s) urls){hidden}")
        if not flows:
            return None
        first, *others = flows
        for name in others:  # A2A 1.0 allows one flow per scheme
            out.drop(f"{path}.flows.{name}", f"A2A 1.0 allows one flow per scheme; `{first}` is kept: "
                                             "declare another scheme for this one")
        meta = {"oauth2_metadata_url": s["oauth2MetadataUrl"]} if endpoint_url(s.get("oauth2MetadataUrl")) else {}
        if "oauth2MetadataUrl" in s and not meta:
            out.drop(f"{path}.oauth2MetadataUrl", not_a_url(s["oauth2MetadataUrl"]))
        return {"type": kind, "flows": {FLOWS[first]: flows[first]}, **meta, **desc}
    return None


# The urls of an OAuth scheme and its flows: endpoints, which have no fragment (RFC 6749 3.1, 3.2).
_ENDPOINTS = ("tokenUrl", "authorizationUrl", "deviceAuthorizationUrl", "refreshUrl")


def _unfragmented(s: JsonObject, path: str, out: Imported) -> JsonObject:
    """An OAuth or OpenID Connect scheme with its endpoints' fragments left
    out, each said: the endpoint stays, where refusing its url would drop
    the flow and the requirement with it."""
    def kept(url: JsonValue, at: str) -> JsonValue:
        if isinstance(url, str) and "#" in url and endpoint_url(bare := url.partition("#")[0]):
            out.convert(at, UNFRAGMENTED)
            return bare
        return url

    flows = s.get("flows")
    fixed: JsonObject = {k: kept(v, member(path, k)) if k in ("openIdConnectUrl", "oauth2MetadataUrl") else v
                         for k, v in s.items()}
    if isinstance(flows, dict):
        fixed["flows"] = {name: {k: kept(v, f"{path}.flows.{name}.{k}") if k in _ENDPOINTS else v
                                 for k, v in flow.items()} if isinstance(flow, dict) else flow
                          for name, flow in flows.items()}
    return fixed


def _flow(name: str, flow: JsonValue, path: str, out: Imported) -> JsonObject | None:
    """One OAuth flow, snake_case, or None when knoc cannot carry it."""
    if name not in FLOWS or not isinstance(flow, dict) or not endpoint_url(flow.get("tokenUrl")):
        return None
    if name in FLOW_URLS and not endpoint_url(flow.get(FLOW_URLS[name])):
        return None
    for key in sorted(set(flow) - _FLOW_MEMBERS[name]):
        out.drop(member(path, key), f"not a field of the `{name}` flow")
    kept: JsonObject = {"token_url": flow["tokenUrl"], "scopes": _scopes(flow, f"{path}.scopes", out)}
    if name == "authorizationCode":
        kept["authorization_url"] = flow["authorizationUrl"]
        if "pkceRequired" in flow and (pkce := boolean(flow["pkceRequired"], f"{path}.pkceRequired", out)) is not None:
            kept["pkce_required"] = pkce
    if name == "deviceCode":
        kept["device_authorization_url"] = flow["deviceAuthorizationUrl"]
    if endpoint_url(flow.get("refreshUrl")):
        kept["refresh_url"] = flow["refreshUrl"]
    elif "refreshUrl" in flow:
        out.drop(f"{path}.refreshUrl", not_a_url(flow["refreshUrl"]))
    return kept


def _scopes(flow: JsonObject, path: str, out: Imported) -> JsonObject:
    """A flow's scopes, each name with its description: a list of names is
    read as the JS SDK reads it, and a description that is not a string is
    made one; each said."""
    stated = flow.get("scopes")
    names = [name for name in stated if isinstance(name, str)] if isinstance(stated, list) else []
    if isinstance(stated, list) and len(names) == len(stated):
        out.convert(path, "a list of scope names to a map of each name to an empty description (the JS SDK reads "
                    "the names; a2a-sdk 0.3 and 1.x refuse a list)")
        return {name: "" for name in names}
    if not isinstance(stated, dict):
        if "scopes" in flow:
            out.drop(path, "not a map of scope names to their descriptions")
        return {}
    scopes: JsonObject = {}
    for name, text in stated.items():
        scopes[name] = text if isinstance(text, str) else "" if text is None else json.dumps(text, ensure_ascii=False)
        if not isinstance(text, str):
            out.convert(member(path, name), f"the description `{json.dumps(text, ensure_ascii=False)[:80]}` to the "
                        f"string {json.dumps(scopes[name], ensure_ascii=False)}")
    return scopes


def _text(s: JsonObject, key: str, path: str, out: Imported) -> str | None:
    """The scheme's `key` when it is a string; else None, said when it is there."""
    value = s.get(key)
    if isinstance(value, str):
        return value
    if value is not None:
        out.drop(member(path, key), f"`{json.dumps(value, ensure_ascii=False)[:80]}` is not a string")
    return None


def security(raw: JsonObject, out: Imported) -> None:
    """The card's security requirements, 0.3's `security` or 1.0's
    `securityRequirements`, as `security`; and where the JS SDK or a2a-sdk
    0.3 reads the card's security otherwise than it is kept."""
    kept = requirements(raw, "$", out)
    if kept:
        out.card["security"] = kept
    _other_readings(raw, out)


def _other_readings(raw: JsonObject, out: Imported) -> None:
    """Readings of a card mixing the two shapes. The JS SDK converts only a
    0.3-shaped card (a `url`, no interfaces); another it reads as 1.0, where
    requirements are `securityRequirements` alone, and schemes are wrappers
    (it converts them from proto names when none has a `type`). a2a-sdk 0.3
    reads a scheme with no `type` as mutual TLS."""
    schemes = raw.get("securitySchemes")
    schemes = schemes if isinstance(schemes, dict) else {}
    if not js.is_legacy(raw):
        holders = [("$", raw), *((f"$.skills[{i}]", sk) for i, sk in enumerate(list_of(raw.get("skills")))
                                 if isinstance(sk, dict))]
        for path, holder in holders:
            if list_of(holder.get("security")) and "securityRequirements" not in holder:
                out.convert(f"{path}.security", "the JS SDK reads this card as A2A 1.0 (it reads a card as 0.3 "
                            "only in 0.3's shape: a `url`, and no `supportedInterfaces`), where requirements are "
                            "`securityRequirements`: it reads none here, as if open; kept these (a2a-sdk 1.x and "
                            "0.3 read them), which the built card states as 1.0 does")
        if not js.proto_shaped(raw):
            for name, scheme in schemes.items():
                if isinstance(scheme, dict) and "type" in scheme and not any(w in scheme for w, _ in WRAPPERS):
                    out.convert(member("$.securitySchemes", name), "the JS SDK reads this card as A2A 1.0, where a "
                                "scheme is a wrapper (`httpAuthSecurityScheme`, ...): it reads this one as empty; "
                                "kept it as a2a-sdk 1.x and 0.3 read it")
    try:
        read_03 = sdk03.read(raw).security_schemes or {}
    except Unreadable:  # no 0.3 client can use the card at all
        return
    for name, scheme in schemes.items():
        if isinstance(scheme, dict) and "type" not in scheme and name in read_03 \
                and read_03[name].root.type != _kind(scheme):
            out.convert(member("$.securitySchemes", name), f"a2a-sdk 0.3 reads a scheme with no `type` as "
                        f"{read_03[name].root.type}; kept it as the 1.0 scheme it is (a2a-sdk 1.x and the JS "
                        "SDK read it so), which a 0.3 card built from it states with its `type`")


def _kind(scheme: JsonObject) -> str:
    """A 1.0 scheme's kind, as 0.3's `type` names it."""
    return next((kind for wrapper, kind in WRAPPERS if isinstance(scheme.get(wrapper), dict)), "")


def requirements(raw: JsonObject, path: str, out: Imported) -> list[dict[str, list[str]]]:
    """The requirements (OR of ANDs: scheme name -> scopes) of a card or a
    skill in either shape, naming only schemes that were kept. A card with
    both is read as a2a-sdk 1.x reads it, from `securityRequirements`; where
    0.3's `security` says otherwise, a warning says so. Dropping one
    alternative never happens silently: it could turn "sign in" into "open"."""
    read = [key for key in ("securityRequirements", "security") if key in raw]
    if not read:
        return []
    names = set(out.card.get("security_schemes", {}))
    found = _requirements_of(raw, read[0], path, names, out)
    if len(read) == 2 and (other := _requirements_of(raw, "security", path, names, Imported({}))) != found:
        opened = not found and bool(other)  # one reading requires credentials, the one kept none
        out.drop(f"{path}.security", "it differs from `securityRequirements`, which a2a-sdk 1.x and the JS SDK "
                                     "read (0.3 clients read `security`): kept `securityRequirements`"
                 + (_kept_private(out, "that one requires nothing") if opened else ""))
    return found


def _requirements_of(raw: JsonObject, key: str, path: str, names: set[str],
                     out: Imported) -> list[dict[str, list[str]]]:
    items = list_of(raw[key])
    if not isinstance(raw[key], list) and raw[key] in (None, "", {}):
        out.drop(f"{path}.{key}", "not a list of requirements")
    elif not isinstance(raw[key], list):  # it says something is required, and nothing is kept: never open
        out.drop(f"{path}.{key}", "not a list of requirements" + _kept_private(out, "none is left"))
    kept = []
    for i, item in enumerate(items):
        if key == "securityRequirements" and isinstance(item, dict) and item and "schemes" not in item:
            out.convert(f"{path}.{key}[{i}]", "a requirement in the 0.3 shape (scheme name -> scopes): "
                        "a2a-sdk 1.x reads it as an empty one (no credentials needed); read as the 0.3 shape")
        found = _requirement(item, key)
        lost = sorted(set(found) - names) if found is not None else []
        if found is not None and not lost:
            kept.append(found)
            continue
        why = (f"it needs {', '.join(f'`{n}`' for n in lost)}, a scheme that was not kept" if found is not None
               else "not a requirement (scheme names, each with a list of scopes)")
        if items and not kept and i == len(items) - 1:  # every alternative gone: "sign in" would read "open"
            why += _kept_private(out, "no requirement is left")
        out.drop(f"{path}.{key}[{i}]", why)
    return kept


def _kept_private(out: Imported, why: str) -> str:
    """The blueprint kept from publishing an open card, and the words that say so."""
    out.private = True
    return (f"; {why}, so clients would read the agent as open: the blueprint is written private (`visibility: "
            "private`); state the requirement it enforces, then remove that line to publish it")

def _requirement(item: JsonValue, key: str) -> dict[str, list[str]] | None:
    if key == "securityRequirements" and isinstance(item, dict) and isinstance(schemes := item.get("schemes"), dict):
        # 1.0: {"schemes": {name: {"list": [scopes]}}}; ProtoJSON leaves out an empty list
        item = {n: (v.get("list", []) if isinstance(v, dict) else None) for n, v in schemes.items()}
    if not isinstance(item, dict):  # {} is kept: an alternative that needs no credentials
        return None
    found: dict[str, list[str]] = {}
    for name, scopes in item.items():
        if not isinstance(scopes, list) or not all(isinstance(x, str) for x in scopes):
            return None
        found[str(name)] = [x for x in scopes if isinstance(x, str)]  # each one is
    return found
