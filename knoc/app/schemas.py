"""`knoc schemas`: each entity type's JSON Schema, bundled, for editors
(`knoc.features.schemas`), written to a folder or named in a modeline."""

from __future__ import annotations

import os
from pathlib import Path

from knoc.app.outcome import Outcome, UsageError
from knoc.compiler.load import parse_source
from knoc.config import Config
from knoc.diagnostics import Diagnostic
from knoc.features import schemas
from knoc.incremental.driver import spec_set
from knoc.incremental.sources import source_at
from knoc.io import files, writing
from knoc.kinds.spec import SpecSet

COMMAND = "knoc schemas"


def write_schemas(config: Config, out: Path | None) -> Outcome:
    """Every declaration's schema, written to `out` (made if missing; each
    file replaced atomically, never through a link), else to the repo's
    schemas/ (which may not be a link either: the user did not name it).
    Nothing is written when a spec is broken: the schemas would not be the
    ones knoc checks."""
    specs, outcome = _specs(config)
    if outcome.failed:
        return outcome
    exported = schemas.export(specs)
    base, prefix = (config.root, f"{schemas.FOLDER}/") if out is None else (out, "")
    folder = base / prefix
    if files.present(folder) and not files.is_dir(folder):  # a file, or a link to nothing
        raise UsageError("KNO-WRITE", f"{folder} is not a folder; nothing was written", "give --out a folder")
    for name in exported:  # all checked before the first is written
        writing.writable(base, prefix + name)
    for name, data in exported.items():
        writing.write_in(base, prefix + name, data, replace=True)
    outcome.summary = f"wrote {len(exported)} schema{'s' if len(exported) != 1 else ''} to {_shown(folder)}"
    return outcome


def modeline(config: Config, out: Path, source: Path) -> Outcome:
    """The yaml-language-server comment for `source` (a .kno file): its
    declared `type@version`'s schema in `out`, relative to the file."""
    specs, outcome = _specs(config)
    try:
        rel = source.resolve().relative_to(config.root).as_posix()
    except ValueError:
        raise UsageError("KNO-CONFIG", f"{source} is not inside the repo at {config.root}") from None
    read = source_at(config.root, rel)
    entity = read if isinstance(read, Diagnostic) else parse_source(read, config.layout)
    if isinstance(entity, Diagnostic):
        raise UsageError("KNO-CONFIG", f"{rel} cannot be read as an entity: {entity.message}",
                         "run `knoc validate` to see what is wrong with it")
    declared = str(entity.data.get("$schema", ""))
    if declared not in specs.by_declaration:
        said = f"declares `$schema: {declared}`, which no spec accepts" if declared else "declares no `$schema`"
        raise UsageError("KNO-CONFIG", f"{rel} {said}",
                         "declare one of: " + ", ".join(sorted(specs.by_declaration)))
    schema = os.path.relpath(out.resolve() / schemas.file_name(declared), source.resolve().parent)
    outcome.answer = schemas.modeline(Path(schema).as_posix()) + "\n"
    return outcome


def _specs(config: Config) -> tuple[SpecSet, Outcome]:
    specs, report = spec_set(config)
    found = report.sorted()
    failed = any(d.is_error for d in found)
    return specs, Outcome(COMMAND, found, summary="nothing written: fix the specs first" if failed else None,
                          failed=failed)


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path) + "/"
    except ValueError:
        return f"{path}/"
