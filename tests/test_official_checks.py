"""Every example card, for every target, passes the official A2A checks."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as sdk_v03
from a2a.types import AgentCard
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import MessageToDict, ParseDict
from jsonschema import Draft7Validator

from knoc.a2a.extensions import SERVICE_CLASS_URI
from tests.conftest import compile_example

SCHEMA_V03 = json.loads((Path(__file__).parent / "data/a2a/a2a-v0.3.0.schema.json").read_text())
V03_VALIDATOR = Draft7Validator({"$ref": "#/definitions/AgentCard", "definitions": SCHEMA_V03["definitions"]})


def cards(target: str) -> list[tuple[str, dict[str, Any]]]:
    """Each agent's card (a host's root copy of its primary's card is the same bytes: test_root_copies...)."""
    result = compile_example(target)
    assert result.ok, result.report.sorted()
    return [(path, json.loads(body)) for path, body in result.files.items()
            if path.endswith("/agent-card.json") and path.count("/") > 3]


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_root_copies_are_their_primary_agents_cards(target: str) -> None:
    result = compile_example(target)
    roots = {p: b for p, b in result.files.items() if p.endswith((".well-known/agent-card.json",
                                                                 ".well-known/agent.json")) and p.count("/") == 3}
    assert sorted(roots) == [f"site/{h}/.well-known/{n}" for h in ("agents.possibility.space", "api.possibility.space",
                                                                   "realms.possibility.space")
                             for n in ("agent-card.json", "agent.json")]
    for path, body in roots.items():  # the primaries, named in knoc.toml, and the host's only agent
        slug = {"agents": "catalog-search", "api": "a2a", "realms": "agents/concierge"}[path.split("/")[1].split(".")[0]]
        assert body == result.files[path.replace("/.well-known/", f"/{slug}/.well-known/")]


def ids(items: list[tuple[str, Any]]) -> list[str]:
    return [path.split("/")[-3] for path, _ in items]


def assert_v03_schema(card: dict[str, Any]) -> None:
    errors = [e.message for e in V03_VALIDATOR.iter_errors(card)]
    assert errors == []


def assert_v10_strict(card: dict[str, Any]) -> None:
    message = ParseDict(copy.deepcopy(card), AgentCard())  # unknown keys raise ParseError
    validate_proto_required_fields(message)


V10, V03, COMPAT = cards("1.0"), cards("0.3"), cards("compat")


def test_every_public_agent_has_a_card_per_target() -> None:
    assert len(V10) == len(V03) == len(COMPAT) == 7


@pytest.mark.parametrize("path,card", V10, ids=ids(V10))
def test_v10_cards_parse_strictly_with_required_fields(path: str, card: dict[str, Any]) -> None:
    assert_v10_strict(card)
    assert card["supportedInterfaces"][0]["protocolVersion"] == "1.0"
    assert "url" not in card and "stateTransitionHistory" not in card["capabilities"]


@pytest.mark.parametrize("path,card", V03, ids=ids(V03))
def test_v03_cards_pass_the_official_schema_and_sdk_model(path: str, card: dict[str, Any]) -> None:
    assert_v03_schema(card)
    sdk_v03.AgentCard.model_validate(card)
    assert card["protocolVersion"] == "0.3"


@pytest.mark.parametrize("path,card", COMPAT, ids=ids(COMPAT))
def test_compat_cards_serve_both_generations(path: str, card: dict[str, Any]) -> None:
    assert_v03_schema(card)
    parsed = parse_agent_card(copy.deepcopy(card))
    validate_proto_required_fields(parsed)
    speaking = [i for i in card["supportedInterfaces"] if i["protocolVersion"] == "0.3"]
    assert (card["url"], card["preferredTransport"]) == (speaking[0]["url"], speaking[0]["protocolBinding"])
    assert card["protocolVersion"] == "0.3"  # its 0.3 view sends 0.3 clients where 0.3 is spoken


def test_compat_card_matches_what_the_sdk_server_publishes() -> None:
    """a2a-sdk's own server turns a parsed card back into the dual format; our
    compat card must already be that document (no field added or lost)."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict

    for _, card in COMPAT:
        served = agent_card_to_dict(parse_agent_card(copy.deepcopy(card)))
        assert _normal(served) == _normal(card)


def _normal(card: dict[str, Any]) -> dict[str, Any]:
    # ProtoJSON drops `required: false` and empty scope lists; compare modulo those.
    text = json.dumps(card, sort_keys=True)
    value = json.loads(text)
    for ext in value.get("capabilities", {}).get("extensions", []):
        if ext.get("required") is False:
            del ext["required"]
    for req in value.get("securityRequirements", []):
        for name, scopes in req["schemes"].items():
            if scopes == {"list": []}:
                req["schemes"][name] = {}
    return value


def test_service_class_becomes_the_extension_entry() -> None:
    by_name = {card["name"]: card for _, card in V10}
    entry = {"uri": "https://connect.actex.ai/extensions/service-class", "required": False,
             "params": {"class": "utility"}}
    assert entry in by_name["Schema Steward"]["capabilities"]["extensions"]
    search = by_name["Catalog Search"]  # declares no class: nothing inferred onto the card
    assert SERVICE_CLASS_URI not in [e["uri"] for e in search["capabilities"].get("extensions", [])]


def test_legacy_authentication_maps_to_each_targets_security_fields() -> None:
    v10 = next(c for _, c in V10 if c["name"] == "Possibility Auth Agent")
    v03 = next(c for _, c in V03 if c["name"] == "Possibility Auth Agent")
    assert v10["securitySchemes"] == {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}}
    assert v10["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert v03["securitySchemes"] == {"bearer": {"type": "http", "scheme": "bearer"}}
    assert v03["security"] == [{"bearer": []}]


VAULT = """$schema: agent-blueprint@0.4.0
id: 01KKV1VAV1T0000000000000A7
slug: vault-keeper
type: agent-blueprint
version: 0.1.0
ownership: {context: platform}
a2a_projection:
  name: Vault Keeper
  description: Every security scheme shape A2A knows.
  url: https://agents.example.net/vault/
  version: "0.1.0"
  preferred_transport: HTTP+JSON
  protocol_versions: ["1.0", "0.3"]
  additional_interfaces:
    - {url: "https://agents.example.net/vault/rpc", transport: JSONRPC, protocol_versions: ["0.3"]}
  capabilities: {streaming: true, state_transition_history: true, extended_agent_card: true}
  security_schemes:
    key: {type: apiKey, in: header, name: X-API-Key, description: Static key}
    code:
      type: oauth2
      oauth2_metadata_url: https://auth.example.net/.well-known/oauth-authorization-server
      flows:
        authorization_code:
          authorization_url: https://auth.example.net/authorize
          token_url: https://auth.example.net/token
          scopes: {vault.read: Read secrets}
          pkce_required: true
    device:
      type: oauth2
      flows:
        device_code:
          device_authorization_url: https://auth.example.net/device
          token_url: https://auth.example.net/token
          scopes: {vault.read: Read secrets}
    mtls: {type: mutualTLS}
  security:
    - {key: []}
    - {code: [vault.read], mtls: []}
  skills:
    - {id: open, name: Open, description: Opens the vault., tags: [secrets]}
    - id: seal
      name: Seal
      description: Seals the vault.
      tags: [secrets]
      security: [{device: [vault.read]}, {code: [vault.read]}]
"""


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_every_security_scheme_shape_passes_the_official_checks(repo, target: str) -> None:  # type: ignore[no-untyped-def]
    (repo / "content/agent-blueprints/vault-keeper.kno").write_text(VAULT)
    result = compile_example(target, root=repo)
    assert result.ok, result.report.sorted()
    card = json.loads(result.files["site/agents.example.net/vault/.well-known/agent-card.json"])
    if target in ("0.3", "compat"):
        assert_v03_schema(card)
    if target == "0.3":
        sdk_v03.AgentCard.model_validate(card)
        assert card["supportsAuthenticatedExtendedCard"] is True
        assert card["capabilities"]["stateTransitionHistory"] is True
        assert card["additionalInterfaces"] == [  # the main url first (v0.3 5.6.4)
            {"url": "https://agents.example.net/vault/", "transport": "HTTP+JSON"},
            {"url": "https://agents.example.net/vault/rpc", "transport": "JSONRPC"}]
    if target == "1.0":
        assert_v10_strict(card)
        assert card["capabilities"]["extendedAgentCard"] is True
        assert card["securitySchemes"]["key"] == {"apiKeySecurityScheme": {
            "description": "Static key", "location": "header", "name": "X-API-Key"}}
        assert [(i["url"], i["protocolVersion"]) for i in card["supportedInterfaces"]] == [
            ("https://agents.example.net/vault/", "1.0"), ("https://agents.example.net/vault/", "0.3"),
            ("https://agents.example.net/vault/rpc", "0.3")]
    if target == "compat":
        validate_proto_required_fields(parse_agent_card(copy.deepcopy(card)))
        sdk_v03.AgentCard.model_validate(card)
        assert card["supportsAuthenticatedExtendedCard"] is True  # what a 0.3 client reads
        assert card["additionalInterfaces"] == [  # the main url first (v0.3 5.6.4), then the other 0.3 one
            {"url": "https://agents.example.net/vault/", "transport": "HTTP+JSON"},
            {"url": "https://agents.example.net/vault/rpc", "transport": "JSONRPC"}]
    warnings = [d.message for d in result.report.sorted() if "vault-keeper" in (d.file or "")
                and d.code not in ("KNO-CARD-URL-EXAMPLE", "KNO-COMPAT-JS")]
    assert any(d.code == "KNO-COMPAT-JS" and "vault-keeper" in (d.file or "") for d in result.report.sorted()) \
        == (target == "compat")  # the JS SDK leaves a compat card's schemes unconverted
    left_out = " cannot be carried by an A2A {} card and is left out".format
    unread = ["a2a-sdk 0.2 cannot read agent.json: the scheme `mtls` is mutual TLS, which A2A 0.2 has not, so 0.2 "
              "clients cannot use this agent (0.3 and 1.x clients read it)",
              "a2a-sdk 0.2 ignores a skill's `security` in agent.json: its clients read the card's requirements "
              'for skill `seal`, `[{"key": []}, {"code": ["vault.read"], "mtls": []}]`',
              "a2a-sdk 0.2 ignores `oauth2_metadata_url` of `code` in agent.json: its clients find the OAuth "
              "endpoints in the scheme's flows alone"]
    assert sorted(w for w in warnings if w.startswith("a2a-sdk 0.2")) == sorted(unread)  # agent.json: every target
    warnings = [w for w in warnings if not w.startswith("a2a-sdk 0.2")]
    if target == "0.3":  # what only 1.0 says about security: warned, never silent
        assert warnings == ["`pkce_required` of `code`" + left_out("0.3"),
                            "the scheme `device` (its only flow is A2A 1.0's), and every requirement alternative "
                            "that names it" + left_out("0.3")]
        assert "device" not in card["securitySchemes"]  # no `flows: {}`: a scheme no client could use
        assert card["skills"][1]["security"] == [{"code": ["vault.read"]}]  # the alternative 0.3 can state
    else:  # the 0.3-shaped part (agent.json, compat's 0.3 fields) leaves it out too, and says so
        part = "agent.json (the card 0.2 clients read)" if target == "1.0" else \
            "the card's 0.3 fields (what 0.3 clients read)"
        if target == "1.0":
            assert warnings == ["`state_transition_history`" + left_out(target)] + [
                f"{what} cannot be carried by {part} and is left out of it; 1.0 clients still read it"
                for what in ("`pkce_required` of `code`", "the scheme `device` (its only flow is A2A 1.0's), and "
                             "every requirement alternative that names it")]
        else:  # a2a-sdk 1.x reads a compat card's schemes from their 0.3 fields, so those carry 1.0's too
            assert warnings == ["`state_transition_history`" + left_out(target),
                                "`pkce_required` of `code`: 0.3 clients ignore it (A2A 0.3 has no such flow or "
                                "field); 1.x clients read it",
                                "the scheme `device` has only a flow of A2A 1.0: 0.3 clients cannot use it, so the "
                                "card's 0.3 `security` leaves out every requirement alternative naming it; 1.x "
                                "clients read the scheme, its flow and those requirements"]
            read = MessageToDict(parse_agent_card(copy.deepcopy(card)))["securitySchemes"]
            assert read["code"]["oauth2SecurityScheme"]["flows"]["authorizationCode"]["pkceRequired"] is True
            assert read["device"]["oauth2SecurityScheme"]["flows"]["deviceCode"]["deviceAuthorizationUrl"] == \
                "https://auth.example.net/device"
        legacy = card if target == "compat" else json.loads(
            result.files["site/agents.example.net/vault/.well-known/agent.json"])
        assert legacy["skills"][1]["security"] == [{"code": ["vault.read"]}]  # what a 0.3 client may still use
        assert all("device" not in r for r in legacy["security"])
        assert card["securitySchemes"]["code"]["oauth2SecurityScheme"]["flows"]["authorizationCode"][
            "pkceRequired"] is True
        assert card["securitySchemes"]["device"]["oauth2SecurityScheme"]["flows"]["deviceCode"][
            "deviceAuthorizationUrl"] == "https://auth.example.net/device"
        assert card["skills"][1]["securityRequirements"] == [{"schemes": {"device": {"list": ["vault.read"]}}},
                                                             {"schemes": {"code": {"list": ["vault.read"]}}}]


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_a_requirement_only_a_device_code_flow_meets_never_looks_open(repo, target: str) -> None:  # type: ignore[no-untyped-def]
    """Every alternative needs the device code flow, which 0.3 lacks: the
    0.3 card and compat's 0.3 fields are refused (they would state no
    requirement); under 1.0, agent.json is not written, and the build says why."""
    vault = VAULT.replace("    - {key: []}\n    - {code: [vault.read], mtls: []}\n", "    - {device: [vault.read]}\n")
    (repo / "content/agent-blueprints/vault-keeper.kno").write_text(vault)
    result = compile_example(target, root=repo)
    found = [d for d in result.report.sorted() if "vault-keeper" in (d.file or "")]
    if target == "1.0":
        assert result.ok and "site/agents.example.net/vault/.well-known/agent.json" not in result.files
        [why] = [d for d in found if d.code == "KNO-LEGACY-VIEW"]
        assert why.message.startswith("agent.json is not written: in the 0.3 card it would hold, its security "
                                      "(device needs a flow only A2A 1.0 has)")
        assert "vault-keeper" in result.untwinned
    else:
        [refused] = [d for d in found if d.code == "KNO-PROJECT-AUTH"]
        assert not result.ok and refused.severity.value == "error"
        assert "the 0.3 card would state no requirement at all" in refused.message


def test_an_extended_card_with_no_scheme_to_authenticate_with_is_named(repo) -> None:  # type: ignore[no-untyped-def]
    vault = VAULT[:VAULT.index("  security_schemes:")] + VAULT[VAULT.index("  skills:"):].replace(
        "      security: [{device: [vault.read]}, {code: [vault.read]}]\n", "")
    (repo / "content/agent-blueprints/vault-keeper.kno").write_text(vault)
    result = compile_example(root=repo)
    [found] = [d for d in result.report.sorted() if d.code == "KNO-PROJECT-EXTENDED"]
    assert result.ok and found.file == "content/agent-blueprints/vault-keeper.kno"
    assert found.span is not None and vault.splitlines()[found.span.line - 1].strip().startswith("capabilities:")
    card = json.loads(result.files["site/agents.example.net/vault/.well-known/agent-card.json"])
    assert card["capabilities"]["extendedAgentCard"] is True  # published as authored, and named


UNUSABLE = VAULT.replace("""    mtls: {type: mutualTLS}
""", """    mtls: {type: mutualTLS}
    nameless: {type: apiKey, in: header, name: ""}
    spaced: {type: apiKey, in: cookie, name: "session id"}
    sentence: {type: http, scheme: "Bearer token"}
    scopeless:
      type: oauth2
      flows: {client_credentials: {token_url: "https://auth.example.net/token", scopes: {}}}
""").replace("    - {key: []}\n", "    - {key: []}\n    - {nameless: [], spaced: [], sentence: [], scopeless: []}\n")


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_a_scheme_no_client_can_use_is_refused_at_its_value(repo, target: str) -> None:  # type: ignore[no-untyped-def]
    """A card a2a-sdk 1.x refuses (an empty key name or HTTP scheme, a 1.0
    flow with no scope), or whose key or scheme no client can send, is
    never written: each value is an error at its line."""
    (repo / "content/agent-blueprints/vault-keeper.kno").write_text(UNUSABLE)
    result = compile_example(target, root=repo)
    refused = {d.json_path: d.message for d in result.report.sorted() if d.code == "KNO-PROJECT-AUTH"}
    expected = {"$.a2a_projection.security_schemes.nameless.name", "$.a2a_projection.security_schemes.spaced.name",
                "$.a2a_projection.security_schemes.sentence.scheme"}
    if target != "0.3":  # A2A 0.3's flows may list no scope
        expected.add("$.a2a_projection.security_schemes.scopeless.flows.client_credentials.scopes")
    assert set(refused) == expected and not result.ok, refused
    assert all(d.span is not None and d.span.line > 1 for d in result.report.sorted() if d.code == "KNO-PROJECT-AUTH")


def test_a_flow_with_a_scope_is_what_a2a_sdk_1_reads_as_complete(repo) -> None:  # type: ignore[no-untyped-def]
    """The other side of the check above: the scheme a2a-sdk 1.x refuses
    without a scope, it reads with one."""
    (repo / "content/agent-blueprints/vault-keeper.kno").write_text(VAULT.replace("""    mtls: {type: mutualTLS}
""", """    mtls: {type: mutualTLS}
    scoped:
      type: oauth2
      flows: {client_credentials: {token_url: "https://auth.example.net/token", scopes: {vault.read: Read}}}
"""))
    result = compile_example("1.0", root=repo)
    assert result.ok, result.report.sorted()
    card = json.loads(result.files["site/agents.example.net/vault/.well-known/agent-card.json"])
    validate_proto_required_fields(parse_agent_card(copy.deepcopy(card)))
    empty = copy.deepcopy(card)
    empty["securitySchemes"]["scoped"]["oauth2SecurityScheme"]["flows"]["clientCredentials"]["scopes"] = {}
    with pytest.raises(Exception, match="Validation failed"):
        validate_proto_required_fields(parse_agent_card(empty))
