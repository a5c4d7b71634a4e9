"""`knoc lsp`: a language server over stdio (pygls) for `.kno` files.

The repo is compiled once into memory (`knoc.incremental.live`); each
change to a buffer is compiled on one worker thread after a short pause
in the typing, and the file's findings are published at once; when the
change reaches the link stage, it runs next on that thread, and the
findings of every file it changes follow. Requests (completion, hover,
definition, symbols, code actions) are answered from what was last
compiled (`knoc.features.editor`)."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from knoc.app.common import at_new_files, open_repo
from knoc.app.outcome import UsageError
from knoc.diagnostics import Diagnostic, Severity
from knoc.features.editor.assist import Assistant, Symbol
from knoc.incremental.live import LiveRepo
from knoc.io import pool
from knoc.io.files import SOURCE_SUFFIX
from knoc.version import __version__

PAUSE = 0.05  # seconds of quiet in the typing before a change is compiled
_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning}
_SYMBOL = {"object": lsp.SymbolKind.Object, "array": lsp.SymbolKind.Array, "field": lsp.SymbolKind.Field}
_COMPLETION = {"field": lsp.CompletionItemKind.Field, "value": lsp.CompletionItemKind.EnumMember,
               "reference": lsp.CompletionItemKind.Reference}


class KnocServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("knoc", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.root: Path | None = None
        self.repo: LiveRepo | None = None
        self.assistant: Assistant | None = None
        self.compiler = pool.Serial("knoc-compile")  # one change at a time, in order
        self.pending: dict[str, str | None] = {}  # path -> its buffer's text (None: as on disk), to compile
        self.working = False  # whether `_work` runs
        self.worker: asyncio.Future[None] | None = None
        self.published: dict[str, list[Diagnostic]] = {}
        self.timer: asyncio.TimerHandle | None = None

    def rel(self, uri: str) -> str | None:
        """The repo-relative path of a document, if it is a source of the repo."""
        path = to_fs_path(uri)
        if self.root is None or path is None or not path.endswith(SOURCE_SUFFIX):
            return None
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def uri(self, rel: str) -> str:
        assert self.root is not None
        return from_fs_path(str(self.root / rel)) or ""

    def text(self, uri: str) -> str:
        return self.workspace.get_text_document(uri).source

    def start(self, folder: Path) -> None:
        try:
            config = open_repo(None, None, folder)
        except UsageError as exc:  # not in a content repo: nothing to check
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning, f"knoc: {exc}"))
            return
        self.root = config.root
        self.repo = LiveRepo(config)
        self.assistant = Assistant(self.repo)
        self.publish(self.repo.report())

    def changed(self, rel: str, text: str | None) -> None:
        """Compile `rel` as `text` once the typing pauses."""
        self.pending[rel] = text
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(PAUSE, self._compile)

    def _compile(self) -> None:
        self.timer = None
        if self.repo is not None and not self.working:  # a running worker takes what is pending when it is done
            self.working = True
            self.worker = asyncio.ensure_future(self._work(self.repo))

    async def _work(self, repo: LiveRepo) -> None:
        """The edits pending, each time some are, compiled on the compile
        thread and their findings published; then the link stage, if an
        edit needs it and no other edit waits (typing never queues one link
        stage behind another)."""
        relink = False
        try:
            while True:
                pending, self.pending = self.pending, {}
                if pending:
                    report, needs = await self.compiler.run(_edited, repo, pending)
                    relink = relink or needs
                elif relink:
                    report, relink = await self.compiler.run(repo.relinked), False
                else:
                    break
                self.publish(report)
        except Exception as exc:  # a bug in knoc: said, and the server goes on with what it had
            self.window_log_message(lsp.LogMessageParams(
                lsp.MessageType.Error, f"knoc could not compile the change (a bug in knoc, please report it): {exc!r}"))
        finally:
            self.working = False

    def publish(self, report: list[Diagnostic]) -> None:
        """Each file's findings, where they differ from those last published."""
        assert self.repo is not None
        by_file: dict[str, list[Diagnostic]] = defaultdict(list)
        for d in at_new_files(self.repo.config, report):
            if d.file:
                by_file[d.file].append(d)
        for rel in sorted(set(by_file) | set(self.published)):
            found = by_file.get(rel, [])
            if self.published.get(rel, []) != found:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                    self.uri(rel), [_diagnostic(d, self.repo.text(rel) or "") for d in found]))
        self.published = dict(by_file)


server = KnocServer()


@server.feature(lsp.INITIALIZED)
def initialized(ls: KnocServer, params: lsp.InitializedParams) -> None:
    folder = ls.workspace.root_path
    if folder:
        ls.start(Path(folder))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: KnocServer, params: lsp.DidOpenTextDocumentParams) -> None:
    rel = ls.rel(params.text_document.uri)
    if rel is not None:
        ls.changed(rel, params.text_document.text)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: KnocServer, params: lsp.DidChangeTextDocumentParams) -> None:
    rel = ls.rel(params.text_document.uri)
    if rel is not None:
        ls.changed(rel, ls.text(params.text_document.uri))


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: KnocServer, params: lsp.DidCloseTextDocumentParams) -> None:
    rel = ls.rel(params.text_document.uri)
    if rel is not None:
        ls.changed(rel, None)  # as it is on disk again


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_files(ls: KnocServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        rel = ls.rel(change.uri)
        if rel is not None:
            ls.changed(rel, None)


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[" ", "[", ",", "/", ":"]))
def completion(ls: KnocServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    if ls.assistant is None or ls.rel(params.text_document.uri) is None:
        return lsp.CompletionList(is_incomplete=False, items=[])
    found = ls.assistant.complete(ls.text(params.text_document.uri), params.position.line,
                                  params.position.character)
    return lsp.CompletionList(is_incomplete=False, items=[
        lsp.CompletionItem(c.label, kind=_COMPLETION[c.kind], detail=c.detail or None,
                           documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, c.documentation)
                           if c.documentation else None, insert_text=c.insert) for c in found])


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: KnocServer, params: lsp.HoverParams) -> lsp.Hover | None:
    if ls.assistant is None or ls.rel(params.text_document.uri) is None:
        return None
    text = ls.assistant.hover(ls.text(params.text_document.uri), params.position.line, params.position.character)
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text)) if text else None


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: KnocServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    if ls.assistant is None or ls.rel(params.text_document.uri) is None:
        return None
    place = ls.assistant.definition(ls.text(params.text_document.uri), params.position.line,
                                    params.position.character)
    if place is None:
        return None
    at = lsp.Position(place.line, place.character)
    return lsp.Location(ls.uri(place.rel), lsp.Range(at, at))


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def symbols(ls: KnocServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    if ls.assistant is None or ls.rel(params.text_document.uri) is None:
        return []
    return [_symbol(s) for s in ls.assistant.symbols(ls.text(params.text_document.uri))]


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
def code_actions(ls: KnocServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    rel = ls.rel(params.text_document.uri)
    if ls.assistant is None or rel is None:
        return []
    lines = range(params.range.start.line, params.range.end.line + 1)
    here = [d for d in ls.published.get(rel, []) if d.span is not None and d.span.line - 1 in lines]
    text = ls.text(params.text_document.uri)
    actions = []
    for fix in ls.assistant.fixes(here, text):
        where = lsp.Range(lsp.Position(fix.line, fix.start), lsp.Position(fix.line, fix.end))
        edit = lsp.WorkspaceEdit(changes={params.text_document.uri: [lsp.TextEdit(where, fix.text)]})
        actions.append(lsp.CodeAction(fix.title, kind=lsp.CodeActionKind.QuickFix, is_preferred=True, edit=edit,
                                      diagnostics=[_diagnostic(fix.diagnostic, text)]))
    return actions


def _edited(repo: LiveRepo, pending: dict[str, str | None]) -> tuple[list[Diagnostic], bool]:
    """Compile each pending edit; every finding, and whether the link stage must run again."""
    relink = False
    for rel, text in pending.items():
        relink = repo.edit(rel, text) or relink
    return repo.report(), relink


def _diagnostic(d: Diagnostic, text: str) -> lsp.Diagnostic:
    """A finding as the protocol has it: 0-based, the rest of the line when its end is not known."""
    line = (d.span.line - 1) if d.span else 0
    start = (d.span.column - 1) if d.span else 0
    lines = text.splitlines()
    end = (d.span.end_column - 1) if d.span and d.span.end_column else len(lines[line]) if line < len(lines) else start
    message = d.message + (f"\n{d.hint}" if d.hint else "")
    return lsp.Diagnostic(lsp.Range(lsp.Position(line, start), lsp.Position(line, max(start, end))), message,
                          severity=_SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Information), code=d.code,
                          source="knoc")


def _symbol(s: Symbol) -> lsp.DocumentSymbol:
    whole = lsp.Range(lsp.Position(s.line, s.character), lsp.Position(s.end_line, s.end_character))
    name = lsp.Range(lsp.Position(s.line, s.character), lsp.Position(s.line, s.character + len(s.name)))
    return lsp.DocumentSymbol(s.name, _SYMBOL[s.kind], whole, name, children=[_symbol(c) for c in s.children])


def serve() -> None:
    """Speak the protocol on stdin and stdout until the client leaves."""
    logging.getLogger("pygls").setLevel(logging.WARNING)
    server.start_io()
