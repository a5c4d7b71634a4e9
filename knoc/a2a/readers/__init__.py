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
`url`) has no view of it: its clients cannot use the card, signed or not."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from knoc.a2a.readers import js, sdk03, sdk1
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


READERS = (
    Reader("a2a-sdk 1.x", sdk1.payload),
    Reader("@a2a-js/sdk", js.payload),
    Reader("@a2a-js/sdk client", js.resolved_payload),
    Reader("a2a-sdk 0.3", sdk03.payload),
)


def views(card: Mapping[str, object]) -> list[View]:
    """The view of each reader that reads `card`, in READERS order."""
    found = []
    for reader in READERS:
        try:
            found.append(View(reader.name, reader.payload(card)))
        except Uncanonical as exc:
            found.append(View(reader.name, None, str(exc)))
        except Unreadable:
            continue
    return found


__all__ = ["READERS", "Reader", "Uncanonical", "Unreadable", "View", "views"]
