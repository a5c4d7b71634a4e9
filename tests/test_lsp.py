"""`knoc lsp` end to end: a real client (pytest-lsp) starts the server on
stdio in a copy of the example repo and works in it as an editor would."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import ROOT

BLUEPRINT = "content/agent-blueprints/catalog-search.kno"
DOMAINS_LINE = "    domains: [schemas, entity-health]"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]))
async def client(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[None]:
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=repo.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(repo.as_uri(), "repo")]))
    yield
    await lsp_client.shutdown_session()


async def opened(client: LanguageClient, path: Path) -> tuple[str, str]:
    uri, text = path.as_uri(), path.read_text(encoding="utf-8")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
    return uri, text


def replace_line(client: LanguageClient, uri: str, line: int, old: str, new: str, version: int = 2) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [lsp.TextDocumentContentChangePartial(lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old))), new)]))


async def findings(client: LanguageClient, uri: str, code: str, present: bool = True,
                   saying: str = "") -> list[lsp.Diagnostic]:
    """The file's diagnostics once one of `code` (whose message says
    `saying`) is among them (or gone)."""
    for _ in range(200):
        found = [d for d in client.diagnostics.get(uri, []) if d.code == code and saying in d.message]
        if bool(found) == present:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"{code} {'never came' if present else 'never went'}: {client.diagnostics.get(uri)}")


async def unsaved_typo(client: LanguageClient, repo: Path) -> str:
    """The blueprint open with an unknown domain typed in, not saved, and
    its finding shown; its uri."""
    uri, text = await opened(client, repo / BLUEPRINT)
    replace_line(client, uri, line_of(text, DOMAINS_LINE), DOMAINS_LINE, "    domains: [schemas, entity-healht]")
    await findings(client, uri, "KNO-RESOLVE-DOMAIN")
    return uri


def saved(client: LanguageClient, path: Path, uri: str, body: str) -> None:
    """`body` saved from the editor into the open document at `path`."""
    path.write_text(body, encoding="utf-8")
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))


def line_of(text: str, line: str) -> int:
    return text.splitlines().index(line)


def labels(found: lsp.CompletionList | list[lsp.CompletionItem] | None) -> list[str]:
    """The labels a completion offered, in order (none for no answer)."""
    items = found.items if isinstance(found, lsp.CompletionList) else found or []
    return [i.label for i in items]


@pytest.mark.asyncio
async def test_an_unknown_domain_is_reported_at_its_line_and_a_quick_fix_names_the_closest(
        client: LanguageClient, repo: Path) -> None:
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    replace_line(client, uri, at, DOMAINS_LINE, "    domains: [schemas, entity-healht]")
    [found] = await findings(client, uri, "KNO-RESOLVE-DOMAIN")
    assert found.range.start == lsp.Position(at, DOMAINS_LINE.index("entity-health"))
    assert "entity-healht" in found.message and found.severity == lsp.DiagnosticSeverity.Error

    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), found.range, lsp.CodeActionContext([found])))
    [action] = actions or []
    assert action.title == "Change to `entity-health`"
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[uri]
    assert edit.new_text == "entity-health" and edit.range == found.range

    replace_line(client, uri, at, "    domains: [schemas, entity-healht]", DOMAINS_LINE, version=3)
    await findings(client, uri, "KNO-RESOLVE-DOMAIN", present=False)


@pytest.mark.asyncio
async def test_the_findings_are_those_knoc_validate_reports(client: LanguageClient, repo: Path) -> None:
    """After an edit that breaks a field's type and another file's
    reference, the server publishes what `knoc validate` says of the same
    files saved."""
    uri, text = await opened(client, repo / BLUEPRINT)
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    replace_line(client, uri, line_of(text, title), title, "title: [not, a, string]")
    await findings(client, uri, "KNO-SCHEMA-TYPE")
    saved = text.replace(title, "title: [not, a, string]")
    (repo / BLUEPRINT).write_text(saved, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "knoc", "validate", "--format", "json", "--no-cache", "--root",
                          str(repo)], capture_output=True, text=True, cwd=ROOT)
    expected = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    wanted = sorted((d["code"], d["line"] - 1, d["column"] - 1) for d in expected if d.get("file") == BLUEPRINT)
    got = sorted((str(d.code), d.range.start.line, d.range.start.character) for d in client.diagnostics[uri])
    assert got == wanted and wanted


@pytest.mark.asyncio
async def test_completion_offers_the_domain_slugs_inside_domains(client: LanguageClient, repo: Path) -> None:
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    items = await client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("[") + 1)))
    assert items is not None
    assert labels(items) == sorted(p.stem for p in (repo / "content/perception-domains").glob("*.kno"))


@pytest.mark.asyncio
async def test_completion_offers_the_fields_the_spec_allows_and_its_enum_values(
        client: LanguageClient, repo: Path) -> None:
    uri, text = await opened(client, repo / BLUEPRINT)
    lines = text.splitlines()
    end = len(lines)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [lsp.TextDocumentContentChangePartial(lsp.Range(lsp.Position(end, 0), lsp.Position(end, 0)),
                                              "visibility: \n")]))
    await asyncio.sleep(0.2)
    fields = await client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(end + 1, 0)))
    names = set(labels(fields))
    assert {"composes", "relationships"} <= names and "slug" not in names  # slug is written already
    values = await client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(end, len("visibility: "))))
    assert set(labels(values)) == {"public", "private"}


@pytest.mark.asyncio
async def test_definition_of_a_domain_slug_lands_in_the_domain_file(client: LanguageClient, repo: Path) -> None:
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("entity-health") + 3)))
    assert isinstance(found, lsp.Location)
    target = repo / "content/perception-domains/entity-health.kno"
    assert found.uri == target.as_uri()
    assert target.read_text(encoding="utf-8").splitlines()[found.range.start.line].startswith("slug: entity-health")


@pytest.mark.asyncio
async def test_hover_shows_a_domains_title_and_purpose_and_a_fields_description(
        client: LanguageClient, repo: Path) -> None:
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    domain = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("schemas") + 1)))
    assert domain is not None and isinstance(domain.contents, lsp.MarkupContent)
    assert domain.contents.value.startswith("**Schemas** (perception-domain `schemas`)")
    field = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("domains") + 2)))
    assert field is not None and isinstance(field.contents, lsp.MarkupContent)
    assert "perception domains" in field.contents.value


@pytest.mark.asyncio
async def test_hover_never_shows_a_credential_another_file_holds(client: LanguageClient, repo: Path) -> None:
    """A hover quotes another entity's title and purpose: a key pasted
    there is masked, as in every message."""
    domain = repo / "content/perception-domains/schemas.kno"
    text = domain.read_text(encoding="utf-8")
    domain.write_text(text.replace("\ntitle: ", "\ntitle: Bearer q8f3k2m9x7v1b4n6c0z5pp ", 1), encoding="utf-8")
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    shown = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("schemas") + 1)))
    assert shown is not None and isinstance(shown.contents, lsp.MarkupContent)
    assert "Bearer ***" in shown.contents.value and "q8f3k2m9" not in shown.contents.value


@pytest.mark.asyncio
async def test_a_client_that_shows_plain_text_gets_plain_text(repo: Path) -> None:
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]).start()
    try:
        plain = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
            hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText])))
        await client.initialize_session(lsp.InitializeParams(capabilities=plain, root_uri=repo.as_uri()))
        uri, text = await opened(client, repo / BLUEPRINT)
        at = line_of(text, DOMAINS_LINE)
        domain = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(at, DOMAINS_LINE.index("schemas") + 1)))
        assert domain is not None and isinstance(domain.contents, lsp.MarkupContent)
        assert domain.contents.kind == lsp.MarkupKind.PlainText
        assert domain.contents.value.startswith("Schemas (perception-domain schemas)")
        await client.shutdown_session()
    finally:
        await client.stop()


@pytest.mark.asyncio
async def test_a_duplicate_id_gets_a_fresh_one_as_a_quick_fix(client: LanguageClient, repo: Path) -> None:
    """(The later file by path is flagged: drift-sentinel, given catalog-search's id.)"""
    other = (repo / BLUEPRINT).read_text(encoding="utf-8")
    their_id = next(line for line in other.splitlines() if line.startswith("id:"))
    uri, text = await opened(client, repo / "content/agent-blueprints/drift-sentinel.kno")
    mine = next(line for line in text.splitlines() if line.startswith("id:"))
    replace_line(client, uri, line_of(text, mine), mine, their_id)
    found = await findings(client, uri, "KNO-ID-DUPLICATE")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), found[0].range, lsp.CodeActionContext(found)))
    [action] = actions or []
    assert action.title.startswith("Give this entity a fresh id")
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[uri]
    assert len(edit.new_text) == 26 and edit.new_text not in (their_id, mine)


@pytest.mark.asyncio
async def test_document_symbols_outline_the_entity(client: LanguageClient, repo: Path) -> None:
    uri, _ = await opened(client, repo / BLUEPRINT)
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
    names = [s.name for s in found or [] if isinstance(s, lsp.DocumentSymbol)]
    assert names[:3] == ["$schema", "id", "slug"] and "a2a_projection" in names


@pytest.mark.asyncio
async def test_a_domain_renamed_marks_every_blueprint_naming_it(client: LanguageClient, repo: Path) -> None:
    """A change reaches the files it affects, open or not."""
    domain = repo / "content/perception-domains/entity-health.kno"
    uri, text = await opened(client, domain)
    replace_line(client, uri, line_of(text, "slug: entity-health"), "slug: entity-health", "slug: entity-wealth")
    naming = sorted(p for p in (repo / "content/agent-blueprints").glob("*.kno")
                    if "entity-health" in p.read_text(encoding="utf-8"))
    assert len(naming) >= 2
    for path in naming:
        assert await findings(client, path.as_uri(), "KNO-RESOLVE-DOMAIN")
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    for path in naming:  # closed unsaved: the file is as on disk again
        await findings(client, path.as_uri(), "KNO-RESOLVE-DOMAIN", present=False)


@pytest.mark.asyncio
async def test_outside_a_content_repo_the_server_answers_without_findings(tmp_path: Path) -> None:
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]).start()
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=tmp_path.as_uri()))
        (tmp_path / "a.kno").write_text("slug: x\n", encoding="utf-8")
        uri = (tmp_path / "a.kno").as_uri()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, "slug: x\n")))
        found = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0)))
        assert found is not None and not labels(found)
        assert not client.diagnostics
        await client.shutdown_session()
    finally:
        await client.stop()


@pytest.mark.asyncio
async def test_a_spec_counts_once_saved_and_the_open_buffers_stay_over_it(client: LanguageClient, repo: Path) -> None:
    """A spec that makes `title` a number marks every agent's title once
    the spec is saved; a blueprint's unsaved text stays what is compiled."""
    uri = await unsaved_typo(client, repo)
    spec = repo / "specs/document-schema.kno"
    body = spec.read_text(encoding="utf-8")
    spec_uri, _ = await opened(client, spec)
    changed = body.replace("title: {type: string", "title: {type: integer", 1)
    assert changed != body
    saved(client, spec, spec_uri, changed)
    await findings(client, uri, "KNO-SCHEMA-TYPE")
    assert await findings(client, uri, "KNO-RESOLVE-DOMAIN")  # the buffer, not the file on disk


@pytest.mark.asyncio
async def test_knoc_toml_counts_once_saved(client: LanguageClient, repo: Path) -> None:
    """knoc.toml saved with another primary agent: its finding appears on
    it; saved unreadable: that is the one finding on it, and the repo keeps
    the settings before; with another content folder, the open blueprint is no
    source; saved as it was: the findings on it go. An open buffer stays
    over its file throughout."""
    uri = await unsaved_typo(client, repo)
    config = repo / "knoc.toml"
    good = config.read_text(encoding="utf-8")
    config_uri, _ = await opened(client, config)
    saved(client, config, config_uri, good.replace('= "catalog-search"', '= "no-such-agent"'))
    [primary] = await findings(client, config_uri, "KNO-CONFIG-PRIMARY")
    assert "no-such-agent" in primary.message
    assert primary.range.start.line == next(i for i, line in enumerate(good.splitlines()) if '= "catalog-search"' in line)
    saved(client, config, config_uri, good.replace('a2a = "1.0"', 'a2a = "9.9"'))
    [unread] = await findings(client, config_uri, "KNO-CONFIG")
    assert "9.9" in unread.message
    # the settings before still apply to the other files, but their findings on knoc.toml would quote old lines
    await findings(client, config_uri, "KNO-CONFIG-PRIMARY", present=False)
    saved(client, config, config_uri, good.replace('a2a = "1.0"', 'a2a = 1.0.x'))  # not TOML: at its place
    [broken] = await findings(client, config_uri, "KNO-CONFIG", saying="line")
    a2a_line = next(i for i, line in enumerate(good.splitlines()) if line.startswith("a2a = "))
    assert broken.range.start.line == a2a_line and broken.range.start.character > 0
    saved(client, config, config_uri, good.replace('content = "content"', 'content = "content/perception-domains"'))
    await findings(client, uri, "KNO-RESOLVE-DOMAIN", present=False)  # no longer a source, as a build lists them
    typo = "    domains: [schemas, entity-healht]"
    replace_line(client, uri, line_of((repo / BLUEPRINT).read_text(encoding="utf-8"), DOMAINS_LINE), typo,
                 "    domains: [schemas, entity-helth]", version=3)  # typed while it is no source
    saved(client, config, config_uri, good)
    await findings(client, config_uri, "KNO-CONFIG", present=False)
    await findings(client, config_uri, "KNO-CONFIG-PRIMARY", present=False)
    await findings(client, uri, "KNO-RESOLVE-DOMAIN", saying="entity-helth")  # the buffer as last typed


@pytest.mark.asyncio
async def test_knoc_toml_changed_on_disk_counts_too(client: LanguageClient, repo: Path) -> None:
    """knoc.toml not open, changed on disk (a `git pull`): the client's
    file watcher says so, and the repo is compiled again under it."""
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('= "catalog-search"', '= "no-such-agent"'),
                      encoding="utf-8")
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(config.as_uri(), lsp.FileChangeType.Changed)]))
    await findings(client, config.as_uri(), "KNO-CONFIG-PRIMARY")


@pytest.mark.asyncio
async def test_a_knoc_toml_unread_at_the_start_is_a_finding_until_it_reads(repo: Path) -> None:
    """The server starts on a repo whose knoc.toml does not read: a finding
    on it; fixed on disk, the repo is compiled and the finding goes."""
    config = repo / "knoc.toml"
    good = config.read_text(encoding="utf-8")
    config.write_text(good.replace('a2a = "1.0"', 'a2a = "9.9"'), encoding="utf-8")
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]).start()
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=repo.as_uri()))
        [unread] = await findings(client, config.as_uri(), "KNO-CONFIG")
        assert "9.9" in unread.message and "nothing is checked" in unread.message
        uri, text = await opened(client, repo / BLUEPRINT)  # typed in while nothing is checked
        replace_line(client, uri, line_of(text, DOMAINS_LINE), DOMAINS_LINE, "    domains: [schemas, entity-healht]")
        config.write_text(good.replace('= "catalog-search"', '= "no-such-agent"'), encoding="utf-8")
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(config.as_uri(), lsp.FileChangeType.Changed)]))
        await findings(client, config.as_uri(), "KNO-CONFIG-PRIMARY")  # compiled under it now
        await findings(client, config.as_uri(), "KNO-CONFIG", present=False)
        assert await findings(client, uri, "KNO-RESOLVE-DOMAIN")  # and what was typed meanwhile
        await client.shutdown_session()
    finally:
        await client.stop()


@pytest.mark.asyncio
async def test_a_file_a_build_does_not_read_is_not_compiled(client: LanguageClient, repo: Path) -> None:
    """A backup copy outside content/ opened in the editor adds no
    duplicate to the real file, open or closed."""
    (repo / "backup").mkdir()
    copy = repo / "backup/entity-health.kno"
    copy.write_text((repo / "content/perception-domains/entity-health.kno").read_text(encoding="utf-8"),
                    encoding="utf-8")
    uri, _ = await opened(client, copy)
    await opened(client, repo / BLUEPRINT)
    await asyncio.sleep(1.0)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
    await asyncio.sleep(1.0)
    found = [d.code for diags in client.diagnostics.values() for d in diags]
    assert "KNO-ID-DUPLICATE" not in found and "KNO-SLUG-DUPLICATE" not in found and uri not in client.diagnostics


@pytest.mark.asyncio
async def test_positions_are_in_the_clients_units_and_comments_get_no_completion(
        client: LanguageClient, repo: Path) -> None:
    """An emoji before a finding counts two UTF-16 units, as the client
    counts; past the last line and inside a comment, nothing breaks."""
    uri, text = await opened(client, repo / BLUEPRINT)
    at = line_of(text, DOMAINS_LINE)
    new = "    domains: [\N{GRINNING FACE}x, entity-healht]"
    replace_line(client, uri, at, DOMAINS_LINE, new)
    found = await findings(client, uri, "KNO-RESOLVE-DOMAIN")
    healht = next(d for d in found if "entity-healht" in d.message)
    assert healht.range.start == lsp.Position(at, new.index("entity-healht") + 1)  # the emoji: two units
    lines = len(text.splitlines())
    for position in (lsp.Position(lines + 5, 0), lsp.Position(0, 200)):
        assert await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), position)) is not None
    comment = next(i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith("#"))
    items = await client.text_document_completion_async(lsp.CompletionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(comment, len(text.splitlines()[comment]))))
    assert items is not None and not labels(items)


@pytest.mark.asyncio
async def test_a_workspace_opened_through_a_link_gets_its_findings(tmp_path: Path) -> None:
    repo = tmp_path / "real"
    for part in ("content", "specs", "knoc.toml"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, repo / part)
    link = tmp_path / "link"
    link.symlink_to(repo)
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]).start()
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=link.as_uri()))
        path = link / BLUEPRINT
        uri, text = path.as_uri(), path.read_text(encoding="utf-8")
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
        replace_line(client, uri, line_of(text, DOMAINS_LINE), DOMAINS_LINE, "    domains: [nope]")
        assert await findings(client, uri, "KNO-RESOLVE-DOMAIN")
        await client.shutdown_session()
    finally:
        await client.stop()


def test_ctrl_c_ends_the_server_at_once(repo: Path) -> None:
    """The server writes nothing, so Ctrl-C ends it at once, with exit 130,
    even with its input still open (pygls alone would wait on that input)."""
    proc = subprocess.Popen([sys.executable, "-m", "knoc", "lsp"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(1.5)  # past its start
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130 and b"Traceback" not in err, err


def test_a_server_started_with_ctrl_c_ignored_keeps_ignoring_it(repo: Path) -> None:
    """`nohup knoc lsp`, or a script's `knoc lsp &`: Ctrl-C and a hang-up
    leave it running, as they were meant to."""
    proc = subprocess.Popen([sys.executable, "-m", "knoc", "lsp"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT,
                                                                                          signal.SIGHUP)])
    try:
        time.sleep(1.5)  # past its start
        proc.send_signal(signal.SIGINT)
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert proc.poll() is None  # still serving
        assert proc.stdin is not None
        proc.stdin.close()  # its client leaves: it ends
        proc.wait(timeout=20)
    finally:
        proc.kill()


def test_a_message_the_server_cannot_act_on_is_no_python_error(repo: Path) -> None:
    """A frame that is not JSON, a request whose parameters do not fit, and
    a change to a document never opened: one line in the editor's log each,
    no traceback, no "Error in server"; the request gets its answer (an error)."""
    def frame(body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)

    def message(method: str, params: dict[str, Any], id_: int | None = None) -> bytes:
        return frame(json.dumps({"jsonrpc": "2.0", "method": method, "params": params,
                                 **({"id": id_} if id_ is not None else {})}).encode())

    never_opened = (repo / "content/agent-blueprints/nope.kno").as_uri()
    sent = b"".join([
        message("initialize", {"processId": None, "rootUri": repo.as_uri(), "capabilities": {}}, 1),
        message("initialized", {}), frame(b"{not json"),
        message("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": "x"}}, 7),
        message("textDocument/didChange", {"textDocument": {"uri": never_opened, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}),
        message("shutdown", {}, 2), message("exit", {})])
    done = subprocess.run([sys.executable, "-m", "knoc", "lsp"], cwd=repo, input=sent, capture_output=True,
                          timeout=60)
    assert b"Traceback" not in done.stderr and b"Error in server" not in done.stdout, done.stderr
    assert b"KeyError" not in done.stdout + done.stderr and b"ignored a message" in done.stdout
    assert b'"id": 2' in done.stdout or b'"id":2' in done.stdout  # it went on, and answered the shutdown
    answers = [json.loads(body) for body in re.findall(rb"\r\n\r\n(\{.*?\})(?=Content-Length|$)", done.stdout, re.S)]
    [hover] = [a for a in answers if a.get("id") == 7]  # answered, or its client would wait for ever
    assert hover["error"]["code"] == -32602


def test_positions_count_lines_as_the_protocol_does() -> None:
    """A form feed ends no line for a client (nor for YAML): the finding
    after it stays on its line, one character wide, in UTF-16 units."""
    from pygls.workspace import PositionCodec

    from knoc.app.lsp import Positions
    from knoc.diagnostics import Span, diag

    text = "# a\x0c b\ntitle: \"S😀\u2028\"\n"
    found = Positions(text, PositionCodec()).diagnostic(diag("KNO-YAML-LINE-BREAK", "m", file="x.kno",
                                                             span=Span(2, 11, 12)))
    assert (found.range.start, found.range.end) == (lsp.Position(1, 11), lsp.Position(1, 12))


@pytest.mark.asyncio
async def test_an_outline_lists_a_node_aliases_reach_again_once(client: LanguageClient, repo: Path) -> None:
    """An alias of its own parent, and aliases of aliases thirty deep (2**30
    paths through them), outline at once: each node once, at its anchor."""
    bomb = "".join(f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]\n" for i in range(1, 31))
    path = repo / "content/perception-domains/aliases.kno"
    path.write_text("a: &a {b: *a}\nl0: &l0 [x, x]\n" + bomb, encoding="utf-8")
    uri, _ = await opened(client, path)
    found = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
    symbols = [s for s in found or [] if isinstance(s, lsp.DocumentSymbol)]
    assert [s.name for s in symbols] == ["a", "l0", *(f"l{i}" for i in range(1, 31))]
    assert [c.name for c in symbols[0].children or []] == ["b"] and not symbols[0].children[0].children  # type: ignore[index]
    assert [len(s.children or []) for s in symbols[2:]] == [2] * 30


@pytest.mark.asyncio
async def test_a_lone_surrogate_in_a_buffer_is_text_utf_8_cannot_hold(client: LanguageClient, repo: Path) -> None:
    """The protocol's JSON can carry one; a file cannot. It is found as a
    file holding it would be, and no bug is logged (with the buffer in it)."""
    uri, text = await opened(client, repo / "content/perception-domains/schemas.kno")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
        [lsp.TextDocumentContentChangeWholeDocument(text.replace("title: ", 'title: "\ud800" # ', 1))]))
    await findings(client, uri, "KNO-YAML-ENCODING")
    assert not [m for m in client.log_messages if "bug" in m.message]


@pytest.mark.asyncio
async def test_a_buffer_of_a_link_out_of_the_repo_is_refused(client: LanguageClient, repo: Path,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    """As `knoc validate` refuses the file on disk, typing in it changes nothing."""
    outside = tmp_path_factory.mktemp("outside") / "secret.kno"
    outside.write_text("secret: held outside\n", encoding="utf-8")
    link = repo / "content/perception-domains/linked.kno"
    link.symlink_to(outside)
    uri = link.as_uri()
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri, lsp.FileChangeType.Created)]))
    await findings(client, uri, "KNO-IO-REFUSED", saying="outside the repo")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, "x: [\n")))
    other, text = await opened(client, repo / "content/perception-domains/schemas.kno")  # compiled after it
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=2, uri=other), [lsp.TextDocumentContentChangeWholeDocument(
            text.replace("title: ", "title: [", 1))]))
    await findings(client, other, "KNO-YAML-SYNTAX")
    assert [d.code for d in client.diagnostics.get(uri, [])] == ["KNO-IO-REFUSED"]


@pytest.mark.asyncio
async def test_a_new_files_schema_is_its_folders_type_at_its_newest(client: LanguageClient, repo: Path) -> None:
    """What `knoc new` would write there, not the first declaration of all."""
    from knoc.config import load_config
    from knoc.incremental.driver import spec_set

    specs = spec_set(load_config(repo))[0]
    for folder, kind in (("agent-blueprints", "agent-blueprint"), ("perception-domains", "perception-domain")):
        newest = f"{kind}@{specs.versions_of(kind)[-1]}"
        path = repo / f"content/{folder}/fresh.kno"
        path.write_text("", encoding="utf-8")
        uri = path.as_uri()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, "")))
        field = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0)))
        assert [i.insert_text for i in (field.items if field else [])] == [f"$schema: {newest}"]
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=uri), [lsp.TextDocumentContentChangeWholeDocument(
                "$schema: ")]))
        values = await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(0, len("$schema: "))))
        ordered = sorted(values.items if values else [], key=lambda i: i.sort_text or i.label)
        assert ordered[0].label == newest and len(ordered) == len(specs.by_declaration)


@pytest.mark.asyncio
async def test_a_warning_knoc_toml_accepts_is_not_shown(repo: Path) -> None:
    """[accept] holds in the editor as in a build: the accepted warning is
    not published beside the file's other findings."""
    sentinel = "content/agent-blueprints/drift-sentinel.kno"
    config = repo / "knoc.toml"
    config.write_text(config.read_text(encoding="utf-8") + f'\n[accept]\nKNO-PROTOCOL-PATCH = ["{sentinel}"]\n',
                      encoding="utf-8")
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"]).start()
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=repo.as_uri()))
        uri, text = await opened(client, repo / sentinel)
        old = '  protocol_versions: ["1.0", "0.3"]'
        replace_line(client, uri, line_of(text, old), old, '  protocol_versions: ["1.0.0", "0.3"]')
        domains = next(line for line in text.splitlines() if line.startswith("    domains: ["))
        replace_line(client, uri, line_of(text, domains), domains, "    domains: [no-such-domain]", version=3)
        await findings(client, uri, "KNO-RESOLVE-DOMAIN")
        assert not [d for d in client.diagnostics.get(uri, []) if d.code == "KNO-PROTOCOL-PATCH"]
        await client.shutdown_session()
    finally:
        await client.stop()
