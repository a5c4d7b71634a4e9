"""`knoc import` on 20 public Agent Cards from the wild and on JSON files
that only look like cards (tests/data/cards/, sources in SOURCES.md)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as sdk_v03
from ruamel.yaml import YAML

from knoc.a2a.extensions import CONTRACT_URI, SERVICE_CLASS_URI
from knoc.config import load_config
from knoc.features.importing.importer import CARD_FIELDS
from knoc.incremental.driver import compile_repo
from knoc.yaml import yaml12
from tests.conftest import Knoc, json_diags, tree
from tests.test_official_checks import assert_v03_schema, assert_v10_strict

CARDS = Path(__file__).parent / "data/cards"
WILD = sorted((CARDS / "wild").glob("*.json"))
LOOKALIKES = sorted((CARDS / "lookalike").glob("*.json"))
# Every security requirement of these names a scheme knoc cannot carry (`http_security_scheme`, a
# token url of "..."): each is imported private, never to be published as open, and built by no test.
KEPT_PRIVATE = {"auto-agent-snake-case.json", "firm-ceo.json"}
PUBLISHED = [p for p in WILD if p.name not in KEPT_PRIVATE]
BLUEPRINTS = "content/agent-blueprints"


def imported_cards(repo: Path, knoc: Knoc, target: str) -> dict[str, dict[str, Any]]:
    """Import every wild card, build for `target`: source file name -> built card.
    A card that names no service url is imported with `--url` (each its own).
    For a 0.3 or compat build, a card whose interfaces speak only 1.0 gets no
    0.3 card (`KNO-PROTOCOL-TARGET`): it is left out, with its blueprint."""
    code, out, err = knoc("import", *map(str, WILD), "--format", "json", root=repo)
    asked = [d["file"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-NOT-CARD" and "--url" in d["message"]]
    assert not [d for d in json_diags(out) if d["severity"] == "error" and d["file"] not in asked], out
    for name in asked:
        code, out, err = knoc("import", name, "--url", f"https://imported.example/{Path(name).stem}", root=repo)
        assert code == 0, err
    slugs, private = {}, set()
    for path in (repo / BLUEPRINTS).glob("*.kno"):
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
        origin = (data.get("provenance") or {}).get("origin") or {}
        if origin.get("tool") == "knoc import":
            slugs[Path(origin["id"]).name] = data["slug"]
            if data.get("visibility") == "private":
                private.add(Path(origin["id"]).name)
    assert private == KEPT_PRIVATE
    result = compile_repo(load_config(repo, target))
    refused = {d.file for d in result.report.sorted() if d.code == "KNO-PROTOCOL-TARGET"}
    assert not [d for d in result.report.sorted() if d.is_error and d.code != "KNO-PROTOCOL-TARGET"]
    for rel in refused:
        (repo / rel).unlink()
    if refused:
        result = compile_repo(load_config(repo, target))
        assert result.ok, [d for d in result.report.sorted() if d.is_error]
    bodies = {c.slug: json.loads(c.projection.body) for c in result.cards}
    return {name: bodies[slug] for name, slug in slugs.items() if slug in bodies}


def test_the_corpus_is_varied_enough() -> None:
    assert len(WILD) >= 20 and len(LOOKALIKES) >= 5
    shapes = [json.loads(p.read_text(encoding="utf-8")) for p in WILD]
    assert any("authentication" in c for c in shapes)  # 0.1
    assert any(c.get("protocolVersion", "").startswith("0.2") for c in shapes)
    assert any(c.get("protocolVersion", "").startswith("0.3") for c in shapes)
    assert any("supportedInterfaces" in c and "url" not in c for c in shapes)  # 1.0
    assert any("supportedInterfaces" in c and "url" in c for c in shapes)  # mixed


@pytest.mark.parametrize("target", ["1.0", "0.3"])
def test_every_wild_card_imports_and_builds_a_strictly_valid_card(repo: Path, knoc: Knoc, target: str) -> None:
    built = imported_cards(repo, knoc, target)
    if target == "1.0":
        assert sorted(built) == sorted(p.name for p in PUBLISHED)
    else:  # the ones left out speak only 1.0: a 0.3 card would send 0.3 clients where nobody answers them
        assert len(built) >= len(WILD) // 2
    for name, card in built.items():
        (assert_v10_strict if target == "1.0" else assert_v03_schema)(card)


def test_round_trip_keeps_name_description_version_skills_and_capabilities(repo: Path, knoc: Knoc) -> None:
    built = imported_cards(repo, knoc, "1.0")
    for path in PUBLISHED:
        src, card = json.loads(path.read_text(encoding="utf-8")), built[path.name]
        assert card["name"] == src["name"], path.name
        if isinstance(src.get("description"), str) and src["description"]:
            assert card["description"] == src["description"], path.name
        if isinstance(src.get("version"), str):
            assert card["version"] == src["version"], path.name
        wanted = [s for s in src.get("skills") or [] if isinstance(s, dict) and s.get("id") and s.get("name")]
        got = {s["id"]: s for s in card["skills"]}
        for s in wanted:
            assert got[s["id"]]["name"] == s["name"], path.name
            if s.get("tags"):
                assert got[s["id"]]["tags"] == s["tags"], path.name
        caps = src.get("capabilities")
        if isinstance(caps, dict):
            for key in ("streaming", "pushNotifications"):
                if isinstance(caps.get(key), bool):
                    assert card["capabilities"].get(key, False) is caps[key], (path.name, key)


def sdk_reads(card: Any) -> bool:
    """Whether an official SDK's loader reads it as a card of some version:
    a2a-sdk 1.x's lenient `parse_agent_card` or the 0.3 model."""
    try:
        parse_agent_card(copy.deepcopy(card))
        return True
    except Exception:  # each SDK raises its own errors
        pass
    try:
        sdk_v03.AgentCard.model_validate(card)
        return True
    except Exception:
        return False


def _requirements(card: dict[str, Any]) -> list[dict[str, list[str]]]:
    """A card's or skill's security requirements, in either shape, as {scheme: scopes}."""
    found = list(card.get("security") or [])
    for r in card.get("securityRequirements") or []:
        found.append({n: v.get("list", []) for n, v in r["schemes"].items()} if "schemes" in r else r)
    return found


def _a2a_schemes(card: dict[str, Any]) -> set[str]:
    """The names of the card's schemes that A2A defines with usable values
    (an HTTP auth scheme's name, registered or not; http(s) urls): those must survive."""
    def web(url: Any) -> bool:
        return isinstance(url, str) and url.startswith(("https://", "http://")) and "..." not in url

    kept = set()
    for name, s in (card.get("securitySchemes") or {}).items():
        kind = s.get("type")
        for wrapper, wrapped in (("apiKeySecurityScheme", "apiKey"), ("httpAuthSecurityScheme", "http"),
                                 ("oauth2SecurityScheme", "oauth2"), ("openIdConnectSecurityScheme", "openIdConnect"),
                                 ("mtlsSecurityScheme", "mutualTLS")):
            if isinstance(s.get(wrapper), dict):
                s, kind = s[wrapper], wrapped
        flows = s.get("flows") if isinstance(s.get("flows"), dict) else {}
        if ((kind == "apiKey" and s.get("name")) or kind == "mutualTLS"
                or (kind == "http" and re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", str(s.get("scheme", ""))))
                or (kind == "openIdConnect" and web(s.get("openIdConnectUrl")))
                or (kind == "oauth2" and any(isinstance(f, dict) and web(f.get("tokenUrl")) for f in flows.values()))):
            kept.add(name)
    return kept


def import_card(card: dict[str, Any], knoc: Knoc, repo: Path, cards: Path) -> tuple[int, str, str]:
    """`knoc import --format json` of `card`, written as JSON into `cards` (a folder outside the repo)."""
    source = cards / "card.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    return knoc("import", str(source), "--format", "json", root=repo)


def test_every_card_an_official_sdk_reads_imports_with_name_skills_and_security(repo: Path, knoc: Knoc) -> None:
    """The SDKs judge what a card is: each real card here that one of them
    reads imports and builds a strict 1.0 card that keeps its name, skills
    and security requirements. The SDKs' loaders check types, not meaning
    (they read a schema.org page too): a file without a name or any field
    only agent cards have stays refused, and is under lookalike/."""
    for path in LOOKALIKES:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        card_shaped = isinstance(raw, dict) and raw.get("name") and CARD_FIELDS & set(raw) - {"capabilities"}
        assert not (sdk_reads(raw) and card_shaped), f"{path.name} is a card: move it to wild/"
    read = [p for p in PUBLISHED if sdk_reads(json.loads(p.read_text(encoding="utf-8")))]
    assert len(read) >= 20
    built = imported_cards(repo, knoc, "1.0")
    for path in read:
        src, card = json.loads(path.read_text(encoding="utf-8")), built[path.name]
        assert_v10_strict(card)
        assert card["name"] == src["name"], path.name
        got = {s["id"]: s for s in card["skills"]}
        for s in src.get("skills") or []:
            if isinstance(s, dict) and s.get("id") and s.get("name"):
                assert got[s["id"]]["name"] == s["name"], path.name
                wanted = [r for r in _requirements(s) if set(r) <= _a2a_schemes(src)]
                assert _requirements(got[s["id"]]) == wanted, path.name
        wanted = [r for r in _requirements(src) if set(r) <= _a2a_schemes(src)]
        assert _requirements(card) == wanted, path.name


@pytest.mark.parametrize("path", LOOKALIKES, ids=[p.stem for p in LOOKALIKES])
def test_files_that_only_look_like_cards_are_refused(repo: Path, knoc: Knoc, path: Path) -> None:
    before = tree(repo / "content")
    code, out, err = knoc("import", str(path), "--format", "json", root=repo)
    diags = json_diags(out)
    assert code == 1 and "Traceback" not in err
    assert [d["code"] for d in diags if d["severity"] == "error"] in (["KNO-IMPORT-NOT-CARD"], ["KNO-IMPORT-READ"])
    assert tree(repo / "content") == before


@pytest.mark.parametrize("url", ["https://agents.example.org/q?tenant=x", "https://agents.example.org/a#frag"])
def test_a_card_whose_only_url_cannot_publish_a_card_says_why(repo: Path, knoc: Knoc, tmp_path: Path,
                                                               url: str) -> None:
    card = {"name": "U", "description": "d", "url": url, "version": "1.0.0", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}]}
    (tmp_path / "u.json").write_text(json.dumps(card), encoding="utf-8")
    code, _, err = knoc("import", str(tmp_path / "u.json"), root=repo)
    assert code == 1 and "cannot import this card: none of its interfaces" in err and "--url" in err
    assert "names no A2A service url" not in err  # it names one


def test_interfaces_left_out_for_the_base_url_are_each_named(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    card = {"name": "Q", "description": "d", "url": "https://q.example.org/a?x=1", "version": "1.0.0",
            "additionalInterfaces": [{"url": "https://q.example.org/b?y=2", "transport": "HTTP+JSON"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}]}
    (tmp_path / "q.json").write_text(json.dumps(card), encoding="utf-8")
    code, out, _ = knoc("import", str(tmp_path / "q.json"), "--url", "https://q.example.org/agent", "--format",
                        "json", root=repo)
    paths = [d["json_path"] for d in json_diags(out) if "with the card's other interfaces" in d["message"]]
    assert code == 0 and paths == ["$.url", "$.additionalInterfaces[0]"]


def test_changes_are_warnings_with_their_json_path(repo: Path, knoc: Knoc) -> None:
    code, out, _ = knoc("import", str(CARDS / "wild/stitch.json"), "--format", "json", root=repo)
    paths = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    [signed] = [d for d in json_diags(out) if d["code"] == "KNO-IMPORT-SIGNATURE"]
    assert code == 0
    assert "not checked" in signed["message"] and "--allow-jku" in signed["hint"] and "$.x-zynd" in paths
    assert "$.capabilities.stateTransitionHistory" in paths
    written = YAML(typ="safe").load((repo / "content/agent-blueprints/codereview.kno").read_text(encoding="utf-8"))
    assert written["a2a_projection"]["protocol_versions"] == ["0.3"]  # as the card states it (0.3.0), kept
    # An HTTP authentication scheme no registry names is still one: every SDK reads it, and it is kept.
    assert "$.securitySchemes.zyndSig" not in paths and "$.security[0]" not in paths
    kept = written["a2a_projection"]["security_schemes"]["zyndSig"]
    assert (kept["type"], kept["scheme"]) == ("http", "ed25519-envelope")
    assert written["a2a_projection"]["security"] == [{"zyndSig": []}]


def test_a_scheme_knoc_cannot_carry_says_what_it_lacks(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    card = {"name": "N", "description": "d", "url": "https://n.example.org/a", "version": "1",
            "securitySchemes": {"h": {"type": "http", "scheme": "two words"}, "k": {"type": "apiKey"}},
            "security": [{"h": []}, {"k": []}],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}]}
    (tmp_path / "n.json").write_text(json.dumps(card), encoding="utf-8")
    code, out, _ = knoc("import", str(tmp_path / "n.json"), "--format", "json", root=repo)
    paths = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert code == 0 and "an HTTP authentication scheme's name" in paths["$.securitySchemes.h"]
    assert "needs `in` (header, query or cookie) and a `name`" in paths["$.securitySchemes.k"]
    assert "clients would read the agent as open" in paths["$.security[1]"]


def test_messy_shapes_are_converted_where_the_meaning_is_clear(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    card = {"name": "Messy", "url": "https://messy.example/a2a", "version": 2,
            "capabilities": {"streaming": "True", "pushNotifications": "false"},
            "extensions": [{"uri": SERVICE_CLASS_URI, "params": {"class": "utility"}},
                           {"uri": "https://ext.example/v1", "required": "false"}],
            "skills": ["Look things up", {"id": "x", "name": "X", "tags": "single"}]}
    source = tmp_path / "messy.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0, err
    changed = {d["json_path"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert {"$.version", "$.capabilities.streaming", "$.capabilities.pushNotifications", "$.extensions",
            "$.extensions[0]", "$.extensions[1].required", "$.skills[0]", "$.skills[1].tags"} <= changed
    data = YAML(typ="safe").load((repo / BLUEPRINTS / "messy.kno").read_text(encoding="utf-8"))
    projection = data["a2a_projection"]
    assert data["service_class"] == "utility" and projection["version"] == "2"
    assert projection["capabilities"] == {"streaming": True, "push_notifications": False,
                                          "extensions": [{"uri": "https://ext.example/v1", "required": False}]}
    assert [s["id"] for s in projection["skills"]] == ["look-things-up", "x"]
    built = compile_repo(load_config(repo, "1.0"))
    body = json.loads(next(c.projection.body for c in built.cards if c.slug == "messy"))
    assert_v10_strict(body)
    assert any(e["uri"] == SERVICE_CLASS_URI and e["params"] == {"class": "utility"}
               for e in body["capabilities"]["extensions"])


def test_each_list_entry_left_out_is_named_with_why(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """A blueprint's lists hold non-empty strings: an empty one or a number
    is left out, each a warning at its own index saying which it was."""
    card = {"name": "Lists", "description": "d", "url": "https://lists.example/a2a", "version": "1",
            "capabilities": {}, "defaultInputModes": ["text/plain", ""], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t", 5], "examples": ["", "ok"]}]}
    source = tmp_path / "lists.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0, err
    found = {d["json_path"]: d for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    changed = {path: d["message"] for path, d in found.items()}
    assert "an empty string" in changed["$.skills[0].examples[0]"]
    text = source.read_text(encoding="utf-8")  # each placed where the card writes it
    at = text.index('"examples": [""') + len('"examples": [') + 1
    assert (found["$.skills[0].examples[0]"]["line"], found["$.skills[0].examples[0]"]["column"]) == (1, at)
    assert "an empty string" in changed["$.defaultInputModes[1]"]
    assert "not a string" in changed["$.skills[0].tags[1]"]
    projection = YAML(typ="safe").load((repo / BLUEPRINTS / "lists.kno").read_text(encoding="utf-8"))["a2a_projection"]
    assert projection["skills"][0]["examples"] == ["ok"] and projection["skills"][0]["tags"] == ["t"]


def test_a_documentation_or_icon_url_a_viewer_cannot_follow_is_resolved_or_left_out(
        repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    card = {"name": "Links", "description": "d", "url": "https://links.example/a2a", "version": "1",
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
            "documentationUrl": "javascript:alert(1)", "iconUrl": "/icon.png"}
    source = tmp_path / "links.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--url", "https://links.example/a2a", "--format", "json",
                          root=repo)
    assert code == 0, out + err
    changed = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert "not an http(s) URL" in changed["$.documentationUrl"]
    assert "https://links.example/icon.png" in changed["$.iconUrl"]
    projection = YAML(typ="safe").load((repo / BLUEPRINTS / "links.kno").read_text(encoding="utf-8"))["a2a_projection"]
    assert "documentation_url" not in projection and projection["icon_url"] == "https://links.example/icon.png"


def test_a_card_at_an_agents_url_is_told_at_the_file_written(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """Outside git too: the new file sorts before the agent it copies, where
    the compiler tells a duplicate at the later file; `import` and
    `validate FILE` tell it at the file asked about."""
    card = {"name": "Aaa", "description": "d", "url": "https://agents.possibility.space/quick-summarizer",
            "version": "1", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    source = tmp_path / "aaa.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    assert not (repo / ".git").exists()
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    [dup] = [d for d in json_diags(out) if d["code"] == "KNO-URL-DUPLICATE"]
    assert code == 1 and dup["file"] == f"{BLUEPRINTS}/aaa.kno" and "quick-summarizer.kno" in dup["message"]
    code, out, _ = knoc("validate", f"{BLUEPRINTS}/aaa.kno", "--format", "json", root=repo)
    assert code == 1 and [d["file"] for d in json_diags(out) if d["code"] == "KNO-URL-DUPLICATE"] == [
        f"{BLUEPRINTS}/aaa.kno"]


def test_import_never_replaces_a_file_unless_forced(repo: Path, knoc: Knoc) -> None:
    source = str(CARDS / "wild/hoocode.json")
    assert knoc("import", source, root=repo)[0] == 0
    written = repo / BLUEPRINTS / "hoocode.kno"
    first = written.read_bytes()
    code, _, err = knoc("import", source, root=repo)
    assert code == 2 and "KNO-EXISTS" in err and written.read_bytes() == first  # as `knoc new`: exit 2
    assert knoc("import", source, "--force", root=repo)[0] == 0
    assert written.read_bytes() != first  # a fresh id


def test_import_from_a_url(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    (tmp_path / ".well-known").mkdir()
    (tmp_path / ".well-known/agent-card.json").write_bytes((CARDS / "wild/mangesh.json").read_bytes())
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        code, _, err = knoc("import", base, root=repo)
        assert code == 0, err
        data = YAML(typ="safe").load((repo / BLUEPRINTS / "mangesh-ai.kno").read_text(encoding="utf-8"))
        assert data["provenance"]["origin"]["id"] == base
        code, _, err = knoc("import", base + "/missing.json", root=repo)
        assert code == 1 and "KNO-IMPORT-READ" in err
    finally:
        server.shutdown()


def test_a_10_card_round_trips_every_security_field(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """Card- and skill-level requirements, PKCE and the device code flow
    survive import and rebuild: the card is not made less secure."""
    from tests.test_official_checks import VAULT

    (repo / BLUEPRINTS / "vault-keeper.kno").write_text(VAULT, encoding="utf-8")
    original = json.loads(compile_repo(load_config(repo, "1.0")).files[
        "site/agents.example.net/vault/.well-known/agent-card.json"])
    (repo / BLUEPRINTS / "vault-keeper.kno").unlink()
    source = tmp_path / "vault.json"
    source.write_text(json.dumps(original), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0, err
    security = {d["json_path"] for d in json_diags(out)
                if d["code"].startswith("KNO-IMPORT") and "ecurity" in (d.get("json_path") or "")}
    assert security == set(), security  # nothing about security dropped or converted
    rebuilt = json.loads(compile_repo(load_config(repo, "1.0")).files[
        "site/agents.example.net/vault/.well-known/agent-card.json"])
    for key in ("securitySchemes", "securityRequirements"):
        assert rebuilt[key] == original[key], key
    assert [s.get("securityRequirements") for s in rebuilt["skills"]] == [
        s.get("securityRequirements") for s in original["skills"]]


def test_text_with_line_breaks_yaml_parsers_disagree_on_round_trips(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """A description holding U+2028, U+2029 and U+0085 (pasted text) is
    written escaped, so the blueprint builds and the card says the same."""
    card = json.loads((WILD[0]).read_text(encoding="utf-8"))
    card["description"] = "Reads the feed.\u2028Then summarizes it.\u2029Next\x85line."
    card["url"] = "https://imported.example/odd-breaks"
    source = tmp_path / "odd-breaks.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0 and "KNO-YAML-LINE-BREAK" not in out, (out, err)
    result = compile_repo(load_config(repo, "1.0"))
    assert result.ok, result.report.sorted()
    rebuilt = [json.loads(body) for path, body in result.files.items() if "imported.example" in path
               and path.endswith("agent-card.json")]  # its own card, and its host's root copy
    assert rebuilt and all(c["description"] == card["description"] for c in rebuilt)


@pytest.mark.parametrize("name", ["card\nvisibility: private\n#.json", "pa\u2028th\x85.json"])
def test_the_source_named_in_the_header_cannot_change_the_blueprint(repo: Path, knoc: Knoc, tmp_path: Path,
                                                                     name: str) -> None:
    """The file name goes into the blueprint's header comment: one line,
    escaped, whatever it holds (a crafted name made the agent private)."""
    card = json.loads((WILD[0]).read_text(encoding="utf-8"))
    card["url"] = "https://imported.example/odd-name"
    source = tmp_path / name
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0, (out, err)
    [written] = [p for p in (repo / BLUEPRINTS).glob("*.kno") if "imported.example/odd-name" in p.read_text("utf-8")]
    text = written.read_text(encoding="utf-8")
    assert text.startswith("# Imported by `knoc import` from \"") and "visibility" not in yaml12.load(text)
    result = compile_repo(load_config(repo, "1.0"))
    assert result.ok and any("imported.example" in p for p in result.files), result.report.sorted()


def test_a_card_without_url_or_skills_asks_for_the_url_then_imports(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    source = tmp_path / "bare.json"
    source.write_text(json.dumps({"name": "Bare", "description": "Does one thing.", "capabilities": {}}),
                      encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    [refused] = [d for d in json_diags(out) if d["severity"] == "error"]
    assert code == 1 and refused["code"] == "KNO-IMPORT-NOT-CARD" and "`--url`" in refused["message"]
    assert not (repo / BLUEPRINTS / "bare.kno").exists()
    code, out, err = knoc("import", str(source), "--url", "https://agents.example.org/bare", "--format", "json",
                          root=repo)
    assert code == 0, err
    changed = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert "https://agents.example.org/bare" in changed["$.url"] and "standing for the whole agent" in changed[
        "$.skills"]
    built = compile_repo(load_config(repo, "1.0"))
    card = json.loads(built.files["site/agents.example.org/bare/.well-known/agent-card.json"])
    assert_v10_strict(card)
    assert [s["name"] for s in card["skills"]] == ["Bare"]
    assert knoc("import", str(source), "--url", "http://localhost:9/x", root=repo)[0] == 2  # not publishable


@pytest.mark.parametrize(("fetched", "base"), [
    ("https://x.example/agents/foo/.well-known/agent-card.json", "https://x.example/agents/foo"),
    ("https://x.example/agents/foo/card.json", "https://x.example/agents/foo"),
    ("https://x.example/agents/foo", "https://x.example/agents/foo"),
])
def test_a_fetched_card_is_served_from_the_folder_of_its_url(fetched: str, base: str) -> None:
    from knoc.features.importing.importer import base_of
    assert base_of(fetched) == base


@pytest.mark.parametrize(("name", "said"), [
    ("vap-e-rest", {"$.security": "the JS SDK reads this card as A2A 1.0",
                    "$.securitySchemes.vapeApiKey": "a2a-sdk 0.3 reads a scheme with no `type` as mutualTLS"}),
    ("agentic-organization", {"$.security": "the JS SDK reads this card as A2A 1.0",
                              "$.securitySchemes.personaToken": "it reads this one as empty"}),
])
def test_a_card_mixing_shapes_says_how_each_sdk_reads_its_security(repo: Path, knoc: Knoc, name: str,
                                                                   said: dict[str, str]) -> None:
    """Schemes of one A2A shape, requirements of the other: the JS SDK and
    a2a-sdk 0.3 read another security than the card knoc builds states."""
    code, out, err = knoc("import", str(CARDS / "wild" / f"{name}.json"), "--format", "json", root=repo)
    assert code == 0, err
    changed = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert all(path in changed and text in changed[path] for path, text in said.items()), changed


@pytest.mark.parametrize("target", ["1.0", "0.3", "compat"])
def test_a_card_knoc_built_imports_back_to_the_same_card(repo: Path, knoc: Knoc, tmp_path: Path,
                                                         target: str) -> None:
    """knoc's own capability-contract entry (which it refuses written by
    hand) goes back into the blueprint fields it is made of: a card knoc
    built is imported and built again as it was. A 0.3 card's entry also
    lists the versions each interface answers: onto the interfaces the card
    lists; one it does not list has no transport, and is said as dropped."""
    assert knoc("build", "--a2a", target, root=repo)[0] == 0
    for slug in ("catalog-search", "drift-sentinel"):
        built = repo / f"build/site/agents.possibility.space/{slug}/.well-known/agent-card.json"
        again = tmp_path / f"again-{slug}"
        shutil.copytree(repo, again, ignore=shutil.ignore_patterns("build", ".knoc-cache"))
        (again / BLUEPRINTS / f"{slug}.kno").unlink()
        code, out, _ = knoc("import", str(built), "--format", "json", root=again)
        assert code == 0 and not [d for d in json_diags(out) if d["severity"] == "error"], out
        assert "capability-contract" in out  # the conversion is said, with its JSON path
        assert knoc("build", "--a2a", target, root=again)[0] == 0
        [rebuilt] = [json.loads(p.read_text(encoding="utf-8")) for p in (again / "build/site").rglob("agent-card.json")
                     if f"/{slug}/" in p.as_posix()]  # at its url (a 0.3 card's is its 0.3 interface's)
        original = json.loads(built.read_text(encoding="utf-8"))
        if target == "0.3" and slug == "catalog-search":  # its 1.0-only urls are not on the 0.3 card
            assert "params.interfaces[0]: dropped" in out and "params.interfaces[1]: dropped" in out
            for card in (original, rebuilt):
                card["capabilities"]["extensions"][0]["params"].pop("interfaces", None)
        assert rebuilt == original, slug


def test_an_empty_list_of_skill_modes_is_said_as_dropped(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    """a2a-sdk 0.3 reads `outputModes: []` as no modes, 1.x and the JS SDK
    as the card's defaults, which the blueprint's skill takes: said."""
    source = tmp_path / "card.json"
    source.write_text(json.dumps({"name": "Empty Modes", "description": "d", "url": "https://e.example/a",
                                  "version": "1.0.0", "protocolVersion": "0.3.0", "capabilities": {},
                                  "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
                                  "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                                              "outputModes": []}]}), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    said = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert code == 0 and "a2a-sdk 0.3 reads it as no modes" in said.get("$.skills[0].outputModes", ""), said


@pytest.mark.parametrize(("params", "path", "said"), [
    ({"capabilities": [1, 2]}, "$.capabilities.extensions[0].params.capabilities", "not an object of capability flags"),
    ({"capabilities": {"streamingMessage": "yes"}}, "$.capabilities.extensions[0].params.capabilities.streamingMessage",
     "not a boolean"),
    ({"minProtocolVersion": 1.0}, "$.capabilities.extensions[0].params.minProtocolVersion", "not a version"),
    ({"capabilities": {"a b": True}}, '$.capabilities.extensions[0].params.capabilities["a b"]', "not a flag"),
])
def test_a_hostile_capability_contract_entry_is_said_where_and_why(repo: Path, knoc: Knoc, tmp_path: Path,
                                                                   params: dict[str, Any], path: str, said: str) -> None:
    card = {"name": "Contract", "description": "d", "url": "https://c.example/a", "version": "1.0.0",
            "protocolVersion": "0.3.0", "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "capabilities": {"extensions": [{"uri": CONTRACT_URI, "params": params}]},
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    source = tmp_path / "card.json"
    source.write_text(json.dumps(card, indent=2), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    found = {d["json_path"]: d for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert code == 0 and said in found[path]["message"], found
    assert found[path]["line"] > 1  # placed at the value, a key with a space included


def test_members_no_client_reads_are_said_with_quoted_paths(repo: Path, knoc: Knoc, tmp_path: Path) -> None:
    card = {"name": "Odd", "description": "d", "url": "https://o.example/a", "version": "1.0.0",
            "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "a.b": 1,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "foo": 1}}, "security": [{"bearer": []}],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    source = tmp_path / "card.json"
    source.write_text(json.dumps(card, indent=2), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    found = {d["json_path"]: d for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert code == 0 and "not a field of an A2A security scheme" in found["$.securitySchemes.bearer.foo"]["message"]
    assert '$["a.b"]' in found and found['$["a.b"]']["line"] > 1


def test_odd_scheme_values_are_converted_or_dropped_at_their_path(repo: Path, knoc: Knoc,
                                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """What a client reads of a scheme is kept or said: PKCE written as a
    string, scopes as a list of names or with descriptions that are not
    strings, an apiKey's `Header`, a description that is not a string; the
    entries knoc writes itself say what they do not carry of the card's."""
    card = {"name": "Odd Schemes", "description": "d", "url": "https://odd.example.org/a2a/", "version": "1.0.0",
            "protocolVersion": "0.3.0", "capabilities": {"extensions": [
                {"uri": "https://connect.actex.ai/extensions/service-class", "required": True,
                 "description": "svc", "params": {"class": "utility", "tier": "gold"}}]},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
            "securitySchemes": {
                "code": {"type": "oauth2", "description": 42, "flows": {"authorizationCode": {
                    "authorizationUrl": "https://auth.odd.example.org/a", "tokenUrl": "https://auth.odd.example.org/t",
                    "scopes": {"read": None, "n": 5}, "pkceRequired": "true"}}},
                "cc": {"type": "oauth2", "flows": {"clientCredentials": {
                    "tokenUrl": "https://auth.odd.example.org/t", "scopes": ["read", "write"]}}},
                "key": {"type": "apiKey", "in": "Header", "name": "X-Key"},
                "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": 7}},
            "security": [{"code": ["read"]}, {"cc": ["read"]}, {"key": []}, {"bearer": []}]}
    code, out, _ = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    said = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    assert code == 0
    flow = "$.securitySchemes.code.flows.authorizationCode"
    assert "the string \"true\" to a boolean" in said[f"{flow}.pkceRequired"]
    assert 'to the string ""' in said[f"{flow}.scopes.read"] and 'to the string "5"' in said[f"{flow}.scopes.n"]
    assert "a list of scope names" in said["$.securitySchemes.cc.flows.clientCredentials.scopes"]
    assert "`Header` to `header`" in said["$.securitySchemes.key.in"]
    assert "not a string" in said["$.securitySchemes.code.description"]
    assert "not a string" in said["$.securitySchemes.bearer.bearerFormat"]
    entry = "$.capabilities.extensions[0]"
    assert {f"{entry}.required", f"{entry}.description", f"{entry}.params.tier"} <= set(said)
    schemes = YAML(typ="safe").load((repo / BLUEPRINTS / "odd-schemes.kno").read_text(encoding="utf-8"))[
        "a2a_projection"]["security_schemes"]
    assert schemes["code"]["flows"]["authorization_code"]["pkce_required"] is True
    assert schemes["code"]["flows"]["authorization_code"]["scopes"] == {"read": "", "n": "5"}
    assert schemes["cc"]["flows"]["client_credentials"]["scopes"] == {"read": "", "write": ""}
    assert schemes["key"]["in"] == "header"


def test_a_card_whose_security_cannot_be_kept_is_imported_private(repo: Path, knoc: Knoc,
                                                                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """Its only scheme has a flow knoc cannot carry (implicit): without it
    the card would read as open, so the blueprint is private until its
    author states the requirement, and no build publishes it meanwhile."""
    card = {"name": "Implicit Only", "description": "d", "url": "https://odd.example.org/implicit/",
            "version": "1.0.0", "protocolVersion": "0.3.0", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
            "securitySchemes": {"imp": {"type": "oauth2", "flows": {"implicit": {
                "authorizationUrl": "https://auth.odd.example.org/a", "scopes": {"read": "Read"}}}}},
            "security": [{"imp": ["read"]}]}
    source = tmp_path_factory.mktemp("cards") / "implicit.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    assert code == 0 and "the blueprint is written private" in out
    data = YAML(typ="safe").load((repo / BLUEPRINTS / "implicit-only.kno").read_text(encoding="utf-8"))
    assert data["visibility"] == "private"
    assert knoc("build", root=repo)[0] == 0
    assert not list((repo / "build/site").glob("odd.example.org/implicit/.well-known/*"))
    source.write_text(json.dumps({**card, "name": "Not A List", "url": "https://odd.example.org/notalist/",
                                  "securitySchemes": {"k": {"type": "apiKey", "in": "header", "name": "X-Key"}},
                                  "security": "k"}), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    data = YAML(typ="safe").load((repo / BLUEPRINTS / "not-a-list.kno").read_text(encoding="utf-8"))
    assert code == 0 and data["visibility"] == "private" and "not a list of requirements; none is left" in out
    source.write_text(json.dumps({**card, "name": "Two Readings", "url": "https://odd.example.org/two/",
                                  "securitySchemes": {"o": {"type": "http", "scheme": "basic"}},
                                  "security": [{"o": []}], "securityRequirements": []}), encoding="utf-8")
    code, out, _ = knoc("import", str(source), "--format", "json", root=repo)
    data = YAML(typ="safe").load((repo / BLUEPRINTS / "two-readings.kno").read_text(encoding="utf-8"))
    assert code == 0 and data["visibility"] == "private", out  # 0.3 clients read "basic auth", 1.x "open"


def test_no_password_in_a_url_reaches_the_blueprint(repo: Path, knoc: Knoc,
                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    """A blueprint is committed and its card published: a user name and
    password in the card's urls are left out, and in its texts (a
    description, an example, a params key) masked, each said at its path
    without repeating them; one in --url is refused before anything is written."""
    card = {"name": "Secret Urls", "description": "Docs at https://ann:d0cs@docs.example.com/x; support:team@x.org",
            "url": "https://bob:hunter2@odd.example.org/a2a/",
            "version": "1.0.0", "protocolVersion": "0.3.0",
            "additionalInterfaces": [{"url": "https://eve:s3cret@odd.example.org/rest", "transport": "HTTP+JSON"}],
            "documentationUrl": "https://carol:pw0rd@odd.example.org/docs",
            "provider": {"organization": "Odd", "url": "https://dan:pr0v@odd.example.org/"},
            "securitySchemes": {"cc": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": "https://fay:t0ken@auth.odd.example.org/t", "scopes": {"read": "Read"}}}}},
            "security": [{"cc": ["read"]}],
            "capabilities": {"extensions": [{"uri": "https://odd.example.org/ext", "params": {
                "https://kay:k3y@odd.example.org/": True}}]},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "call //sl:pw9@example.com", "tags": ["t"],
                        "examples": ["fetch https://ex:pw10@example.com/q"]}]}
    source = tmp_path_factory.mktemp("cards") / "secret.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    said = {d["json_path"]: d["message"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    written = (repo / BLUEPRINTS / "secret-urls.kno").read_text(encoding="utf-8")
    assert code == 0 and {"$.url", "$.additionalInterfaces[0].url", "$.documentationUrl", "$.provider.url",
                          "$.securitySchemes.cc.flows.clientCredentials.tokenUrl"} <= set(said), said
    assert {"$.description", "$.skills[0].description", "$.skills[0].examples[0]"} <= set(said), said
    for secret in ("hunter2", "s3cret", "pw0rd", "pr0v", "t0ken", "d0cs", "k3y", "pw9", "pw10"):
        assert secret not in written and secret not in out + err
    assert "url: https://odd.example.org/a2a/" in written and "support:team@x.org" in written  # an address, kept
    code, out, err = knoc("import", str(source), "--force", "--url", "https://bob:hunter2@odd.example.org/x/",
                          root=repo)
    assert code == 2 and "user name or password" in err and "hunter2" not in out + err


def test_no_key_or_token_in_a_query_or_a_secret_member_reaches_the_blueprint(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A url's query or fragment parameter that carries a credential
    (`?api_key=`, `#access_token=`) is left out of the url, and the value of
    a member named as one (`password`, `Authorization`) is left out, each
    said at its path without repeating it; the rest of the url stays. A url
    kept whole (a provider's, an OAuth endpoint's) loses any parameter whose
    name a credential goes by, however short its value (`?pass=`, a SAS
    url's percent-encoded `sig`, `?code=`, `?key=`)."""
    card = {"name": "Leaky", "description": "Docs: https://docs.leaky.dev/x?api_key=SEKRET-1&lang=en",
            "url": "https://leaky.dev/a2a/", "version": "1.0.0", "protocolVersion": "0.3.0",
            "additionalInterfaces": [{"url": "https://leaky.dev/rest?api_key=SEKRET-2&region=eu",
                                      "transport": "HTTP+JSON"},
                                     {"url": "https://leaky.dev/grpc?key=agent-card", "transport": "JSONRPC"}],
            "documentationUrl": "https://leaky.dev/docs#access_token=SEKRET-3",
            "capabilities": {"extensions": [{"uri": "https://leaky.dev/ext", "params": {
                "password": "SEKRET-4", "headers": {"Authorization": "Bearer SEKRET-5"}, "region": "eu"}}]},
            "metadata": {"password": "SEKRET-7", "owner": "ops"},
            "provider": {"organization": "Leaky", "url": "https://leaky.dev/app;jsessionid=SEKRET-12?user=bob&pass=SEKRET-8&sig=A%2FSEKRET-9;session=SEKRET-11"},
            "securitySchemes": {"w": {"apiKeySecurityScheme": {"location": "header", "name": "X-K",
                                                               "value": "SEKRET-6"}},
                                "o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
                                    "tokenUrl": "https://leaky.dev/token?code=SEKRET-10&audience=api",
                                    "scopes": {"read": "Read"}}}}}},
            "security": [{"w": []}, {"o": ["read"]}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    source = tmp_path_factory.mktemp("cards") / "leaky.json"
    source.write_text(json.dumps(card), encoding="utf-8")
    code, out, err = knoc("import", str(source), "--format", "json", root=repo)
    said = {d["json_path"] for d in json_diags(out) if d["code"] == "KNO-IMPORT-CHANGED"}
    written = (repo / BLUEPRINTS / "leaky.kno").read_text(encoding="utf-8")
    assert code == 0 and {"$.description", "$.additionalInterfaces[0].url", "$.documentationUrl",
                          "$.capabilities.extensions[0].params.password",
                          "$.capabilities.extensions[0].params.headers.Authorization",
                          "$.securitySchemes.w.apiKeySecurityScheme.value", "$.provider.url",
                          "$.securitySchemes.o.oauth2SecurityScheme.flows.clientCredentials.tokenUrl",
                          "$.additionalInterfaces[1].url"} <= said, said
    assert "$.metadata" in said and not [p for p in said if p.startswith("$.metadata.")]  # left out whole, said once
    for secret in ("SEKRET-1", "SEKRET-2", "SEKRET-3", "SEKRET-4", "SEKRET-5", "SEKRET-6", "SEKRET-7", "SEKRET-8",
                   "SEKRET-9", "SEKRET-10", "SEKRET-11", "SEKRET-12", "agent-card"):
        assert secret not in written and secret not in out + err
    assert "https://leaky.dev/rest?region=eu" in written and "region: eu" in written
    assert "https://leaky.dev/app?user=bob" in written and "https://leaky.dev/token?audience=api" in written
    code, out, err = knoc("import", str(source), "--force", root=repo)  # text: each source excerpt masked too
    assert code == 0 and "KNO-IMPORT-CHANGED" in err and not [s for s in ("SEKRET", "agent-card") if s in out + err]


@pytest.mark.parametrize("url", ["https://corp.example.org/?a=\x7f", "https://corp.example.org/?x=\u202eevil",
                                 "https://corp.example.org/x\n", "https://[corp/", "https://[corp/?pass=1"])
def test_a_provider_url_with_a_character_no_reader_sees_is_left_out_and_said(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory, url: str) -> None:
    """A control character, a direction override or a trailing line break
    in a url kept whole: left out and said, so the blueprint builds."""
    card = {"name": "Odd Provider", "description": "d", "url": "https://odd.possibility.space/a2a/", "version": "1.0.0",
            "protocolVersion": "0.3.0", "provider": {"organization": "Corp", "url": url}, "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    code, out, err = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    assert code == 0 and "$.provider" in {d["json_path"] for d in json_diags(out)}, out + err
    assert "provider:" not in (repo / BLUEPRINTS / "odd-provider.kno").read_text(encoding="utf-8")


def test_an_oauth_endpoint_loses_its_fragment_not_its_flow(repo: Path, knoc: Knoc,
                                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """RFC 6749 3.1-3.2: an endpoint's url has no fragment. The fragment is
    left out and said; the flow, and the requirement on it, stay."""
    card = {"name": "Frag Token", "description": "d", "url": "https://frag.possibility.space/a2a/", "version": "1.0.0",
            "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
            "securitySchemes": {"o": {"type": "oauth2", "flows": {"clientCredentials": {
                "tokenUrl": "https://auth.possibility.space/token#code=SEKRET-F", "scopes": {"read": "Read"}}}}},
            "security": [{"o": ["read"]}]}
    code, out, _ = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    said = [d["message"] for d in json_diags(out) if d["json_path"] == "$.securitySchemes.o.flows.clientCredentials.tokenUrl"]
    assert code == 0 and any("without its fragment (not shown" in m for m in said) and "SEKRET-F" not in out, said
    assert len(said) == 1, said  # the credential it held went with the fragment: said once
    card["securitySchemes"]["o"]["flows"]["clientCredentials"]["tokenUrl"] = (  # type: ignore[index]
        "https://auth.possibility.space/token?api_key=SEKRET-Q#ghp_SEKRETFRAGMENT")
    (repo / BLUEPRINTS / "frag-token.kno").unlink()
    code, out, _ = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    said = [d["message"] for d in json_diags(out) if d["json_path"] == "$.securitySchemes.o.flows.clientCredentials.tokenUrl"]
    assert code == 0 and len(said) == 2 and "SEKRET" not in out, said  # the fragment, and the query's credential
    written = (repo / BLUEPRINTS / "frag-token.kno").read_text(encoding="utf-8")
    assert "token_url: https://auth.possibility.space/token\n" in written and "visibility: private" not in written


def test_a_card_with_no_url_to_publish_at_is_refused_without_repeating_its_secrets(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The refusal quotes the card's url: each parameter named as a
    credential masked, as import leaves it out of a url it keeps."""
    card = {"name": "Nowhere", "description": "d", "version": "1.0.0", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
            "supportedInterfaces": [{"url": "https://agent.possibility.space/a2a?bearer=SEKRET-1&x=1;sess=SEKRET-2"
                                            "#code=SEKRET-3", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    code, out, err = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    assert code != 0 and "KNO-IMPORT-NOT-CARD" in out + err and "SEKRET" not in out + err, out + err


def test_a_credential_named_with_escapes_inside_a_parameters_value_is_left_out(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`?next=/cb?%70ass=...`: a server decodes `%70ass` as `pass`; import
    leaves the parameter out of the url, says so masked, and the build
    publishes no trace of it."""
    card = {"name": "Nested Next", "description": "d", "url": "https://nested.possibility.space/a2a/",
            "version": "1.0.0", "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
            "documentationUrl": "https://docs.possibility.space/start?next=/cb?%70ass=SEKRETP"}
    code, out, err = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    assert code == 0 and "SEKRETP" not in out + err, out + err
    assert "SEKRETP" not in (repo / BLUEPRINTS / "nested-next.kno").read_text(encoding="utf-8")
    assert knoc("build", root=repo)[0] == 0
    assert not [p for p in (repo / "build").rglob("*") if p.is_file() and b"SEKRETP" in p.read_bytes()]


def test_an_interface_whose_url_holds_a_credential_in_its_path_is_left_out(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`.../api_key=.../` is a parameter written as a path segment: the
    interface goes whole (never kept without its url), `--url` stands in for
    the card's, and the secret reaches neither the blueprint nor a message."""
    card = {"name": "Path Secret", "description": "d", "version": "1.0.0", "protocolVersion": "0.3.0",
            "url": "https://agent.possibility.space/a2a/api_key=Zx81kLmN0pQrStUvWx/run", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "additionalInterfaces": [{"url": "https://agent.possibility.space/t/secret=abcdef1234567890abc/x",
                                      "transport": "JSONRPC"}],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    cards = tmp_path_factory.mktemp("cards")
    code, out, err = import_card(card, knoc, repo, cards)
    assert code == 1 and "--url" in out + err and "Zx81" not in out + err  # no url left to publish at
    code, out, err = knoc("import", str(cards / "card.json"), "--url", "https://agent.possibility.space/ps/",
                          "--format", "json", root=repo)
    said = {d["json_path"]: d["message"] for d in json_diags(out)}
    written = (repo / BLUEPRINTS / "path-secret.kno").read_text(encoding="utf-8")
    assert code == 0 and "left the interface out" in said["$.url"] + said["$.additionalInterfaces[0]"], said
    assert all(secret not in out + err + written for secret in ("Zx81", "abcdef1234567890"))
    assert "url: https://agent.possibility.space/ps/" in written and "additional_interfaces" not in written


def test_the_url_that_stands_in_speaks_the_versions_the_card_stated(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """`--url` stands in for a 1.0 card's one interface, left out: it speaks
    1.0, as the card said, not the 0.3 a card of 0.3's shape defaults to."""
    card = {"name": "Solo", "description": "d", "version": "1.0.0", "capabilities": {},
            "supportedInterfaces": [{"url": "https://agent.possibility.space/a2a/api_key=Zx81kLmN0pQrStUvWx/run",
                                     "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    cards = tmp_path_factory.mktemp("cards")
    (cards / "card.json").write_text(json.dumps(card), encoding="utf-8")
    code, out, _ = knoc("import", str(cards / "card.json"), "--url", "https://agent.possibility.space/solo/",
                        "--format", "json", root=repo)
    written = (repo / BLUEPRINTS / "solo.kno").read_text(encoding="utf-8")
    from knoc.yaml.yaml12 import load

    assert code == 0 and load(written)["a2a_projection"]["protocol_versions"] == ["1.0"], written
    assert any("speaking A2A 1.0" in d["message"] for d in json_diags(out)), out


def test_a_url_whose_credential_cannot_be_taken_out_is_left_out_whole(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A password in a url's path, or before an `@` browsers read as a path:
    `***` written in its place would make another url (another host). The
    field is left out, and said."""
    card = {"name": "Odd Urls", "description": "d", "url": "https://odd.possibility.space/a2a/", "version": "1.0.0",
            "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}],
            "documentationUrl": "https://docs.possibility.space\\@evil.example.org/page",
            "iconUrl": "https://www.possibility.space/docs&password=hunter2hunter2/icon.png"}
    code, out, err = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    said = {d["json_path"]: d["message"] for d in json_diags(out)}
    written = (repo / BLUEPRINTS / "odd-urls.kno").read_text(encoding="utf-8")
    assert code == 0 and "hunter2" not in out + err + written and "***" not in written, written
    assert "documentation_url" not in written and "icon_url" not in written
    assert "left the url out" in said["$.iconUrl"] and "left the url out" in said["$.documentationUrl"], said


@pytest.mark.parametrize(("size", "code"), [("source", "KNO-IO-REFUSED"), ("card", "KNO-CARD-SIZE")])
def test_a_card_whose_blueprint_every_build_would_refuse_is_not_written(
        repo: Path, knoc: Knoc, tmp_path_factory: pytest.TempPathFactory, size: str, code: str) -> None:
    """A source past knoc's size limit, or whose card is past a card's,
    would fail every later build: refused before it is written, with what
    to shorten."""
    from knoc.rules import limits

    long = limits.SOURCE_BYTES + 1 if size == "source" else limits.CARD_BYTES + 1
    card = {"name": "Wordy", "description": "w" * long, "url": "https://wordy.possibility.space/",
            "version": "1.0.0", "protocolVersion": "0.3.0", "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"], "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"]}]}
    exit_code, out, _ = import_card(card, knoc, repo, tmp_path_factory.mktemp("cards"))
    [refused] = [d for d in json_diags(out) if d["code"] == code]
    assert exit_code == 1 and "not written" in refused["message"] and not (repo / BLUEPRINTS / "wordy.kno").exists()
