"""The capability contract at build time (seed 001): protocol ranges,
deprecated capabilities, and delegation chains checked transitively. Each
finding comes with its code, file and line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from knoc.a2a import capability
from knoc.a2a.extensions import CONTRACT_URI
from knoc.a2a.protocol import protocol_key
from knoc.kinds.delegation import contract_of
from tests.conftest import ROOT, Knoc, compile_example, edit, findings, json_diags, line_of, one

STEWARD = "content/agent-blueprints/schema-steward.kno"
SENTINEL = "content/agent-blueprints/drift-sentinel.kno"
SEARCH = "content/agent-blueprints/catalog-search.kno"
LEDGER = "content/agent-blueprints/ledger-auditor.kno"


def card(repo: Path, slug: str) -> dict[str, Any]:
    path = repo / f"build/site/agents.possibility.space/{slug}/.well-known/agent-card.json"
    return json.loads(path.read_text(encoding="utf-8"))


def contract_entry(c: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [e for e in c["capabilities"].get("extensions", []) if e["uri"] == CONTRACT_URI]
    return entry


# --- what reaches the card ----------------------------------------------


def test_contract_fields_travel_in_the_capability_contract_entry(knoc: Knoc, repo: Path) -> None:
    assert knoc("build", root=repo)[0] == 0
    sentinel = card(repo, "drift-sentinel")
    assert contract_entry(sentinel) == {
        "uri": CONTRACT_URI, "required": False,
        "params": {"minProtocolVersion": "0.3", "maxProtocolVersion": "1.1",
                   "capabilities": {"streamingMessage": True, "contextReuse": False}}}
    # Nothing A2A does not define appears outside the entry.
    assert set(sentinel["capabilities"]) == {"streaming", "pushNotifications", "extensions"}
    assert "minProtocolVersion" not in sentinel


def test_interface_versions_are_core_fields_in_1_0_and_contract_params_in_0_3(knoc: Knoc, repo: Path) -> None:
    assert knoc("build", root=repo)[0] == 0
    search = card(repo, "catalog-search")
    grpc = [i for i in search["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert [i["protocolVersion"] for i in grpc] == ["1.0"]
    assert "interfaces" not in contract_entry(search)["params"]
    assert knoc("build", "--a2a", "0.3", root=repo)[0] == 0
    search = card(repo, "catalog-search")
    assert contract_entry(search)["params"]["interfaces"] == [  # /rest speaks just what protocolVersion says
        {"url": "https://agents.possibility.space/catalog-search", "protocolVersions": ["1.0"]},
        {"url": "grpc.agents.possibility.space:443", "protocolVersions": ["1.0"]}]


def test_an_agent_without_contract_fields_gets_no_entry(knoc: Knoc, repo: Path) -> None:
    assert knoc("build", root=repo)[0] == 0
    summarizer = card(repo, "quick-summarizer")
    assert CONTRACT_URI not in [e["uri"] for e in summarizer["capabilities"].get("extensions", [])]


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_build_time_and_discovery_read_the_same_contract(target: str) -> None:
    """The link stage reads authored cards, discovery reads published ones:
    for every example agent they must agree."""
    result = compile_example(target)
    assert result.ok
    for published in result.cards:
        data = YAML(typ="safe").load((ROOT / published.source).read_text(encoding="utf-8"))
        states = protocol_key(data["$schema"].split("@")[1]) >= protocol_key("0.4.0")
        authored = contract_of(data.get("a2a_projection", data), data.get("service_class"), target, states)
        wire = capability.from_wire(json.loads(published.projection.body))
        assert authored.flags == wire.flags, published.slug
        assert authored.extensions == wire.extensions - {CONTRACT_URI}, published.slug
        assert _versions(authored) == _versions(wire), published.slug


def _versions(c: capability.Contract) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return sorted({(capability.version_key(low), capability.version_key(high)) for low, high in c.spans()})


# --- protocol ranges ------------------------------------------------------


def test_min_above_max_is_an_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, SENTINEL, 'max_protocol_version: "1.1"', 'max_protocol_version: "0.2"')
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-PROTOCOL-RANGE")
    assert code == 1 and d["file"] == SENTINEL and d["line"] == line_of(repo, SENTINEL, "max_protocol_version")
    assert "below min_protocol_version 0.3" in d["message"]


def test_a_range_that_excludes_an_interface_version_is_an_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, 'protocol_versions: ["1.0"]', 'protocol_versions: ["1.0", "1.2"]')
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-PROTOCOL-RANGE")
    assert code == 1 and d["file"] == SEARCH and d["line"] == line_of(repo, SEARCH, "protocol_versions:")
    assert "speaks A2A 1.2" in d["message"] and "0.3 to 1.0" in d["message"]


def test_a_range_that_excludes_the_default_version_is_an_error(knoc: Knoc, repo: Path) -> None:
    """An unstated url speaks A2A 1.0 (agent-blueprint 0.4.0 on), whatever
    the target; an older blueprint speaks the target's default, so the same
    range holds for 0.3 and not for 1.0, and says so."""
    edit(repo, STEWARD, '  protocol_versions: ["1.0", "0.3"]\n', "")
    edit(repo, STEWARD, 'max_protocol_version: "1.0"', 'max_protocol_version: "0.3.0"')
    for target in ("1.0", "0.3"):
        code, out, _ = knoc("validate", "--a2a", target, "--format", "json", root=repo)
        d = one(json_diags(out), "KNO-PROTOCOL-RANGE")
        assert code == 1 and d["line"] == line_of(repo, STEWARD, "max_protocol_version")
        assert "speaks A2A 1.0 (not stated: the default)" in d["message"]
    edit(repo, STEWARD, "$schema: agent-blueprint@0.4.0", "$schema: agent-blueprint@0.3.0")
    assert findings(knoc, repo)[0] == 1
    code, out, _ = knoc("validate", "--a2a", "0.3", "--format", "json", root=repo)
    assert code == 0  # 0.3.0: the 0.3 target's default 0.3 is in range, and the claim is a warning
    assert one(json_diags(out), "KNO-PROTOCOL-UNSTATED")["file"] == STEWARD


def test_a_0_3_card_needs_an_interface_that_speaks_0_3(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, 'protocol_versions: ["0.3"]', 'protocol_versions: ["1.0"]')
    assert findings(knoc, repo)[0] == 0
    code, out, _ = knoc("validate", "--a2a", "0.3", "--format", "json", root=repo)
    d = one([json.loads(x) for x in out.splitlines()], "KNO-PROTOCOL-TARGET")
    assert code == 1 and d["line"] == line_of(repo, SEARCH, "  protocol_versions:")


def test_a_1_0_card_no_1_0_client_can_call_is_said(knoc: Knoc, repo: Path) -> None:
    """An agent that speaks only A2A 0.2: a2a-sdk 1.3 finds no interface of
    such a card to call, which the 1.0 and compat builds say; a 0.3 build
    serves its 0.2 clients without a word."""
    from a2a.client.client_factory import ClientFactory
    from a2a.types import AgentInterface

    only_0_2 = [AgentInterface(url="https://agents.possibility.space/drift-sentinel/", protocol_binding="JSONRPC",
                               protocol_version="0.2")]
    assert ClientFactory._find_best_interface(only_0_2, protocol_bindings=["JSONRPC"]) is None
    edit(repo, SENTINEL, 'protocol_versions: ["1.0", "0.3"]', 'protocol_versions: ["0.2"]')
    edit(repo, SENTINEL, 'min_protocol_version: "0.3"', 'min_protocol_version: "0.2"')
    for target in ("1.0", "compat"):
        code, out, _ = knoc("validate", "--a2a", target, "--format", "json", root=repo)
        d = one(json_diags(out), "KNO-PROTOCOL-TOO-OLD")
        assert code == 0 and d["file"] == SENTINEL and d["line"] == line_of(repo, SENTINEL, "  protocol_versions:")
        assert "speak only A2A 0.2" in d["message"]
    code, out, _ = knoc("validate", "--a2a", "0.3", "--format", "json", root=repo)
    assert code == 0 and not [d for d in json_diags(out) if d["code"].startswith("KNO-PROTOCOL-T")]


def test_a_malformed_version_is_a_schema_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, SENTINEL, 'max_protocol_version: "1.1"', 'max_protocol_version: "one"')
    code, diags = findings(knoc, repo)
    assert code == 1 and any(d["line"] == line_of(repo, SENTINEL, "max_protocol_version") for d in diags)


def test_a_private_agent_range_is_checked_too(knoc: Knoc, repo: Path) -> None:
    edit(repo, LEDGER, "  capabilities:\n    streaming: false",
         '  min_protocol_version: "1.1"\n  capabilities:\n    streaming: false')
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-PROTOCOL-RANGE")
    assert code == 1 and d["file"] == LEDGER


# --- tiers ------------------------------------------------------------------


def test_a_deprecated_capability_is_a_warning_with_its_replacement(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, "    streaming_message: true", "    streaming_message: true\n    artifact_streaming: true")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-CAP-DEPRECATED")
    assert code == 0 and d["severity"] == "warning" and d["line"] == line_of(repo, SEARCH, "artifact_streaming")
    assert "streaming_message" in d["hint"]


def test_an_unknown_capability_flag_is_a_schema_error(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, "    streaming_message: true", "    streaming_mesage: true")
    code, diags = findings(knoc, repo)
    assert code == 1 and any("streaming_message" in (d.get("hint") or "") for d in diags)


# --- delegation chains -----------------------------------------------------


def test_the_example_chain_holds(knoc: Knoc, repo: Path) -> None:
    assert findings(knoc, repo) == (0, [])


def test_a_requirement_the_direct_target_lacks(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "requires: [streaming, streaming_message]", "requires: [streaming, pause_resume]")
    code, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-CHAIN-REQUIRES"]
    assert code == 1 and {d["file"] for d in hits} == {STEWARD}
    assert all(d["line"] == line_of(repo, STEWARD, "requires:") for d in hits)
    direct = [d for d in hits if d["message"].startswith("schema-steward -> drift-sentinel:")]
    assert len(direct) == 1 and "does not declare `pause_resume`" in direct[0]["message"]


def test_a_requirement_is_checked_along_the_whole_chain(knoc: Knoc, repo: Path) -> None:
    # drift-sentinel still declares it; catalog-search, one link further, no longer does.
    edit(repo, SEARCH, "    streaming_message: true\n", "")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-CHAIN-REQUIRES")
    assert code == 1 and d["file"] == STEWARD and d["line"] == line_of(repo, STEWARD, "requires:")
    assert d["message"].startswith("schema-steward -> drift-sentinel -> catalog-search:")
    assert "`streaming_message`" in d["message"]


def test_relying_on_shared_context_across_a_link_that_refuses_it(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "requires: [streaming, streaming_message]", "requires: [context_reuse]")
    code, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-CHAIN-REQUIRES"]
    refused = [d for d in hits if "context_reuse: false" in d["message"]]
    assert code == 1 and len(refused) == 1 and "cannot rely on shared context" in refused[0]["message"]
    assert refused[0]["message"].startswith("schema-steward -> drift-sentinel:")


def test_links_without_a_shared_protocol_version(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, '  min_protocol_version: "0.3"\n  max_protocol_version: "1.0"\n', "")
    path = repo / SEARCH
    path.write_text(re.sub(r'protocol_versions: \[[^]]*\]', 'protocol_versions: ["1.2"]',
                           path.read_text(encoding="utf-8")), encoding="utf-8")
    code, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-CHAIN-PROTOCOL"]
    at_link = [d for d in hits if d["file"] == SENTINEL]
    at_origin = [d for d in hits if d["file"] == STEWARD]
    assert code == 1 and len(at_link) == 1 and len(at_origin) == 1
    assert at_link[0]["line"] == line_of(repo, SENTINEL, "kno://agent-blueprints/catalog-search")
    assert "drift-sentinel: 0.3 to 1.1; catalog-search: 1.2" in at_link[0]["message"]
    assert at_origin[0]["message"].startswith("schema-steward -> drift-sentinel -> catalog-search:")
    assert at_origin[0]["line"] == line_of(repo, STEWARD, "kno://agent-blueprints/drift-sentinel")


def test_a_copy_that_keeps_its_originals_slug_judges_each_link_by_its_own_ends(knoc: Knoc, repo: Path) -> None:
    """A blueprint copied to start another keeps the original's slug until
    renamed; the copy delegating to an agent it shares no protocol with
    is the copy's finding, never the original's (whose link is fine)."""
    concierge = "content/agent-blueprints/realm-concierge.kno"
    path = repo / concierge
    text = re.sub(r'\n  min_protocol_version: [^\n]*', "", path.read_text(encoding="utf-8"), count=1)
    path.write_text(re.sub(r'\n  protocol_versions: \[[^]]*\]', '\n  protocol_versions: ["2.0"]\n'
                           '  min_protocol_version: "2.0"\n  max_protocol_version: "2.0"', text, count=1),
                    encoding="utf-8")
    copy = STEWARD.replace("schema-steward", "schema-steward-2")
    (repo / copy).write_text((repo / STEWARD).read_text(encoding="utf-8")
                             .replace("xri: kno://agent-blueprints/drift-sentinel",
                                      "xri: kno://agent-blueprints/realm-concierge")
                             .replace("url: https://agents.possibility.space/schema-steward",
                                      "url: https://agents.possibility.space/schema-steward-2"), encoding="utf-8")
    _, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-CHAIN-PROTOCOL"]
    assert [d["file"] for d in hits] == [copy]
    assert "realm-concierge" in hits[0]["message"]


def test_a_copy_that_keeps_its_originals_slug_keeps_its_own_protocol_versions(knoc: Knoc, repo: Path) -> None:
    """A copy (same slug) that speaks other versions than its original:
    its versions never stand for the original's, so the original's link,
    which is fine, gets no finding and the copy's link gets its own."""
    copy = STEWARD.replace("schema-steward", "schema-steward-2")
    text = (repo / STEWARD).read_text(encoding="utf-8").replace(
        "url: https://agents.possibility.space/schema-steward", "url: https://agents.possibility.space/schema-steward-2")
    text = text.replace('  min_protocol_version: "0.3"\n  max_protocol_version: "1.0"\n', "")
    text = re.sub(r'\n  protocol_versions: \[[^]]*\]', '\n  protocol_versions: ["1.2"]', text, count=1)
    (repo / copy).write_text(text, encoding="utf-8")
    _, diags = findings(knoc, repo)
    hits = [d for d in diags if d["code"] == "KNO-CHAIN-PROTOCOL"]
    assert hits and {d["file"] for d in hits} == {copy}


def test_an_unknown_requirement_suggests_the_nearest(knoc: Knoc, repo: Path) -> None:
    edit(repo, STEWARD, "requires: [streaming, streaming_message]", "requires: [streaming, streaming_mesage]")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-CAP-UNKNOWN")
    assert code == 1 and d["line"] == line_of(repo, STEWARD, "requires:")
    assert "did you mean `streaming_message`?" in d["hint"]


def test_requiring_a_deprecated_capability_is_a_warning(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, "    streaming_message: true", "    streaming_message: true\n    artifact_streaming: true")
    edit(repo, SENTINEL, "    streaming_message: true", "    streaming_message: true\n    artifact_streaming: true")
    edit(repo, STEWARD, "requires: [streaming, streaming_message]", "requires: [artifact_streaming]")
    code, diags = findings(knoc, repo)
    d = [d for d in diags if d["code"] == "KNO-CAP-DEPRECATED" and d["file"] == STEWARD]
    assert code == 0 and len(d) == 1 and d[0]["line"] == line_of(repo, STEWARD, "requires:")


def test_an_extension_requirement(knoc: Knoc, repo: Path) -> None:
    trace = "ext:https://possibility.space/extensions/review-trace/v1"
    edit(repo, STEWARD, "requires: [streaming, streaming_message]", f'requires: ["{trace}"]')
    code, diags = findings(knoc, repo)
    d = [d for d in diags if d["code"] == "KNO-CHAIN-REQUIRES"]
    assert code == 1 and len(d) == 2 and all("does not declare extension" in x["message"] for x in d)


def test_a_delegation_cycle_is_reported(knoc: Knoc, repo: Path) -> None:
    edit(repo, SEARCH, "a2a_projection:", "composes:\n  - xri: kno://agent-blueprints/schema-steward\n"
                                          "a2a_projection:")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-COMPOSES-CYCLE")
    assert code == 0 and d["severity"] == "warning"
    assert d["message"] == ("delegation cycle: catalog-search -> schema-steward -> drift-sentinel "
                            "-> catalog-search")
    assert d["file"] == SEARCH and d["line"] == line_of(repo, SEARCH, "kno://agent-blueprints/schema-steward")


def test_a_chain_from_a_private_agent_is_judged_too(knoc: Knoc, repo: Path) -> None:
    edit(repo, LEDGER, "    reason: Summarizes reconciliation reports",
         "    reason: Summarizes reconciliation reports\n    requires: [pause_resume]")
    code, diags = findings(knoc, repo)
    d = one(diags, "KNO-CHAIN-REQUIRES")
    assert code == 1 and d["file"] == LEDGER and "ledger-auditor -> quick-summarizer" in d["message"]


def test_an_older_blueprint_under_compat_is_told_what_each_unstated_url_claims(knoc: Knoc, repo: Path) -> None:
    """Under compat, an older blueprint's main url claims 1.0 and 0.3 and its
    other interfaces 1.0 alone (0.3 clients are not sent there): the warning
    says which claims what, not that all claim both."""
    source = repo / "content/agent-blueprints/legacy-ifaces.kno"
    source.write_text("""$schema: agent-blueprint@0.3.0
id: 01M8G9AE7CYN442XD7RWMSQTMP
slug: legacy-ifaces
type: agent-blueprint
version: 0.1.0
ownership:
  context: platform
a2a_projection:
  name: Legacy Interfaces
  description: An older blueprint with two more interfaces.
  url: https://agents.possibility.space/legacy-ifaces/
  version: "1.0.0"
  additional_interfaces:
    - {url: "grpc.agents.possibility.space:443", transport: GRPC}
    - {url: "https://agents.possibility.space/legacy-ifaces/rest", transport: "HTTP+JSON"}
  skills:
    - {id: s1, name: One, description: First., tags: [a]}
""", encoding="utf-8")
    code, out, _ = knoc("validate", "--a2a", "compat", "--format", "json", root=repo)
    said = [d for d in json_diags(out) if d["code"] == "KNO-PROTOCOL-UNSTATED" and "legacy-ifaces" in d["file"]]
    assert code == 0 and len(said) == 1
    assert "the main url (A2A 1.0, 0.3); 2 urls (A2A 1.0)" in said[0]["message"], said[0]["message"]
