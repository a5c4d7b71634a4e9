"""Signing keys, at the edge: read a private key from outside the repo (a
file, or the PEM itself from the environment), read public keys kept in the
repo for rotation, and make a new key. No message here ever quotes key
material: a problem names the file or the variable it came from."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from knoc.io import files
from knoc.rules import jsontext
from knoc.rules.text import file_name_or_none, inline_pem

KEY_BYTES = 64 * 1024  # a PEM key is a few hundred bytes
ENV = "KNOC_SIGNING_KEY"
PrivateKey = ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
PublicKey = ed25519.Ed25519PublicKey | ec.EllipticCurvePublicKey


class KeyProblem(Exception):
    """A key that cannot be used, or must not be: a usage error."""


def private_key(source: str, root: Path, name: str) -> PrivateKey:
    """The signing key `source` holds or names: PEM text, the PEM file
    base64-encoded (as CI secrets often hold it, wrapped or not), or a
    path (knoc.toml's `[signing] key`, which may name a file only, is
    refused as the config is read if it holds more). `name` says where it
    was given (`--sign-key`, the variable); messages add a path that names
    a file, never a value that may be key material. A file inside the
    repo is refused: a private key committed once is public for good."""
    pem, path = inline_pem(source), None
    if pem is None:
        path = _existing(source)
        if path is None:  # a typo (named), or key material in some other form (not repeated)
            shown = file_name_or_none(source)
            raise KeyProblem(f"{name} names no file" + (f" ({shown})" if shown else "") + " and holds no PEM "
                             "private key" + ("" if shown else " (its value is not shown: it may be key material)"))
        if _inside(path, root):
            raise KeyProblem(f"{name} ({path.relative_to(root.resolve())}) lies inside the repo: a private key "
                             "must never be committed; keep it outside (a CI secret, or a file in your home)")
        try:
            pem = files.read_source(str(path), limit=KEY_BYTES)
        except OSError as exc:
            raise KeyProblem(f"cannot read {name} ({path}): {exc.strerror or exc}") from None
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        named = f"{name} ({path})" if path is not None else name
        encrypted = b"ENCRYPTED" in pem or "password" in str(exc).lower()  # by its header: a damaged one is not
        raise KeyProblem(f"{named} is " + ("encrypted: knoc reads an unencrypted PEM private key (decrypt it into "
                                           "a file only you can read, or a CI secret)" if encrypted
                                           else "not an unencrypted PEM private key")) from None
    if isinstance(key, ed25519.Ed25519PrivateKey) or (isinstance(key, ec.EllipticCurvePrivateKey)
                                                      and isinstance(key.curve, ec.SECP256R1)):
        return key
    raise KeyProblem(f"{name} is not an Ed25519 or P-256 key: knoc signs with EdDSA or ES256")


def in_repo(source: str, root: Path) -> bool:
    """Whether `source` names a file inside the repo `root`: a private key
    there is committed, so public, once the repo is."""
    return _inside(_existing(source), root)


def _inside(path: Path | None, root: Path) -> bool:
    return path is not None and path.is_relative_to(root.resolve())


def _existing(source: str) -> Path | None:
    """The file (or folder) `source` names, resolved; None if there is none."""
    try:
        path = Path(source).expanduser().resolve()
        return path if path.exists() else None
    except (OSError, RuntimeError, ValueError):
        return None


def signing_keys(paths: list[str], root: Path, configured: str | None = None) -> list[PrivateKey]:
    """Every `--sign-key`; else KNOC_SIGNING_KEY (a path or the PEM itself);
    else knoc.toml's `[signing] key`."""
    return [private_key(source, root, name) for source, name in _given(paths, configured)]


def exposed_files(paths: list[str], configured: str | None = None) -> list[tuple[str, str, str]]:
    """The key files `signing_keys` reads that other users of this machine
    may read (group or other bits set), or replace, as OpenSSH's StrictModes
    checks: a key file of another user's, or anything on the way to it
    (`_changeable`). Each path, what is wrong, and what fixes it."""
    found = []
    for source, _ in _given(paths, configured):
        path = _existing(source) if inline_pem(source) is None else None
        if path is None or not path.is_file() or not hasattr(os, "getuid"):
            continue
        st = path.stat()
        if st.st_mode & 0o077:
            found.append((str(path), f"is open to {_who(st, 0o007)} (mode {st.st_mode & 0o777:o})",
                          f"make it readable by you alone: `chmod 600 {path}`"))
        if st.st_uid not in (0, os.getuid()):
            found.append((str(path), f"belongs to another user of this machine (uid {st.st_uid})",
                          "use a key file of your own"))
        if st.st_nlink > 1:  # a hard link: the other name cannot be followed, and may lie in a repo, to be committed
            found.append((str(path), f"has {st.st_nlink} names (hard links): one may lie inside a repo, where it "
                                     "would be committed", "keep one name for it, outside every repo (remove the "
                                                           "others, or copy the key to a file of its own)"))
        given = Path(source).expanduser()  # not normalised: `link/..` is the link's target's folder's parent
        changeable = _changeable(given if given.is_absolute() else Path.cwd() / given)
        if changeable is not None:
            where, what = changeable
            found.append((str(path), f"is reached through {where}, {what}: they can put another key in its place",
                          "keep the key where only you can change the way to it (`chmod go-w`, owned by you)"))
    return found


def _who(st: os.stat_result, others: int) -> str:
    """Whom a mode opens a file or folder to: everyone, if any of its
    `others` bits is set, else its group's members."""
    return "other users of this machine" if st.st_mode & others else f"the members of group {st.st_gid}"


def _changeable(path: Path) -> tuple[Path, str] | None:
    """The first folder or link on the way to `path`, each link followed,
    that another user may change: a folder of theirs, or one they may write
    to without the sticky bit that keeps them from renaming another's file;
    a link of theirs. None: only this user (or root) can."""
    me, todo, at, hops = os.getuid(), list(path.parts[1:]), Path(path.anchor), 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            at = at.parent
            continue
        try:
            folder, st = os.stat(at), os.lstat(at / part)
        except OSError:  # not there, or not ours to look into: the key's own reading says so
            return None
        if folder.st_uid not in (0, me):
            return at, f"a folder of another user's (uid {folder.st_uid})"
        if folder.st_mode & 0o022 and not folder.st_mode & stat.S_ISVTX:
            return at, f"a folder {_who(folder, 0o002)} may write to (mode {folder.st_mode & 0o7777:o})"
        if not stat.S_ISLNK(st.st_mode):
            at = at / part
            continue
        if st.st_uid not in (0, me) and folder.st_mode & 0o022:  # theirs, where they may replace it (sticky or not)
            return at / part, f"a link of another user's (uid {st.st_uid})"
        hops += 1
        try:
            target = Path(os.readlink(at / part))
        except OSError:  # swapped meanwhile, or not ours to read: the key's own reading says so
            return None
        if hops > 40:  # a loop: the key's own reading says so
            return None
        todo = [*target.parts[1:], *todo] if target.is_absolute() else [*target.parts, *todo]
        at = Path(target.anchor) if target.is_absolute() else at
    return None


def _given(paths: list[str], configured: str | None) -> list[tuple[str, str]]:
    """The keys a build signs with, and where each was given."""
    if paths:
        return [(p, "--sign-key") for p in paths]
    if os.environ.get(ENV, "").strip():
        return [(os.environ[ENV], ENV)]
    return [(configured, "[signing] key")] if configured else []


def public_key(path: Path, name: str, root: Path) -> PublicKey | dict[str, str]:
    """A public key kept in the repo `root` ([signing] `public` or
    `retired`): a PEM public key, or a JWK. Only a file inside the repo, a
    link leaving it refused; its private half is refused too."""
    try:
        raw = files.read_source(str(path), str(root), limit=KEY_BYTES)
    except OSError as exc:  # named when it reads as a file's name: key material in an unknown form is not
        shown = file_name_or_none(name) or "(its value is not shown: it may be key material)"
        raise KeyProblem(f"cannot read the key {shown}: {exc.strerror or exc}") from None
    if b"PRIVATE KEY" in raw:
        raise KeyProblem(f"the key {name} holds a private key: keep only its public half in the repo")
    try:
        jwk = jsontext.parse(raw)
    except jsontext.Refused:
        jwk = None
    if isinstance(jwk, dict):
        return {str(k): v for k, v in jwk.items()}  # checked, as an inline one is, by the caller
    try:
        key = serialization.load_pem_public_key(raw)
    except (ValueError, UnsupportedAlgorithm):
        raise KeyProblem(f"the key {name} is neither a PEM public key nor a JWK") from None
    if isinstance(key, (ed25519.Ed25519PublicKey, ec.EllipticCurvePublicKey)):
        return key
    raise KeyProblem(f"the key {name} is not an Ed25519 or P-256 key")


def new_key(kind: str, path: Path, repo_of: Callable[[Path], Path | None]) -> PrivateKey:
    """A fresh key written to `path` (mode 0600, never replacing a file nor
    through a link, even a dangling one), outside the repo `repo_of` finds
    for the folder it goes in (None: none)."""
    given = path.expanduser()
    if any(files.dangling(folder) for folder in given.parents):  # it would make the folder where that points
        raise KeyProblem(f"{path} goes through a link to nothing: knoc makes no folder through a link")
    target = given.parent.resolve() / given.name  # the folder's links followed, never the file's
    if given.name in ("", ".", "..", "knoc.toml") or target.is_symlink():  # a key named knoc.toml makes a repo
        raise KeyProblem(f"{path} is a link or no file name: knoc writes a key only as a new file")
    root = repo_of(target.parent)  # the folder's, or one above it
    if root is not None:
        raise KeyProblem(f"{path} lies inside the content repo {root}: write the private key outside it")
    key: PrivateKey = ed25519.Ed25519PrivateKey.generate() if kind == "ed25519" \
        else ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # created with its final mode, never over an existing file
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        raise files.Exists(str(path)) from None
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    return key
