"""a2a-sdk 1.x (Python): `a2a.client.card_resolver.parse_agent_card`, then
`a2a.utils.signing._canonicalize_agent_card`. The legacy conversion moves
0.3 fields onto their 1.0 places (and drops the 0.3 top-level ones
whether or not it uses them); protobuf's own JSON parser reads the rest,
by camelCase or proto field name, ignoring what the proto lacks."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from google.protobuf.message import Message

from knoc.a2a.readers import proto
from knoc.a2a.readers.common import Unreadable, clean_empty, jcs

_SCHEME_WRAPPERS = {"apiKey": "apiKeySecurityScheme", "http": "httpAuthSecurityScheme",
                    "oauth2": "oauth2SecurityScheme", "openIdConnect": "openIdConnectSecurityScheme",
                    "mutualTLS": "mtlsSecurityScheme"}


def read(card: object) -> Message:
    """The card as the SDK holds it (an `AgentCard` message)."""
    if not isinstance(card, dict):
        raise Unreadable("not a JSON object")
    data = copy.deepcopy(card)  # the conversion edits in place, as the SDK's does
    try:
        _extended_card(data)
        _interfaces(data)
        _security(data)
        return ParseDict(data, proto.card_class()(), ignore_unknown_fields=True)
    except (TypeError, AttributeError, ParseError, ValueError, RecursionError) as exc:
        raise Unreadable(f"a2a-sdk 1.x cannot read it: {str(exc)[:200]}") from None


def payload(card: Mapping[str, object]) -> bytes:
    as_dict = MessageToDict(read(card))
    as_dict.pop("signatures", None)
    return jcs(clean_empty(as_dict))


# The SDK's legacy conversion, step by step. It reads the parsed card by duck
# typing: a value of another shape raises (TypeError, AttributeError) here as
# it does there, and `read` reports that. So each step takes the card untyped.

def _extended_card(data: dict[str, Any]) -> None:
    if data.pop("supportsAuthenticatedExtendedCard", None):
        capabilities = data.setdefault("capabilities", {})
        if "extendedAgentCard" not in capabilities:
            capabilities["extendedAgentCard"] = True


def _interfaces(data: dict[str, Any]) -> None:
    url = data.pop("url", None)
    binding = data.pop("preferredTransport", "JSONRPC")
    version = data.pop("protocolVersion", "0.3.0")
    additional = data.pop("additionalInterfaces", None) or []
    if "supportedInterfaces" not in data and url:
        data["supportedInterfaces"] = [
            {"url": url, "protocolBinding": binding, "protocolVersion": version},
            *({"url": i.get("url"), "protocolBinding": i.get("transport"), "protocolVersion": version}
              for i in additional)]


def _requirements(legacy: list[dict[str, list[str]]]) -> list[dict[str, dict[str, dict[str, list[str]]]]]:
    return [{"schemes": {name: {"list": scopes} for name, scopes in r.items()}} for r in legacy]


def _security(data: dict[str, Any]) -> None:
    legacy = data.pop("security", None)
    if "securityRequirements" not in data and legacy is not None:
        data["securityRequirements"] = _requirements(legacy)
    for skill in data.get("skills", []):
        skill_legacy = skill.pop("security", None)
        if "securityRequirements" not in skill and skill_legacy is not None:
            skill["securityRequirements"] = _requirements(skill_legacy)
    for scheme in (data.get("securitySchemes", {}) or {}).values():
        kind = scheme.pop("type", None)
        if kind in _SCHEME_WRAPPERS:
            if kind == "apiKey" and "in" in scheme:
                scheme["location"] = scheme.pop("in")
            fields = scheme.copy()
            scheme.clear()
            scheme[_SCHEME_WRAPPERS[kind]] = fields
