"""The command line: parse arguments, run the pipeline, render diagnostics.

Exit codes: 0 clean (warnings allowed), 1 findings in the content, 2 usage or
configuration error."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Callable

import click

from knoc import __version__, render
from knoc.config import Config, ConfigError, find_root, load_config
from knoc.diagnostics import Diagnostic
from knoc.drift import drift
from knoc.emit import OutputError, read_tree, write_tree
from knoc.pipeline import Result, compile_repo
from knoc.source import SourceFile
from knoc.wire import TARGETS

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _common(f: Callable[..., int]) -> Callable[..., None]:
    @click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                  help="Content repo root (default: walk up to knoc.toml or specs/).")
    @click.option("--a2a", type=click.Choice(TARGETS), help="A2A target version (default: knoc.toml, else 1.0).")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                  show_default=True, help="Diagnostics as text for people or JSON lines for tools.")
    @functools.wraps(f)
    def wrapper(root: Path | None, a2a: str | None, fmt: str, **kw: object) -> None:
        try:
            config = load_config(root.resolve() if root else find_root(Path.cwd()), a2a)
            code = f(config, fmt, **kw)
        except ConfigError as exc:
            click.echo(f"error[KNO-CONFIG]: {exc}", err=True)
            code = EXIT_USAGE
        sys.exit(code)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="knoc")
def main() -> None:
    """knoc compiles a KNO content repo into public A2A agent cards."""


@main.command()
@_common
def build(config: Config, fmt: str) -> int:
    """Compile the repo and write build/ (cards, domain index, catalog, manifest).

    The new tree is written aside and swapped in: a failed build leaves the
    previous build/ untouched."""
    result = compile_repo(config)
    out = config.output + "/"
    if not result.ok:
        return _report(config, result, result.report.sorted(), fmt, f"{out} left unchanged")
    try:
        write_tree(config.out_dir, result.files)
    except OutputError as exc:
        click.echo(f"error[KNO-OUTPUT]: {exc}\n  = help: move those files away, or set another "
                   "`output` in knoc.toml", err=True)
        return EXIT_USAGE
    cards = len(result.cards)
    return _report(config, result, result.report.sorted(), fmt,
                   f"wrote {cards} card{'s' if cards != 1 else ''} (A2A {config.a2a}) to {out}")


@main.command()
@_common
def check(config: Config, fmt: str) -> int:
    """Compile in memory and compare with build/ on disk (the drift guard).

    Exit 0 when build/ matches the sources; exit 1 with each stale, missing
    or extra file (and a short diff) when it does not, or on any finding."""
    result = compile_repo(config)
    out = config.output + "/"
    if not result.ok:
        return _report(config, result, result.report.sorted(), fmt, f"{out} not compared")
    drifted = drift(result.files, read_tree(config.out_dir), out)
    outcome = f"{out} drifted: run `knoc build`" if drifted else f"{out} is up to date"
    return _report(config, result, result.report.sorted() + drifted, fmt, outcome)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@_common
def validate(config: Config, fmt: str, files: tuple[Path, ...]) -> int:
    """Run every check of `build` without writing anything.

    With FILES, report only their diagnostics (the whole repo is still read,
    since references cross files)."""
    result = compile_repo(config)
    diags = result.report.sorted()
    if files:
        wanted = {_rel(config.root, f) for f in files}
        diags = [d for d in diags if d.file in wanted]
    return _report(config, result, diags, fmt, "nothing written")


def _rel(root: Path, path: Path) -> str:
    full = path if path.is_absolute() else Path.cwd() / path
    try:
        return full.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _report(config: Config, result: Result, diags: list[Diagnostic], fmt: str, outcome: str) -> int:
    if fmt == "json":
        if diags:
            click.echo(render.json_lines(diags))
    else:
        body = render.text(diags, _source_reader(config.root), color=render.use_color(sys.stderr))
        if body:
            click.echo(body + "\n", err=True)
        click.echo(render.summary(diags, result.entities, outcome), err=True)
    return EXIT_FINDINGS if any(d.is_error for d in diags) else EXIT_OK


def _source_reader(root: Path) -> Callable[[str], SourceFile | None]:
    @functools.lru_cache(maxsize=None)
    def read(rel: str) -> SourceFile | None:
        try:
            text = (root / rel).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None
        return SourceFile(root / rel, rel, text)

    return read
