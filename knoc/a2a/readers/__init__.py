"""How each generation of A2A client reads a card, down to the bytes it
verifies a signature over.

A client does not verify the JSON it fetched: it parses the card into its
own model (converting a 0.3 card first, where it can), writes that model
back out without `signatures`, default values and empty values, and
verifies the signature over that canonical form. Two clients that read a
card differently verify different bytes, so one signature cannot serve
them both. Each reader here computes those bytes exactly as its SDK does
(`tests/test_readers.py` holds them to the SDKs themselves):

- `a2a-sdk 1.x` (Python): its legacy-field conversion, then ProtoJSON of
  `lf.a2a.v1.AgentCard` (camelCase or proto field names), JCS;
- `@a2a-js/sdk`: the card as fetched, through its generated model, JCS;
- `@a2a-js/sdk client`: the card as its resolver hands it to a client
  (a 0.3 card converted), through the same model;
- `a2a-sdk 0.3` (Python): its pydantic model, sorted-key ASCII JSON.

A reader that cannot read a card at all (a 0.3 client and a card with no
`url`) has no view of it: its clients cannot use the card, signed or not.

A view that is another's with members left out is never signed: every
reader that reads the card with those members stripped would verify that
signature, and would act on the stripped card (the JS client verifies a
1.0 card's proto-shaped security schemes, or a 0.3 card's, as left out).
Its reader cannot verify the card: a signature that proved less would
prove nothing to the others."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from knoc.a2a.readers import js, js_client, sdk03, sdk1
from knoc.a2a.readers.common import Uncanonical, Unreadable


@dataclass(frozen=True)
class View:
    """What one reader verifies a card's signatures over."""

    reader: str
    payload: bytes | None  # None: it reads the card, but has no canonical form of it
    problem: str = ""  # why not


@dataclass(frozen=True)
class Reader:
    name: str
    # The bytes this reader verifies a card's signatures over (Unreadable:
    # it cannot read the card; Uncanonical: it has no canonical form of it).
    payload: Callable[[Mapping[str, object]], bytes]
    core: bool = True  # it reads a card into the 1.0 model: with no interface there, its client has none to call
    # Why its client would act on the card otherwise than the payload, parsed, says (None: it does not).
    otherwise: Callable[[Mapping[str, object], Mapping[str, object]], str | None] = lambda card, read: None


READERS = (
    Reader("a2a-sdk 1.x", sdk1.payload),
    Reader("@a2a-js/sdk", js.payload, otherwise=js_client.client_reads_otherwise),
    Reader("@a2a-js/sdk client", js.resolved_payload, otherwise=js_client.client_reads_otherwise),
    Reader("a2a-sdk 0.3", sdk03.payload, core=False),
)


def views(card: Mapping[str, object], unread: list[str] | None = None) -> list[View]:
    """The view of each reader whose client can use `card` (the JS SDK reads
    a 0.3 card as fetched with no interface), in READERS order; a view that
    leaves out what another reads has no payload (it is not signed).
    `unread`, when given, gets why each other reader cannot read it."""
    core = {r.name for r in READERS if r.core}
    found = readings(card, unread)
    read = {v.reader: json.loads(v.payload) for v in found if v.payload is not None}  # each parsed once
    found = [v for v in found if v.reader not in core or v.payload is None or read[v.reader].get("supportedInterfaces")]
    return [_unstripped(_as_used(v, card, read), read) for v in found]


def readings(card: Mapping[str, object], unread: list[str] | None = None) -> list[View]:
    """What each reader that reads `card` verifies, in READERS order (and
    into `unread`, when given, why each other reader cannot read it)."""
    found = []
    for reader in READERS:
        try:
            found.append(View(reader.name, reader.payload(card)))
        except Uncanonical as exc:
            found.append(View(reader.name, None, _short(str(exc))))
        except Unreadable as exc:
            if unread is not None:
                unread.append(_short(str(exc)))
    return found


def _short(why: str) -> str:
    """A reader's reason, which may quote a value of the card: at most a line's worth of it."""
    return why if len(why) <= 300 else why[:299] + "…"


def _as_used(view: View, card: Mapping[str, object], read: Mapping[str, Mapping[str, object]]) -> View:
    """`view`, or, when its client acts on the card otherwise than the view
    says, a view with no payload that says why: no signature can vouch for it."""
    otherwise = next(r.otherwise for r in READERS if r.name == view.reader)
    why = otherwise(card, read[view.reader]) if view.payload is not None else None
    return view if why is None else View(view.reader, None, why)


def _unstripped(view: View, read: Mapping[str, Mapping[str, object]]) -> View:
    """`view`, or, when it is another's (of those `read`) with members left
    out, a view with no payload that says which."""
    if view.payload is None:
        return view
    mine = read[view.reader]
    for other, theirs in read.items():
        lost = _left_out(mine, theirs) if other != view.reader else None
        if lost:
            shown = ", ".join(f"`{p}`" for p in lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
            return View(view.reader, None, f"what it verifies leaves out {shown}, which {other} reads, so no "
                        "signature can vouch for this card to it: one over that would verify the card stripped of "
                        "it for every client")
    return view


def _left_out(part: object, whole: object, path: str = "$") -> list[str] | None:
    """The paths of `whole` that `part` has not, when `part` is `whole` with
    members left out; None when they differ otherwise."""
    if isinstance(part, dict) and isinstance(whole, dict):
        if not part.keys() <= whole.keys():
            return None
        out = [f"{path}.{k}" for k in whole if k not in part]
        for k, v in part.items():
            inner = _left_out(v, whole[k], f"{path}.{k}")
            if inner is None:
                return None
            out += inner
        return out
    if isinstance(part, list) and isinstance(whole, list) and len(part) == len(whole):
        found: list[str] = []
        for i, (p, w) in enumerate(zip(part, whole, strict=True)):
            inner = _left_out(p, w, f"{path}[{i}]")
            if inner is None:
                return None
            found += inner
        return found
    return [] if type(part) is type(whole) and part == whole else None


__all__ = ["READERS", "Reader", "Uncanonical", "Unreadable", "View", "readings", "views"]
