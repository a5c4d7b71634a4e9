"""`knoc import` keeps what clients read. Every real card of the corpus
(tests/data/cards/wild, sources in SOURCES.md) is imported, built for 1.0
and for compat, and read by a2a-sdk 1.3 before and after: its interfaces
(binding, url, Major.Minor version), security schemes and requirements,
default modes and documentation url come out alike, or each difference is
a warning of the import naming the JSON path of what changed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.client.client_factory import ClientFactory
from google.protobuf.json_format import MessageToDict

from knoc.a2a.protocol import major_minor
from knoc.config import load_config
from knoc.incremental.driver import compile_repo
from tests.conftest import Knoc, json_diags
from tests.test_import import PUBLISHED, WILD, imported_cards

# What a client reads, by aspect, and the source paths whose warning may account for a difference.
ASPECTS = {
    "picked": ("$.url", "$.supportedInterfaces", "$.additionalInterfaces"),
    "interfaces": ("$.url", "$.supportedInterfaces", "$.supported_interfaces", "$.additionalInterfaces",
                   "$.preferredTransport", "$.protocolVersion"),
    "schemes": ("$.securitySchemes", "$.security_schemes", "$.authentication"),
    "requirements": ("$.security", "$.securityRequirements", "$.security_requirements", "$.securitySchemes",
                     "$.security_schemes", "$.authentication"),
    "input modes": ("$.defaultInputModes", "$.default_input_modes"),
    "output modes": ("$.defaultOutputModes", "$.default_output_modes"),
    "documentation": ("$.documentationUrl", "$.documentation_url"),
    "provider": ("$.provider",),
}


def read(card: dict[str, Any]) -> dict[str, Any] | None:
    """What a2a-sdk 1.3 reads of a card, by aspect (None: it cannot read it)."""
    try:
        read_card = parse_agent_card(copy.deepcopy(card))
    except Exception:  # the SDK's verdict: it cannot read this card
        return None
    parsed = MessageToDict(read_card)
    interface_list = list(read_card.supported_interfaces)
    picks = {}  # the interface a2a-sdk 1.3's client factory calls, for each binding a client may speak
    for binding in sorted({i.protocol_binding for i in interface_list}):
        best = ClientFactory._find_best_interface(interface_list, protocol_bindings=[binding])
        picks[binding] = (best.url.lower().rstrip("/"), best.tenant) if best is not None else None
    interfaces = sorted({(i.get("protocolBinding", ""), i.get("url", ""), i.get("tenant", ""),
                          major_minor(i["protocolVersion"]) if i.get("protocolVersion") else "")
                         for i in parsed.get("supportedInterfaces", [])})
    requirements = sorted(json.dumps(r.get("schemes", {}), sort_keys=True) for r in parsed.get("securityRequirements", []))
    first = parsed.get("supportedInterfaces", [{}])[0]  # what a client that takes the first it speaks calls
    first_url = str(first.get("url", "")).lower().rstrip("/")  # the same interface, however its url is spelled
    return {"interfaces": interfaces, "first": (first.get("protocolBinding"), first_url, first.get("tenant")),
            "picked": picks,
            "schemes": parsed.get("securitySchemes", {}), "requirements": requirements,
            "input modes": parsed.get("defaultInputModes", []), "output modes": parsed.get("defaultOutputModes", []),
            "documentation": parsed.get("documentationUrl"), "provider": parsed.get("provider")}


def warned_paths(repo: Path, knoc: Knoc) -> dict[str, list[str]]:
    """Each corpus file's import warnings, by the JSON path they name (a
    card with no url of its own imported with `--url`, as `imported_cards` does)."""
    _, out, _ = knoc("import", *map(str, WILD), "--format", "json", "--force", root=repo)
    diags = json_diags(out)
    for name in [d["file"] for d in diags if d["code"] == "KNO-IMPORT-NOT-CARD" and "--url" in d["message"]]:
        diags += json_diags(knoc("import", name, "--url", f"https://imported.example/{Path(name).stem}", "--force",
                                 "--format", "json", root=repo)[1])
    found: dict[str, list[str]] = {}
    for d in diags:
        if d.get("json_path"):
            found.setdefault(Path(d["file"]).name, []).append(d["json_path"])
    return found


@pytest.mark.parametrize("target", ["1.0", "compat"])
def test_a2a_sdk_reads_the_rebuilt_card_as_the_original_or_a_warning_says_why(repo: Path, knoc: Knoc,
                                                                               target: str) -> None:
    built = imported_cards(repo, knoc, target)
    warned = warned_paths(repo, knoc)
    unexplained = []
    compared = 0
    for path in PUBLISHED:
        before = read(json.loads(path.read_text(encoding="utf-8")))
        if before is None:
            continue
        after = read(built[path.name])
        assert after is not None, path.name  # knoc's card is always readable
        compared += 1
        for aspect, sources in ASPECTS.items():
            if before[aspect] != after[aspect] and not any(w.startswith(sources) for w in warned.get(path.name, [])):
                unexplained.append((path.name, aspect, before[aspect], after[aspect]))
    assert compared >= 15
    assert not unexplained, "\n".join(map(str, unexplained))


def _card(**fields: Any) -> dict[str, Any]:
    return {"name": "Mixed", "description": "A card of odd mixes.", "version": "1.0.0",
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "Does it.", "tags": ["t"]}], **fields}


BEARER = {"securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "bearer"}}}}
MIXES = {
    # a2a-sdk 1.x reads securityRequirements and ignores `security`: "bearer required", not "or open"
    "requirements-disagree": _card(**BEARER, supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        securityRequirements=[{"schemes": {"bearer": {}}}], security=[{}]),
    "tenant": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/a2a", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0",
         "tenant": "acme"}]),
    "trailing-slash": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/rest/", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]),
    "grpc-wss-custom": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "grpc.mix.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "wss://mix.example.com/ws", "protocolBinding": "WEBSOCKET", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/slim", "protocolBinding": "SLIMRPC", "protocolVersion": "1.0"}]),
    "upper-case-scheme": _card(url="HTTPS://mix.example.com/a2a/", protocolVersion="0.3.0"),
    "relative-refresh-and-metadata": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        securitySchemes={"oauth": {"oauth2SecurityScheme": {"oauth2MetadataUrl": "/.well-known/oauth", "flows": {
            "clientCredentials": {"tokenUrl": "https://auth.mix.example.com/token", "refreshUrl": "/refresh",
                                  "scopes": {"read": "Read"}}}}}},
        securityRequirements=[{"schemes": {"oauth": {}}}]),
    "tenant-first": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/v1", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "t1"},
        {"url": "https://mix.example.com/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
    "grpc-first": _card(supportedInterfaces=[
        {"url": "grpc.mix.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
    # one url's versions apart: a2a-sdk calls the first 1.0 interface (/v1), so the order is kept as stated
    "order": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        {"url": "https://mix.example.com/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]),
    # a tenant A2A 0.3 does not define: no client reads it, so it must not become one 1.x clients send
    "legacy-tenant": _card(url="https://mix.example.com/a2a", protocolVersion="0.3.0", additionalInterfaces=[
        {"url": "https://mix.example.com/rest", "transport": "HTTP+JSON", "tenant": "acme"}]),
    # read as 1.0 by a2a-sdk 1.x, as 0.3 by the JS SDK's legacy reading: kept 1.0, and said so
    "legacy-shape-stating-1.0": _card(url="https://mix.example.com/a2a", protocolVersion="1.0", additionalInterfaces=[
        {"url": "https://mix.example.com/rest", "transport": "HTTP+JSON"}]),
    "pre-release-version": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0-rc1"}]),
    # OpenAPI's "no credentials for this skill", which a 1.0 card cannot carry; an empty documentation url
    "skill-open": {**_card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        documentationUrl=""), "skills": [{"id": "s", "name": "S", "description": "Does it.", "tags": ["t"],
                                          "security": []}]},
    # one field under both names, the proto one last: a2a-sdk 1.x reads it, the JS SDK and 0.3 the camelCase one
    "both-names": _card(**BEARER, supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        securityRequirements=[{"schemes": {"bearer": {"list": ["read"]}}}],
        security_requirements=[{"schemes": {"bearer": {"list": ["admin"]}}}]),
    # the JS SDK prefers an interface stating exactly "1.0" (the last one): written "1.0", /fallback would be it
    "patch-version": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/primary", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://mix.example.com/fallback", "protocolBinding": "JSONRPC", "protocolVersion": "1.0.0"}]),
    # a2a-sdk 1.x and 0.3 read a scheme's 0.3 fields when it has `type`; the JS SDK reads the wrapper
    "scheme-shapes-disagree": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        securitySchemes={
            "key": {"type": "apiKey", "in": "header", "name": "X-A",
                    "apiKeySecurityScheme": {"location": "query", "name": "key"}},
            "oauth": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": "https://real.mix.example.com/token", "scopes": {"read": "Read"}}},
                "oauth2SecurityScheme": {"flows": {"clientCredentials": {
                    "tokenUrl": "https://other.mix.example.com/token", "scopes": {"read": "Read"}}}}}},
        securityRequirements=[{"schemes": {"key": {}}}, {"schemes": {"oauth": {"list": ["read"]}}}]),
    # a query is part of a provider's or an OAuth endpoint's url (Auth0's `?audience=`)
    "queried-urls": _card(supportedInterfaces=[
        {"url": "https://mix.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        provider={"organization": "Mix", "url": "https://mix.example.com/?ref=card#about"},
        securitySchemes={"oauth": {"oauth2SecurityScheme": {
            "oauth2MetadataUrl": "https://auth.mix.example.com/.well-known/oauth?tenant=mix", "flows": {
                "authorizationCode": {"authorizationUrl": "https://auth.mix.example.com/authorize?audience=api",
                                      "tokenUrl": "https://auth.mix.example.com/token?tenant=mix",
                                      "refreshUrl": "https://auth.mix.example.com/token?grant=refresh",
                                      "scopes": {"read": "Read"}}}}}},
        securityRequirements=[{"schemes": {"oauth": {"list": ["read"]}}}]),
}


@pytest.mark.parametrize("name", sorted(MIXES))
def test_odd_mixes_keep_what_the_sdk_reads_or_say_what_changed(repo: Path, knoc: Knoc, name: str,
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    source = tmp_path_factory.mktemp("cards") / f"{name}.json"
    source.write_text(json.dumps(MIXES[name]), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0, out + err
    warned = [d["json_path"] for d in json_diags(out) if d.get("json_path")]
    said = " ".join(d["message"] for d in json_diags(out))
    result = compile_repo(load_config(repo, "1.0"))
    assert result.ok, [d for d in result.report.sorted() if d.is_error]
    [card] = [json.loads(c.projection.body) for c in result.cards if c.projection.name == "Mixed"]
    before, after = read(MIXES[name]), read(card)
    assert before is not None and after is not None
    for aspect, sources in ASPECTS.items():
        assert before[aspect] == after[aspect] or any(w.startswith(sources) for w in warned), (aspect, before, after)
    if before["first"] != after["first"]:  # the interface a client calls by default changed: said so
        assert "no longer the first interface" in said, (before["first"], after["first"])
    if name == "legacy-shape-stating-1.0":
        assert "$.protocolVersion" in warned and "the JS SDK" in said
    if name in ("order", "legacy-tenant"):  # kept exactly, not merely warned about
        assert before["picked"] == after["picked"] and before["interfaces"] == after["interfaces"], (before, after)
    if name == "queried-urls":  # kept exactly, without a word (the one warning: an example domain)
        assert before == after, (before, after)
        assert warned == ["$.a2a_projection.url"], warned
    if name in ("requirements-disagree", "tenant", "trailing-slash", "grpc-wss-custom"):
        assert before["interfaces"] == after["interfaces"] and before["requirements"] == after["requirements"]
    if name == "requirements-disagree":
        assert "$.security" in warned  # what 0.3 clients read differs, and was left out
    if name == "skill-open":
        assert "$.skills[0].security" in warned and "an empty list" in said
        assert "$.documentationUrl" in warned and "an empty string" in said
    if name == "both-names":
        assert "$.security_requirements" in warned and "while a2a-sdk 1.x reads this one" in said
    if name == "patch-version":
        assert "$.supportedInterfaces[1].protocolVersion" in warned and "the JS SDK prefers" in said
    if name == "scheme-shapes-disagree":  # kept as a2a-sdk reads it, and what the JS SDK read is said
        assert before["schemes"] == after["schemes"], (before["schemes"], after["schemes"])
        assert {"$.securitySchemes.key.apiKeySecurityScheme", "$.securitySchemes.oauth.oauth2SecurityScheme"} \
            <= set(warned)


def test_relative_and_templated_urls_are_all_resolved(repo: Path, knoc: Knoc,
                                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    card = _card(url="/a2a/jsonrpc", additionalInterfaces=[
        {"url": "/a2a/jsonrpc", "transport": "JSONRPC"}, {"url": "grpc.example.com:443", "transport": "GRPC"},
        {"url": "{BASE_URL}/a2a/rest", "transport": "HTTP+JSON"}, {"url": "{BASE_URL}/a2a/v2", "transport": "JSONRPC"}])
    source = tmp_path_factory.mktemp("cards") / "relative.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--url", "https://rel.example.com/base", "--format", "json",
                          root=repo)
    assert code == 0, out + err
    written = (repo / "content/agent-blueprints/mixed.kno").read_text(encoding="utf-8")
    assert "url: https://rel.example.com/a2a/jsonrpc" in written  # a path: on the base url's host
    for url in ("https://rel.example.com/base/a2a/rest", "https://rel.example.com/base/a2a/v2",
                "grpc.example.com:443"):
        assert url in written
    resolved = [d for d in json_diags(out) if "resolved against the base url" in d["message"]]
    assert len(resolved) == 4


@pytest.mark.parametrize(("auth", "expect"), [
    ({"authentication": {"schemes": ["Bearer"]}, **BEARER, "security": [{"bearer": []}]}, "read by no current client"),
    ({"authentication": {"schemes": ["Bearer"]}}, "current SDKs do not read"),
    ({"authentication": {"schemes": True}}, "no scheme knoc can map"),
    ({"authentication": {"schemes": 7}}, "no scheme knoc can map"),
])
def test_legacy_authentication_builds_and_says_what_it_means(repo: Path, knoc: Knoc, auth: dict[str, Any],
                                                             expect: str,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    source = tmp_path_factory.mktemp("cards") / "auth.json"
    source.write_text(json.dumps(_card(url="https://auth.example.com/a2a", **auth)), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0 and "Traceback" not in err, out + err
    [said] = [d for d in json_diags(out) if d.get("json_path") == "$.authentication"]
    assert expect in said["message"]
    assert compile_repo(load_config(repo, "1.0")).ok
