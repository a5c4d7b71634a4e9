"""Cards every client generation can use: the rules of each A2A target, the
legacy path, protocol version spelling, what a target leaves out (always a
warning), ETags and each host's AI Catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from a2a.compat.v0_3 import types as sdk_v03

from knoc.output.canonical import dumps, sha256
from tests.conftest import ROOT, Knoc, compile_example, json_diags, line_of
from tests.test_official_checks import assert_v03_schema, assert_v10_strict
from tests.test_serve import get, host_and_path, serving

CONCIERGE = "site/realms.possibility.space/agents/concierge/.well-known/"
SEARCH = "site/agents.possibility.space/catalog-search/.well-known/"
SEARCH_SOURCE = "content/agent-blueprints/catalog-search.kno"


def card(result: Any, path: str) -> dict[str, Any]:
    return json.loads(result.files[path])  # type: ignore[no-any-return]


def findings(result: Any, code: str) -> list[Any]:
    return [d for d in result.report.sorted() if d.code == code]


def test_compat_announces_the_extended_card_both_ways() -> None:
    compat = card(compile_example("compat"), CONCIERGE + "agent-card.json")
    assert compat["capabilities"]["extendedAgentCard"] is True  # what a 1.0 client reads
    assert compat["supportsAuthenticatedExtendedCard"] is True  # what a 0.3 client reads
    assert sdk_v03.AgentCard.model_validate(compat).supports_authenticated_extended_card is True


def test_a_03_card_sends_its_clients_to_an_interface_that_speaks_03(repo: Path) -> None:
    """catalog-search's main url answers 1.0 only; its /rest interface 0.3
    only: the 0.3 card's url is /rest, and what it cannot carry is said."""
    result = compile_example("0.3")
    v03 = card(result, SEARCH + "agent-card.json")
    assert (v03["url"], v03["preferredTransport"], v03["protocolVersion"]) == (
        "https://agents.possibility.space/catalog-search/rest", "HTTP+JSON", "0.3")
    assert "additionalInterfaces" not in v03  # no other interface speaks 0.3
    dropped = findings(result, "KNO-PROJECT-DROPPED")
    assert [d.message for d in dropped] == [
        "the url https://agents.possibility.space/catalog-search as the card's main url (it speaks only A2A 1.0) "
        "cannot be carried by an A2A 0.3 card and is left out",
        "the interface grpc.agents.possibility.space:443 (it speaks only A2A 1.0) cannot be carried by an A2A "
        "0.3 card and is left out"]
    assert all(d.severity.value == "warning" and d.file == SEARCH_SOURCE for d in dropped)
    assert "--a2a 1.0" in dropped[1].hint and "--a2a compat" in dropped[1].hint
    source = repo / SEARCH_SOURCE  # the main url speaks 0.3 too: listed first among the 0.3 interfaces (v0.3 5.6.4)
    source.write_text(source.read_text(encoding="utf-8").replace('protocol_versions: ["1.0"]  # the main',
                                                                 'protocol_versions: ["1.0", "0.3"]  # the main'),
                      encoding="utf-8")
    v03 = card(compile_example("0.3", root=repo), SEARCH + "agent-card.json")
    assert v03["url"] == "https://agents.possibility.space/catalog-search" and v03["additionalInterfaces"] == [
        {"url": "https://agents.possibility.space/catalog-search", "transport": "JSONRPC"},
        {"url": "https://agents.possibility.space/catalog-search/rest", "transport": "HTTP+JSON"}]


def test_a_dropped_tenant_is_a_warning(repo: Path) -> None:
    source = repo / SEARCH_SOURCE
    text = source.read_text(encoding="utf-8").replace('      protocol_versions: ["1.0"]\n',
                                                      '      protocol_versions: ["0.3"]\n      tenant: acme\n')
    source.write_text(text, encoding="utf-8")
    result = compile_example("0.3", root=repo)
    [dropped] = [d for d in findings(result, "KNO-PROJECT-DROPPED") if "tenant" in d.message]
    assert dropped.message == ("`tenant` of grpc.agents.possibility.space:443 cannot be carried by an A2A 0.3 card "
                               "and is left out")
    assert dropped.span and dropped.span.line == line_of(repo, SEARCH_SOURCE, "tenant: acme")
    built = card(result, SEARCH + "agent-card.json")
    assert (built["url"], built["preferredTransport"]) == ("grpc.agents.possibility.space:443", "GRPC")
    assert built["additionalInterfaces"][1]["transport"] == "HTTP+JSON"  # the gRPC one first, then /rest
    v10_result = compile_example("1.0", root=repo)
    v10 = card(v10_result, SEARCH + "agent-card.json")
    grpc = [i for i in v10["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert grpc[0]["tenant"] == "acme"  # the 1.0 card carries it; its agent.json cannot, and says so
    [legacy] = [d for d in findings(v10_result, "KNO-PROJECT-DROPPED") if "tenant" in d.message]
    assert legacy.message.startswith("`tenant` of grpc.agents.possibility.space:443 cannot be carried by agent.json")


def test_patch_versions_are_published_as_major_minor(repo: Path) -> None:
    source = repo / SEARCH_SOURCE
    text = source.read_text(encoding="utf-8").replace('min_protocol_version: "0.3"', 'min_protocol_version: "0.3.0"')
    source.write_text(text.replace('      protocol_versions: ["1.0"]', '      protocol_versions: ["1.0.0"]'),
                      encoding="utf-8")
    result = compile_example("1.0", root=repo)
    patches = findings(result, "KNO-PROTOCOL-PATCH")
    assert [(d.severity.value, d.span and d.span.line) for d in patches] == [
        ("warning", line_of(repo, SEARCH_SOURCE, "min_protocol_version")),
        ("warning", line_of(repo, SEARCH_SOURCE, 'protocol_versions: ["1.0.0"]'))]
    assert patches[0].message == "protocol version 0.3.0 is published as 0.3"
    body = result.files[SEARCH + "agent-card.json"].decode("utf-8")
    assert '"protocolVersion": "1.0"' in body and '"minProtocolVersion": "0.3"' in body and "0.3.0" not in body
    assert "1.0.0" not in body


def test_agent_json_holds_the_card_pre_03_clients_parse(repo: Path) -> None:
    """Whatever the target, agent.json is a card with a top-level url (the
    0.3 shape, which a2a-sdk 0.2 reads) whose url is an interface that
    speaks 0.3; under 0.3 and compat it is the card itself. An agent none of
    whose interfaces speaks 0.3 has no agent.json, and the build says so."""
    for target in ("1.0", "0.3", "compat"):
        result = compile_example(target)
        for c in result.cards:
            main, legacy = (f"site/{c.projection.site_dir}/.well-known/{n}" for n in ("agent-card.json", "agent.json"))
            old = card(result, legacy)
            assert_v03_schema(old)
            sdk_v03.AgentCard.model_validate(old)
            assert old["protocolVersion"] == "0.3" and old["name"] == c.projection.name
            assert (result.files[legacy] == result.files[main]) == (target != "1.0")
            if target == "1.0":
                assert_v10_strict(card(result, main))
                speaking = [i["url"] for i in card(result, main)["supportedInterfaces"] if i["protocolVersion"] == "0.3"]
                assert old["url"] == speaking[0]  # the first interface that speaks 0.3, never a 1.0-only one
    source = repo / SEARCH_SOURCE
    source.write_text(source.read_text(encoding="utf-8").replace('protocol_versions: ["0.3"]', 'protocol_versions: '
                                                                 '["1.0"]'), encoding="utf-8")
    result = compile_example("1.0", root=repo)
    assert SEARCH + "agent-card.json" in result.files and SEARCH + "agent.json" not in result.files
    assert result.untwinned == ["catalog-search"] and result.ok
    compat = compile_example("compat", root=repo)
    [warning] = findings(compat, "KNO-LEGACY-VIEW")
    assert warning.file == SEARCH_SOURCE and "url" not in card(compat, SEARCH + "agent-card.json")


def test_each_host_lists_its_agents_in_an_ai_catalog() -> None:
    """The AI Catalog as its spec and ADRs state it: `type` (ADR-0014), no
    name, description or version the card already carries (ADR-0016/0018),
    a `urn:air:{publisher}:{name}` identifier (ADR-0015)."""
    result = compile_example()
    catalogs = {p: json.loads(b) for p, b in result.files.items() if p.endswith("/.well-known/ai-catalog.json")}
    hosts = {c.projection.host for c in result.cards}
    assert set(catalogs) == {f"site/{h}/.well-known/ai-catalog.json" for h in hosts}
    listed = {e["url"]: e for doc in catalogs.values() for e in doc["entries"]}
    assert len(listed) == len(result.cards)
    identifiers = [e["identifier"] for e in listed.values()]
    assert len(set(identifiers)) == len(identifiers)
    for c in result.cards:
        entry = listed[f"{c.projection.url.rstrip('/')}/.well-known/agent-card.json"]
        published = json.loads(c.projection.body)
        assert set(entry) <= {"identifier", "type", "url", "tags"}, entry
        assert entry["type"] == "application/a2a-agent-card+json"
        assert entry.get("tags", []) == sorted({t for s in published["skills"] for t in s["tags"]})
        assert re.fullmatch(r"urn:air:[a-z0-9.-]+:[a-z0-9-]+", entry["identifier"])
        assert entry["identifier"] == f"urn:air:{c.projection.host}:{c.slug}"
    for path, doc in catalogs.items():
        assert doc["specVersion"] == "1.0" and "host" not in doc
        assert result.files[path] == dumps(doc)  # spliced from cached entries, yet canonical bytes


def test_the_host_table_names_the_operator(repo: Path) -> None:
    with (repo / "knoc.toml").open("a", encoding="utf-8") as f:
        f.write('\n[host]\ndisplay_name = "Possibility"\ndocumentation_url = "https://possibility.space/agents"\n')
    result = compile_example(root=repo)
    doc = json.loads(result.files["site/agents.possibility.space/.well-known/ai-catalog.json"])
    assert doc["host"] == {"displayName": "Possibility", "documentationUrl": "https://possibility.space/agents"}


def test_cards_and_catalogs_carry_etags_served_and_in_headers() -> None:
    manifest = json.loads((ROOT / "build/manifest.json").read_text(encoding="utf-8"))["outputs"]
    host, path = host_and_path(json.loads((ROOT / "build/index/agents.json").read_text())["agents"][0]["card"])
    card_rel = f"site/{host}/{path}/.well-known/agent-card.json".replace("//", "/")
    tag = f'"{manifest[card_rel]}"'
    headers_file = (ROOT / f"build/site/{host}/_headers").read_text(encoding="utf-8")
    assert f"/{path}/.well-known/agent-card.json\n  ETag: {tag}\n".replace("//", "/") in headers_file
    assert "/.well-known/ai-catalog.json\n  Content-Type: application/ai-catalog+json\n" in headers_file
    with serving(ROOT) as base:
        status, headers, body = get(f"{base}{path}/.well-known/agent-card.json", host)
        assert status == 200 and headers["ETag"] == tag == f'"{sha256(body)}"'
        assert "max-age=" in headers["Cache-Control"]
        assert get_with(f"{base}{path}/.well-known/agent-card.json", host, tag)[0] == 304
        assert get_with(f"{base}{path}/.well-known/agent-card.json", host, f'W/{tag}, "other"')[0] == 304
        assert get_with(f"{base}{path}/.well-known/agent-card.json", host, '"stale"')[0] == 200
        status, headers, body = get(f"{base}.well-known/ai-catalog.json", host)
        assert status == 200 and headers["Content-Type"] == "application/ai-catalog+json"
        assert headers["ETag"] == f'"{manifest[f"site/{host}/.well-known/ai-catalog.json"]}"'


def get_with(url: str, host: str, if_none_match: str) -> tuple[int, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Host": host, "If-None-Match": if_none_match})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""


def test_grpc_interfaces_are_host_port_addresses(repo: Path) -> None:
    """A gRPC channel dials host:port: the example publishes that, a url
    with a scheme and a path gets a warning naming the address to write,
    and custom bindings may use any scheme."""
    built = card(compile_example("1.0"), SEARCH + "agent-card.json")
    grpc = [i for i in built["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert [i["url"] for i in grpc] == ["grpc.agents.possibility.space:443"]
    source = repo / SEARCH_SOURCE
    text = source.read_text(encoding="utf-8").replace("grpc.agents.possibility.space:443",
                                                      "https://grpc.agents.possibility.space/catalog-search")
    text = text.replace("  capabilities:\n", "    - {url: \"wss://agents.possibility.space/ws\", transport: WEBSOCKET}\n"
                        "  capabilities:\n", 1)
    source.write_text(text, encoding="utf-8")
    result = compile_example("1.0", root=repo)
    [warning] = findings(result, "KNO-CARD-GRPC-ADDRESS")
    assert warning.severity.value == "warning" and "`grpc.agents.possibility.space:443`" in (warning.hint or "")
    assert warning.span and warning.span.line == line_of(repo, SEARCH_SOURCE, "https://grpc.agents")
    urls = [i["url"] for i in card(result, SEARCH + "agent-card.json")["supportedInterfaces"]]
    assert "wss://agents.possibility.space/ws" in urls and result.ok  # the schema takes any scheme


@pytest.mark.parametrize(("line", "said"), [
    ('"https://agents.possibility.space" = "drift-sentinel"', "is not one"),
    ('"agents.possibility.space/x" = "drift-sentinel"', "is not one"),
    ('"agents.possibility.space:8443" = "drift-sentinel"', "where no public agent publishes a card"),
    ('"nohost.example.com" = "drift-sentinel"', "where no public agent publishes a card"),
    ('"agents.possibility.space" = "drift-sentinel"\n"Agents.Possibility.Space" = "schema-steward"',
     "names two agents for the host"),
])
def test_a_primary_line_that_names_nothing_is_an_error(repo: Path, knoc: Knoc, line: str, said: str) -> None:
    config = repo / "knoc.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text[:text.index("[primary]")] + f"[primary]\n{line}\n", encoding="utf-8")
    code, out, err = knoc("build", "--format", "json", root=repo)
    assert code in (1, 2) and said in out + err, out + err
    assert not (repo / "build").exists()


def test_a_primary_finding_is_placed_at_its_line_as_knoc_toml_moves(repo: Path, knoc: Knoc) -> None:
    """Through the cache too: a line added above it moves the finding with it."""
    config = repo / "knoc.toml"
    text = config.read_text(encoding="utf-8")
    text = text[:text.index("[primary]")] + '[primary]\n"nohost.example.com" = "drift-sentinel"\n'
    for above in ("", "# a comment\n# and another\n"):
        config.write_text(above + text, encoding="utf-8")
        code, out, _ = knoc("validate", "--format", "json", root=repo)
        [found] = [d for d in json_diags(out) if d["code"] == "KNO-CONFIG-PRIMARY"]
        line = (above + text).splitlines().index('"nohost.example.com" = "drift-sentinel"') + 1
        assert code == 1 and (found["file"], found["line"], found["column"]) == ("knoc.toml", line, 1)


def test_a_03_shaped_card_lists_only_interfaces_that_speak_its_version(repo: Path) -> None:
    """One `protocolVersion` speaks for every interface a 0.3 card lists: an
    interface that speaks 0.2 is left out of it, and the build says so."""
    source = repo / SEARCH_SOURCE
    text = source.read_text(encoding="utf-8").replace('protocol_versions: ["1.0"]  # the main',
                                                      'protocol_versions: ["1.0", "0.3"]  # the main')
    text = text.replace('protocol_versions: ["0.3"]  # kept', 'protocol_versions: ["0.2"]  # kept')
    text = text.replace('min_protocol_version: "0.3"', 'min_protocol_version: "0.2"')
    source.write_text(text, encoding="utf-8")
    for target in ("0.3", "compat", "1.0"):
        result = compile_example(target, root=repo)
        built = card(result, SEARCH + ("agent.json" if target == "1.0" else "agent-card.json"))
        assert built["protocolVersion"] == "0.3" and "/rest" not in json.dumps(built.get("additionalInterfaces"))
        [left] = [d for d in findings(result, "KNO-PROJECT-DROPPED") if "/rest" in d.message]
        assert "speaks A2A 0.2" in left.message, left.message


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_an_empty_list_clients_read_apart_is_left_out_and_said(repo: Path, target: str) -> None:
    """a2a-sdk 0.3 reads `outputModes: []` as no modes, 1.x and the JS SDK
    as none given (the card's defaults); a skill's empty `security` as
    taking the card's: each is left out of the card, or defaulted, with a
    warning at its line."""
    source = repo / SEARCH_SOURCE
    text = source.read_text(encoding="utf-8")
    assert "      tags: [search, catalog]\n" in text and "  default_input_modes: [text/plain, application/json]" in text
    source.write_text(text.replace("      tags: [search, catalog]\n", "      tags: [search, catalog]\n"
                                   "      output_modes: []\n      security: []\n", 1)
                      .replace("  default_input_modes: [text/plain, application/json]", "  default_input_modes: []\n"
                               '  preferred_transport: ""', 1),
                      encoding="utf-8")
    result = compile_example(target, root=repo)
    said = {d.json_path: d for d in findings(result, "KNO-PROJECT-DROPPED") if ": []` is" in d.message
            or ': ""` is' in d.message}
    assert set(said) == {"$.a2a_projection.default_input_modes", "$.a2a_projection.skills[0].output_modes",
                         "$.a2a_projection.skills[0].security", "$.a2a_projection.preferred_transport"}, said
    assert "published as JSONRPC" in said["$.a2a_projection.preferred_transport"].message
    assert said["$.a2a_projection.skills[0].security"].span.line == line_of(repo, SEARCH_SOURCE, "security: []")
    built = card(result, SEARCH + "agent-card.json")
    skill = next(s for s in built["skills"] if s["id"] == "find-entities")
    assert "outputModes" not in skill and "security" not in skill and "securityRequirements" not in skill
    assert built["defaultInputModes"] == ["text/plain"]


def test_a_host_root_card_that_goes_is_said(repo: Path, knoc: Knoc) -> None:
    """The root card goes when knoc.toml's `[primary]` line goes (or a
    second agent joins a host of one): a word, not a silent 404."""
    assert knoc("build", root=repo)[0] == 0
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('"agents.possibility.space" = "catalog-search"\n', ""),
                      encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [gone] = [d for d in json_diags(out) if d["code"] == "KNO-HOST-NO-ROOT"]
    assert code == 0 and "agents.possibility.space's root card" in gone["message"] and gone["file"] == "knoc.toml"
    assert not (repo / "build/site/agents.possibility.space/.well-known/agent-card.json").exists()
    assert not [d for d in json_diags(knoc("build", "--format", "json", root=repo)[1])
                if d["code"] == "KNO-HOST-NO-ROOT"]  # said once, when it goes
    config.write_text(config.read_text(encoding="utf-8").replace("[primary]\n", '[primary]\n'
                                                                  '"agents.possibility.space" = "catalog-search"\n'),
                      encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0 and (repo / "build/site/agents.possibility.space/.well-known").is_dir()
    (repo / "content/agent-blueprints/broken.kno").write_text("bad: [\n", encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)  # a failed build writes nothing: no root goes
    assert code == 1 and not [d for d in json_diags(out) if d["code"] == "KNO-HOST-NO-ROOT"]


def test_a_url_a_js_client_resolves_to_another_agent_is_said(repo: Path, knoc: Knoc) -> None:
    """@a2a-js/sdk resolves `.well-known/agent-card.json` against the url it
    is given: `https://host/name` leads it to the host's root card, which is
    another agent's; `https://host/name/` (the example's) to its own."""
    drift = "content/agent-blueprints/drift-sentinel.kno"
    code, out, _ = knoc("build", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"] == "KNO-CARD-URL-JS"]
    source = repo / drift
    source.write_text(source.read_text(encoding="utf-8").replace("url: https://agents.possibility.space/drift-sentinel/",
                                                                 "url: https://agents.possibility.space/drift-sentinel"),
                      encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [said] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-URL-JS"]
    assert code == 0 and said["file"] == drift and "`catalog-search`'s, not this agent's" in said["message"]
    assert said["line"] == line_of(repo, drift, "url: https://agents.possibility.space/drift-sentinel")


def test_a_primary_agent_without_a_card_in_this_build_is_not_called_missing(repo: Path, knoc: Knoc) -> None:
    """knoc.toml names an agent that exists but has no card here (private,
    or its card fails this target): said as such, not as a name no agent has."""
    source = repo / SEARCH_SOURCE
    source.write_text(source.read_text(encoding="utf-8").replace("\nslug: catalog-search\n",
                                                                 "\nslug: catalog-search\nvisibility: private\n", 1),
                      encoding="utf-8")
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    [said] = [d for d in json_diags(out) if d["code"] == "KNO-CONFIG-PRIMARY"]
    assert "this build publishes no card of it" in said["message"] and "no such card" not in said["message"]


def test_a_url_below_another_agents_card_folder_is_said_too(repo: Path, knoc: Knoc) -> None:
    source = repo / "content/agent-blueprints/quick-summarizer.kno"
    source.write_text(source.read_text(encoding="utf-8").replace(
        "url: https://agents.possibility.space/quick-summarizer/", "url: https://agents.possibility.space/drift-sentinel/sub"),
        encoding="utf-8")
    code, out, _ = knoc("validate", "--format", "json", root=repo)
    [said] = [d for d in json_diags(out) if d["code"] == "KNO-CARD-URL-JS"]
    assert code == 0 and "the card of the folder above, `drift-sentinel`'s" in said["message"]


def test_a_host_first_published_without_a_root_card_is_said_once(repo: Path, knoc: Knoc) -> None:
    """A first build of a host of several agents and no `[primary]`: said,
    then not again."""
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('"agents.possibility.space" = "catalog-search"\n', ""),
                      encoding="utf-8")
    code, out, _ = knoc("build", "--format", "json", root=repo)
    [said] = [d for d in json_diags(out) if d["code"] == "KNO-HOST-NO-ROOT" and "agents.possibility" in d["message"]]
    assert code == 0 and "has 4 public agents" in said["message"] and said["file"] == "knoc.toml"
    assert not [d for d in json_diags(knoc("build", "--format", "json", root=repo)[1]) if d["code"] == "KNO-HOST-NO-ROOT"]


@pytest.mark.parametrize(("named", "said", "hint"), [
    ("echo-agent", "but its url is on api.possibility.space", 'move the line to "api.possibility.space"'),
    ("catalog-serch", "which publishes no such card", "did you mean `catalog-search`?"),
])
def test_a_primary_agent_elsewhere_or_misspelt_is_named_so(repo: Path, knoc: Knoc, named: str, said: str,
                                                           hint: str) -> None:
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        '"agents.possibility.space" = "catalog-search"', f'"agents.possibility.space" = "{named}"'), encoding="utf-8")
    _, out, _ = knoc("validate", "--format", "json", root=repo)
    [found] = [d for d in json_diags(out) if d["code"] == "KNO-CONFIG-PRIMARY"]
    assert said in found["message"] and hint in found["hint"], found
