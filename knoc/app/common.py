"""What several commands share: opening the repo, compiling it through the
cache, and naming files for messages."""

from __future__ import annotations

import itertools
import os
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from knoc.app.outcome import Outcome, UsageError
from knoc.config import CONFIG_FILE, Config, ConfigError, find_root, is_repo_root, load_config
from knoc.diagnostics import Diagnostic, Span, duplicates
from knoc.io import files, lock, pool
from knoc.io.files import SOURCE_SUFFIX
from knoc.rules import toml

if TYPE_CHECKING:
    from knoc.diagnostics.progress import Progress
    from knoc.incremental.driver import Early, Result
    from knoc.output.signed import CardSigner


def open_repo(root: Path | None, a2a: str | None, cwd: Path) -> Config:
    """The repo's config: at `root`, or found by walking up from `cwd`."""
    if root is not None and not files.is_dir(root):
        raise UsageError("KNO-CONFIG", f"--root {root} is not a folder", "pass the folder that holds knoc.toml")
    if root is not None and not is_repo_root(root) and not files.is_dir(root / "content"):
        raise UsageError("KNO-CONFIG", f"--root {root} is no content repo: it holds no knoc.toml, specs/ or content/",
                         "pass the folder that holds knoc.toml (or `knoc init` one)")
    try:
        base = root.resolve() if root else find_root(cwd)
        return load_config(base, a2a)
    except ConfigError as exc:
        raise UsageError("KNO-CONFIG", str(exc), file=CONFIG_FILE if exc.at else None,
                         span=Span(*exc.at) if exc.at else None, root=base if exc.at else None) from None


def compile_cached(config: Config, use_cache: bool, progress: Progress | None = None,
                   signer: CardSigner | None = None, early: Early | None = None,
                   lazy: bool = False, keep: bool = False) -> Result:
    """Compile the repo, reading and then updating the cache (`lazy`, `keep`:
    as `compile_repo`). The compiler is imported here, when first needed:
    `knoc check` begins scanning build/ on another core before it."""
    from knoc.diagnostics.progress import quiet
    from knoc.incremental.driver import compile_repo
    from knoc.io.cache import Cache

    with lock.held(config.root):
        result = compile_repo(config, use_cache=use_cache, progress=progress or quiet, signer=signer, early=early,
                              lazy=lazy, keep=keep)
        with pool.collector_paused():  # the cache's records: many tuples, no cycles
            result.cache.save()
        result.cache = Cache.off()  # saved: what it holds (each source's entry, the layers) is not read again
    result.report.items = at_new_files(config, result.report.items)
    return result


def at_new_files(config: Config, diags: list[Diagnostic]) -> list[Diagnostic]:
    """Each duplicate told at the file being worked on (new or changed since
    git's HEAD: a copy made to start another entity, an id pasted) when the
    other one is as HEAD has it."""
    from knoc.io import git

    pairs = {d.file: other for d in diags if d.file and (other := duplicates.other_file(d))}
    if not pairs:
        return diags
    edited = git.edited(config.root, sorted({*pairs, *pairs.values()}))
    if edited is None:
        return diags
    return [duplicates.told_at_other(d) if (other := duplicates.other_file(d)) is not None
            and d.file not in edited and other in edited else d for d in diags]


def unmatched_accepts(config: Config, inputs: Collection[str]) -> list[Diagnostic]:
    """A warning for each [accept] pattern that matches no file the run read
    (nor knoc.toml, nor one under the output folder, which a build writes)."""
    from knoc.diagnostics import diag
    from knoc.diagnostics.accepted import unmatched

    places = {code: Span(line, column) for code, line, column in config.accept_at}
    return [diag("KNO-ACCEPT-UNMATCHED", f"[accept] `{code}` names `{pattern}`, which matches no file of the repo: "
                 "it accepts nothing now, and would accept that warning in a file added under that name",
                 file=CONFIG_FILE, span=places.get(code),
                 hint="correct the pattern (a path from the repo's root, `*` for any run of characters), or remove it")
            for code, pattern in unmatched(config.accept, itertools.chain(inputs, [CONFIG_FILE]))
            if not pattern.startswith(f"{config.output}/")]


def rel(root: Path, path: Path) -> str:
    """`path` (from the working folder where it names a file there, else
    from the repo's root) as a repo-relative name; outside the repo (a `..`
    or a link that leaves it), its absolute path, which names no source of
    the repo."""
    top = root.resolve()
    here = path if path.is_absolute() else Path.cwd() / path
    full = (here if os.path.lexists(here) or path.is_absolute() else top / path).resolve()
    return full.relative_to(top).as_posix() if full.is_relative_to(top) else full.as_posix()


def exists_message(rel_path: str) -> str:
    return f"{rel_path} already exists; knoc does not replace it"


def only(result: Result, wanted: set[str], command: str, summary: str) -> Outcome:
    """The findings of `result` in the `wanted` files only, as `knoc validate FILE` shows them."""
    return Outcome(command, in_files(result.report.sorted(), wanted), sorted(wanted), summary)


def in_files(diags: list[Diagnostic], wanted: Collection[str]) -> list[Diagnostic]:
    """The findings in the `wanted` files, sorted: a duplicate found at
    another file and pointing at one of them is told at it (the compiler
    tells it at the later file, which may not be the one asked about)."""
    shown = [d if d.file in wanted else duplicates.told_at_other(d) for d in diags
             if d.file in wanted or duplicates.other_file(d) in wanted]
    return sorted(shown, key=lambda d: d.sort_key)


def source_named(config: Config, name: str) -> None:
    """A file named on the command line must be a source of this repo (UsageError)."""
    if name.startswith("/") or ".." in name.split("/"):  # `rel` gives no such name for a file of the repo
        raise UsageError("KNO-CONFIG", f"{name} is outside the repo, so knoc does not read it",
                         "name a file under the repo's specs/ or content/")
    if files.stat(config.root / name) is None:
        raise UsageError("KNO-CONFIG", f"no such file: {name}")
    if not name.endswith(SOURCE_SUFFIX):
        raise UsageError("KNO-CONFIG", f"{name} is not a source: knoc reads only *{SOURCE_SUFFIX} files")
    if config.layout.collection_of(name) != "specs" and not name.startswith(f"{config.layout.content}/"):
        raise UsageError("KNO-CONFIG", f"{name} is not under {config.specs}/ or {config.content}/, so knoc "
                         "does not read it", "move it there, or set `specs` or `content` in knoc.toml")


def setting_span(config: Config, table: str, key: str | None = None) -> Span | None:
    """Where knoc.toml sets `key` of `table` (its header, with no key), for
    a finding about that setting; None when it is not there to point at."""
    try:
        text = files.read_source(str(config.root / CONFIG_FILE), str(config.root)).decode("utf-8")
    except (OSError, UnicodeDecodeError, files.Refused):
        return None
    place = toml.key_place(text.removeprefix("\ufeff"), table, key)
    return Span(*place) if place else None
