"""How soon `knoc lsp` shows an edit's findings, as an editor sees them:

    python bench/editor.py [--size 10000] [--edits 10]

It generates a repo (bench/gen_repo.py), builds it once (the cache a
language server starts from, as in a repo someone works in), starts
`knoc lsp` on stdio with a real client (pytest-lsp's), opens one
blueprint and, for each edit, times from the change sent to the findings
published for it:

- a field given a value of the wrong type (the file's own finding: the
  one-file stages of that file);
- a perception domain that does not exist (a cross-file finding: the link
  stage runs again over the whole repo).

Each edit is undone before the next (its finding gone), and the next
comes after a pause, as an author's would. Prints the
median and the slowest of each, and how long the server took to start."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_repo import built, print_table, table_main

BLUEPRINT = "content/agent-blueprints/agent-000123.kno"
PAUSE = 3.0  # seconds between one timed edit and the next


async def until(client: LanguageClient, uri: str, code: str, present: bool, timeout: float = 60.0) -> float:
    """Wait until `uri`'s published findings hold `code` (or no longer do); when."""
    deadline = time.perf_counter() + timeout
    while True:
        if any(d.code == code for d in client.diagnostics.get(uri, [])) == present:
            return time.perf_counter()
        if time.perf_counter() > deadline:
            raise SystemExit(f"{code} {'never came' if present else 'never went'} within {timeout:.0f} s")
        await asyncio.sleep(0.002)


def change(client: LanguageClient, uri: str, version: int, line: int, old: str, new: str) -> float:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [lsp.TextDocumentContentChangePartial(lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old))), new)]))
    return time.perf_counter()


async def measure(repo: Path, edits: int, env: dict[str, str] | None = None) -> dict[str, list[float]]:
    started = time.perf_counter()
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "knoc", "lsp"], server_env=env).start()
    out: dict[str, list[float]] = {"start": [], "own finding": [], "cross-file finding": []}
    try:
        await client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(),
                                                             root_uri=repo.as_uri()))
        path = repo / BLUEPRINT
        uri, text = path.as_uri(), path.read_text(encoding="utf-8")
        lines = text.splitlines()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "yaml", 1, text)))
        # The server compiles the repo as it starts: it answers once that is done.
        await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
        out["start"].append(time.perf_counter() - started)
        title = next(i for i, line in enumerate(lines) if line.startswith("title:"))
        domains = next(i for i, line in enumerate(lines) if line.strip().startswith("domains:"))
        version = 1
        for _ in range(edits):
            for key, line, new, code in (("own finding", title, "title: [not, a, string]", "KNO-SCHEMA-TYPE"),
                                         ("cross-file finding", domains, "    domains: [no-such-domain]",
                                          "KNO-RESOLVE-DOMAIN")):
                version += 1
                sent = change(client, uri, version, line, lines[line], new)
                out[key].append(await until(client, uri, code, True) - sent)
                version += 1
                change(client, uri, version, line, new, lines[line])
                await until(client, uri, code, False)
                await asyncio.sleep(PAUSE)  # an author's pause: the server done with the link stage
        await client.shutdown_session()
    finally:
        await client.stop()
    return out


def editor_table(size: int, edits: int, env: dict[str, str] | None = None) -> None:
    """Print the table (`env`: where knoc is imported from, as `bench/run.py` measures a copy)."""
    with built(size, "knoc-bench-editor-", env) as repo:
        got = asyncio.run(measure(repo, edits, env))
    print_table(f"`knoc lsp`, {size:,} agents, {edits} edits each (from the change to its findings)", got)


if __name__ == "__main__":
    table_main(editor_table)
