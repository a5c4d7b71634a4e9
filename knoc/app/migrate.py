"""`knoc migrate`: legacy agents rewritten as blueprints, checked in a
scratch copy to build byte-identical cards before anything is written."""

from __future__ import annotations

import datetime
from pathlib import Path

from knoc.a2a import targets
from knoc.app.common import compile_cached, exists_message, only, rel, source_named
from knoc.app.outcome import Outcome, UsageError
from knoc.config import Config
from knoc.features import migrate as migration
from knoc.io import files, writing


def migrate(config: Config, paths: tuple[Path, ...], dry_run: bool, *, use_cache: bool) -> Outcome:
    for path in paths:
        source_named(config, rel(config.root, path))
    rels = ([rel(config.root, f) for f in paths] if paths else
            [p for p in files.discover(config.root, [f"{config.content}/{migration.LEGACY}"])
             if p.count("/") == config.content.count("/") + 2])  # the folder itself, not below it
    if not rels:  # nothing to do is no error: a repo migrated already runs it too
        return Outcome("knoc migrate", [], [], f"nothing to migrate: no legacy agents under "
                                               f"{config.content}/{migration.LEGACY}/")
    today = datetime.date.today()
    plan: list[migration.Migration] = []
    for source in rels:
        try:
            m = migration.plan(config.root, source, config.content, today, targets.get(config.a2a).versions)
        except (OSError, UnicodeDecodeError, ValueError, migration.NotLegacy) as exc:
            raise UsageError("KNO-MIGRATE", f"{source}: {exc}", "migrate only legacy agents; `knoc validate` "
                             "shows what is wrong with a file that does not load") from None
        if files.stat(config.root / m.target) is not None:
            raise UsageError("KNO-EXISTS", exists_message(m.target),
                             f"move it away, or give {source} another slug (the blueprint is named after it)")
        plan.append(m)
    for m in plan:  # every path checked before anything is written
        writing.writable(config.root, m.target)
        writing.writable(config.root, m.source, file_too=False)
    before = compile_cached(config, use_cache)
    if not before.ok:
        return Outcome("knoc migrate", before.report.sorted(), before.inputs, "nothing migrated: fix the errors first")
    after = migration.rehearse(config, plan)
    changed = migration.changed(before, after)
    if changed:
        raise UsageError("KNO-MIGRATE-CHANGED", f"the migration would change {', '.join(changed)}; "
                         "nothing was written", "report this as a knoc bug, with the legacy file")
    notes = [f"{'would migrate' if dry_run else 'migrated'} {m.source} ({m.declared}) -> {m.target}" for m in plan]
    versions = ", ".join(targets.get(config.a2a).versions)
    notes += [f"{m.target}: `protocol_versions` written as what A2A target {config.a2a} publishes for an agent "
              f"that states none ({versions}); the legacy file meant each target's own: under another target, "
              "edit the list" for m in plan if m.chose_versions]
    if dry_run:
        return Outcome("knoc migrate", notes=notes)
    for m in plan:
        try:
            writing.write_in(config.root, m.target, m.text.encode("utf-8"))
        except files.Exists:
            raise UsageError("KNO-EXISTS", exists_message(m.target), "pick another name, move the file away") from None
        writing.remove_in(config.root, m.source)
    # The rehearsal compiled what is now on disk.
    outcome = only(after, {m.target for m in plan}, "knoc validate",
                   "nothing else written; next: knoc build (its cards are the same, its manifest names the new "
                   "sources)")
    outcome.notes = notes
    return outcome
