"""The language server's repo (`knoc.incremental.live.LiveRepo`) keeps what
the link stage decoded of each file across edits, decodes again only the
files an edit changed, and asks only where the outputs go. Whatever the
edits, its findings are those `knoc validate` reports on the same texts
saved, the link stage's included."""

from __future__ import annotations

import shutil
from pathlib import Path

from knoc.app.validate import validate
from knoc.config import load_config
from knoc.diagnostics import Diagnostic
from knoc.incremental.live import LiveRepo

CATALOG = "content/agent-blueprints/catalog-search.kno"
SENTINEL = "content/agent-blueprints/drift-sentinel.kno"
STEWARD = "content/agent-blueprints/schema-steward.kno"
SUMMARIZER = "content/agent-blueprints/quick-summarizer.kno"
TRACE = "content/extensions/review-trace.kno"
SCHEMAS = "content/perception-domains/schemas.kno"

# Each edit (file, old, new; new None: the file deleted), and a link-stage
# finding it brings (none: what it changes is where the others point).
EDITS = [
    (CATALOG, "domains: [schemas, entity-health]", "domains: [schemas, entity-healht]", "KNO-RESOLVE-DOMAIN"),
    (SUMMARIZER, "slug: quick-summarizer", "slug: catalog-search", "KNO-SLUG-DUPLICATE"),
    (SENTINEL, "xri: kno://agent-blueprints/catalog-search", "xri: kno://agent-blueprints/schema-steward",
     "KNO-COMPOSES-CYCLE"),
    (STEWARD, "uri: https://possibility.space/extensions/review-trace/v1",
     "uri: https://possibility.space/extensions/no-such/v1", "KNO-EXT-UNKNOWN"),
    (CATALOG, "url: https://agents.possibility.space/catalog-search\n",
     "url: https://agents.possibility.space/drift-sentinel\n", "KNO-URL-DUPLICATE"),
    (TRACE, "uri: https://possibility.space/extensions/review-trace/v1", "uri: https://agents.possibility.space",
     "KNO-CATALOG-PAGE-TAKEN"),
    (SCHEMAS, "", None, None),
    (SENTINEL, "", None, "KNO-RESOLVE-XRI"),
]


def shown(report: list[Diagnostic]) -> list[str]:
    """Every finding whole: where, what, the hint and what it points at."""
    return sorted(map(repr, report))


def validated(texts: dict[str, str | None], copy: Path) -> list[Diagnostic]:
    """What `knoc validate --no-cache` reports of the repo with `texts` saved."""
    for rel, text in texts.items():
        if text is None:
            (copy / rel).unlink(missing_ok=True)
        else:
            (copy / rel).write_text(text, encoding="utf-8")
    return [d for d in validate(load_config(copy), (), use_cache=False).diagnostics
            if d.code != "KNO-SIGNING-UNPROTECTED"]  # only a signed card is concerned by it: the server leaves it


def test_an_edited_repos_findings_are_those_validate_reports_edit_after_edit(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    live = LiveRepo(load_config(repo), use_cache=False)
    original = {rel: (repo / rel).read_text(encoding="utf-8") for rel, *_ in EDITS}
    texts: dict[str, str | None] = dict(original)
    seen: set[str] = set()

    def apply(rel: str, text: str | None) -> None:
        texts[rel] = text
        relink = False
        if text is None:
            (repo / rel).unlink()
        elif not (repo / rel).exists():
            (repo / rel).write_text(text, encoding="utf-8")  # back on disk, then in the buffer
            relink = live.edit(rel, None)
        # As the server does: the link stage again only when an edit says so.
        relink = live.edit(rel, text) or relink
        report = live.relinked() if relink else live.report()
        got, wanted = shown(report), shown(validated(texts, copy))
        assert got == wanted, (rel, set(got) ^ set(wanted))
        seen.update(str(d.code) for d in report)

    for rel, old, new, _ in EDITS:
        now = texts[rel]
        assert now is not None and old in now
        apply(rel, None if new is None else now.replace(old, new, 1))
    for rel, *_ in reversed(EDITS):  # and undone, one file at a time
        if texts[rel] != original[rel]:
            apply(rel, original[rel])
    assert seen >= {code for *_, code in EDITS if code}
    assert shown(live.report()) == shown(validated(original, copy))
