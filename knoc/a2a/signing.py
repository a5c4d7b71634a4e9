"""Signed cards (A2A 1.0, section 8.4): the payload each verifier generation
computes, JWS signatures over it, and the keys as JWKs. Pure: reading keys
and fetching key sets is `knoc.io`'s job.

A card is read by two generations of verifiers, so it has up to two views:

- the 1.0 view, what a2a-sdk 1.x and the JS SDK verify: the card as
  `lf.a2a.v1.AgentCard`, without `signatures`, without proto3 default values
  (a `required: false` is not there) and without empty values, in RFC 8785
  (JCS) form;
- the 0.3 view, what a2a-sdk 0.3 verifies: the card as its 0.3 model reads
  it (other fields ignored), without `signatures`, default values and empty
  values, keys sorted, compact, ASCII (`json.dumps`, not JCS).

A 1.0 card has the first view, a 0.3 card (and agent.json) the second, a
compat card both, and carries a signature for each. Where the SDKs and the
spec text differ (they drop an empty scope list the text keeps), the SDKs
decide: they are what verifies a card."""

from __future__ import annotations

import base64
import hashlib
import json
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

import rfc8785
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from jwt import PyJWK, PyJWS
from jwt.exceptions import PyJWTError
from pydantic import BaseModel

from knoc.a2a.targets import v03, v10

TYP = "JOSE"
ALGORITHMS = ("EdDSA", "ES256")
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey

# Defaults each generation's model leaves out of its view: proto3 scalars
# without presence (1.0); pydantic defaults of a2a-sdk 0.3's models, whose
# security schemes default `type` to their own kind.
_DROP_1_0 = {("AgentExtension", "required"): False, ("AuthorizationCodeOAuthFlow", "pkce_required"): False}
_DROP_0_3 = {("AgentCard", "preferred_transport"): "JSONRPC", ("AgentCard", "protocol_version"): "0.3.0"}
_DROP_0_3_ALWAYS = {("SecurityScheme", "type")}


def views(card: dict[str, Any]) -> dict[str, bytes]:
    """The payloads a card's signatures cover, by view ("1.0", "0.3")."""
    found = {}
    if "supportedInterfaces" in card:
        found["1.0"] = rfc8785.dumps(_clean(_view(v10.AgentCard, card, _DROP_1_0, set())))
    if "url" in card:
        cleaned = _clean(_view(v03.AgentCard, card, _DROP_0_3, _DROP_0_3_ALWAYS))
        found["0.3"] = json.dumps(cleaned, separators=(",", ":"), sort_keys=True).encode("ascii")
    return found


def _view(model: type[BaseModel], value: Any, drop: dict[tuple[str, str], Any],
          always: set[tuple[str, str]]) -> Any:
    """`value` as `model` reads it: only the fields it names (by their JSON
    names), minus the defaults its generation leaves out."""
    if not isinstance(value, dict):
        return value
    out = {}
    for name, field in model.model_fields.items():
        alias = field.alias or name
        if alias not in value or name == "signatures":
            continue
        key = (model.__name__, name)
        if key in always or (key in drop and value[alias] == drop[key]):
            continue
        out[alias] = _typed(field.annotation, value[alias], drop, always)
    return out


def _typed(annotation: Any, value: Any, drop: dict[tuple[str, str], Any], always: set[tuple[str, str]]) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _typed(inner[0], value, drop, always) if len(inner) == 1 else value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(annotation)
        return [_typed(item, v, drop, always) for v in value]
    if origin is dict and isinstance(value, dict):
        _, item = typing.get_args(annotation)
        return {k: _typed(item, v, drop, always) for k, v in value.items()}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _view(annotation, value, drop, always)
    return value


def _clean(value: Any) -> Any:
    """Empty strings, lists and maps removed, recursively (as both SDKs do)."""
    if isinstance(value, dict):
        kept = {k: c for k, v in value.items() if (c := _clean(v)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [c for v in value if (c := _clean(v)) is not None]
        return items or None
    return None if value == "" else value


# --- keys ---------------------------------------------------------------------

def algorithm(key: PrivateKey | PublicKey) -> str:
    if isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)):
        return "EdDSA"
    if isinstance(key.curve, ec.SECP256R1):
        return "ES256"
    raise ValueError(f"an {key.curve.name} key: knoc signs with Ed25519 or P-256 keys")


def public_jwk(key: PrivateKey | PublicKey) -> dict[str, str]:
    """The public key as a JWK (RFC 7517): only public members, ever."""
    public = key.public_key() if isinstance(key, (ed25519.Ed25519PrivateKey, ec.EllipticCurvePrivateKey)) else key
    if isinstance(public, ed25519.Ed25519PublicKey):
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(public.public_bytes(Encoding.Raw, PublicFormat.Raw))}
    algorithm(public)  # P-256 only
    numbers = public.public_numbers()
    return {"crv": "P-256", "kty": "EC", "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big"))}


def thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638: the SHA-256 of the key's required members, as a key id."""
    members = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y")}[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode("utf-8")).digest())


def published(jwk: dict[str, str], kid: str) -> dict[str, str]:
    """A JWKS entry: the public key with its id, algorithm and use."""
    alg = "EdDSA" if jwk["kty"] == "OKP" else "ES256"
    return {**{k: jwk[k] for k in ("kty", "crv", "x", "y") if k in jwk}, "kid": kid, "alg": alg, "use": "sig"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


# --- signatures ---------------------------------------------------------------

@dataclass(frozen=True)
class Signer:
    key: PrivateKey
    kid: str

    def sign(self, payload: bytes, jku: str) -> dict[str, str]:
        """A card signature entry: the JWS over `payload`, compact, without
        its payload part (the verifier computes that from the card)."""
        token = PyJWS().encode(payload, self.key, algorithm=algorithm(self.key),
                               headers={"typ": TYP, "kid": self.kid, "jku": jku})
        protected, _, signature = token.split(".")
        return {"protected": protected, "signature": signature}


@dataclass(frozen=True)
class Check:
    """What one signature of a card proved."""

    index: int  # its place in `signatures`
    kid: str | None
    view: str | None  # the view it verified against; None: it did not verify
    problem: str = ""


def verify(card: dict[str, Any], keys: list[dict[str, Any]],
           payloads: dict[str, bytes] | None = None) -> list[Check]:
    """Each signature of `card` checked against the public JWKs `keys`
    (matched by `kid`) over each of the card's views (`payloads`, when the
    caller has them already)."""
    payloads = views(card) if payloads is None else payloads
    return [_verify_one(i, entry, payloads, keys) for i, entry in enumerate(card.get("signatures") or [])]


def protected_header(entry: Any) -> dict[str, Any] | None:
    """A signature entry's protected header, or None when it is not one."""
    protected = entry.get("protected") if isinstance(entry, dict) else None
    if not isinstance(protected, str):
        return None
    try:
        header = json.loads(base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4)))
    except (ValueError, UnicodeDecodeError):
        return None
    return header if isinstance(header, dict) else None


def _verify_one(index: int, entry: Any, payloads: dict[str, bytes], keys: list[dict[str, Any]]) -> Check:
    if not isinstance(entry, dict) or not isinstance(entry.get("protected"), str) \
            or not isinstance(entry.get("signature"), str):
        return Check(index, None, None, "not a signature entry (`protected` and `signature` strings)")
    header = protected_header(entry)
    if header is None:
        return Check(index, None, None, "its protected header is not base64url JSON of an object")
    kid = header.get("kid") if isinstance(header.get("kid"), str) else None
    if header.get("alg") not in ALGORITHMS:
        return Check(index, kid, None, f"algorithm {header.get('alg')!r} is not one of {', '.join(ALGORITHMS)}")
    candidates = [k for k in keys if kid is None or k.get("kid") == kid]
    if not candidates:
        return Check(index, kid, None, f"no published key has kid {kid!r}")
    for jwk in candidates:
        try:
            key = PyJWK(jwk).key
        except PyJWTError:
            continue
        for view, payload in payloads.items():
            token = f"{entry['protected']}.{b64url(payload)}.{entry['signature']}"
            try:
                PyJWS().decode(token, key=key, algorithms=[header["alg"]])
            except PyJWTError:
                continue
            return Check(index, jwk.get("kid"), view)
    return Check(index, kid, None, "the card changed after it was signed, or another key signed it")
