"""Signing the cards a build writes, and checking a signed build without the
key. The render stage hands every card (and its agent.json twin) to a
`CardSigner`; whatever follows from card bytes (digests, ETags, the
manifest) is then computed from what it returns.

- `KeySigner` (`knoc build` with a key): a signature per key and per
  distinct view of the card (knoc.a2a.signing), `jku` naming the key set
  of the card's host, which it publishes at `/.well-known/jwks.json`.
- `Adopter` (`knoc check` of a repo that signs): no private key needed.
  The key sets are compiled from the sources like any other output: the
  public keys knoc.toml pins (`[signing] public`) and the retired ones, so
  a key planted in one is drift. A card on disk is taken as built only
  when, without its signatures, it is the card the sources give, and its
  signatures are exactly the ones a build writes: by pinned keys the
  manifest names, each header as knoc writes it, every view covered.
  Otherwise the unsigned card is expected, and the check says why."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from knoc.output.canonical import dumps
from knoc.output.hosting import JWKS_FILE
from knoc.rules.json import JsonObject

if TYPE_CHECKING:  # the crypto stack loads only for a run that signs or checks signatures
    from knoc.a2a import signing


class CardSigner(Protocol):
    def sign(self, rel: str, body: bytes, url: str, source: str) -> bytes: ...  # `source`: the agent's

    def copy(self, rel: str, signed: bytes, body: bytes, url: str, source: str) -> bytes:
        """A host's root copy at `rel` of a card `sign` made `signed` (from `body`)."""
        ...

    def jwks(self, rel: str) -> bytes: ...  # the key set at `rel` (a host's JWKS_FILE)

    def kids(self) -> list[str]: ...


def jku(url: str) -> str:
    """Where a card's verifier finds the key set: its host's well-known path."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/{JWKS_FILE}"


@dataclass(frozen=True)
class PublicKey:
    """A public key a repo's key sets publish, with the kid it is published under."""

    jwk: dict[str, str]
    kid: str


def key_set(current: Iterable[PublicKey], retired: Iterable[PublicKey]) -> bytes:
    """The JWKS every host publishes: the signing keys, then retired ones
    still published so cards signed with them keep verifying."""
    from knoc.a2a import signing

    keys = {k.kid: signing.published(k.jwk, k.kid) for k in current}
    for k in retired:
        keys.setdefault(k.kid, signing.published(k.jwk, k.kid))
    return dumps({"keys": list(keys.values())})


@dataclass
class KeySigner:
    signers: list[signing.Signer]
    published: list[PublicKey]  # the current keys every host publishes (the signers' and the pinned ones)
    retired: list[PublicKey]
    # The views left unsigned (`knoc.a2a.readers.Unverifiable`): (reader, why) -> the sources of their cards.
    unsigned: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    exposed: list[tuple[str, str, str]] = field(default_factory=list)  # key files others may read or replace

    def sign(self, rel: str, body: bytes, url: str, source: str) -> bytes:
        from knoc.a2a import readers, signing

        card: dict[str, object] = json.loads(body)
        views = readers.views(card)
        card["signatures"] = signing.sign_views(views, self.signers, jku(url))
        for v in views:
            if v.payload is None:
                found = self.unsigned.setdefault((v.reader, v.problem), [])
                if source not in found[-1:]:  # a card and its agent.json twin: one agent
                    found.append(source)
        return dumps(card)

    def copy(self, rel: str, signed: bytes, body: bytes, url: str, source: str) -> bytes:
        return signed  # byte for byte, signed once

    @functools.cached_property
    def _jwks(self) -> bytes:
        return key_set(self.published, self.retired)

    def jwks(self, rel: str) -> bytes:
        return self._jwks  # the same key set on every host

    def kids(self) -> list[str]:
        return [s.kid for s in self.signers]


@dataclass
class Adopter:
    """A signed build's cards, taken from disk where they are exactly what
    a build with the pinned keys writes."""

    read: Callable[[str], bytes | None]  # a file under build/, None when absent or unreadable
    pinned: Sequence[PublicKey]  # the keys that may sign (knoc.toml's [signing] public, or a key at hand)
    retired: Sequence[PublicKey]
    signed_by: list[str]  # the kids the build's manifest names (may be forged: only pinned ones count)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (card path, why)
    keys_from: str = "the keys knoc.toml pins"  # where the keys that may sign came from, as a message says it
    unsigned: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # as `KeySigner.unsigned`

    @functools.cached_property
    def _signing(self) -> dict[str, signing.PublicKey]:
        """The keys that may have signed this build: pinned, and named by its manifest."""
        from knoc.a2a import signing

        return {k.kid: signing.public_key(k.jwk) for k in self.pinned if k.kid in self.signed_by}

    def sign(self, rel: str, body: bytes, url: str, source: str) -> bytes:
        disk = self.read(rel)
        card = _json_object(disk)
        if card is None or dumps({k: v for k, v in card.items() if k != "signatures"}) != body:
            if not self._signing and disk is not None:  # unsigned, or by no pinned key (missing: the drift says it)
                self.refused.append((rel, f"this repo's cards are signed by {self.keys_from}, and this card "
                                          "carries no signature by one of them"))
            return body  # changed or missing: the drift says so
        why = self._doubt(card, jku(url), source)
        if why is None:
            return dumps(card)
        self.refused.append((rel, why))
        return body

    def copy(self, rel: str, signed: bytes, body: bytes, url: str, source: str) -> bytes:
        """A root copy is the card's bytes, as a build writes it; but where
        the card's own signatures were refused (stripped, say), the copy is
        taken from disk on its own: that is the card's finding, not a drift
        of the copy that still holds them."""
        return signed if signed != body else self.sign(rel, body, url, source)

    def _doubt(self, card: JsonObject, expected_jku: str, source: str) -> str | None:
        """Why the card's signatures are not the ones a build writes, or None
        (and then, as a build does, which views no signature can cover)."""
        from knoc.a2a import signing

        entries = card.get("signatures")
        if not entries:
            return f"this repo's cards are signed by {self.keys_from}, and this card carries no signature"
        verdict = signing.verify(card, signing.KeySet(self._signing))
        if verdict.problem:  # the keys meant are knoc.toml's pins or the key given, not the published set
            return f"{verdict.problem} (checked against {self.keys_from})"
        assert isinstance(entries, list)  # else the verdict's problem says so
        retired = {k.kid for k in self.retired}
        for check, entry in zip(verdict.checks, entries, strict=True):
            if not check.covers and check.kid in retired:  # a build from before the rotation
                return (f"signature {check.index} is by key {check.kid!r}, which knoc.toml retires: a build signs "
                        f"with the keys it pins (checked against {self.keys_from})")
            if not check.covers:
                return f"signature {check.index} does not verify: {check.problem} (checked against {self.keys_from})"
            members = set(entry) if isinstance(entry, dict) else set()  # it verified: an object
            if members != {"protected", "signature"}:
                return (f"signature {check.index} carries members no signature covers "
                        f"({', '.join(sorted(members - {'protected', 'signature'}))})")
            if set(check.header) != set(signing.HEADER_KEYS) or check.header.get("typ") != signing.TYP \
                    or check.header.get("jku") != expected_jku:
                return f"signature {check.index}'s protected header is not the one knoc writes (alg, typ, kid, jku)"
        missing = [v for v in verdict.uncovered if v.payload is not None]  # a view without one is never signed
        if missing:
            return f"no signature covers what {', '.join(v.reader for v in missing)} verif" + (
                "ies" if len(missing) == 1 else "y")
        if len(entries) != len(signing.payloads(card)) * len({c.kid for c in verdict.checks}):
            return "it carries signatures a build does not write (one per key and view)"
        for v in verdict.views:
            if v.payload is None:
                found = self.unsigned.setdefault((v.reader, v.problem), [])
                if source not in found[-1:]:
                    found.append(source)
        return None

    def jwks(self, rel: str) -> bytes:
        return key_set(self.pinned, self.retired)

    def kids(self) -> list[str]:
        return [k.kid for k in self.pinned if k.kid in self.signed_by] or [k.kid for k in self.pinned]


def _json_object(raw: bytes | None) -> JsonObject | None:
    """A card file on disk, parsed under the JSON input rule; None when it is
    not a JSON object (the drift says what is wrong with it)."""
    from knoc.rules import jsontext

    if raw is None:
        return None
    try:
        value = jsontext.parse_value(raw)
    except jsontext.Refused:
        return None
    return value if isinstance(value, dict) else None
