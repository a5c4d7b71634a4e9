"""`knoc import`, names: a card may name its fields the ProtoJSON way
(camelCase) or by the proto's own field names (snake_case: a2a-sdk 0.3
and 1.x, and the JS SDK, read both). Before anything else, every field of
the card is renamed to camelCase, walking the card's structure (the
messages of `lf.a2a.v1.AgentCard`, and the fields only 0.3 has), so a map's
keys (scheme names, scopes) and an extension's params are never touched.
Where a card gives one field under both names, the camelCase one is read,
as the JS SDK and a2a-sdk 0.3 do (a2a-sdk 1.x reads the later of the two),
and a warning says so."""

from __future__ import annotations

import functools

from pydantic.alias_generators import to_camel

from knoc.a2a.readers import proto
from knoc.features.importing.imported import Imported, member
from knoc.rules.json import JsonObject, JsonValue

# The fields only 0.3 has, by where they sit (its scheme is a flat object with `type`).
_EXTRA_0_3: dict[str, dict[str, str | None]] = {
    "AgentCard": {"url": None, "preferred_transport": None, "additional_interfaces": "Interface03",
                  "protocol_version": None, "supports_authenticated_extended_card": None, "security": None},
    "AgentCapabilities": {"state_transition_history": None},
    "AgentSkill": {"security": None},
    "Interface03": {"url": None, "transport": None},
    "Scheme03": {"type": None, "description": None, "in": None, "name": None, "scheme": None, "bearer_format": None,
                 "flows": "OAuthFlows", "oauth2_metadata_url": None, "open_id_connect_url": None},
}


@functools.cache
def _fields(kind: str) -> dict[str, tuple[str, str | None]]:
    """snake_case name -> (camelCase name, what its value is: a message, "map:<kind>", "struct" or None)."""
    found: dict[str, tuple[str, str | None]] = {}
    if kind in ("Interface03", "Scheme03"):
        return {n: (to_camel(n), child) for n, child in _EXTRA_0_3[kind].items()}
    message = proto.message(kind)
    for field in message.fields:
        child: str | None = None
        sub = field.message_type
        if sub is not None and sub.GetOptions().map_entry:
            value = sub.fields_by_name["value"].message_type
            child = f"map:{value.name}" if value is not None else None
        elif sub is not None:
            child = "struct" if sub.full_name == "google.protobuf.Struct" else sub.name
        found[field.name] = (field.json_name, child)
    found.update({n: (to_camel(n), child) for n, child in _EXTRA_0_3.get(kind, {}).items()})
    if kind == "SecurityScheme":  # a 0.3 scheme has `type` and flat fields; read both shapes
        found.update(_fields("Scheme03"))
    return found


def camel(raw: JsonObject, out: Imported) -> JsonObject:
    """The card with every field named in camelCase."""
    renamed = _walk(raw, "AgentCard", "$", out)
    return renamed if isinstance(renamed, dict) else raw


def _walk(value: JsonValue, kind: str | None, path: str, out: Imported) -> JsonValue:
    if kind is None or kind == "struct":
        return value
    if kind.startswith("map:"):
        inner = kind[4:]
        if not isinstance(value, dict):
            return value
        return {k: _walk(v, inner, member(path, k), out) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, kind, f"{path}[{i}]", out) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    fields = _fields(kind)
    by_camel = {c: (n, child) for n, (c, child) in fields.items()}
    result: JsonObject = {}
    for key, item in value.items():
        camel_name, child = (fields[key] if key in fields else (key, by_camel.get(key, (key, None))[1]))
        if camel_name != key and camel_name in value:
            if value[camel_name] != item:
                keys = list(value)
                later = keys.index(key) > keys.index(camel_name)  # a2a-sdk 1.x reads the later of the two
                out.drop(member(path, key), f"the card also has `{camel_name}`, which the JS SDK and a2a-sdk 0.3 read"
                         + (", while a2a-sdk 1.x reads this one (the later of the two): kept `" + camel_name + "`"
                            if later else ", as a2a-sdk 1.x does (the later of the two)"))
            continue
        result[camel_name] = _walk(item, child, f"{path}.{camel_name}", out)
    return result
