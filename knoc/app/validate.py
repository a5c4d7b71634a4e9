"""`knoc validate`: every check of build, nothing written."""

from __future__ import annotations

from pathlib import Path

from knoc.app.common import compile_cached, in_files, rel, source_named, unmatched_accepts
from knoc.app.outcome import Outcome
from knoc.app.signing import keys_read
from knoc.config import Config
from knoc.diagnostics.progress import Progress, quiet
from knoc.rules.text import escaped


def validate(config: Config, files: tuple[Path, ...], *, use_cache: bool, progress: Progress = quiet) -> Outcome:
    """With `files`, only their findings (the whole repo is still read,
    since references cross files). The signing keys knoc.toml and the
    environment name are read too, as a build reads them."""
    wanted = {rel(config.root, f) for f in files}
    for name in sorted(wanted):
        source_named(config, name)
    result = compile_cached(config, use_cache, progress)
    diags, inputs = result.report.sorted(), result.inputs
    if files:  # a file knoc refused is named escaped (`escaped`): asked about, it is found so
        diags = in_files(diags, wanted | {escaped(name) for name in wanted})
        inputs = [i for i in inputs if i in wanted]
    else:
        diags += unmatched_accepts(config, inputs)
    return Outcome("knoc validate", diags + keys_read(config), inputs, "nothing written")  # the keys: any FILES
