"""Signing the cards a build writes, and checking a signed build without the
key. The render stage hands every card (and its agent.json twin) to a
`CardSigner`; whatever follows from card bytes (digests, ETags, the
manifest) is then computed from what it returns.

- `KeySigner` (`knoc build --sign-key`): a signature per key and per view
  of the card (knoc.a2a.signing), `jku` naming the key set of the card's
  host, which it publishes at `/.well-known/jwks.json`.
- `Adopter` (`knoc check` of a signed build): no key needed. A card on disk
  is taken as built when, without its signatures, it is the card the
  sources give and every signature verifies against the key set on disk;
  otherwise the unsigned card is expected, and the drift names it."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from knoc.output.canonical import dumps
from knoc.output.hosting import JWKS_FILE

if TYPE_CHECKING:  # the crypto stack loads only for a run that signs or checks signatures
    from knoc.a2a import signing


class CardSigner(Protocol):
    def sign(self, rel: str, body: bytes, url: str) -> bytes: ...

    def jwks(self, rel: str) -> bytes: ...  # the key set at `rel` (a host's JWKS_FILE)

    def kids(self) -> list[str]: ...


def jku(url: str) -> str:
    """Where a card's verifier finds the key set: its host's well-known path."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/{JWKS_FILE}"


def key_set(signers: Iterable[signing.Signer], retired: Iterable[dict[str, str]]) -> dict[str, Any]:
    """The JWKS every host publishes: the signing keys, then retired ones
    still published so cards signed with them keep verifying."""
    from knoc.a2a import signing

    keys = [signing.published(signing.public_jwk(s.key), s.kid) for s in signers]
    seen = {k["kid"] for k in keys}
    keys += [k for k in (signing.published(j, j.get("kid") or signing.thumbprint(j)) for j in retired)
             if k["kid"] not in seen]
    return {"keys": keys}


@dataclass
class KeySigner:
    signers: list[signing.Signer]
    retired: list[dict[str, str]]

    def sign(self, rel: str, body: bytes, url: str) -> bytes:
        from knoc.a2a import signing

        card = json.loads(body)
        views = signing.views(card)
        card["signatures"] = [s.sign(views[v], jku(url)) for s in self.signers for v in sorted(views)]
        return dumps(card)

    @functools.cached_property
    def _jwks(self) -> bytes:
        return dumps(key_set(self.signers, self.retired))

    def jwks(self, rel: str) -> bytes:
        return self._jwks  # the same key set on every host

    def kids(self) -> list[str]:
        return [s.kid for s in self.signers]


@dataclass
class Adopter:
    """A signed build's cards and key sets, taken from disk where they verify."""

    read: Callable[[str], bytes | None]  # a file under build/, None when absent
    signed_by: list[str]  # the kids the build's manifest names
    jwks_rel: Callable[[str], str]  # the key set a card path's host publishes
    refused: list[tuple[str, str]] = field(default_factory=list)  # (card path, why): right card, bad signatures
    _key_sets: dict[str, list[dict[str, Any]] | None] = field(default_factory=dict)  # read once per host

    def sign(self, rel: str, body: bytes, url: str) -> bytes:
        disk = self.read(rel)
        if disk is None:
            return body  # missing: the drift says so
        try:
            card = json.loads(disk)
        except ValueError:
            return body
        if not isinstance(card, dict) or dumps({k: v for k, v in card.items() if k != "signatures"}) != body:
            return body  # changed: the drift says so
        why = self._doubt(card, self._keys(self.jwks_rel(rel)))
        if why is None:
            return disk
        self.refused.append((rel, why))
        return body

    def _doubt(self, card: dict[str, Any], keys: list[dict[str, Any]] | None) -> str | None:
        """Why the card's signatures do not hold up, or None when they do."""
        from knoc.a2a import signing

        if not card.get("signatures"):
            return "the build is signed, but this card carries no signature"
        if keys is None:
            return f"its host's {JWKS_FILE} is missing, not a key set, or holds a private key"
        payloads = signing.views(card)
        checks = signing.verify(card, keys, payloads)
        failed = [c for c in checks if c.view is None]
        if failed:
            return f"signature {failed[0].index} does not verify: {failed[0].problem}"
        foreign = [c for c in checks if c.kid not in self.signed_by]
        if foreign:
            return f"signature {foreign[0].index} is by key {foreign[0].kid}, which the manifest does not name"
        missing = set(payloads) - {c.view for c in checks}
        if missing:
            return f"no signature covers its {', '.join(sorted(missing))} view"
        return None

    def _keys(self, rel: str) -> list[dict[str, Any]] | None:
        """The public keys of the key set at `rel`, read once; None when it
        is missing, not a key set, or holds a private key."""
        if rel not in self._key_sets:
            raw = self.read(rel)
            try:
                keys = json.loads(raw)["keys"] if raw is not None else None
            except (ValueError, KeyError, TypeError):
                keys = None
            public = isinstance(keys, list) and all(isinstance(k, dict) and "d" not in k for k in keys)
            self._key_sets[rel] = keys if public else None
        return self._key_sets[rel]

    def jwks(self, rel: str) -> bytes:
        """The key set on disk when it holds public keys only; else nothing
        (the drift then names it)."""
        raw = self.read(rel) if self._keys(rel) is not None else None
        return raw if raw is not None else b""

    def kids(self) -> list[str]:
        return list(self.signed_by)
