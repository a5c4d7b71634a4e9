"""A repo kept compiled in memory, for `knoc lsp`: every file's one-file
stages once (through the cache), then, for each edit of a buffer, only
that file's; the link stage again only when the edit changed what it
reads (the file's link key) or the file had findings of the link stage
(their lines may have moved). Its findings are those `knoc validate`
reports for the same texts."""

from __future__ import annotations

import json
from dataclasses import dataclass

from knoc.compiler.load import source_file
from knoc.compiler.records import LinkResult
from knoc.compiler.unit import one_file
from knoc.config import Config
from knoc.diagnostics import Diagnostic, Report, SourceFile
from knoc.incremental.driver import Files, compile_files, link_files
from knoc.incremental.sources import source_at
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
        self.config = config
        self._files: Files = compile_files(config, use_cache)
        self._link: LinkResult = link_files(self._files)
        self._entries: dict[str, Entry] = {rel: e for rel in self._files.sources if (e := self._entry(rel))}

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
        report = Report(list(self._files.report.items))
        for rel in self._files.sources:
            report.extend(self._files.results.found(rel))
        report.extend(self._link.diags)
        report.drop("KNO-SIGNING-UNPROTECTED")  # only a signed card is concerned by it
        return report.sorted()

    def edit(self, rel: str, text: str | None) -> bool:
        """Compile `rel` from `text` (None: as it is on disk, or gone);
        whether the link stage must run again (`relink`). A spec edited
        changes every file's meaning: the whole repo is compiled again."""
        if self.is_spec(rel):
            self.reload()
            return False
        before = self._files.results.head(rel).link_key if rel in self._files.sources else None
        linked = any(d.file == rel for d in self._link.diags)
        source = self._read(rel, text)
        if source is None:
            self._files.sources.pop(rel, None)
            self._entries.pop(rel, None)
            return before is not None
        self._files.sources[rel] = source
        self._files.results.add_result(rel, one_file(source, None, self.specs, self.config.a2a, self.config.layout))
        entry = self._entry(rel)
        if entry is None:
            self._entries.pop(rel, None)
        else:
            self._entries[rel] = entry
        return linked or self._files.results.head(rel).link_key != before

    def relinked(self) -> list[Diagnostic]:
        """Run the link stage again; every finding (`report`)."""
        self._link = link_files(self._files)
        return self.report()

    def reload(self) -> None:
        """Compile everything again (from disk; buffers are edited in again by the caller)."""
        self.__init__(self.config)  # type: ignore[misc]

    def _read(self, rel: str, text: str | None) -> SourceFile | None:
        found = (source_at(self.config.root, rel) if text is None
                 else source_file(f"{self.config.root}/{rel}", rel, text.encode("utf-8")))
        return found if isinstance(found, SourceFile) else None

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
