"""How a change of what a client trusts a card by reads to it (`knoc
diff`): its security requirements, which are alternatives, each a set of
schemes with a set of scopes, so their order means nothing; and the keys
its signatures name."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

Found = tuple[str, str, str, object, object]  # one change of a card: (kind, class, message, before, after)


def requirements(old_card: Mapping[str, object], new_card: Mapping[str, object], kind: str,
                 where: str) -> Iterator[Found]:
    """The security requirements of a card or skill at two refs (1.0's
    `securityRequirements`; a compat card's 0.3 `security` says the same,
    and is compared only where neither side has the 1.0 key). They are alternatives,
    each a set of schemes with a set of scopes: the same ones in another
    order ask a client for nothing new (cosmetic), more of them offer it
    one more way in (additive); any other change may ask it for new
    credentials (breaking)."""
    either = "securityRequirements" in old_card or "securityRequirements" in new_card
    for key in ("securityRequirements",) if either else ("security",):
        old, new = old_card.get(key), new_card.get(key)
        if old == new:
            continue
        was, now = _alternatives(old), _alternatives(new)
        if old is not None and new is not None and set(was or ()) == set(now or ()):
            yield (f"{kind}-reordered", "cosmetic", f"{where}`{key}`: the same alternatives, in another order",
                   old, new)
        elif was and now and set(was) < set(now):
            yield (f"{kind}-widened", "additive", f"{where}`{key}`: every alternative stays, and clients may also "
                   "use another", old, new)
        else:
            yield (f"{kind}-changed", "breaking", f"{where}`{key}` changed: clients may need new credentials",
                   old, new)


def _alternatives(listed: object) -> list[str] | None:
    """Each requirement (0.3's map of scheme to scopes, or 1.0's `schemes`
    of lists), its scopes sorted, as canonical JSON; sorted (None: not a list)."""
    if not isinstance(listed, list):
        return None

    def scopes(value: object) -> object:
        inner = value.get("list") if isinstance(value, dict) and set(value) == {"list"} else value
        return sorted(map(canonical, inner)) if isinstance(inner, list) else value

    shown = []
    for requirement in listed:
        inner = requirement.get("schemes") if isinstance(requirement, dict) and set(requirement) == {"schemes"} \
            else requirement
        shown.append(canonical({k: scopes(v) for k, v in inner.items()} if isinstance(inner, dict) else inner))
    return sorted(shown)


def canonical(value: object) -> str:
    """A value as JSON with its keys sorted: one text for one value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def signatures(old: tuple[str, ...], new: tuple[str, ...], kept: frozenset[str],
               published: frozenset[str]) -> Iterator[Found]:
    """A client that verifies cards rejects one that lost its signatures, or
    whose signatures no longer name a key it knew; a key rotated, the old
    one still in the key sets (`kept`: retired) and the new one published,
    is one it can fetch."""
    if old and not new:
        yield "signatures-removed", "breaking", "no longer signed: clients that verify cards reject it", old, None
    elif new and not old:
        yield "signatures-added", "additive", "now signed", None, new
    elif set(old) - set(new) and set(old) - set(new) <= kept and set(new) <= published:
        what = "signed by another key" if set(new) - set(old) else "signed by fewer keys"
        yield ("signing-keys-rotated", "cosmetic", f"{what}; each one it is no longer signed by stays in jwks.json, "
               "so copies it signed still verify", old, new)
    elif set(old) - set(new):
        yield "signing-keys-changed", "breaking", "no longer signed by a key it was signed by", old, new
    elif set(new) - set(old):
        yield "signing-keys-added", "additive", "also signed by another key", old, new
