"""Signing for `knoc build` and `knoc check`: the keys a build signs with
(`--sign-key`, KNOC_SIGNING_KEY, knoc.toml's `[signing] key`), the public
keys the repo pins (`[signing] public`) and still publishes (`retired`),
and, for a check of a signed build, the adopter that takes verified cards
from disk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from knoc.app.common import setting_span
from knoc.app.outcome import UsageError
from knoc.config import CONFIG_FILE, SIGNING_KEY_ENV, Config, KeyRef
from knoc.diagnostics import Diagnostic, diag
from knoc.io import files, git, tree
from knoc.output.hosting import JWKS_FILE, SITE
from knoc.output.signed import Adopter, KeySigner, PublicKey
from knoc.output.tree import MANIFEST
from knoc.rules import jsontext

if TYPE_CHECKING:
    from knoc.a2a import signing as signing_


def key_signer(config: Config, sign_keys: tuple[str, ...], then: str = "nothing was written") -> KeySigner | None:
    """The signer of a build, or None when no key is given. A key inside the
    repo, an unusable key, a key the repo does not pin or a bad [signing]
    table is a usage error."""
    private = _private(config, sign_keys, then)
    if not private:
        return None
    from knoc.a2a import signing  # signing (JWS, the SDK readers) loads only for a run that signs

    pinned, retired = pins(config)
    if config.kid and len({signing.thumbprint(signing.public_jwk(k)) for k in private}) > 1:
        raise UsageError("KNO-SIGNING", "[signing] `kid` names one key, but several signing keys are given",
                         "remove `kid` (each key is then named by its thumbprint)")
    unique = {signing.thumbprint(signing.public_jwk(k)): k for k in private}  # a key given twice signs once
    named = {signing.thumbprint(p.jwk): p.kid for p in pinned}  # a pinned key signs under the kid it is pinned with
    signers = [signing.Signer(k, named.get(t) or _kid(config, signing.public_jwk(k))) for t, k in unique.items()]
    if pinned:
        allowed = {signing.thumbprint(p.jwk) for p in pinned}
        stray = [s for s in signers if signing.thumbprint(signing.public_jwk(s.key)) not in allowed]
        if stray:
            kid = signing.thumbprint(signing.public_jwk(stray[0].key))
            if kid in {signing.thumbprint(r.jwk) for r in retired}:  # rotated out: pinning it back is no fix
                raise UsageError("KNO-SIGNING", f"the signing key {kid} is one {CONFIG_FILE} retires in [signing] "
                                 f"`retired`: a build signs with the keys it pins in `public`; {then}",
                                 "sign with a pinned key (the new one of the rotation)")
            raise UsageError("KNO-SIGNING", f"the signing key {kid} is not one {CONFIG_FILE} pins in [signing] "
                             f"`public`; {then}",
                             "sign with the pinned key, or pin this one (`knoc keys public KEY` prints the line)")
    published = pinned or [PublicKey(signing.public_jwk(s.key), s.kid) for s in signers]
    from knoc.io import keys

    return KeySigner(signers, published, retired, exposed=keys.exposed_files(list(sign_keys), config.key))


def exposed(found: list[tuple[str, str, str]]) -> list[Diagnostic]:
    """A warning per signing key file other users of this machine may read
    or replace (`keys.exposed_files`)."""
    return [diag("KNO-SIGNING-KEY-EXPOSED", f"the signing key {path} {what}", hint=fix) for path, what, fix in found]


def pins(config: Config) -> tuple[list[PublicKey], list[PublicKey]]:
    """The public keys knoc.toml pins (`public`) and still publishes (`retired`)."""
    from knoc.a2a import signing

    try:
        pinned = [_public_key(config, ref, "public") for ref in config.public]
    except signing.KeyProblem as exc:
        raise _placed(config, "public", str(exc), "see `knoc explain KNO-SIGNING`") from None
    try:
        retired = [_public_key(config, ref, "retired") for ref in config.retired]
    except signing.KeyProblem as exc:
        raise _placed(config, "retired", str(exc), "see `knoc explain KNO-SIGNING`") from None
    if config.kid and len(pinned) > 1:
        raise _placed(config, "kid", "[signing] `kid` names one key, but `public` pins several",
                      "remove `kid` (each key is then named by its thumbprint)")
    for what, keys in (("public", pinned), ("retired", retired)):
        named: dict[str, dict[str, str]] = {}
        for k in keys:
            if named.setdefault(k.kid, k.jwk) != k.jwk:  # a key set names each kid once
                raise _placed(config, what, f"[signing] `{what}` has two keys with kid {k.kid!r}",
                              "give each key its own kid (or leave it out: a key is then named by its thumbprint)")
    current = {k.kid: k.jwk for k in pinned}
    clash = next((k.kid for k in retired if k.kid in current and current[k.kid] != k.jwk), None)
    if clash is not None:  # a key set names each kid once: one of the two would go unpublished
        raise _placed(config, "retired", f"[signing] `retired` has a key with kid {clash!r}, the kid of another "
                      "key `public` pins", "give the retired key its own kid (or leave it out)")
    return pinned, retired


def keys_read(config: Config) -> list[Diagnostic]:
    """Read every key a build of the repo would and check them as it does,
    signing nothing: the keys knoc.toml pins or retires (the repo's own: a
    problem is an error), then the signing key the environment or knoc.toml
    gives (this machine's: a warning, `KNO-SIGNING-KEY`)."""
    try:
        pins(config)
        if config.key and _in_repo(config):  # committed with knoc.toml: the repo's problem
            raise _placed(config, "key", "[signing] `key` names a file inside the repo: a private key must never "
                          "be committed", "move the key outside the repo (a CI secret, or a file in your home), "
                          "and remove it from git's history if it was committed")
    except UsageError as exc:
        return [exc.finding()]
    try:
        signer = key_signer(config, (), then="a build here stops")
    except UsageError as exc:
        return [diag("KNO-SIGNING-KEY", str(exc), file=exc.file, span=exc.span,
                     hint="give the key the repo pins before building here (KNOC_SIGNING_KEY or [signing] `key`), "
                          "or build with --unsigned")]
    return exposed(signer.exposed) if signer is not None else []


def _placed(config: Config, key: str, message: str, hint: str) -> UsageError:
    """A KNO-SIGNING error about `[signing]`'s `key`, placed at its line in knoc.toml."""
    span = setting_span(config, "signing", key)
    return UsageError("KNO-SIGNING", message, hint, file=CONFIG_FILE if span else None, span=span)


def _in_repo(config: Config) -> bool:
    from knoc.io import keys  # the key reader (and `cryptography`) only for a repo that names a key

    return keys.in_repo(config.key or "", config.root)


def key_here(path: str | None) -> bool:
    """Whether a key file knoc.toml names is on this machine (`~` read as the home folder)."""
    return path is not None and path != "" and files.is_file(Path(path).expanduser())


def key_given(config: Config, sign_keys: tuple[str, ...] = ()) -> bool:
    """Whether a signing key is given: `--sign-key`, KNOC_SIGNING_KEY or knoc.toml's `[signing] key`."""
    return bool(sign_keys or config.key or os.environ.get(SIGNING_KEY_ENV, "").strip())


def _private(config: Config, sign_keys: tuple[str, ...], then: str = "nothing was written",
             checking: bool = False) -> list[signing_.PrivateKey]:
    """The keys given; `checking`: for `knoc check`, which takes no --sign-key and builds nothing."""
    if not key_given(config, sign_keys):
        return []  # the key reader (and `cryptography`) is not even loaded
    from knoc.io import keys

    try:
        return keys.signing_keys(list(sign_keys), config.root, config.key)
    except keys.KeyProblem as exc:
        hint = ("give a usable key (KNOC_SIGNING_KEY or [signing] `key`), or none: pin the public keys in "
                f"{CONFIG_FILE} and `knoc check` needs no private key (`knoc explain KNO-SIGNING`)" if checking
                else "give a usable key (--sign-key PATH, KNOC_SIGNING_KEY or [signing] `key`; `knoc explain "
                "KNO-SIGNING`), or build with --unsigned to publish without signatures")
        if not sign_keys and not os.environ.get(SIGNING_KEY_ENV, "").strip():  # knoc.toml's: placed there
            raise _placed(config, "key", f"{exc}; {then}", hint) from None
        raise UsageError("KNO-SIGNING", f"{exc}; {then}", hint) from None


def _kid(config: Config, jwk: dict[str, str]) -> str:
    from knoc.a2a import signing

    return config.kid or signing.thumbprint(jwk)


def _public_key(config: Config, ref: KeyRef, what: str) -> PublicKey:
    """A pinned or retired key: a file in the repo, or an inline JWK."""
    from knoc.a2a import signing
    from knoc.io import keys

    if isinstance(ref, str):
        try:
            found = keys.public_key(config.root / ref, ref, config.root)
        except keys.KeyProblem as exc:
            raise signing.KeyProblem(f"[signing] `{what}`: {exc}") from None
        jwk = found if isinstance(found, dict) else signing.public_jwk(found)
        name = ref
    else:
        jwk, name = dict(ref), "an inline JWK"
    try:
        signing.public_key(jwk)
    except signing.KeyProblem as exc:
        raise signing.KeyProblem(f"[signing] `{what}`: {name}: {exc}") from None
    public: dict[str, str] = {k: jwk[k] for k in ("kty", "crv", "x", "y") if k in jwk}
    own = jwk.get("kid")  # a key keeps the kid it signed under, through a rotation and after it
    if what == "public" and config.kid:  # [signing] `kid` names the one pinned key, as it always has
        return PublicKey(public, config.kid)
    return PublicKey(public, own if isinstance(own, str) and own else signing.thumbprint(public))


def signed_by(config: Config) -> list[str] | None:
    """The key ids the build on disk was signed with; None: it is not signed."""
    try:
        # The manifest names its keys before its inputs: most builds are not
        # signed, and their manifest (35 MB at 100,000 agents) is not read whole.
        head = tree.read(config.out_dir, MANIFEST, 4096)
        before_inputs = head.partition(b'\n  "inputs"')[0]
        if b'"signing"' not in before_inputs and b"\\u" not in before_inputs and b'\n  "inputs"' in head:
            return None
        return _kids(tree.read(config.out_dir, MANIFEST))
    except OSError:
        return None


def built_keys(config: Config) -> dict[str, str]:
    """The keys build/'s key sets publish: each kid's key, by its thumbprint
    (every host publishes the same set: the first that reads says it)."""
    from knoc.a2a import signing

    for host in tree.trees(config.out_dir / SITE.rstrip("/")):
        try:
            entries = jsontext.parse(tree.read(config.out_dir, f"{SITE}{host}/{JWKS_FILE}"))["keys"]
        except (OSError, jsontext.Refused, KeyError, TypeError):
            continue
        found = {}
        for jwk in entries if isinstance(entries, list) else []:
            try:
                found[str(jwk["kid"])] = signing.thumbprint(jwk)
            except (KeyError, TypeError, ValueError):
                continue
        return found
    return {}


def committed_signed_by(config: Config) -> list[str] | None:
    """[] when git's HEAD holds a signed build (its manifest names signing
    before its inputs, in any shape, or cannot be told apart from one that
    does); None when it holds none, or an unsigned one."""
    head = git.committed(config.root, f"{config.output}/{MANIFEST}", 4096)
    if head is None:
        return None
    before, marker, _ = head.partition(b'\n  "inputs"')
    signed = b'"signing"' in before or b"\\u" in before or (not marker and b"signing" in head)
    return [] if signed else None


def _kids(manifest: bytes) -> list[str] | None:
    from knoc.rules import jsontext

    try:
        kids = jsontext.parse(manifest)["signing"]["keys"]
    except (jsontext.Refused, KeyError, TypeError):
        return None
    return kids if isinstance(kids, list) and all(isinstance(k, str) for k in kids) else None


def adopter(config: Config) -> Adopter | None:
    """For `knoc check`: an adopter when the repo pins signing keys or the
    build on disk says it is signed (None: neither). Without a pin or a key
    at hand, a signed build cannot be told from a forged one: a usage error."""
    kids = signed_by(config)
    if kids is None and not (config.public or config.retired or key_given(config)):
        return None  # nothing signed, pinned or given: the signing code is not even loaded
    from knoc.a2a import signing

    pinned, retired = pins(config)
    keys_from = f"the keys {CONFIG_FILE} pins"
    if not pinned:  # the key at hand (KNOC_SIGNING_KEY, [signing] key) stands in for a pin
        pinned = [PublicKey(jwk, _kid(config, jwk))
                  for jwk in map(signing.public_jwk, _private(config, (), "nothing was checked", checking=True))]
        keys_from = "the key given (KNOC_SIGNING_KEY or [signing] `key`)"
    if not pinned:
        if kids is None:
            return None
        raise UsageError("KNO-SIGNING", f"{config.output}/ is signed, but {CONFIG_FILE} pins no public key: "
                         "knoc check cannot tell the build's key from one planted in its key sets",
                         "pin the key's public half under [signing] (`knoc keys public KEY` prints the line), "
                         "or give the key (KNOC_SIGNING_KEY)")

    def read(rel: str) -> bytes | None:
        try:
            return tree.read(config.out_dir, rel)
        except OSError:
            return None

    return Adopter(read, pinned, retired, kids or [], keys_from=keys_from)


def unpinned(signer: KeySigner) -> Diagnostic:
    """The warning of a build signed with keys knoc.toml does not pin."""
    from knoc.a2a import signing

    lines = " and ".join(f"`{pin_line(signing.public_jwk(s.key))}`" for s in signer.signers)
    return diag("KNO-SIGNING-UNPINNED", f"{CONFIG_FILE} pins no public key, so `knoc check` cannot tell this "
                "build's key from one planted in its key sets", file=CONFIG_FILE,
                hint=f"add under [signing]: {lines}")


def idle_pins(config: Config, signer: KeySigner) -> list[Diagnostic]:
    """A warning per key knoc.toml pins that this build does not sign with:
    mid-rotation, a build with one of the two keys drops the other's
    signature from every card (clients that trust only that key cannot
    verify them), and nothing else would say so."""
    idle = [p.kid for p in signer.published if p.kid not in signer.kids()] if config.public else []
    where = setting_span(config, "signing", "public") if idle else None  # knoc.toml read once, and only if said
    return [diag("KNO-SIGNING-PIN-IDLE", f"{CONFIG_FILE} pins key {kid!r}, which does not sign this build: its "
                 "cards lose that key's signature", file=CONFIG_FILE, span=where,
                 hint="sign with every pinned key (`--sign-key` once for each: both, during a rotation), or move "
                      "the one that no longer signs from `public` to `retired`") for kid in idle]


def unverifiable(signer: KeySigner | Adopter) -> list[Diagnostic]:
    """A warning per view a signed build left unsigned, at the first card's
    source: that client cannot verify those cards."""
    return [diag("KNO-SIGNING-UNVERIFIABLE", f"{reader} cannot verify this signed card"
                 + (f" (nor {len(sources) - 1:,} more)" if len(sources) > 1 else "") + f": {why}", file=sources[0],
                 hint="for JS clients that verify the cards they resolve, build with `--a2a compat`: its security "
                      "schemes also carry their 0.3 `type`, and the resolver hands such a card to its client "
                      "as fetched")
            for (reader, why), sources in sorted(signer.unsigned.items())]


def pin_line(jwk: dict[str, str], beside: tuple[KeyRef, ...] = ()) -> str:
    """knoc.toml's line pinning this public key, for the user to paste:
    after the keys pinned already (`beside`), in one list."""
    inline = _inline(tuple((k, jwk[k]) for k in ("kty", "crv", "x", "y") if k in jwk))
    if not beside:
        return f"public = {inline}"
    return "public = [" + ", ".join([*(json.dumps(r) if isinstance(r, str) else _inline(r) for r in beside),
                                     inline]) + "]"


def _inline(members: tuple[tuple[str, str], ...]) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in members) + " }"
