"""@a2a-js/sdk 1.x: `verifyAgentCardSignature`, whose payload is
`AgentCard.toJSON(AgentCard.fromJSON(card))` of its ts-proto model, empty
values removed, JCS. ts-proto reads each field by its camelCase name, else
its proto name, and coerces what it finds (`String(x)`, `Boolean(x)`);
it writes back only what differs from the field's default. Both are
followed here over the same proto descriptor, with JavaScript's own
coercions, and objects of the same shape as ts-proto's (camelCase
properties; a oneof as `{$case, value}`).

A JS client verifies one of two things: the card as fetched
(`payload`), or the card its resolver handed it (`resolved_payload`:
`DefaultAgentCardResolver.normalizeAgentCard` with `legacyCompat`, which
converts a 0.3-shaped card, and turns a card whose security is
proto-shaped into a model object, whose security schemes the verifier's
second `fromJSON` no longer finds)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Final

import rfc8785
from google.protobuf.descriptor import Descriptor, FieldDescriptor, OneofDescriptor

from knoc.a2a.readers import proto
from knoc.a2a.readers.common import Unreadable, clean_empty, jcs


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = _Undefined()  # JavaScript's undefined: a property that is not there


def payload(card: Mapping[str, object]) -> bytes:
    """What `verifyAgentCardSignature` verifies, given the card as fetched."""
    return _canonical(card)


def resolved_payload(card: Mapping[str, object]) -> bytes:
    """What it verifies, given the card a JS client resolved (`client.getAgentCard(..., verify)`)."""
    if is_legacy(card):
        return _canonical(_to_core(card))
    return _canonical(_from_json(proto.message("AgentCard"), card) if proto_shaped(card) else card)


def is_legacy(card: object) -> bool:
    """`isLegacyAgentCard`: the resolver's test for a 0.3-shaped card."""
    if not isinstance(card, dict):
        return False
    interfaces = card.get("supportedInterfaces", UNDEFINED)
    if isinstance(interfaces, list) and interfaces:
        return False
    if isinstance(card.get("url"), str) and "supportedInterfaces" not in card:
        return True
    if any(k in card for k in ("preferredTransport", "additionalInterfaces", "supportsAuthenticatedExtendedCard")):
        return True
    version = card.get("protocolVersion")
    return isinstance(version, str) and _legacy_version(version)


def proto_shaped(card: Mapping[str, object]) -> bool:
    """`isProtoAgentCard`: security requirements with `schemes`, or schemes without `type`."""
    def proto_security(value: object) -> bool:
        return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "schemes" in value[0]

    schemes = card.get("securitySchemes")
    if _js_truthy(schemes) and _is_object(schemes):
        values = [v for _, v in _entries(schemes)]
        if values and _js_truthy(values[0]) and isinstance(values[0], (dict, list)) \
                and not (isinstance(values[0], dict) and "type" in values[0]):
            return True
    if proto_security(card.get("security")):
        return True
    skills = card.get("skills")
    return isinstance(skills, list) and any(isinstance(s, dict) and proto_security(s.get("security")) for s in skills)


def _canonical(card: object) -> bytes:
    model = _from_json(proto.message("AgentCard"), card)
    written = _to_json(proto.message("AgentCard"), model)
    written.pop("signatures", None)
    return jcs(clean_empty(written) or {})


# --- ts-proto's fromJSON / toJSON -------------------------------------------------

def _get(value: object, key: str) -> object:
    """`value[key]` of a parsed JSON value (a property of an object; arrays
    and scalars have none of a card's field names)."""
    if value is None or value is UNDEFINED:
        raise Unreadable(f"@a2a-js/sdk cannot read it: a null where an object belongs (reading `{key}`)")
    return value.get(key, UNDEFINED) if isinstance(value, dict) else UNDEFINED


def _is_set(value: object) -> bool:
    return value is not None and value is not UNDEFINED


def _is_object(value: object) -> bool:
    return isinstance(value, (dict, list))


def _entries(value: object) -> list[tuple[str, object]]:
    """`Object.entries` of an object or an array (what `_is_object` holds of)."""
    if isinstance(value, dict):
        return list(value.items())
    assert isinstance(value, list), type(value)
    return [(str(i), v) for i, v in enumerate(value)]


def _first(obj: object, field: FieldDescriptor, test: Callable[[object], bool]) -> object:
    """The field's value by its JSON name, else its proto name, if `test` holds."""
    for name in dict.fromkeys((field.json_name, field.name)):
        value = _get(obj, name)
        if test(value):
            return value
    return UNDEFINED


def _from_json(message: Descriptor, obj: object) -> dict[str, object]:
    """`Message.fromJSON(obj)`: an object of camelCase properties (a oneof:
    one property named for it, `{"$case": member, "value": ...}`)."""
    out: dict[str, object] = {}
    for field in message.fields:
        oneof = _real_oneof(field)
        if oneof is not None:
            if oneof.name not in out:
                out[oneof.name] = next(({"$case": m.json_name, "value": _from_json(_message(m), v)}
                                        for m in oneof.fields if (v := _first(obj, m, _is_set)) is not UNDEFINED),
                                       UNDEFINED)
            continue
        out[field.json_name] = _field_from_json(field, obj)
    return out


def _field_from_json(field: FieldDescriptor, obj: object) -> object:
    if _is_map(field):
        found = _first(obj, field, _is_object)
        value_field = _message(field).fields_by_name["value"]
        return {} if found is UNDEFINED else {k: _value_from_json(value_field, v) for k, v in _entries(found)}
    if _repeated(field):
        found = _first(obj, field, lambda v: isinstance(v, list))
        return [_value_from_json(field, v) for v in found] if isinstance(found, list) else []
    if _is_struct(field):
        return _first(obj, field, _is_object)
    found = _first(obj, field, _is_set)
    if found is UNDEFINED:
        return UNDEFINED if field.has_presence else _default(field)
    return _value_from_json(field, found)


def _value_from_json(field: FieldDescriptor, value: object) -> object:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return value if _is_struct(field) else _from_json(_message(field), value)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return js_boolean(value)
    return js_string(value)


def _to_json(message: Descriptor, model: Mapping[str, object]) -> dict[str, object]:
    """`Message.toJSON(model)`: each field that differs from its default."""
    obj: dict[str, object] = {}
    for field in message.fields:
        oneof = _real_oneof(field)
        if oneof is not None:
            chosen = model.get(oneof.name, UNDEFINED)
            if isinstance(chosen, dict) and chosen.get("$case") == field.json_name:
                obj[field.json_name] = _to_json(_message(field), chosen["value"])
            continue
        value = model.get(field.json_name, UNDEFINED)
        if _is_map(field):
            value_field = _message(field).fields_by_name["value"]
            if isinstance(value, dict) and value:  # fromJSON made each map an object
                obj[field.json_name] = {k: _value_to_json(value_field, v) for k, v in value.items()}
        elif _repeated(field):
            if isinstance(value, list) and value:  # and each repeated field an array
                obj[field.json_name] = [_value_to_json(field, v) for v in value]
        elif value is not UNDEFINED and (field.has_presence or value != _default(field)):
            obj[field.json_name] = _value_to_json(field, value)
    return obj


def _value_to_json(field: FieldDescriptor, value: object) -> object:
    if field.type == FieldDescriptor.TYPE_MESSAGE and not _is_struct(field):
        assert isinstance(value, dict), field.full_name  # a model fromJSON made
        return _to_json(_message(field), value)
    return value


def _real_oneof(field: FieldDescriptor) -> OneofDescriptor | None:
    """The field's oneof, but not the one proto3 makes up for an `optional` field."""
    oneof = field.containing_oneof
    return None if oneof is None or oneof.name == f"_{field.name}" else oneof


def _repeated(field: FieldDescriptor) -> bool:
    return bool(field.is_repeated)


def _message(field: FieldDescriptor) -> Descriptor:
    """The message type of a message field."""
    message = field.message_type
    assert message is not None, field.full_name
    return message


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and bool(_message(field).GetOptions().map_entry)


def _is_struct(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and _message(field).full_name == "google.protobuf.Struct"


def _default(field: FieldDescriptor) -> bool | str:
    return False if field.type == FieldDescriptor.TYPE_BOOL else ""


# --- JavaScript's coercions ----------------------------------------------------------

def js_string(value: object) -> str:
    """`String(value)` of a parsed JSON value."""
    if isinstance(value, str):
        return value
    if value is None or value is UNDEFINED:
        return "null" if value is None else "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _js_number(value)
    if isinstance(value, list):  # Array.prototype.toString: null and undefined items are empty
        return ",".join("" if v is None or v is UNDEFINED else js_string(v) for v in value)
    return "[object Object]"


def js_boolean(value: object) -> bool:
    """`Boolean(value)`: false only for false, 0, "", null and undefined."""
    if value is None or value is UNDEFINED or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    return True


def _js_number(value: float) -> str:
    """ECMAScript's Number::toString, which JCS (RFC 8785) also uses."""
    if isinstance(value, int) and abs(value) >= 1 << 53:
        value = float(value)
    return rfc8785.dumps(value).decode("ascii")


def _js_truthy(value: object) -> bool:
    return js_boolean(value)


# --- the 0.3 conversion of the resolver (`toCoreAgentCard`) -----------------------------

def _legacy_version(version: str) -> bool:
    """`isLegacyVersion`: a version from 0.3 up to (not including) 1.0."""
    trimmed = version.strip(_JS_SPACE)
    if not trimmed:
        return True
    parts = trimmed.split(".")
    major, minor = _parse_int(parts[0]), _parse_int(parts[1]) if len(parts) > 1 else 0
    if major is None or minor is None:
        return False
    return (0, 3) <= (major, minor) < (1, 0)


# What `String.prototype.trim` and `parseInt` skip: ECMAScript's white space and line terminators (not
# Python's `isspace`, which takes U+001C-U+001F and U+0085, and leaves the byte-order mark).
_JS_SPACE = ("\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
             + "\u2028\u2029\u202f\u205f\u3000\ufeff")


def _parse_int(text: str) -> int | None:
    """`Number.parseInt(text, 10)` when finite and not below 0 (`-0` is not), else None."""
    found = re.match(r"([+-]?)0*([0-9]+)", text.lstrip(_JS_SPACE))  # zeros first: int() reads 4,300 digits
    if found is None or float(found[2]) == math.inf or (found[1] == "-" and found[2] != "0"):
        return None
    return int(found[2])


def _nullish(value: object, default: object) -> object:
    """`value ?? default`."""
    return default if value is None or value is UNDEFINED else value


def _require_array(value: object, path: str) -> list[object]:
    if not isinstance(value, list):
        raise Unreadable(f"@a2a-js/sdk cannot convert it: {path} is required and must be an array")
    return value


def _spread(value: object, path: str) -> list[object]:
    """`[...value]`: an array's items, a string's characters."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):
        return list(value)
    raise Unreadable(f"@a2a-js/sdk cannot convert it: {path} is not iterable")


def _map(value: object, path: str) -> list[object]:
    """`value.map(...)`: only an array has it."""
    if not isinstance(value, list):
        raise Unreadable(f"@a2a-js/sdk cannot convert it: {path} is not an array")
    return value


def _to_core(card: Mapping[str, object]) -> dict[str, object]:
    g = card.get
    additional = g("additionalInterfaces")
    version = g("protocolVersion")
    interfaces = [{"url": g("url", UNDEFINED), "protocolBinding": _nullish(g("preferredTransport"), "JSONRPC"),
                   "tenant": "", "protocolVersion": version if _js_truthy(version) else "0.3"}]
    if _is_set(additional):
        interfaces += [{"url": _get(i, "url"), "protocolBinding": _get(i, "transport"), "tenant": "",
                        "protocolVersion": "0.3"} for i in _map(additional, "additionalInterfaces")]
    caps = g("capabilities")
    if caps is None or not _is_object(caps):
        raise Unreadable("@a2a-js/sdk cannot convert it: agentCard.capabilities is required")
    extensions = _get(caps, "extensions")
    capabilities = {"streaming": _get(caps, "streaming"), "pushNotifications": _get(caps, "pushNotifications"),
                    "extensions": [_extension(e) for e in _map(extensions, "capabilities.extensions")]
                    if _js_truthy(extensions) else [], "extendedAgentCard": UNDEFINED}
    if "supportsAuthenticatedExtendedCard" in card:
        capabilities["extendedAgentCard"] = card["supportsAuthenticatedExtendedCard"]
    provider = g("provider")
    schemes = g("securitySchemes")
    security = g("security")
    core = {
        "name": g("name", UNDEFINED), "description": g("description", UNDEFINED),
        "supportedInterfaces": interfaces,
        "provider": {"url": _get(provider, "url"), "organization": _get(provider, "organization")}
        if _js_truthy(provider) else UNDEFINED,
        "version": g("version", UNDEFINED), "capabilities": capabilities,
        "securitySchemes": _schemes(schemes),
        "securityRequirements": [_requirement(r) for r in _map(security, "security")] if _js_truthy(security) else [],
        "defaultInputModes": _spread(_require_array(g("defaultInputModes"), "agentCard.defaultInputModes"), ""),
        "defaultOutputModes": _spread(_require_array(g("defaultOutputModes"), "agentCard.defaultOutputModes"), ""),
        "skills": [_skill(s) for s in _require_array(g("skills"), "agentCard.skills")],
    }
    for key in ("documentationUrl", "iconUrl"):
        if key in card:
            core[key] = card[key]
    return {k: v for k, v in core.items() if v is not UNDEFINED}


def _schemes(schemes: object) -> dict[str, object]:
    """`Object.entries(securitySchemes)` converted (a string's entries are its
    characters, none of which converts)."""
    if not _js_truthy(schemes):
        return {}
    if isinstance(schemes, str):
        return {str(i): _scheme(ch) for i, ch in enumerate(schemes)}
    return {k: _scheme(s) for k, s in _entries(schemes)} if _is_object(schemes) else {}


def _extension(e: object) -> dict[str, object]:
    return {"uri": _get(e, "uri"), "description": _nullish(_get(e, "description"), ""),
            "required": _nullish(_get(e, "required"), False), "params": _get(e, "params")}


def _skill(s: object) -> dict[str, object]:
    examples, inputs, outputs, security = (_get(s, k) for k in ("examples", "inputModes", "outputModes", "security"))
    return {"id": _get(s, "id"), "name": _get(s, "name"), "description": _get(s, "description"),
            "tags": _spread(_require_array(_get(s, "tags"), "skill.tags"), "skill.tags"),
            "examples": _spread(examples, "skill.examples") if _js_truthy(examples) else [],
            "inputModes": _spread(inputs, "skill.inputModes") if _js_truthy(inputs) else [],
            "outputModes": _spread(outputs, "skill.outputModes") if _js_truthy(outputs) else [],
            "securityRequirements": [_requirement(r) for r in _map(security, "skill.security")]
            if _js_truthy(security) else []}


def _requirement(r: object) -> dict[str, object]:
    if r is None:
        raise Unreadable("@a2a-js/sdk cannot convert it: a null security requirement")
    pairs = _entries(r) if _is_object(r) else [(str(i), c) for i, c in enumerate(r)] if isinstance(r, str) else []
    return {"schemes": {name: {"list": _spread(scopes, "scopes")} for name, scopes in pairs}}


def _scheme(s: object) -> dict[str, object]:
    """`toCoreSecurityScheme`: its result has a `scheme` key that
    `SecurityScheme.fromJSON` does not read, so it only has to succeed."""
    kind = _get(s, "type")
    if kind not in ("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"):
        raise Unreadable(f"@a2a-js/sdk cannot convert it: unsupported v0.3 security scheme type {js_string(kind)}")
    if kind == "oauth2":
        flows = _get(s, "flows")
        if not any(_js_truthy(_get(flows, f)) for f in ("authorizationCode", "clientCredentials", "implicit",
                                                         "password")):
            raise Unreadable("@a2a-js/sdk cannot convert it: OAuthFlows must declare at least one flow")
    return {"scheme": {}}
