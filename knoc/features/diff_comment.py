"""`knoc diff`'s pull-request comment: the classed changes, and the specs
whose schema changed, as Markdown (templates/diff.md.j2). Pure."""

from __future__ import annotations

from collections.abc import Sequence

from knoc.features.diff import Change, count
from knoc.output import templates
from knoc.rules.json import JsonObject
from knoc.rules.version import bump_shown


def markdown(changes: list[Change], base: str, head: str, target: str,
             specs: Sequence[JsonObject] = ()) -> str:
    """The changes as a pull-request comment (templates/diff.md.j2); `specs`:
    the specs whose schema changed, as `knoc specs check --format json` has them."""
    groups: dict[tuple[str, str], list[Change]] = {}
    for c in changes:
        groups.setdefault((c.subject, c.name), []).append(c)
    return templates.get("diff.md.j2").render(
        base=base, head=head, target=target,
        counts=count(changes),
        groups=[{"subject": s, "name": n, "changes": cs} for (s, n), cs in groups.items()],
        specs=[row for s in specs for row in _spec_rows(s)]).rstrip() + "\n"


def _spec_rows(spec: JsonObject) -> list[JsonObject]:
    """A changed spec's rows: each change that is not additive, else its first."""
    versions = f"{spec['old_version'] or 'new'} → {spec['new_version'] or 'gone'}" + (
        " " + bump_shown(str(spec["bump"])) if spec["bump"] else "")
    found = [c for c in (spec["changes"] if isinstance(spec["changes"], list) else []) if isinstance(c, dict)]
    shown = [c for c in found if c["class"] != "additive"] or found[:1]
    return [{"slug": spec["slug"], "versions": versions, "cls": c["class"], "pointer": c["pointer"],
             "why": c["why"]} for c in shown] or [{"slug": spec["slug"], "versions": versions,
                                                   "cls": spec["class"], "pointer": None, "why": None}]
