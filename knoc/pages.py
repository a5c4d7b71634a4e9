"""Part of the link stage: a human-readable page for each public extension
entity, written where its URI points (`site/<host>/<path>/index.html`), so
serving `build/site/<host>` documents the extension at its own URI."""

from __future__ import annotations

import json
from typing import Any

from knoc import template
from knoc.project import Card, site_dir
from knoc.resolve import is_public
from knoc.validate import Typed

PAGE_FILE = "index.html"


def extension_pages(typed: list[Typed], cards: list[Card]) -> dict[str, bytes]:
    extensions = sorted((t for t in typed if t.type == "extension" and t.valid and is_public(t)),
                        key=lambda t: t.entity.source.rel)
    if not extensions:
        return {}
    page = template.get("extension.html.j2")
    pages: dict[str, bytes] = {}
    for t in extensions:
        uri = str(t.data["uri"])
        where = site_dir(uri)
        path = f"site/{where}/{PAGE_FILE}" if where else None
        if path is None or path in pages:  # not an http(s) URL, or another extension's page
            continue
        users = [{"name": c.projection.name, "card": f"{c.projection.url}/.well-known/agent-card.json"}
                 for c in cards if any(e[0] == uri for e in c.projection.extensions)]
        ext: dict[str, Any] = {**t.data, "title": t.data.get("title") or t.data["slug"],
                               "source": t.entity.source.rel}
        ext.setdefault("depends_on", [])
        schema = json.dumps(t.data.get("params_schema"), indent=2, ensure_ascii=False, sort_keys=True)
        pages[path] = page.render(ext=ext, schema=schema, users=users).encode("utf-8")
    return pages
