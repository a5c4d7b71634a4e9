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
import dataclasses
import logging
import os
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from knoc.app.common import at_new_files, open_repo
from knoc.app.lsp_positions import Positions
from knoc.app.lsp_protocol import KnocProtocol
from knoc.app.outcome import UsageError, as_usage
from knoc.config import CONFIG_FILE
from knoc.diagnostics import Diagnostic
from knoc.diagnostics.accepted import split
from knoc.diagnostics.internal import summary
from knoc.features.editor.assist import Assistant
from knoc.incremental.live import LiveRepo
from knoc.io import files, interrupts, pool
from knoc.kinds.entity import BUILTIN
from knoc.version import __version__

PAUSE = 0.025  # seconds of quiet in the typing before a change is compiled
_COMPLETION = {"field": lsp.CompletionItemKind.Field, "value": lsp.CompletionItemKind.EnumMember,
               "reference": lsp.CompletionItemKind.Reference}


class KnocServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("knoc", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=KnocProtocol)
        self.roots: tuple[Path, ...] = ()  # the repo as the client names it, then with links resolved
        self.repo: LiveRepo | None = None
        self.assistant: Assistant | None = None
        self.compiler = pool.Serial("knoc-compile")  # one change at a time, in order
        self.pending: dict[str, str | None] = {}  # path -> its buffer's text (None: as on disk), to compile
        self.working = False  # whether `_work` runs
        self.worker: asyncio.Future[None] | None = None
        self.published: dict[str, list[Diagnostic]] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.folder: Path | None = None  # the workspace the client opened
        self.unread_config: list[Diagnostic] = []  # why knoc.toml, as last saved, does not read

    def report_server_error(self, error: Exception, source: type[Exception]) -> None:
        """A message knoc cannot act on (not JSON-RPC, a change to a document never opened): said in the
        client's log in knoc's words, not as a Python error; a request's own error goes in its answer."""
        if source is not FeatureRequestError:
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning, IGNORED))

    def markup(self, where: str, text: str) -> lsp.MarkupContent:
        """`text` (Markdown) as Markdown where the client shows it, else as
        plain text without its emphasis marks: the client lists the kinds it takes."""
        docs = self.client_capabilities.text_document
        kinds = ((docs.hover.content_format if docs and docs.hover else None) if where == "hover" else
                 (docs.completion.completion_item.documentation_format
                  if docs and docs.completion and docs.completion.completion_item else None))
        if kinds is None or lsp.MarkupKind.Markdown in kinds:  # none listed: either may be sent
            return lsp.MarkupContent(lsp.MarkupKind.Markdown, text)
        return lsp.MarkupContent(lsp.MarkupKind.PlainText, text.replace("**", "").replace("`", ""))

    def rel(self, uri: str) -> str | None:
        """The repo-relative path of a document, if it may be a source of
        the repo (the repo's listing has the last word: `LiveRepo.edit`)."""
        path = to_fs_path(uri)
        if path is None or not path.endswith(files.SOURCE_SUFFIX):
            return None
        for root in self.roots:
            try:
                return Path(os.path.normpath(path)).relative_to(root).as_posix()
            except ValueError:
                continue
        return None

    def uri(self, rel: str) -> str:
        """Where the client knows `rel` (under the root as it named it)."""
        return from_fs_path(str(self.roots[0] / rel)) or ""

    def buffer(self, uri: str) -> tuple[str, str] | None:
        """An open document of the repo: its path and its text."""
        document = self.workspace.text_documents.get(unquote(uri))
        rel = self.rel(uri)
        return None if document is None or rel is None else (rel, document.source)

    def opened(self, uri: str) -> tuple[str, str, Positions] | None:
        """An open document of the repo, once the repo is compiled: its
        path, its text, and how its positions are counted. Requests are
        answered for those only (never by reading a file the editor has not
        opened)."""
        here = self.buffer(uri)
        if here is None or self.assistant is None:
            return None
        return *here, Positions(here[1], self.workspace.position_codec)

    def at(self, params: lsp.CompletionParams | lsp.HoverParams | lsp.DefinitionParams
           ) -> tuple[Assistant, str, int, int] | None:
        """The assistant, an open document's text, and the request's line
        and character in it (as knoc counts them), or None."""
        here = self.opened(params.text_document.uri)
        if here is None or self.assistant is None:
            return None
        return self.assistant, here[1], *here[2].inward(params.position)

    def is_config(self, uri: str) -> bool:
        """Whether a document is the repo's knoc.toml (or, when none read
        at the start, the workspace's)."""
        path = to_fs_path(uri)
        roots = self.roots or ((self.folder,) if self.folder is not None else ())
        return path is not None and any(Path(os.path.normpath(path)) == root / CONFIG_FILE for root in roots)

    def start(self, folder: Path) -> None:
        self.folder = folder
        try:
            config = open_repo(None, None, folder)
        except UsageError as exc:  # not in a content repo, or its knoc.toml does not read: nothing to check
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Warning, f"knoc: {exc}"))
            if files.present(folder / CONFIG_FILE):  # said on it, until it reads (`reconfigure`)
                self.roots = (folder,)
                self._unread(exc)
            return
        self.roots = tuple(dict.fromkeys((_as_named(config.root, folder), config.root)))
        try:
            self.repo = LiveRepo(config)
        except Exception as exc:  # a damaged cache, an unreadable specs folder, a bug: said, and no findings
            usage = as_usage(exc)
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"knoc: {usage or repr(exc)}"))
            return
        self.assistant = Assistant(self.repo)
        self.unread_config = []
        self.publish(self.repo.report())
        pool.settled()

    async def reconfigure(self) -> None:
        """knoc.toml saved: read again, and the whole repo compiled again
        under it, on the compile thread after the work before it (the open
        buffers stay over their files). A knoc.toml that does not read is a
        finding on it, and the settings read before stay in force."""
        if self.repo is None:  # it did not read when the server started
            if self.folder is not None:
                self.start(self.folder)
                self._compile()  # what was typed meanwhile
            return
        try:
            config = open_repo(self.repo.config.root, None, self.repo.config.root)
        except UsageError as exc:
            self._unread(exc)
            self.publish(await self.compiler.run(self.repo.report))
            return
        was_unread, self.unread_config = self.unread_config, []
        if config == self.repo.config:  # saved as it was, or said twice (a save, then the file watcher)
            if was_unread:
                self.publish(await self.compiler.run(self.repo.report))
            return
        self.publish(await self.compiler.run(self.repo.reconfigure, config))
        await self.compiler.run(pool.settled)

    def _unread(self, exc: UsageError) -> None:
        """knoc.toml does not read: a finding on it, published with the
        others (by the caller), or alone while no repo is compiled."""
        until = "nothing is checked" if self.repo is None else "the settings read before apply"
        hint = exc.hint or f"fix it; until then, {until}"
        self.unread_config = [dataclasses.replace(exc.finding(), file=CONFIG_FILE, hint=hint)]
        if self.repo is None:
            self.publish([])

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
                loads = repo.loads
                if pending:
                    report, needs = await self.compiler.run(_edited, repo, pending)
                    relink = relink or needs
                elif relink:
                    report, relink = await self.compiler.run(repo.relinked), False
                else:
                    break
                self.publish(report)
                if repo.loads != loads:  # a spec saved: the whole repo compiled again
                    await self.compiler.run(pool.settled)
        except Exception as exc:  # a bug in knoc: said, and the server goes on with what it had
            self.window_log_message(lsp.LogMessageParams(
                lsp.MessageType.Error, f"knoc could not compile the change (a bug in knoc, please report it): "
                f"{summary(exc)}"))
        finally:
            self.working = False

    def publish(self, report: list[Diagnostic]) -> None:
        """Each file's findings (knoc.toml's, while it does not read, why
        alone), where they differ from those last published."""
        found_all = [*(split(report, self.repo.config.accept)[0] if self.repo is not None else report),
                     *self.unread_config]  # an accepted warning is the repo's choice: not shown, as in a build
        by_file: dict[str, list[Diagnostic]] = defaultdict(list)
        for d in at_new_files(self.repo.config, found_all) if self.repo is not None else found_all:
            if d.file and not d.file.startswith(BUILTIN) and (  # a repo's file; knoc.toml's not read: that alone
                    d.file != CONFIG_FILE or not self.unread_config or d in self.unread_config):
                by_file[d.file].append(d)
        for rel in sorted(set(by_file) | set(self.published)):
            found = by_file.get(rel, [])
            if self.published.get(rel, []) != found:
                text = self.repo.text(rel) if self.repo is not None else None
                if text is None and rel == CONFIG_FILE:  # a finding on knoc.toml, at its line
                    text = self._config_text()
                at = Positions(text or "", self.workspace.position_codec)
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                    self.uri(rel), [at.diagnostic(d) for d in found]))
        self.published = dict(by_file)

    def _config_text(self) -> str:
        """knoc.toml as on disk (as it was read), or nothing when it does not read."""
        try:
            return files.read_source(str(self.roots[-1] / CONFIG_FILE), str(self.roots[-1])).decode("utf-8")
        except (OSError, UnicodeDecodeError, IndexError):
            return ""


server = KnocServer()


@server.feature(lsp.INITIALIZED)
async def initialized(ls: KnocServer, params: lsp.InitializedParams) -> None:
    folder = ls.workspace.root_path
    if folder:
        ls.start(Path(folder))
    watched = ls.client_capabilities.workspace and ls.client_capabilities.workspace.did_change_watched_files
    if ls.folder is not None and watched and watched.dynamic_registration:  # files made, changed or deleted on disk
        await ls.client_register_capability_async(lsp.RegistrationParams([lsp.Registration(
            "knoc-sources", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            lsp.DidChangeWatchedFilesRegistrationOptions([lsp.FileSystemWatcher(f"**/*{files.SOURCE_SUFFIX}"),
                                                          lsp.FileSystemWatcher(f"**/{CONFIG_FILE}")]))]))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: KnocServer, params: lsp.DidOpenTextDocumentParams) -> None:
    rel = ls.rel(params.text_document.uri)
    if rel is not None:
        ls.changed(rel, params.text_document.text)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: KnocServer, params: lsp.DidChangeTextDocumentParams) -> None:
    here = ls.buffer(params.text_document.uri)  # kept even while no repo is compiled (a knoc.toml that does not read)
    if here is not None:
        ls.changed(*here)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: KnocServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if ls.is_config(params.text_document.uri):
        await ls.reconfigure()
        return
    rel = ls.rel(params.text_document.uri)
    if rel is not None:  # a spec counts once saved, a new file is a source once on disk: read from there
        ls.changed(rel, None)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: KnocServer, params: lsp.DidCloseTextDocumentParams) -> None:
    rel = ls.rel(params.text_document.uri)
    if rel is not None:
        ls.changed(rel, None)  # as it is on disk again


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_files(ls: KnocServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    if any(ls.is_config(change.uri) for change in params.changes):
        await ls.reconfigure()
    for change in params.changes:
        rel = ls.rel(change.uri)
        if rel is not None and unquote(change.uri) not in ls.workspace.text_documents:  # an open buffer wins
            ls.changed(rel, None)


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[" ", "[", ",", "/", ":"]))
def completion(ls: KnocServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    at = ls.at(params)
    rel = ls.rel(params.text_document.uri) or ""
    found = at[0].complete(*at[1:], rel=rel) if at is not None else []
    return lsp.CompletionList(is_incomplete=False, items=[
        lsp.CompletionItem(c.label, kind=_COMPLETION[c.kind], detail=c.detail or None,
                           documentation=ls.markup("completion", c.documentation)
                           if c.documentation else None, insert_text=c.insert, sort_text=c.order) for c in found])


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: KnocServer, params: lsp.HoverParams) -> lsp.Hover | None:
    at = ls.at(params)
    text = at[0].hover(*at[1:]) if at is not None else None
    return lsp.Hover(ls.markup("hover", text)) if text else None


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: KnocServer, params: lsp.DefinitionParams) -> lsp.Location | None:
    at = ls.at(params)
    place = at[0].definition(*at[1:]) if at is not None else None
    if place is None:
        return None
    start = lsp.Position(place.line, place.character)  # the start of a line: the same in every unit
    return lsp.Location(ls.uri(place.rel), lsp.Range(start, start))


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def symbols(ls: KnocServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    here = ls.opened(params.text_document.uri)
    if here is None or ls.assistant is None:
        return []
    return [here[2].symbol(s) for s in ls.assistant.symbols(here[1])]


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION)
def code_actions(ls: KnocServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    here = ls.opened(params.text_document.uri)
    if here is None or ls.assistant is None:
        return []
    rel, text, at = here
    first, last = at.inward(params.range.start)[0], at.inward(params.range.end)[0]
    found = [d for d in ls.published.get(rel, []) if d.span is not None and first <= d.span.line - 1 <= last]
    actions = []
    for fix in ls.assistant.fixes(found, text):
        edit = lsp.WorkspaceEdit(changes={params.text_document.uri: [
            lsp.TextEdit(at.range(fix.line, fix.start, fix.end), fix.text)]})
        actions.append(lsp.CodeAction(fix.title, kind=lsp.CodeActionKind.QuickFix, is_preferred=True, edit=edit,
                                      diagnostics=[at.diagnostic(fix.diagnostic)]))
    return actions


def _edited(repo: LiveRepo, pending: dict[str, str | None]) -> tuple[list[Diagnostic], bool]:
    """Compile each pending edit; every finding, and whether the link stage must run again."""
    relink = False
    for rel, text in pending.items():
        relink = repo.edit(rel, text) or relink
    return repo.report(), relink


def _as_named(root: Path, folder: Path) -> Path:
    """`root` (links resolved) as the client names it: under `folder`, the
    workspace it opened, whose name may go through a link."""
    named = Path(os.path.normpath(folder.absolute()))
    up = len(folder.resolve().parts) - len(root.parts)
    if not folder.resolve().is_relative_to(root) or up >= len(named.parts):
        return root
    return named.parents[up - 1] if up else named


IGNORED = ("knoc lsp ignored a message it cannot act on (not JSON-RPC, parameters of another shape, or a change "
           "to a document the client did not open)")


class _OneLine(logging.Handler):
    """pygls's warnings on stderr (the editor's log) as one line each, with no Python traceback."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(f"knoc lsp: {record.getMessage().splitlines()[0][:200]}\n")


def serve() -> None:
    """Speak the protocol on stdin and stdout until the client leaves (or
    Ctrl-C: the server writes only its cache's listing, aside and then
    renamed into place, so it may end at once)."""
    said = logging.getLogger("pygls")
    said.setLevel(logging.WARNING)
    said.addHandler(_OneLine())
    said.propagate = False
    interrupts.exit_at_ctrl_c(130, "interrupted")
    server.start_io()
