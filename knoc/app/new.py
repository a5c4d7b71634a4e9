"""`knoc new agent`: a blueprint skeleton with a fresh ULID."""

from __future__ import annotations

from knoc.app.common import compile_cached, exists_message, only
from knoc.app.outcome import Outcome, UsageError
from knoc.config import Config
from knoc.io import files
from knoc.rules import slug as slugs
from knoc.tools import author
from knoc.tools.card_fields import publishable
from knoc.tools.migrate import BLUEPRINTS


def new_agent(config: Config, slug: str, title: str | None, url: str, *, use_cache: bool) -> Outcome:
    """Write content/agent-blueprints/SLUG.kno (never over a file), then
    validate it like any other source."""
    if not slugs.is_slug(slug):
        raise UsageError("KNO-CONFIG", f"`{slug}` is not a slug", f"use {slugs.WHAT}")
    url = url.replace("{slug}", slug)
    if not publishable(url):
        raise UsageError("KNO-CONFIG", f"`{url}` is not an http(s) URL without query or fragment")
    rel = f"{config.content}/{BLUEPRINTS}/{slug}.kno"
    text = author.blueprint_skeleton(slug, title or slug.replace("-", " ").title(), url)
    try:
        files.write_new(config.root / rel, text)
    except files.Exists:
        raise UsageError("KNO-EXISTS", exists_message(rel), "pick another name, move the file away") from None
    outcome = only(compile_cached(config, use_cache), {rel}, "knoc validate", "nothing else written")
    outcome.notes.append(f"wrote {rel}")
    return outcome
