"""git, for `knoc diff` (the sources at a ref, read blob by blob into a
scratch folder, never touching the work tree), duplicates (which files
are new since HEAD), signing (the build HEAD holds) and the build hook."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from knoc.rules import limits


class GitError(Exception):
    """git is missing, the folder is not a repo, or the ref is unknown."""


def _git(root: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if done.returncode != 0:
        raise GitError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout


def top_prefix(root: Path) -> str:
    """The path from the top of the git work tree holding `root` down to it
    (`cards/`; "" at the top, or in no work tree), as a forge names files:
    found by the `.git` of a folder on the way up, without running git."""
    here = root.resolve()
    for folder in (here, *here.parents):
        if os.path.lexists(folder / ".git"):
            inside = here.relative_to(folder).as_posix()
            return "" if inside == "." else f"{inside}/"
    return ""


def default_base(root: Path) -> str:
    """The merge base of HEAD with the default branch (origin's HEAD, else
    main or master), the way a pull request is compared."""
    _git(root, "rev-parse", "--git-dir")  # outside a repo, git says that, not that no branch is found
    candidates = []
    with contextlib.suppress(GitError):
        candidates.append(_git(root, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD").decode().strip())
    candidates += ["origin/main", "origin/master", "main", "master"]
    for ref in candidates:
        try:
            _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except GitError:
            continue
        return _git(root, "merge-base", "HEAD", ref).decode().strip()
    raise GitError("no default branch (origin/HEAD, main or master) to compare with")


def merge_base(root: Path, a: str, b: str) -> str:
    """The commit `a...b` compares from (what a pull request of `b` into `a` shows)."""
    return _git(root, "merge-base", "--end-of-options", a, b).decode().strip()


def shallow(root: Path) -> bool:
    """Whether the repository is a shallow clone (its history cut short)."""
    try:
        return _git(root, "rev-parse", "--is-shallow-repository").strip() == b"true"
    except GitError:
        return False


def knows(root: Path, ref: str) -> bool:
    """Whether git knows `ref` as a commit."""
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except GitError:
        return False
    return True


def describe(root: Path, ref: str) -> str:
    """How to name `ref` to a reader: its short sha, after the ref's own name."""
    sha = _git(root, "rev-parse", "--short", f"{ref}^{{commit}}").decode().strip()
    return sha if ref.lower().startswith(sha) else f"{ref} ({sha})"


SUBMODULE = "a git submodule: its files are another repository's, at a commit of their own"


class Export(NamedTuple):
    root: Path  # where the content repo landed
    refused: tuple[tuple[str, str], ...]  # (repo-relative path, why) of what was left out: see `export`


def export(root: Path, ref: str, dest: Path, only: tuple[str, ...] = ()) -> Export:
    """Write the files of `root` (a content repo inside a git work tree) as
    they are committed at `ref` under `dest` (`only`: those under these
    repo-relative paths). The blobs are read as committed: `git archive`
    would apply .gitattributes (export-ignore, export-subst) and hide a
    change. What cannot be made here is left out and named (`refused`): a
    link that may leave the repo, a submodule, a name or link this system
    refuses; where a build reads it, the caller says so."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    wanted = [f"{prefix}/{p}" if prefix != "." else p for p in only] or [prefix]
    listing = _git(top, "ls-tree", "-r", "-z", f"{ref}^{{commit}}", "--", *wanted)
    entries = [_entry(line) for line in listing.split(b"\0") if line]
    settings = f"{prefix}/knoc.toml" if prefix != "." else "knoc.toml"
    refused: list[tuple[str, str]] = [(path, SUBMODULE) for _, kind, _, path in entries if kind == "commit"]
    blobs = [(mode, oid, path) for mode, kind, oid, path in entries if kind == "blob" and _plain(path)]
    links = []
    for (mode, _, path), data in zip(blobs, _contents(top, [oid for _, oid, _ in blobs]), strict=True):
        if mode == "120000":
            links.append((path, data.decode("utf-8", "surrogateescape") if isinstance(data, bytes) else "/"))
            continue
        try:
            _write(dest / path, data, mode == "100755")
        except OSError as exc:  # a name too long here, a file where another path needs a folder
            refused.append((path, f"it cannot be written here ({exc.strerror or exc})"))
    linked = {path for path, _ in links}
    for path, to in links:  # after the files, so nothing is written through one
        if not _stays_inside(path, to, linked):
            refused.append((path, "a link that may lead out of the repo"))
            continue
        try:
            _link(dest, path, to)
        except (OSError, ValueError) as exc:  # an empty target, a NUL, a name too long
            refused.append((path, f"a link this system cannot make ({getattr(exc, 'strerror', None) or exc})"))
    if any(path == settings for path, _ in refused):  # left out, the defaults would stand in without a word
        linked_to = dict(links).get(settings)
        what = f"a link to `{linked_to}`, which knoc does not follow" if linked_to is not None else "not a file"
        raise GitError(f"knoc.toml at {ref} is {what}: it leaves the repo or goes through a link. knoc reads its "
                       "settings only from a file inside the repo, as a build at that commit would")
    inside = [(path.removeprefix(f"{prefix}/") if prefix != "." else path, why) for path, why in refused]
    return Export(dest / prefix if prefix != "." else dest, tuple(inside))


def _write(target: Path, data: bytes | int, executable: bool) -> None:
    """A blob's file: its bytes, or, past what knoc reads of a source, as
    large and empty (a build refuses it by its size alone)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("xb") as out:
        if isinstance(data, bytes):
            out.write(data)
        else:
            out.truncate(data)
    if executable:
        target.chmod(0o755)


def _entry(line: bytes) -> tuple[str, str, str, str]:
    head, _, path = line.partition(b"\t")
    mode, kind, oid = head.decode().split(" ")
    return mode, kind, oid, path.decode("utf-8", "surrogateescape")


def _plain(path: str) -> bool:
    return not path.startswith("/") and ".." not in path.split("/") and "" not in path.split("/")


def _contents(top: Path, oids: list[str]) -> Iterator[bytes | int]:
    """The blobs named, in order, from one `git cat-file --batch`, each read
    as it streams: its bytes, or only its size past `limits.SOURCE_BYTES`
    (an asset of hundreds of megabytes is never held)."""
    with tempfile.TemporaryFile() as asked:  # git's input, given whole: no pipe to fill both ways
        asked.write("".join(f"{o}\n" for o in oids).encode())
        asked.seek(0)
        try:
            proc = subprocess.Popen(["git", "-C", str(top), "cat-file", "--batch"], stdin=asked,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except FileNotFoundError:
            raise GitError("git is not installed") from None
    with proc:
        out = proc.stdout
        if out is None:  # pragma: no cover - asked for above
            raise GitError("git cat-file gave no output")
        for _ in oids:
            header = out.readline().split(b" ")
            if len(header) != 3 or not header[2].strip().isdigit():  # `<oid> missing`, or git gone
                raise GitError(f"git cat-file could not read a blob ({b' '.join(header).strip()[:80]!r})")
            size = int(header[2])
            if size <= limits.SOURCE_BYTES:
                yield out.read(size)
            else:
                for left in range(size, 0, -(1 << 20)):
                    out.read(min(left, 1 << 20))
                yield size
            out.read(1)  # the blob's closing line break


def _stays_inside(path: str, to: str, linked: set[str]) -> bool:
    """Whether the committed link at `path` to `to` leads to a place inside
    the export, read step by step as written, and never through another
    of its links (`zz -> .` makes `zz/zz/../..` climb out, whatever the
    text says): a link that may leave it is left out, as tarfile's data
    filter would."""
    if to.startswith("/"):
        return False
    at = path.split("/")[:-1]
    for part in to.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not at:
                return False
            at.pop()
            continue
        at.append(part)
        if "/".join(at) in linked:
            return False
    return True


def _link(dest: Path, path: str, to: str) -> None:
    """A committed link (`_stays_inside`), made beside the files."""
    where = dest / path
    where.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        where.symlink_to(to)


@contextmanager
def checkout(root: Path, ref: str, only: tuple[str, ...] = ()) -> Iterator[Export]:
    """The content repo as it was at `ref` (`only` these paths of it), in a
    scratch folder removed on exit."""
    with tempfile.TemporaryDirectory(prefix="knoc-diff-") as tmp:
        yield export(root, ref, Path(tmp), only)


def changed_since(root: Path, ref: str, paths: tuple[str, ...]) -> list[str]:
    """The files under `paths` (relative to `root`) that differ between
    `ref` and the work tree, new files git does not track yet included."""
    differ = _git(root, "diff", "-z", "--name-only", "--relative", ref, "--", *paths)
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", *paths)
    return sorted({p.decode("utf-8", "surrogateescape") for p in (differ + b"\0" + untracked).split(b"\0") if p})


def tracks(root: Path, path: str) -> bool:
    """Whether git tracks a file at or under `path` (relative to `root`);
    False outside a git work tree, or without git."""
    try:
        return bool(_git(root, "ls-files", "-z", "--", path))
    except GitError:
        return False


def edited(root: Path, paths: list[str]) -> set[str] | None:
    """Which of `paths` (relative to `root`) are new or changed since git's
    HEAD (all of them before the first commit); None outside a git work tree."""
    try:
        _git(root, "rev-parse", "--is-inside-work-tree")
    except GitError:
        return None
    try:
        held = _git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "--", *paths)
        changed = _git(root, "diff", "-z", "--name-only", "--relative", "HEAD", "--", *paths)
    except GitError:
        return set(paths)
    names = {p.decode("utf-8", "surrogateescape") for p in held.split(b"\0") if p}
    return (set(paths) - names) | {p.decode("utf-8", "surrogateescape") for p in changed.split(b"\0") if p}


def committed(root: Path, path: str, most: int, ref: str = "HEAD") -> bytes | None:
    """The first `most` bytes of `path` (relative to `root`) as committed at
    `ref`; None outside a work tree, before the first commit, or when it is
    not there (a manifest of 35 MB is not read whole for its first lines)."""
    try:
        with subprocess.Popen(["git", "-C", str(root), "cat-file", "blob", f"{ref}:./{path}"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as done:
            assert done.stdout is not None
            head = done.stdout.read(most)
            done.kill()
    except FileNotFoundError:
        return None
    return head if done.returncode in (0, -9) and head else None


def stage(root: Path, folder: Path) -> tuple[list[str], list[str]]:
    """`git add` everything under `folder` (new, changed and removed files).
    What `git add` skips without a word: the files under it git's ignore
    rules keep out, and the tracked ones marked skip-worktree (a sparse
    checkout) or assume-unchanged, whose changes it does not see."""
    _git(root, "add", "-A", "--", str(folder))
    ignored = _git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", str(folder))
    tagged = _git(root, "ls-files", "-z", "-v", "--", str(folder))  # "S name": skip-worktree; "h name": assumed
    marked = [entry[2:] for entry in tagged.split(b"\0") if entry[:1] == b"S" or entry[:1].islower()]
    return ([name.decode("utf-8", "replace") for name in ignored.split(b"\0") if name],
            [name.decode("utf-8", "replace") for name in marked])
