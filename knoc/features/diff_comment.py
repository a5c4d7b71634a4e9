"""`knoc diff`'s pull-request comment: the classed changes, and the specs
whose schema changed, as Markdown (templates/diff.md.j2). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from knoc.features.diff import Change, count
from knoc.output import templates
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.version import bump_shown

COMMENT_CHARS = 60_000  # GitHub refuses a comment over 65,536 characters: a margin for what a CI step adds


def markdown(changes: list[Change], base: str, head: str, target: str,
             specs: Sequence[JsonObject] = ()) -> str:
    """The changes as a pull-request comment (templates/diff.md.j2); `specs`:
    the specs whose schema changed, as `knoc specs check --format json` has
    them. Past COMMENT_CHARS, the last changes (then spec rows) are left
    out, and the comment says how many it does not show; its counts stay."""
    rows = [row for s in specs for row in _spec_rows(s)]

    def render(shown: int) -> str:
        """The comment with the first `shown` changes, then spec rows."""
        grouped: dict[tuple[str, str], list[Change]] = {}
        for c in changes[:shown]:
            grouped.setdefault((c.subject, c.name), []).append(c)
        kept_rows = rows[:max(0, shown - len(changes))]
        return templates.get("diff.md.j2").render(
            base=base, head=head, target=target, counts=count(changes), any_change=bool(changes),
            groups=[{"subject": s, "name": n, "changes": cs} for (s, n), cs in grouped.items()], specs=kept_rows,
            left_out=len(changes) + len(rows) - min(shown, len(changes)) - len(kept_rows),
            limit=f"{COMMENT_CHARS:,}").rstrip() + "\n"

    whole = len(changes) + len(rows)
    text = render(whole)
    if len(text) <= COMMENT_CHARS:
        return text
    low, high = 0, whole - 1  # the most changes and rows that fit
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if len(render(middle)) <= COMMENT_CHARS else (low, middle - 1)
    return render(low)


def _spec_rows(spec: JsonObject) -> list[JsonObject]:
    """A changed spec's rows: each change that is not additive, else its
    first. A breaking one a major bump announces says so, as `knoc specs
    check` does (KNO-SPEC-MAJOR, no error)."""
    versions = f"{spec['old_version'] or 'new'} → {spec['new_version'] or 'gone'}" + (
        " " + bump_shown(str(spec["bump"])) if spec["bump"] else "")
    found = [c for c in (spec["changes"] if isinstance(spec["changes"], list) else []) if isinstance(c, dict)]
    shown = [c for c in found if c["class"] != "additive"] or found[:1]

    def cls(c: JsonObject) -> JsonValue:
        return "breaking, announced" if c["class"] == "breaking" and spec["bump"] == "major" else c["class"]

    return [{"slug": spec["slug"], "versions": versions, "cls": cls(c), "pointer": c["pointer"], "why": c["why"]}
            for c in shown] or [{"slug": spec["slug"], "versions": versions, "cls": spec["class"], "pointer": None,
                                 "why": None}]
