"""The Python API (exported from `knoc`): compile a content repo in memory,
and read the runtime index of a build. See docs/reference/python-api.md."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from knoc.config import ConfigError, load_config
from knoc.diagnostics import Diagnostic
from knoc.incremental.driver import compile_repo
from knoc.io import files
from knoc.output.index import DomainIndex
from knoc.rules.json import JsonObject

__all__ = ["Build", "ConfigError", "Diagnostic", "DomainIndex", "compile"]


@dataclass(frozen=True)
class Build:
    """What `knoc build` would write for a repo, without writing it."""

    cards: Mapping[str, JsonObject]  # each public agent's card (as JSON values), by its slug
    files: Mapping[str, bytes]  # every file under build/, by its path there
    diagnostics: tuple[Diagnostic, ...]  # every finding, in the order knoc reports them
    target: str  # the A2A target the cards are written for

    @property
    def ok(self) -> bool:
        """No errors: `knoc build` would write `files`."""
        return not any(d.is_error for d in self.diagnostics)


def compile(root: str | Path, *, a2a: str | None = None) -> Build:
    """Compile the content repo at `root` (the folder of its knoc.toml) in
    memory, for the A2A target `a2a` (default: knoc.toml's). Nothing is
    written, not even the cache. Raises ConfigError for a path that holds
    no content repo, a bad knoc.toml or an unknown target."""
    folder = Path(root)
    if not files.is_dir(folder):
        raise ConfigError(f"{folder} is not a folder: pass the folder that holds the repo's knoc.toml")
    if not any(files.present(folder / part) for part in ("knoc.toml", "specs", "content")):
        raise ConfigError(f"no content repo in {folder}: it holds no knoc.toml, specs/ or content/")
    if not isinstance(a2a, str | None):
        raise ConfigError(f"the A2A target is a string (\"1.0\", \"0.3\" or \"compat\"), not {a2a!r}")
    config = load_config(folder, a2a)
    result = compile_repo(config)
    cards = {c.slug: json.loads(c.projection.body) for c in result.cards}
    return Build(cards, result.files if result.ok else {}, tuple(result.report.sorted()), config.a2a)
