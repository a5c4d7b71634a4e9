"""A repo kept compiled in memory, for `knoc lsp`: every file's one-file
stages once (through the cache), then, for each edit of a buffer, only
that file's; the link stage again only when the edit changed what it
reads (the file's link key) or the file had findings of the link stage
(their lines may have moved). Its findings are those `knoc validate`
reports for the same texts: only the files a build lists are compiled
(not a backup copy, a hidden folder, `build/`), under the paths the
listing gives them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from knoc.compiler.records import LinkResult
from knoc.compiler.unit import one_file
from knoc.config import Config
from knoc.diagnostics import Diagnostic, Report, SourceFile
from knoc.incremental.driver import Files, compile_files, link_files, listed_paths
from knoc.incremental.kept import KeptDecoding
from knoc.incremental.sources import source_at, source_of_text
from knoc.io import files
from knoc.kinds.entity import BUILTIN
from knoc.kinds.spec import SpecSet


@dataclass(frozen=True)
class Entry:
    """What the editor looks up of an entity: where it is, and what it is."""

    rel: str
    collection: str
    slug: str
    type: str
    uri: str | None  # an extension's


class LiveRepo:
    """The repo at `config.root`, with the editor's unsaved buffers over its files."""

    def __init__(self, config: Config, use_cache: bool = True) -> None:
        self.config, self._use_cache = config, use_cache
        self._buffers: dict[str, str] = {}  # the texts edited in, by path
        self.loads = 0  # how many times the whole repo was compiled (a spec saved: again)
        self._load()

    def _load(self) -> None:
        """Everything compiled again from disk, then the texts edited in over it."""
        self.loads += 1
        self._files: Files = compile_files(self.config, self._use_cache)
        self._unread: dict[str, Diagnostic | None] = {}  # each source compiled since: why it could not be read
        self._link = LinkResult([], {}, [], {}, {})
        self._decoding = KeptDecoding()
        self._entries: dict[str, Entry] = {rel: e for rel in self._files.sources if (e := self._entry(rel))}
        for rel, text in self._buffers.items():
            if rel in self._files.listed:  # knoc.toml may have moved the content folder: as a build lists them
                self._compile(rel, text)
        self.relinked()

    def reconfigure(self, config: Config) -> list[Diagnostic]:
        """knoc.toml changed: everything compiled again under `config`, the
        texts edited in kept over it; every finding (`report`)."""
        self.config = config
        self._load()
        return self.report()

    @property
    def specs(self) -> SpecSet:
        return self._files.specs

    @property
    def entries(self) -> list[Entry]:
        """Every entity's entry (a copy: the compile thread may be changing them)."""
        return list(self._entries.values())

    def is_spec(self, rel: str) -> bool:
        return self.config.layout.collection_of(rel) == "specs"

    def text(self, rel: str) -> str | None:
        """The text of a source as compiled (the buffer's, if the editor has it open)."""
        source = self._files.sources.get(rel)
        return source.text if source is not None else None

    def report(self) -> list[Diagnostic]:
        """Every finding, sorted as `knoc validate` reports them."""
        report = Report([d for d in self._files.report.items if d.file not in self._unread])
        report.extend(d for d in self._unread.values() if d is not None)
        for rel in self._files.sources:
            report.extend(self._files.results.found(rel))
        report.extend(self._link.diags)
        report.drop("KNO-SIGNING-UNPROTECTED")  # only a signed card is concerned by it
        return report.sorted()

    def edit(self, rel: str, text: str | None) -> bool:
        """Compile `rel` from `text` (None: as it is on disk, or gone);
        whether the link stage must run again (`relinked`). A file a build
        does not list is left alone. A spec changes every file's meaning:
        once saved (`text` None), the whole repo is compiled again, the
        texts edited in kept; before, nothing changes."""
        if rel not in self._files.listed:
            if text is not None:  # typing never makes a file a source (saving it may, or knoc.toml)
                self._buffers[rel] = text
                return False
            self._buffers.pop(rel, None)
            self._files.listed = listed_paths(self.config)  # a file made since: listed now?
            if rel not in self._files.listed and rel not in self._files.sources:
                return False
        if self.is_spec(rel):
            if text is None:
                self._load()
            return False
        if text is None:
            self._buffers.pop(rel, None)
        else:
            self._buffers[rel] = text
        return self._compile(rel, text)

    def relinked(self) -> list[Diagnostic]:
        """Run the link stage again; every finding (`report`)."""
        f = self._files
        self._link = link_files(f, lambda: self._decoding.decoded(f.sources, f.results, f.specs, self.config.layout))
        return self.report()

    def _compile(self, rel: str, text: str | None) -> bool:
        before = self._files.results.head(rel).link_key if rel in self._files.sources else None
        linked = any(d.file == rel for d in self._link.diags)
        gone = text is None and not files.present(self.config.root / rel)  # deleted: no longer a source
        source = None if gone else (source_at(self.config.root, rel) if text is None
                                    else source_of_text(self.config.root, rel, text))
        if not isinstance(source, SourceFile):  # gone, or not read: as a build finds it
            self._unread[rel] = source
            self._files.sources.pop(rel, None)
            self._entries.pop(rel, None)
            if gone:  # no longer listed: what names it is told it is missing (not read: it is not)
                self._files.listed = self._files.listed - {rel}
            return before is not None
        self._unread[rel] = None
        self._files.sources[rel] = source
        self._files.results.add_result(rel, one_file(source, None, self.specs, self.config.a2a, self.config.layout))
        entry = self._entry(rel)
        if entry is None:
            self._entries.pop(rel, None)
        else:
            self._entries[rel] = entry
        return linked or self._files.results.head(rel).link_key != before

    def _entry(self, rel: str) -> Entry | None:
        if rel.startswith(BUILTIN):
            return None
        head = self._files.results.head(rel)
        if head.decl is None:
            return None
        facts = json.loads(head.facts)
        uri = facts.get("uri") if head.decl[0] == "extension" else None
        return Entry(rel, self.config.layout.collection_of(rel), str(facts.get("slug", "")), head.decl[0],
                     uri if isinstance(uri, str) else None)
