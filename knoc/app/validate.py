"""`knoc validate`: every check of build, nothing written."""

from __future__ import annotations

from pathlib import Path

from knoc.app.common import compile_cached, rel
from knoc.app.outcome import Outcome, UsageError
from knoc.compiler.driver import Progress, quiet
from knoc.config import Config
from knoc.io import files as disk
from knoc.io.files import SOURCE_SUFFIX


def validate(config: Config, files: tuple[Path, ...], *, use_cache: bool, progress: Progress = quiet) -> Outcome:
    """With `files`, only their findings (the whole repo is still read,
    since references cross files)."""
    wanted = {rel(config.root, f) for f in files}
    for name in sorted(wanted):
        _check_named(config, name)
    result = compile_cached(config, use_cache, progress)
    diags, inputs = result.report.sorted(), result.inputs
    if files:
        diags = [d for d in diags if d.file in wanted]
        inputs = [i for i in inputs if i in wanted]
    return Outcome("knoc validate", diags, inputs, "nothing written")


def _check_named(config: Config, name: str) -> None:
    """A file named on the command line must be a source of this repo."""
    if disk.stat(config.root / name) is None:
        raise UsageError("KNO-CONFIG", f"no such file: {name}")
    if not name.endswith(SOURCE_SUFFIX):
        raise UsageError("KNO-CONFIG", f"{name} is not a source: knoc reads only *{SOURCE_SUFFIX} files")
    if config.layout.collection_of(name) != "specs" and not name.startswith(f"{config.layout.content}/"):
        raise UsageError("KNO-CONFIG", f"{name} is not under {config.specs}/ or {config.content}/, so knoc "
                         "does not read it", "move it there, or set `specs` or `content` in knoc.toml")
