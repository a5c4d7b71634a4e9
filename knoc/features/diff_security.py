"""How a change of security requirements reads to a client of the card:
the requirements are alternatives, each a set of schemes with a set of
scopes, so their order means nothing (`knoc diff`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

Found = tuple[str, str, str, object, object]  # one change of a card: (kind, class, message, before, after)


def requirements(key: str, old: object, new: object, kind: str, where: str) -> Iterator[Found]:
    """Security requirements are alternatives, each a set of schemes with a
    set of scopes: the same ones in another order ask a client for nothing
    new (cosmetic); any other change may (breaking)."""
    if old == new:
        return
    if old is not None and new is not None and _alternatives(old) == _alternatives(new):
        yield (f"{kind}-reordered", "cosmetic", f"{where}`{key}`: the same alternatives, in another order",
               old, new)
    else:
        yield (f"{kind}-changed", "breaking", f"{where}`{key}` changed: clients may need new credentials", old, new)


def _alternatives(listed: object) -> list[str] | None:
    """Each requirement (0.3's map of scheme to scopes, or 1.0's `schemes`
    of lists), its scopes sorted, as canonical JSON; sorted (None: not a list)."""
    if not isinstance(listed, list):
        return None

    def scopes(value: object) -> object:
        inner = value.get("list") if isinstance(value, dict) and set(value) == {"list"} else value
        return sorted(map(_canonical, inner)) if isinstance(inner, list) else value

    shown = []
    for requirement in listed:
        inner = requirement.get("schemes") if isinstance(requirement, dict) and set(requirement) == {"schemes"} \
            else requirement
        shown.append(_canonical({k: scopes(v) for k, v in inner.items()} if isinstance(inner, dict) else inner))
    return sorted(shown)


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
