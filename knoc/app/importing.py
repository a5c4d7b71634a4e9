"""`knoc import`: existing A2A Agent Cards (files or URLs) as blueprints."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path

from knoc.app.common import compile_cached, exists_message, in_files, rel
from knoc.app.outcome import Outcome, UsageError
from knoc.config import Config
from knoc.diagnostics import Diagnostic, diag
from knoc.features.importing import importer
from knoc.features.importing.imported import unpublishable
from knoc.features.keysets import is_url
from knoc.features.migrate import BLUEPRINTS
from knoc.io import files, writing
from knoc.rules import limits, ulid
from knoc.rules.paths import has_userinfo, shown_url


def import_cards(config: Config, sources: tuple[str, ...], force: bool, base_url: str | None = None,
                 allow_jku: bool = False, *, use_cache: bool) -> Outcome:
    """Each card converted and written as content/agent-blueprints/<slug>.kno,
    then validated. As every command that writes a source: a file that
    exists stops the run before anything is written (exit 2), unless `force`."""
    if base_url is not None and has_userinfo(base_url):
        raise UsageError("KNO-CONFIG", f"--url `{shown_url(base_url)}` holds a user name or password, which the "
                         "blueprint and its card would publish", "give the url without them: a client brings its "
                         "own credentials")
    if base_url is not None and (why := unpublishable(base_url)) is not None:
        raise UsageError("KNO-CONFIG", f"--url `{shown_url(base_url)}` cannot be a card's url: {why}")
    diags: list[Diagnostic] = []
    planned: list[tuple[str, str, str]] = []  # (label, target, text)
    taken: set[str] = set()  # slugs given in this run
    date = datetime.date.today().isoformat()
    for source in sources:
        label = shown_url(source) if is_url(source) else _label(config, source)  # never a url's password
        imported, found = importer.load(source, label, base_url, allow_jku)
        diags += found
        if imported is None:
            continue
        slug = importer.unique_slug(imported.card["name"], taken)
        if slug != importer.unique_slug(imported.card["name"], set()):  # two cards of one name: both are kept
            diags.append(diag("KNO-IMPORT-CHANGED", f"another card here is also named `{imported.card['name']}`; "
                              f"this one's slug is `{slug}`", file=label, hint="rename one of them"))
        text = importer.blueprint(imported, slug, ulid.new(), source, date)
        too_big = _too_big(text, imported.card)  # a source every build would refuse
        if too_big is not None:
            diags.append(diag(too_big[0], f"{too_big[1]}: not written", file=label, hint="shorten the card's longest "
                              "texts (a description, a skill's examples), then import it again"))
            continue
        taken.add(slug)
        planned.append((label, f"{config.content}/{BLUEPRINTS}/{slug}.kno", text))
    for _, target, _ in planned:
        writing.writable(config.root, target)
    existing = [target for _, target, _ in planned if files.stat(config.root / target) is not None]
    if existing and not force:
        raise UsageError("KNO-EXISTS", "; ".join(exists_message(t) for t in existing) + "; nothing was written",
                         "pass --force to replace " + ("them, or move them" if len(existing) > 1 else "it, or move it")
                         + " away")
    written, notes = [], []
    for label, target, text in planned:
        writing.write_in(config.root, target, text.encode("utf-8"), replace=force)
        written.append(target)
        notes.append(f"imported {label} -> {target}")
    if written:
        result = compile_cached(config, use_cache)
        diags += in_files(result.report.sorted(), written)
    summary = f"wrote {len(written)} blueprint{'s' if len(written) != 1 else ''}"
    return Outcome("knoc import", diags, [*sources], summary, notes=notes)


def _too_big(text: str, card: Mapping[str, object]) -> tuple[str, str] | None:
    """Why a blueprint would be refused for its size, as a build says it:
    past the source limit, or its card past the published card's (its
    fields as JSON: about the card's size)."""
    if (size := len(text.encode("utf-8"))) > limits.SOURCE_BYTES:
        return "KNO-IO-REFUSED", f"its blueprint would be {size:,} bytes; a source may have at most " \
                                 f"{limits.SOURCE_BYTES:,}"
    if (size := len(json.dumps(card, ensure_ascii=False).encode("utf-8"))) > limits.CARD_BYTES:
        return "KNO-CARD-SIZE", f"its card would be about {size:,} bytes; a published card may have at most " \
                                f"{limits.CARD_BYTES:,}"
    return None


def _label(config: Config, source: str) -> str:
    """A card file as findings name it: repo-relative inside the repo, else as given."""
    inside = rel(config.root, Path(source))
    return source if inside.startswith("/") else inside
