"""Signing for `knoc build` and `knoc check`: the keys a build signs with
(`--sign-key`, KNOC_SIGNING_KEY, knoc.toml's [signing]), and, for a check of
a signed build, the adopter that takes verified cards from disk."""

from __future__ import annotations

import json

from knoc.app.outcome import UsageError
from knoc.config import Config
from knoc.io import tree
from knoc.output.hosting import JWKS_FILE, SITE
from knoc.output.signed import Adopter, KeySigner
from knoc.output.tree import MANIFEST


def key_signer(config: Config, sign_keys: tuple[str, ...]) -> KeySigner | None:
    """The signer of a build, or None when no key is given. A key inside the
    repo, an unusable key or a bad [signing] table is a usage error."""
    from knoc.a2a import signing  # the crypto stack loads only for a run that signs
    from knoc.io import keys

    try:
        private = keys.signing_keys(list(sign_keys), config.root)
        retired = [_retired(config, rel) for rel in config.retired]
    except keys.KeyProblem as exc:
        raise UsageError("KNO-SIGNING", str(exc), "see `knoc explain KNO-SIGNING`") from None
    if not private:  # [signing] describes keys; without one the build is simply unsigned
        return None
    if config.kid and len(private) > 1:
        raise UsageError("KNO-SIGNING", "[signing] `kid` names one key, but several signing keys are given",
                         "remove `kid` (each key is then named by its thumbprint)")
    signers = [signing.Signer(k, config.kid or signing.thumbprint(signing.public_jwk(k))) for k in private]
    return KeySigner(signers, retired)


def _retired(config: Config, rel: str) -> dict[str, str]:
    from knoc.a2a import signing
    from knoc.io import keys

    key = keys.public_key(config.root / rel, rel, config.root)
    jwk = key if isinstance(key, dict) else signing.public_jwk(key)
    return {**jwk, "kid": jwk.get("kid") or signing.thumbprint(jwk)}


def signed_by(config: Config) -> list[str] | None:
    """The key ids the build on disk was signed with; None: it is not signed."""
    try:
        # The manifest names its keys before its inputs: most builds are not
        # signed, and their manifest (35 MB at 100,000 agents) is not read whole.
        head = tree.read(config.out_dir, MANIFEST, 4096)
        if b'"signing"' not in head.partition(b'\n  "inputs"')[0] and b'\n  "inputs"' in head:
            return None
        kids = json.loads(tree.read(config.out_dir, MANIFEST))["signing"]["keys"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return kids if isinstance(kids, list) and all(isinstance(k, str) for k in kids) else None


def adopter(config: Config) -> Adopter | None:
    """For `knoc check`: an adopter when the build on disk says it is signed."""
    kids = signed_by(config)
    if kids is None:
        return None

    def read(rel: str) -> bytes | None:
        try:
            return tree.read(config.out_dir, rel)
        except OSError:
            return None

    return Adopter(read, kids, _host_jwks)


def _host_jwks(rel: str) -> str:
    """The key set of the host a file under site/ belongs to."""
    host = rel[len(SITE):].split("/", 1)[0]
    return f"{SITE}{host}/{JWKS_FILE}"
