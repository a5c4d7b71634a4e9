"""`knoc schemas`: the editors' JSON Schemas. Each stands alone (no
reference leaves the file), judges an entity as knoc does, and
yaml-language-server, given one, marks a wrong value type at its line."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from knoc.kinds.spec import nodes
from knoc.yaml.yaml12 import load_value
from tests.conftest import Knoc, json_diags, npm_installed
from tests.test_first_hour import run

YAML_LANGUAGE_SERVER = "yaml-language-server@1.19.2"
BLUEPRINT = "content/agent-blueprints/catalog-search.kno"


def exported(knoc: Knoc, repo: Path, *args: str) -> dict[str, bytes]:
    code, _, err = knoc("schemas", *args, root=repo)
    assert code == 0, err
    return {p.name: p.read_bytes() for p in sorted((repo / "schemas").iterdir())}


def test_one_schema_per_declaration_each_standing_alone_and_the_same_bytes_each_time(knoc: Knoc, repo: Path) -> None:
    first = exported(knoc, repo)
    assert "agent-blueprint@0.4.0.schema.json" in first and "perception-domain@0.1.0.schema.json" in first
    assert exported(knoc, repo) == first
    for name, data in first.items():
        schema = json.loads(data)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        refs = [n["$ref"] for n in nodes(schema) if isinstance(n, dict) and "$ref" in n]
        assert refs and all(r.startswith("#") for r in refs), name  # nothing outside the file
        resolver = Registry().with_resource("urn:alone", DRAFT202012.create_resource(schema)).resolver("urn:alone")
        for ref in set(refs):
            resolver.lookup(ref)  # a pointer that leads nowhere raises


def test_each_schema_judges_the_example_entities_as_knoc_does(knoc: Knoc, repo: Path) -> None:
    """Every entity of the example is valid by its schema; one given a
    wrong type is refused by the schema and by knoc at the same path."""
    schemas = {name: json.loads(data) for name, data in exported(knoc, repo).items()}
    for path in sorted((repo / "content").rglob("*.kno")):
        entity = load_value(path.read_text(encoding="utf-8"))
        assert isinstance(entity, dict)
        schema = schemas[f"{entity['$schema']}.schema.json"]
        assert not list(jsonschema.Draft202012Validator(schema).iter_errors(entity)), path
    blueprint = repo / BLUEPRINT
    text = blueprint.read_text(encoding="utf-8")
    blueprint.write_text(text.replace("\ntitle:", "\ntitle: [not, a, string]\nold_title:", 1), encoding="utf-8")
    entity = load_value(blueprint.read_text(encoding="utf-8"))
    assert isinstance(entity, dict)
    errors = list(jsonschema.Draft202012Validator(schemas[f"{entity['$schema']}.schema.json"]).iter_errors(entity))
    assert errors
    code, out, _ = knoc("validate", "--format", "json", "--no-cache", root=repo)
    assert code == 1 and any(d["code"] == "KNO-SCHEMA-TYPE" and d["file"] == BLUEPRINT for d in json_diags(out))


def test_init_points_vscode_at_the_schemas_and_leaves_settings_it_finds(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    code, _, err = run("init", str(fresh))
    assert code == 0, err
    settings = json.loads((fresh / ".vscode/settings.json").read_text(encoding="utf-8"))
    assert settings["files.associations"] == {"*.kno": "yaml"}
    for schema, glob in settings["yaml.schemas"].items():
        assert (fresh / schema).is_file(), schema
        assert glob.startswith("/content/") and glob.endswith("/*.kno")
    assert settings["yaml.schemas"]["./schemas/agent-blueprint@0.4.0.schema.json"] == "/content/agent-blueprints/*.kno"
    recommended = json.loads((fresh / ".vscode/extensions.json").read_text(encoding="utf-8"))
    assert recommended == {"recommendations": ["redhat.vscode-yaml"]}

    mine = tmp_path / "mine"
    (mine / ".vscode").mkdir(parents=True)
    (mine / ".vscode/settings.json").write_text('{"editor.tabSize": 2}\n', encoding="utf-8")
    code, _, err = run("init", str(mine))
    assert code == 0
    assert (mine / ".vscode/settings.json").read_text(encoding="utf-8") == '{"editor.tabSize": 2}\n'
    assert "did not write" in err and ".vscode/settings.json" in err

    linked, elsewhere = tmp_path / "linked", tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked.mkdir()
    (linked / ".vscode").symlink_to(elsewhere)  # never written through, and no reason to stop a new repo
    code, _, err = run("init", str(linked))
    assert code == 0 and (linked / "content/agent-blueprints/hello-agent.kno").is_file(), err
    assert list(elsewhere.iterdir()) == [] and "did not write" in err


def test_the_modeline_points_from_the_file_to_its_declared_schema(knoc: Knoc, repo: Path) -> None:
    code, out, err = knoc("schemas", "--modeline", str(repo / BLUEPRINT), root=repo)
    assert code == 0, err
    assert out == "# yaml-language-server: $schema=../../schemas/agent-blueprint@0.4.0.schema.json\n"


@pytest.mark.asyncio
async def test_yaml_language_server_marks_a_wrong_value_type_at_its_line(knoc: Knoc, repo: Path) -> None:
    server = npm_installed(YAML_LANGUAGE_SERVER) / "node_modules/yaml-language-server/bin/yaml-language-server"
    exported(knoc, repo)
    _, modeline, _ = knoc("schemas", "--modeline", str(repo / BLUEPRINT), root=repo)
    text = modeline + (repo / BLUEPRINT).read_text(encoding="utf-8").replace(
        "\ntitle:", "\ntitle: [not, a, string]\nold_title:", 1)
    line = text.splitlines().index("title: [not, a, string]")
    client = await ClientServerConfig(server_command=[shutil.which("node") or "node", str(server), "--stdio"]).start()
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=repo.as_uri()))
        uri = (repo / BLUEPRINT).as_uri()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
        for _ in range(400):
            found = [d for d in client.diagnostics.get(uri, []) if d.range.start.line == line]
            if found:
                break
            await asyncio.sleep(0.05)
        assert found, client.diagnostics.get(uri)
        assert any("type" in d.message.lower() and "string" in d.message.lower() for d in found), found
        assert all(d.range.start.line == line for d in client.diagnostics[uri]), client.diagnostics[uri]
        await client.shutdown_session()
    finally:
        await client.stop()


def test_schemas_are_written_with_the_umask_and_never_through_a_link(knoc: Knoc, repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_text("mine\n", encoding="utf-8")
    (out / "extension@0.1.0.schema.json").symlink_to(outside)
    code, _, err = knoc("schemas", "--out", str(out), root=repo)
    assert code == 2 and "KNO-WRITE" in err and "link" in err
    assert outside.read_text(encoding="utf-8") == "mine\n" and [p.name for p in out.iterdir()] == [
        "extension@0.1.0.schema.json"]  # refused before anything was written
    (out / "extension@0.1.0.schema.json").unlink()
    code, _, err = knoc("schemas", "--out", str(out), root=repo)
    assert code == 0, err
    umask = os.umask(0)
    os.umask(umask)
    assert {p.stat().st_mode & 0o777 for p in out.iterdir()} == {0o666 & ~umask}
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    code, _, err = knoc("schemas", "--out", str(dangling), root=repo)
    assert code == 2 and "not a folder" in err


def test_a_committed_schemas_link_is_never_written_through(knoc: Knoc, repo: Path, tmp_path: Path) -> None:
    """The user named no folder: the repo's schemas/ is the repo's, and a link there could lead anywhere."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "agent-card@0.1.0.schema.json").write_text("precious\n", encoding="utf-8")
    shutil.rmtree(repo / "schemas", ignore_errors=True)
    (repo / "schemas").symlink_to(victim)
    code, _, err = knoc("schemas", root=repo)
    assert code == 2 and "schemas is a link" in err
    assert [p.name for p in victim.iterdir()] == ["agent-card@0.1.0.schema.json"]
    assert (victim / "agent-card@0.1.0.schema.json").read_text(encoding="utf-8") == "precious\n"
    assert knoc("schemas", "--out", str(victim), root=repo)[0] == 0  # named: the user's folder to write to
