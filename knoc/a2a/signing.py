"""Signed cards (A2A 1.0, section 8.4): JWS signatures over what each
client reads of a card (`knoc.a2a.readers`), the keys as JWKs, and the
verification of a card against a key set. Pure: reading keys and fetching
key sets is `knoc.io`'s job.

A card is signed once per key and per distinct view: a 1.0 card has one
view for every 1.x reader, a 0.3 or compat card adds a2a-sdk 0.3's. A
card is valid when every view a reader has of it is covered by a
signature that verifies with a trusted key. A view with no canonical
form can be covered by none, and one that is another view with members
left out is never signed (`knoc.a2a.readers.views`).

Verification is bounded whatever the card holds: at most MAX_SIGNATURES
signatures, each naming its key by `kid` (the spec's MUST), so each is
checked against one key, once per distinct view."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from knoc.a2a import readers
from knoc.rules import jsontext
from knoc.rules.json import JsonObject

TYP = "JOSE"
ALGORITHMS = ("EdDSA", "ES256")
HEADER_KEYS = ("alg", "typ", "kid", "jku")  # all a knoc signature's protected header holds
MAX_SIGNATURES = 16  # per card: a card carries one per key and view
MAX_KEYS = 64  # per key set
MAX_HEADER_CHARS = 4096  # one protected header, base64url
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey


class KeyProblem(ValueError):
    """A JWK or key set that cannot be used; the message says why, never
    quoting key material."""


# --- keys ---------------------------------------------------------------------

def algorithm(key: PrivateKey | PublicKey) -> str:
    if isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)):
        return "EdDSA"
    if isinstance(key.curve, ec.SECP256R1):
        return "ES256"
    raise KeyProblem(f"an {key.curve.name} key: knoc signs with Ed25519 or P-256 keys")


def public_jwk(key: PrivateKey | PublicKey) -> dict[str, str]:
    """The public key as a JWK (RFC 7517): only public members, ever."""
    public = key.public_key() if isinstance(key, (ed25519.Ed25519PrivateKey, ec.EllipticCurvePrivateKey)) else key
    if isinstance(public, ed25519.Ed25519PublicKey):
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(public.public_bytes(Encoding.Raw, PublicFormat.Raw))}
    algorithm(public)  # P-256 only
    numbers = public.public_numbers()
    return {"crv": "P-256", "kty": "EC", "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big"))}


def public_key(jwk: object) -> PublicKey:
    """The key a public JWK holds: Ed25519 (OKP) or P-256 (EC) only, with no
    private member and, where it says, for signatures with its own algorithm."""
    if not isinstance(jwk, dict):
        raise KeyProblem("a key is not a JSON object")
    if "d" in jwk:
        raise KeyProblem("a key holds a private member (`d`): a key set publishes public keys only")
    if "keys" in jwk and "kty" not in jwk:
        raise KeyProblem("it is a key set (`keys`), not one key: pin each key on its own (`knoc keys public KEY` "
                         "prints it), or list several")
    kty, crv = jwk.get("kty"), jwk.get("crv")
    want = {("OKP", "Ed25519"): "EdDSA", ("EC", "P-256"): "ES256"}.get((str(kty), str(crv)))
    if kty is None or crv is None:
        raise KeyProblem(f"a key has no {'`kty`' if kty is None else '`crv`'}: a JWK of Ed25519 has "
                         "`kty = \"OKP\"`, `crv = \"Ed25519\"`, and one of P-256 `kty = \"EC\"`, `crv = \"P-256\"`")
    if want is None or not isinstance(kty, str) or not isinstance(crv, str):
        raise KeyProblem(f"a key is {shown(kty)}/{shown(crv)}: knoc verifies Ed25519 (OKP) and P-256 (EC) keys")
    if "alg" in jwk and jwk["alg"] != want:
        raise KeyProblem(f"a {crv} key says `alg` {shown(jwk['alg'])}: it can only be {want}")
    if "use" in jwk and jwk["use"] != "sig":
        raise KeyProblem(f"a key says `use` {shown(jwk['use'])}: a card is verified with `sig` keys")
    x = _coordinate(jwk, "x")
    try:
        if kty == "OKP":
            return ed25519.Ed25519PublicKey.from_public_bytes(x)
        y = _coordinate(jwk, "y")
        return ec.EllipticCurvePublicNumbers(int.from_bytes(x, "big"), int.from_bytes(y, "big"),
                                             ec.SECP256R1()).public_key()
    except ValueError:
        raise KeyProblem(f"a {crv} key's coordinates are not a point of the curve") from None


def _coordinate(jwk: Mapping[str, object], name: str) -> bytes:
    value = jwk.get(name)
    raw = _unb64url(value) if isinstance(value, str) else None
    if raw is None or len(raw) != 32:
        raise KeyProblem(f"a {jwk.get('crv')} key has no 32-byte `{name}` (base64url)")
    return raw


def thumbprint(jwk: Mapping[str, object]) -> str:
    """RFC 7638: the SHA-256 of the key's required members, as a key id."""
    public_key(jwk)  # a usable key, so its members are there
    members = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y")}[str(jwk["kty"])]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def published(jwk: Mapping[str, str], kid: str) -> dict[str, str]:
    """A JWKS entry: the public key with its id, algorithm and use."""
    alg = "EdDSA" if jwk["kty"] == "OKP" else "ES256"
    return {**{k: jwk[k] for k in ("kty", "crv", "x", "y") if k in jwk}, "kid": kid, "alg": alg, "use": "sig"}


@dataclass(frozen=True)
class KeySet:
    """A key set's usable keys by kid (each kid once)."""

    keys: dict[str, PublicKey]
    skipped: tuple[str, ...] = ()  # why a key was left out, one line each


def key_set(doc: object) -> KeySet:
    """The keys of a JWKS document. The set itself must be sound (an object
    with `keys`, at most MAX_KEYS, each kid once); a key knoc cannot use is
    left out and said why."""
    keys = doc.get("keys") if isinstance(doc, dict) else None
    if not isinstance(keys, list):
        raise KeyProblem("not a JWK set (a JSON object with a `keys` list)")
    if len(keys) > MAX_KEYS:
        raise KeyProblem(f"the key set holds {len(keys):,} keys; knoc reads at most {MAX_KEYS}")
    found: dict[str, PublicKey] = {}
    skipped = []
    for i, jwk in enumerate(keys):
        kid = jwk.get("kid") if isinstance(jwk, dict) else None
        if not isinstance(kid, str) or not kid:
            skipped.append(f"key {i} has no `kid`")
            continue
        if kid in found:
            raise KeyProblem(f"the key set names kid {shown(kid)} twice: a signature's key would be ambiguous")
        try:
            found[kid] = public_key(jwk)
        except KeyProblem as exc:
            skipped.append(f"key {shown(kid)}: {exc}")
    return KeySet(found, tuple(skipped))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes | None:
    """The bytes of strict base64url (RFC 7515 2: URL-safe alphabet, no
    padding, no whitespace, and the one encoding of its bytes), or None.
    A lenient decoder takes forms the SDKs refuse: a signature re-encoded
    so would be called valid here and fail in every client."""
    if not _B64URL.fullmatch(text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if b64url(raw) == text else None


_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def shown(value: object) -> str:
    """A value from a hostile file, safe and short for a message."""
    return repr(value)[:60] if isinstance(value, (str, int, float, bool)) or value is None else type(value).__name__


# --- signatures ---------------------------------------------------------------

@functools.cache
def _ecdsa() -> ec.ECDSA:
    """ES256 with RFC 6979's deterministic nonce, where the OpenSSL beneath
    has it (3.2 on): the same card then gets the same signature, so a
    rebuild rewrites only what changed, as with Ed25519. Either verifies alike."""
    deterministic = ec.ECDSA(hashes.SHA256(), deterministic_signing=True)
    try:
        ec.generate_private_key(ec.SECP256R1()).sign(b"", deterministic)
    except UnsupportedAlgorithm:
        return ec.ECDSA(hashes.SHA256())
    return deterministic


@dataclass(frozen=True)
class Signer:
    key: PrivateKey
    kid: str

    def sign(self, payload: bytes, jku: str) -> dict[str, str]:
        """A card signature entry: the JWS over `payload`, compact, without
        its payload part (the verifier computes that from the card)."""
        header = {"alg": algorithm(self.key), "typ": TYP, "kid": self.kid, "jku": jku}
        protected = b64url(json.dumps(header, separators=(",", ":"), sort_keys=True).encode("utf-8"))
        signing_input = f"{protected}.{b64url(payload)}".encode("ascii")
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            raw = self.key.sign(signing_input)
        else:
            r, s = decode_dss_signature(self.key.sign(signing_input, _ecdsa()))
            raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return {"protected": protected, "signature": b64url(raw)}


def payloads(card: Mapping[str, object]) -> list[bytes]:
    """The distinct payloads the card's readers verify, in reader order:
    what a card is signed over, once per key."""
    return _distinct(readers.views(card))


def sign(card: Mapping[str, object], signers: Iterable[Signer], jku: str) -> list[dict[str, str]]:
    """A signature per key and per distinct view of the card."""
    return sign_views(readers.views(card), signers, jku)


def sign_views(views: Iterable[readers.View], signers: Iterable[Signer], jku: str) -> list[dict[str, str]]:
    """A signature per key and per distinct payload of `views`."""
    covered = _distinct(views)
    return [s.sign(p, jku) for s in signers for p in covered]


def _distinct(views: Iterable[readers.View]) -> list[bytes]:
    """The payloads of `views`, each once, in order (a view without one is not signed)."""
    return list(dict.fromkeys(v.payload for v in views if v.payload is not None))


@dataclass(frozen=True)
class Check:
    """What one signature of a card proved."""

    index: int  # its place in `signatures`
    kid: str | None
    covers: tuple[str, ...] = ()  # the readers whose view it verified; none: it did not verify
    problem: str = ""
    header: JsonObject = field(default_factory=dict)  # its protected header, when it is one


@dataclass(frozen=True)
class Verdict:
    """A card's signatures against a key set, view by view."""

    checks: list[Check]
    views: list[readers.View]  # every reader's view of the card
    problem: str = ""  # why nothing was checked (not a list, too many)
    unread: list[str] = field(default_factory=list)  # why each other reader cannot read the card

    @property
    def uncovered(self) -> list[readers.View]:
        """The views no verifying signature covers."""
        covered = {r for c in self.checks for r in c.covers}
        return [v for v in self.views if v.reader not in covered]

    @property
    def valid(self) -> bool:
        return not self.problem and bool(self.views) and not self.uncovered


def verify(card: Mapping[str, object], keys: KeySet) -> Verdict:
    """Each signature of `card` checked with the key its `kid` names, over
    each distinct view of the card."""
    unread: list[str] = []
    views = readers.views(card, unread)
    signatures = card.get("signatures", [])
    if not isinstance(signatures, list):
        return Verdict([], views, "`signatures` is not a list", unread)
    if len(signatures) > MAX_SIGNATURES:
        return Verdict([], views, f"the card carries {len(signatures):,} signatures; knoc checks at most "
                                  f"{MAX_SIGNATURES} (one per key and view is all a card needs)", unread)
    by_payload: dict[bytes, list[str]] = {}
    for v in views:
        if v.payload is not None:
            by_payload.setdefault(v.payload, []).append(v.reader)
    encoded = {p: b64url(p) for p in by_payload}
    return Verdict([_verify_one(i, entry, by_payload, encoded, keys) for i, entry in enumerate(signatures)], views,
                   unread=unread)


def protected_header(entry: object) -> JsonObject | None:
    """A signature entry's protected header, or None when it is not one."""
    protected = entry.get("protected") if isinstance(entry, dict) else None
    if not isinstance(protected, str) or len(protected) > MAX_HEADER_CHARS:
        return None
    raw = _unb64url(protected)
    if raw is None or raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark: JSON text, but not to a2a-sdk
        return None
    try:
        header = jsontext.parse_value(raw)
    except jsontext.Refused:
        return None
    return header if isinstance(header, dict) else None


def _verify_one(index: int, entry: object, by_payload: dict[bytes, list[str]], encoded: dict[bytes, str],
                keys: KeySet) -> Check:
    if not isinstance(entry, dict) or not isinstance(entry.get("protected"), str) \
            or not isinstance(entry.get("signature"), str):
        return Check(index, None, problem="not a signature entry (`protected` and `signature` strings)")
    header = protected_header(entry)
    if header is None:
        return Check(index, None, problem="its protected header is not base64url JSON of an object")
    kid = named if isinstance(named := header.get("kid"), str) else None
    if kid is None:
        return Check(index, None, problem="its protected header names no key (`kid`, which A2A requires)",
                     header=header)
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        return Check(index, kid, problem=f"algorithm {shown(alg)} is not one of {', '.join(ALGORITHMS)}",
                     header=header)
    if not isinstance(header.get("typ"), str) or not header["typ"]:
        return Check(index, kid, problem="its protected header has no `typ` (the JS SDK refuses it)", header=header)
    if "crit" in header or "b64" in header:  # RFC 7515 4.1.11, RFC 7797: extensions no SDK verifies
        return Check(index, kid, problem="its protected header asks for JWS extensions (`crit`, `b64`) the "
                                         "SDKs refuse", header=header)
    key = keys.keys.get(kid)
    if key is None:
        return Check(index, kid, problem=f"no published key has kid {shown(kid)}", header=header)
    if algorithm(key) != alg:
        return Check(index, kid, problem=f"key {shown(kid)} is not an {alg} key", header=header)
    signature = _unb64url(entry["signature"])
    if signature is None or len(signature) != 64:
        return Check(index, kid, problem="its signature is not 64 bytes of base64url", header=header)
    covers = tuple(r for payload, names in by_payload.items()
                   if _holds(key, signature, f"{entry['protected']}.{encoded[payload]}".encode("ascii"))
                   for r in names)
    unprotected = entry.get("header")
    if unprotected is not None and not (isinstance(unprotected, dict) and not unprotected.keys() & header.keys()):
        # RFC 7515 4: the two headers' names must be disjoint; the JS SDK (jose) refuses otherwise
        covers = tuple(r for r in covers if not r.startswith("@a2a-js/"))
        if not covers:
            return Check(index, kid, problem="its unprotected header repeats a protected parameter", header=header)
    if covers:
        return Check(index, kid, covers, header=header)
    return Check(index, kid, problem="the card changed after it was signed, or another key signed it", header=header)


def _holds(key: PublicKey, signature: bytes, signing_input: bytes) -> bool:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, signing_input)
        else:
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True
