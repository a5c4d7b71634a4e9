"""What no card signature protects. Every A2A SDK removes empty strings,
lists and objects before it canonicalizes a card (section 8.4.1), so an
empty value whose presence a client reads can be deleted from a signed card
and every signature still verifies. Such values are where the key is data:
a security requirement with no scopes (or an empty one, the "or no
authentication" alternative), an OAuth flow with no scopes or a scope
with no description, a mutual TLS scheme with no description (nothing
else of it is written), an empty value in an extension's params. An
empty field of the card itself (`description: ""`) reads the same as a
missing one in every SDK, so it is not listed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from knoc.a2a.empty import clean_empty
from knoc.diagnostics.source import JsonPath


def unprotected(card: Mapping[str, object]) -> list[tuple[JsonPath, str]]:
    """(path in the card's source fields, what a client would lose) for each
    value of `card` (an agent's card fields as authored) that a copy
    without it verifies as well."""
    found = list(_requirements(("security",), card.get("security")))
    legacy = card.get("authentication")
    if isinstance(legacy, dict) and isinstance(legacy.get("schemes"), list):
        found += [(("authentication", "schemes", j), f"the requirement of `{name}` (it has no scopes)")
                  for j, name in enumerate(legacy["schemes"])]
    for i, skill in enumerate(_list(card.get("skills"))):
        if isinstance(skill, dict):
            found += _requirements(("skills", i, "security"), skill.get("security"))
    for name, scheme in _dict(card.get("security_schemes")).items():
        if _dict(scheme).get("type") == "mutualTLS" and clean_empty(_dict(scheme).get("description")) is None:
            found.append((("security_schemes", name), f"the scheme `{name}` (mutual TLS with no description: "
                          "nothing of it is left to sign; give it a description)"))
        for flow, spec in _dict(_dict(scheme).get("flows")).items():
            if not _dict(_dict(spec).get("scopes")):
                found.append((("security_schemes", name, "flows", flow), f"the flow `{flow}` of `{name}` (it lists "
                              "no scopes, which A2A 1.0 requires: a2a-sdk 1.x calls such a card not "
                              "spec-compliant as it signs or verifies it)"))
            found += [(("security_schemes", name, "flows", flow, "scopes", scope), f"the scope `{scope}` "
                       "(its description is empty)")
                      for scope, text in _dict(_dict(spec).get("scopes")).items() if clean_empty(text) is None]
    for i, extension in enumerate(_list(_dict(card.get("capabilities")).get("extensions"))):
        params = _dict(_dict(extension).get("params"))
        found += [(("capabilities", "extensions", i, "params", *path), "an empty value in the extension's params")
                  for path in _empty_inside(params)]
    return found


# Where a published card's empty values are data: its security requirements and schemes (names,
# scopes) and its extensions' params, under every name an SDK reads them by.
_SECURITY = ("securityRequirements", "security_requirements", "security", "securitySchemes", "security_schemes")


def in_card(card: Mapping[str, object]) -> list[JsonPath]:
    """Where a card as published (any A2A version) holds a value no
    signature covers: an empty list or object in its security requirements
    or schemes (a requirement with no scopes, a mutual TLS scheme with
    nothing else), an empty scope description (its scope goes with it), an
    empty value in an extension's params. A copy without it, or with it
    replaced by another such value, verifies as well."""
    found: list[JsonPath] = []
    holders = [((), card), *((("skills", i), s) for i, s in enumerate(_list(card.get("skills"))))]
    for at, holder in holders:
        for key in _SECURITY:
            if key in _dict(holder):
                found += _empties(_dict(holder)[key], (*at, key))
    for i, extension in enumerate(_list(_dict(card.get("capabilities")).get("extensions"))):
        if "params" in _dict(extension):
            found += _empties(_dict(extension)["params"], ("capabilities", "extensions", i, "params"), data=True)
    return found


def _empties(value: object, path: JsonPath, data: bool = False) -> list[JsonPath]:
    """The outermost empty values in `value`: containers, and strings where
    the key beside them is data (a scope's, a param's)."""
    if clean_empty(value) is None:
        return [path] if isinstance(value, (dict, list)) or data else []
    members = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [p for k, v in members for p in _empties(v, (*path, k), data or k == "scopes")]


def _requirements(path: JsonPath, requirements: object) -> Iterator[tuple[JsonPath, str]]:
    for j, requirement in enumerate(_list(requirements)):
        if requirement == {}:
            yield (*path, j), "an empty requirement (no authentication, as an alternative)"
        for name, scopes in _dict(requirement).items():
            if clean_empty(scopes) is None:
                yield (*path, j, name), f"the requirement of `{name}` (it has no scopes)"


def _empty_inside(value: object, path: JsonPath = ()) -> Iterator[JsonPath]:
    """The paths of the empty values inside open data (a map or list whose
    members are data, not fields)."""
    members = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, member in members:
        if clean_empty(member) is None:
            yield (*path, key)
        else:
            yield from _empty_inside(member, (*path, key))


def _dict(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
