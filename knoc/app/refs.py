"""Git refs named on the command line (`knoc diff`, `knoc specs check`):
checked before git sees them, the default base, and git's failures as
usage errors."""

from __future__ import annotations

from knoc.app.outcome import UsageError
from knoc.config import Config
from knoc.diagnostics import Diagnostic, diag
from knoc.io import git


def check_refs(*refs: str | None) -> None:
    """A ref given on the command line is a ref, not an option git would read."""
    for ref in refs:
        if ref is not None and (not ref or ref.startswith("-") or any(c.isspace() or c == "\0" for c in ref)):
            raise UsageError("KNO-GIT", f"`{ref}` is not a git ref", "name a branch, tag or commit")


def default_base(config: Config, hint: str | None = None) -> str:
    try:
        return git.default_base(config.root)
    except git.GitError as exc:
        raise (git_error(exc, None, hint) if hint else git_error(exc, None)) from None


def git_error(exc: Exception, ref: str | None,
              hint: str = "`knoc diff A..B`, or `--base REF` for the work tree") -> UsageError:
    said = str(exc)
    unknown = ref is not None and any(s in said.lower() for s in ("unknown revision", "needed a single revision",
                                                                  "not a valid object name"))
    what = (f"`{ref}` is not a branch, tag or commit git knows" if unknown
            else (said.splitlines() or ["git failed"])[0].removeprefix("fatal: "))
    if "not a git repository" in said:
        return UsageError("KNO-GIT", what, "run it inside a git work tree: it compares commits")
    remote, _, branch = (ref or "").partition("/")
    if unknown and remote == "origin" and branch:  # a remote branch a shallow or single-branch clone lacks
        return UsageError("KNO-GIT", what, f"fetch it first: `git fetch origin {branch}` (in GitHub Actions, "
                          "actions/checkout with `fetch-depth: 0`)")
    return UsageError("KNO-GIT", what, f"name a branch, tag or commit (`git log --oneline` lists commits): {hint}")


def refused_at(exported: git.Export, folder: str, label: str) -> list[Diagnostic]:
    """What a ref holds in or above `folder` that knoc does not read there
    (a link that may lead out of the repo, a submodule, a name this system
    refuses): a build of that commit refuses it, so the ref's sources are
    refused too (left out without a word, the rest would read as all)."""
    found = [(path, why) for path, why in exported.refused
             if path == folder or path.startswith(f"{folder}/") or folder.startswith(f"{path}/")]
    for path, why in found:
        if why == git.SUBMODULE:  # a checkout would hold what the other repository holds: not comparable here
            raise UsageError("KNO-GIT", f"{path} is a git submodule at {label}: knoc diff reads one repository's "
                             "files", "compare in the submodule itself, or keep the content repo in one repository")
    return [diag("KNO-IO-REFUSED", f"at {label}, knoc does not read this: {why}", file=path,
                 hint="copy the file or folder into the repo, rename it, or remove it") for path, why in found]
