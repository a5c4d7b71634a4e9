"""Drift between what the sources compile to and what build/ holds, as
diagnostics (code KNO-DRIFT) for the usual renderers."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Container, Mapping

from knoc.diagnostics import Diagnostic, diag
from knoc.io.outputs import ODD_MODE
from knoc.output.hosting import AI_CATALOG_FILE, CARD_FILE, HEADERS_FILE, LEGACY_CARD_FILE, SITE
from knoc.output.pages import is_details_path
from knoc.output.tree import MANIFEST
from knoc.rules.lines import MERGE_CONFLICT

MAX_DIFF_LINES = 40
CONTEXT = 2
ANCHOR = 20  # equal lines beyond the context that a diff window keeps, for alignment
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")


def differing(want: Mapping[str, str], actual: Mapping[str, str], where: Collection[str] | None = None,
              unlike: Mapping[str, str] | None = None) -> set[str]:
    """The paths whose sha256 differs between `want` and `actual` (each file
    expected, each file on disk), looking only `where` when given: the
    only paths where the two can differ. `unlike`: a sha256 `want` surely
    does not have at its path; where `actual` has it, `want` is not asked
    (a patched catalog's costs reading and hashing 100 MB)."""
    if where is not None:
        unlike = unlike or {}
        return {path for path in where
                if (path in unlike and actual.get(path) == unlike[path]) or want.get(path) != actual.get(path)}
    # As sets of (path, digest), compared in C: on a large tree almost every
    # file matches, and only the rest need sorting.
    return {path for path, _ in want.items() ^ actual.items()}


def drift(expected: Mapping[str, bytes], differ: set[str], actual: Mapping[str, str],
          read: Callable[[str], bytes | None], out: str, targets: tuple[Callable[[], str | None], str] | None = None,
          in_hook: bool = False, rebuild: str = "knoc build",
          written: Callable[[], Container[str] | None] = lambda: (),
          shown_as: Callable[[str, bytes, bytes], tuple[bytes, bytes]] = lambda _, old, new: (old, new)
          ) -> list[Diagnostic]:
    """One error per stale, missing or extra file, cards first. `differ`:
    the files whose sha256 is not the same in `expected` and on disk
    (`differing`); `actual`: the sha256 of each file on disk; `read` fetches one from
    disk for the diff (None: it is not a file to read); `out` prefixes paths. A card's agent.json twin, the
    manifest and the files that join every card, which follow from the
    other files, are folded into one line each (with no diff: the card's
    says it, and at 100,000 agents they are tens of megabytes). `targets`:
    (what build/ was built for, asked only when something drifted; what
    the sources compile for); when they differ, that is the one finding.
    `rebuild`: the command that rebuilds this repo; `written()`: the files
    the last build wrote, None if it does not say (an extra file it did
    not write is the author's, and a build would refuse to replace it).
    `shown_as(path, on disk, from sources)`: the two sides as a diff shows them."""
    hint = f"run `{rebuild}` and commit {out}" + (
        f"; if you already ran it, stage it: `git add {out}`" if in_hook else "")
    if differ and not actual:  # a line per file would bury what happened
        return [diag("KNO-DRIFT", f"missing: {out} (none of its {len(expected):,} files is there)", file=out,
                     hint=hint)]
    built = targets[0]() if differ and targets is not None else None
    if built is not None and targets is not None and built != targets[1]:
        return [diag("KNO-DRIFT", f"{out} was built for A2A {built}, but the sources compile for A2A {targets[1]}",
                     file=f"{out}{MANIFEST}", hint=f"{hint} (or check it as built: `knoc check --a2a {built}`)")]
    # agent.json follows its card (the same bytes, or the pre-0.3 shape of the
    # same fields): when both drifted alike, one line says so.
    twins = {p for p in differ if p.endswith(LEGACY_CARD_FILE) and _twin(p) in differ
             and (p in expected, p in actual) == (_twin(p) in expected, _twin(p) in actual)}
    copies = _root_copies(expected, differ - twins, actual)  # a host's root copy of a card that drifted alike
    cards = any(_rank(p) == 0 for p in differ)
    found: list[Diagnostic] = []
    for path in sorted(differ - twins - set(copies), key=lambda p: (_rank(p), p)):
        shown = f"{out}{path}"
        joined = [what for what, holds in (("its agent.json twin", path.endswith(CARD_FILE) and _legacy(path) in twins),
                                           ("the host's root copy", path in copies.values())) if holds]
        also = f" (and {' and '.join(joined)})" if joined else ""
        if path not in actual:
            found.append(diag("KNO-DRIFT", f"missing: {shown}{also}", file=shown, hint=hint))
        elif path not in expected and path not in (written() or ()):
            found.append(diag("KNO-DRIFT", f"extra: {shown} (knoc did not write it)", file=shown,
                              hint=f"move it out of {out} (a build never replaces a file it did not write), "
                                   f"then {hint}"))
        elif path not in expected:
            found.append(diag("KNO-DRIFT", f"extra: {shown}{also}", file=shown, hint=hint))
        elif path == MANIFEST and len(differ) > 1:
            found.append(diag("KNO-DRIFT", f"stale: {shown} (it lists the digests of the drifted files)",
                              file=shown, hint=hint))
        elif cards and _joins_cards(path):  # its diff would repeat the cards' (as JavaScript, say)
            found.append(diag("KNO-DRIFT", f"stale: {shown} (it joins the drifted cards)", file=shown, hint=hint))
        elif actual.get(path) == ODD_MODE:  # its bytes are not read: they may be unreadable
            found.append(diag("KNO-DRIFT", f"stale: {shown}{also} (its mode: knoc writes no file executable, "
                                           "set-id or unreadable)", file=shown, hint=hint))
        elif (old := read(path)) is None:
            found.append(diag("KNO-DRIFT", f"stale: {shown}{also} (not a regular file)", file=shown, hint=hint))
        else:
            merged = MERGE_CONFLICT.search(old.decode("utf-8", "replace"))  # a merge left git's markers in it
            conflict = " (an unresolved merge conflict: a build writes it anew)" if merged else ""
            found.append(diag("KNO-DRIFT", f"stale: {shown}{also}{conflict}", file=shown, hint=hint,
                              detail=_diff(shown, *shown_as(path, old, expected[path]))))
    return found


def _root_copies(expected: Mapping[str, bytes], differ: set[str], actual: Container[str]) -> dict[str, str]:
    """Each host root card (site/<host>/.well-known/...) in `differ` that is
    the same bytes as another card in it, drifted the same way: by the
    card it copies."""
    roots = [p for p in differ if p.count("/") == 3 and p.startswith(SITE) and _rank(p) == 0 and p in expected]
    found = {}
    for root in roots:
        name = root.rsplit("/", 1)[1]
        copied = next((p for p in sorted(differ) if p.count("/") > 3 and p.endswith("/" + name) and p in expected
                       and (p in actual) == (root in actual) and expected[p] == expected[root]), None)
        if copied is not None:
            found[root] = copied
    return found


def _rank(path: str) -> int:
    """Cards first, then the rest of the site, the index, the manifest last."""
    if path.endswith((CARD_FILE, LEGACY_CARD_FILE)):
        return 0
    return 3 if path == MANIFEST else 1 if path.startswith(SITE) else 2


def _joins_cards(path: str) -> bool:
    """A file made of every card's pieces: each host's catalog details
    script, AI Catalog and `_headers` (the cards' ETags)."""
    return is_details_path(path) or (path.startswith(SITE) and path.endswith(("/" + AI_CATALOG_FILE, HEADERS_FILE)))


def _twin(legacy: str) -> str:
    return legacy[: -len(LEGACY_CARD_FILE)] + CARD_FILE


def _legacy(card: str) -> str:
    return card[: -len(CARD_FILE)] + LEGACY_CARD_FILE


def _diff(shown: str, old_bytes: bytes, new_bytes: bytes) -> str:
    start, end = _differing(old_bytes, new_bytes)
    skipped = old_bytes.count(b"\n", 0, start)  # lines before the part compared
    old = old_bytes[start:len(old_bytes) - end].decode("utf-8", "replace").splitlines()
    new = new_bytes[start:len(new_bytes) - end].decode("utf-8", "replace").splitlines()
    lines: list[str] = []
    for lo, old_hi, new_hi in _windows(old, new):
        hunks = difflib.unified_diff(old[lo:old_hi], new[lo:new_hi], f"{shown} (on disk)",
                                     f"{shown} (from sources)", n=CONTEXT, lineterm="")
        lines += [_shift(line, skipped + lo) for i, line in enumerate(hunks) if i >= 2 or not lines]
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines)


def _differing(old: bytes, new: bytes) -> tuple[int, int]:
    """(bytes from the start, bytes from the end) both files share, cut to
    whole lines and less the lines a diff shows or aligns on: splitting a
    90 MB index into lines for an edit of one costs more than the rest of a
    check. Compared a block at a time, at memcmp speed."""
    most = min(len(old), len(new))
    head = _shared(old, new, most, from_end=False)
    tail = _shared(old, new, most - head, from_end=True)
    start = old.rfind(b"\n", 0, head) + 1  # the start of the line the first change is on
    for _ in range(CONTEXT + ANCHOR):
        start = old.rfind(b"\n", 0, start - 1) + 1 if start else 0
    stop = len(old) - tail  # the first byte of the shared tail: on to the next line start, and further
    for _ in range(CONTEXT + ANCHOR + 1):
        newline = old.find(b"\n", stop)
        stop = newline + 1 if newline != -1 else len(old)
    return start, len(old) - stop


def _shared(old: bytes, new: bytes, most: int, from_end: bool) -> int:
    """How many bytes (up to `most`) the two share at their start (or end)."""
    at, block = 0, 1 << 16
    while at < most:
        n = min(block, most - at)
        a, b = ((old[len(old) - at - n:len(old) - at], new[len(new) - at - n:len(new) - at]) if from_end
                else (old[at:at + n], new[at:at + n]))
        if a != b:
            pairs = zip(reversed(a), reversed(b), strict=True) if from_end else zip(a, b, strict=True)
            return at + next(i for i, (x, y) in enumerate(pairs) if x != y)
        at += n
    return most


def _windows(old: list[str], new: list[str]) -> list[tuple[int, int, int]]:
    """Where to diff, as (start, old end, new end): difflib is slow on the
    large index files, and their changes are a few lines far apart. Lines
    are compared one to one when the counts agree (an edit rewrote lines in
    place), each run of changes becoming a window with some equal lines
    around it (difflib needs them to align as it would on the whole file);
    otherwise the differing middle between equal head and tail."""
    if len(old) == len(new):
        around = CONTEXT + ANCHOR
        runs: list[list[int]] = []
        for i in (i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b):
            if runs and i - runs[-1][1] <= 2 * around:
                runs[-1][1] = i
            else:
                runs.append([i, i])
        return [(max(0, a - around), b + around + 1, b + around + 1) for a, b in runs]
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    keep = max(0, tail - CONTEXT)
    return [(max(0, head - CONTEXT), len(old) - keep, len(new) - keep)]


def _shift(line: str, by: int) -> str:
    m = _HUNK.match(line)
    if not m or not by:
        return line
    a, b, c, d = m.groups()
    return f"@@ -{int(a) + by}{b or ''} +{int(c) + by}{d or ''} @@"
