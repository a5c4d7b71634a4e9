"""`knoc keys new`: a fresh signing key, written outside any repo."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from knoc.a2a import signing
from knoc.app.outcome import Outcome, UsageError
from knoc.app.signing import exposed, key_here, pin_line, pins
from knoc.config import Config, ConfigError, load_config, repos_around
from knoc.io import files, keys
from knoc.output.signed import PublicKey


def new_key(path: Path, kind: str) -> Outcome:
    try:
        key = keys.new_key(kind, path, _repo_of)
    except keys.KeyProblem as exc:
        raise UsageError("KNO-SIGNING", str(exc),
                         "give a new file's path outside any content repo, e.g. ~/.config/knoc/signing.pem") from None
    except files.Exists:
        raise UsageError("KNO-EXISTS", f"{path} already exists; knoc does not replace a key") from None
    pinned = _pinned(_repo_of(Path.cwd()))
    named = pinned[0].key if isinstance(pinned, tuple) else None  # knoc.toml's key, where it is on this machine
    current = named if named and key_here(named) else "CURRENT.pem"
    then = (f"sign with every pinned key while clients pick up the new key set: knoc build --sign-key {current} "
            f"--sign-key {path}\n      (both on the command line: --sign-key takes the place of [signing] `key`; "
            "then move the old key to `retired`: the signing guide's rotation)\n"
            if isinstance(pinned, tuple) else
            f"knoc build --sign-key {path}\n      (in CI: KNOC_SIGNING_KEY holding the file's contents)\n")
    answer = (f"wrote {path} ({'Ed25519, EdDSA' if kind == 'ed25519' else 'P-256, ES256'}), mode 0600\n"
              + _public_lines(key, pinned)  # in a repo that pins keys: beside them
              + f"next: pin it (the line above, under [signing] in knoc.toml), then {then}")
    # Said now, not at the next build: a folder others may write to lets them swap the key from today.
    found = exposed(keys.exposed_files([str(path)]))
    return Outcome("knoc keys new", answer=answer, diagnostics=found, summary=f"wrote {path}" if found else None)


def _repo_of(folder: Path) -> Path | None:
    """The content repo `folder` lies in, wherever knoc runs from (the
    innermost, whatever its knoc.toml holds)."""
    return next(iter(repos_around(folder)), None)


def show_public(path: str) -> Outcome:
    """The public half of a private key, and the knoc.toml line that pins it."""
    repo = _repo_of(Path.cwd())  # whatever its knoc.toml holds: a key inside it is refused all the same
    try:
        key = keys.private_key(path, repo or Path("/nonexistent-repo"), "the key")
    except keys.KeyProblem as exc:
        raise UsageError("KNO-SIGNING", str(exc)) from None
    return Outcome("knoc keys public", answer=_public_lines(key, _pinned(repo)))


# The repo's settings do not read: which keys it pins is not known.
_UNREAD = "unread"


def _pinned(repo: Path | None) -> tuple[Config, list[PublicKey], list[PublicKey]] | str | None:
    """The settings of the repo knoc runs in and the keys they pin and
    retire, when they pin some; `_UNREAD` when they do not read."""
    if repo is None:
        return None
    try:
        config = load_config(repo)
        pinned, retired = pins(dataclasses.replace(config, kid=None)) if config.public else ([], [])  # `kid`: below
    except (ConfigError, UsageError):  # what is wrong is `knoc validate`'s to say, where it is
        return _UNREAD
    return (config, pinned, retired) if pinned else None


def _public_lines(key: keys.PrivateKey, repo: tuple[Config, list[PublicKey], list[PublicKey]] | str | None = None
                  ) -> str:
    jwk = signing.public_jwk(key)
    kid = signing.thumbprint(jwk)
    lines = (f"key id (RFC 7638 thumbprint): {kid}\n"
             f"public key: {json.dumps(signing.published(jwk, kid))}\n")
    if repo == _UNREAD:
        return lines + (f"pin it in knoc.toml, under [signing]: {pin_line(jwk)}\n"
                        "note: this repo's knoc.toml does not read (`knoc validate` says why), so knoc cannot "
                        "tell which keys it pins: keep any pinned there beside this one\n")
    if not isinstance(repo, tuple):
        return lines + f"pin it in knoc.toml, under [signing]: {pin_line(jwk)}\n"
    config, pinned, retired = repo
    if any(signing.thumbprint(p.jwk) == kid for p in pinned):
        return lines + "knoc.toml pins it already, under [signing] `public`\n"
    if any(signing.thumbprint(r.jwk) == kid for r in retired):
        return lines + ("knoc.toml retires it, under [signing] `retired`: it stays in the key sets, and no build "
                        "signs with it; to sign with it again, move it back to `public`\n")
    if config.kid:  # it names one key: the pinned key keeps it, in its own pin, and cards signed under it verify
        kept = tuple((*sorted(p.jwk.items()), ("kid", config.kid)) for p in pinned)
        return lines + ("pin it in knoc.toml, under [signing], and remove `kid` (it names one key): this list "
                        f"keeps the pinned key's kid in its pin: {pin_line(jwk, kept)}\n")
    return lines + f"pin it in knoc.toml, beside the keys pinned there, under [signing]: " \
        f"{pin_line(jwk, config.public)}\n"
