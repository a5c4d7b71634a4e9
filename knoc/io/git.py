"""The sources as they were at a git ref, for `knoc diff`: exported with
`git archive` into a scratch folder, never touching the work tree."""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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


def default_base(root: Path) -> str:
    """The merge base of HEAD with the default branch (origin's HEAD, else
    main or master), the way a pull request is compared."""
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


def describe(root: Path, ref: str) -> str:
    """How to name `ref` to a reader: its short sha, after the ref's own name."""
    sha = _git(root, "rev-parse", "--short", f"{ref}^{{commit}}").decode().strip()
    return sha if ref.lower().startswith(sha) else f"{ref} ({sha})"


def export(root: Path, ref: str, dest: Path) -> Path:
    """Write the files of `root` (a content repo inside a git work tree) as
    they are at `ref` under `dest`; return where the content repo landed."""
    top = Path(_git(root, "rev-parse", "--show-toplevel").decode().strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    args = ["archive", "--format=tar", f"{ref}^{{commit}}"]
    blob = _git(top, *args, *([prefix] if prefix != "." else []))
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest, filter=_inside)
    return dest / prefix if prefix != "." else dest


def _inside(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, a member it refuses (a link leaving the
    repo, an absolute path) left out rather than failing the export."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


@contextmanager
def checkout(root: Path, ref: str) -> Iterator[Path]:
    """The content repo as it was at `ref`, in a scratch folder removed on exit."""
    with tempfile.TemporaryDirectory(prefix="knoc-diff-") as tmp:
        yield export(root, ref, Path(tmp))


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


def stage(root: Path, folder: Path) -> None:
    """`git add` everything under `folder` (new, changed and removed files)."""
    _git(root, "add", "-A", "--", str(folder))
