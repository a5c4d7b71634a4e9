"""Warnings a repo has looked at and keeps: knoc.toml's `[accept]` maps a
warning's code to the files where it is accepted, as shell patterns of
repo-relative paths (`fnmatch`: `*` matches any run of characters, `/` too). An
accepted warning is not shown and does not fail `--fail-on warning`; the
summary line counts it and names its code, so it is never silent. An error
cannot be accepted: what it is about is not written."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase, translate
from typing import cast

from knoc.diagnostics.codes import CODES
from knoc.diagnostics.model import Diagnostic, Severity

# Each accepted code with its file patterns, sorted by code.
Accept = tuple[tuple[str, tuple[str, ...]], ...]

# What [accept] means, for the knoc.toml reference.
HELP = ("`CODE = [\"pattern\", ...]`: a warning accepted in the files whose repo-relative path matches a shell "
        "pattern (`*` matches any run of characters, `/` too; `?` one; `\"*\"`: everywhere, and a warning about no "
        "file). It is not shown and does not fail `--fail-on warning`; the summary line counts it and names its code. "
        "An error cannot be accepted, nor a warning that a credential would be published or exposed")


# Warnings about a credential a build would publish or expose: never accepted.
_NEVER = frozenset({"KNO-CARD-TEXT-CREDENTIALS", "KNO-SIGNING-KEY-EXPOSED"})


def refused(table: Mapping[str, object]) -> tuple[str, str] | None:
    """The first [accept] entry knoc does not take, and why; None: all are taken."""
    return next(((code, why) for code, patterns in table.items() if (why := _problem(code, patterns))), None)


def parse(table: Mapping[str, object]) -> Accept:
    """[accept] as knoc.toml gives it, once `refused` found nothing."""
    return tuple(sorted((code, tuple(cast(list[str], patterns))) for code, patterns in table.items()))


def _problem(code: str, patterns: object) -> str | None:
    known = CODES.get(code)
    if known is None:
        return f"`{code}` is not a knoc diagnostic code (`knoc explain` lists them)"
    if known.severity is not Severity.WARNING:
        return f"`{code}` is an error, and an error cannot be accepted: what it is about is not written; fix it"
    if code in _NEVER:
        return f"`{code}` says a credential would be published or exposed, which is never a choice to keep; fix it"
    if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) and p for p in patterns):
        return f"`{code}` takes a list of path patterns (`[\"content/agent-blueprints/*.kno\"]`, or `[\"*\"]`)"
    return None


def unmatched(accept: Accept, paths: Iterable[str]) -> list[tuple[str, str]]:
    """(code, pattern) for each pattern but `"*"` that matches none of
    `paths` (the repo's files): a typo, or a file renamed since, which
    accepts nothing now, and a warning in a file added under that name later."""
    wanted = [(code, p, re.compile(translate(p)).match) for code, patterns in accept for p in patterns
              if p != "*"]
    if not wanted:  # most repos: nothing to look for among their files
        return []
    listed = list(paths)
    return [(code, p) for code, p, matches in wanted if not any(map(matches, listed))]


def split(diags: Iterable[Diagnostic], accept: Accept) -> tuple[list[Diagnostic], list[str]]:
    """The findings still shown, and the code of each one accepted."""
    if not accept:
        return list(diags), []
    patterns = dict(accept)
    shown: list[Diagnostic] = []
    accepted: list[str] = []
    for d in diags:
        its = patterns.get(d.code, ()) if d.severity is Severity.WARNING else ()
        if any(fnmatchcase(d.file or "", p) for p in its):
            accepted.append(d.code)
        else:
            shown.append(d)
    return shown, accepted
