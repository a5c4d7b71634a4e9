"""`knoc build`: compile, then write build/ aside and swap it in (unless it
already holds exactly what the sources give: then nothing is written)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from knoc.app.common import compile_cached, setting_span, unmatched_accepts
from knoc.app.outcome import Outcome, UsageError, fails
from knoc.app.scan import Scan
from knoc.app.signing import (
    built_keys,
    committed_signed_by,
    exposed,
    idle_pins,
    key_signer,
    signed_by,
    unpinned,
    unverifiable,
)
from knoc.config import CONFIG_FILE, Config
from knoc.diagnostics import Diagnostic, diag
from knoc.diagnostics.accepted import split
from knoc.diagnostics.progress import Progress, quiet
from knoc.incremental.driver import Result
from knoc.io import background, git, lock, pool, swap
from knoc.io.journal import Update
from knoc.io.outputs import Base, Columns, TreeStat
from knoc.io.staging import OutputError, Staging
from knoc.io.tree import restat_tree, stat_tree
from knoc.output.hosting import CARD_FILE, SITE
from knoc.output.tree import MANIFEST, Tree
from knoc.output.views import plain
from knoc.rules.text import escaped

if TYPE_CHECKING:
    from knoc.output.signed import KeySigner

# How to build a repo that signs: the ways to give the key, and the way out.
UNSIGNED_HINT = ("give the key: `--sign-key PATH`, KNOC_SIGNING_KEY (a path, or the PEM itself) or `key = \"PATH\"` "
                 "under [signing] in knoc.toml; or drop the signatures on purpose with `--unsigned`")


def build(config: Config, *, use_cache: bool, fail_on_warning: bool, stage: bool = False,
          progress: Progress = quiet, sign_keys: tuple[str, ...] = (), unsigned: bool = False) -> Outcome:
    """Compile, and when nothing fails write build/ (and with `stage`, `git
    add` it: what the pre-commit hook `knoc-build` does). With signing keys,
    every card is signed and each host publishes its key set; a repo that
    signs (a signed build/, or a pinned key) is never built without them
    unless `unsigned` says so. One build at a time per repo (knoc.io.lock)."""
    # The collector paused throughout (as the compile pauses it): what follows
    # the compile makes hundreds of thousands of small objects and no cycles.
    with lock.held(config.root), pool.collector_paused():
        return _build(config, use_cache, fail_on_warning, stage, progress, sign_keys, unsigned)


def _build(config: Config, use_cache: bool, fail_on_warning: bool, stage: bool, progress: Progress,
           sign_keys: tuple[str, ...], unsigned: bool) -> Outcome:
    if unsigned and sign_keys:
        raise UsageError("KNO-CONFIG", "--unsigned and --sign-key contradict each other", "give one of them")
    signer = None if unsigned else key_signer(config, sign_keys)
    dropped = signed_by(config) if signer is None else None
    committed = committed_signed_by(config) if signer is None and dropped is None else None
    if signer is None and not unsigned and (dropped is not None or committed is not None or config.public):
        raise UsageError("KNO-UNSIGNED", (f"{config.output}/ is signed" if dropped is not None
                                          else f"{config.output}/ as committed at HEAD is signed"
                                          if committed is not None else f"{CONFIG_FILE} pins a signing key")
                         + ", and no signing key was given: this build would publish cards without signatures; "
                           "nothing was written", UNSIGNED_HINT)
    # build/ as it is, scanned meanwhile on another core (and finished by
    # whichever is free, as a check does): what to compare with, what to reuse.
    # What a killed run left beside build/, even if nothing is written now.
    swap.recover(config.out_dir, MANIFEST)
    scan = Scan(config, use_cache)
    pending = background.share(scan.pieces())
    seen = functools.cache(lambda: scan.seen(pending()))

    @functools.cache
    def old() -> dict[str, TreeStat]:
        """The old tree's files (the memo, once the scan has brought it up to date)."""
        seen()
        return scan.memo.snapshot.files

    staging = Staging(config.out_dir, MANIFEST)
    swapped: tuple[Mapping[str, str], Base | None] | None = None  # what build/ now holds, once written

    try:
        # Freshly compiled cards are written by the workers that compiled
        # them (signed ones only once signed, at the end).
        result = compile_cached(config, use_cache, progress, signer, early=None if signer else staging, keep=True)
        differ = scan.in_build(seen(), result.base).differing(result.digests)  # none: rewrite nothing
        current = not differ
        diags = result.report.sorted() + (_rootless(config, differ, result.files, old) if result.ok else [])
        if signer is not None:
            diags += (unverifiable(signer) + ([] if config.public else [unpinned(signer)]) + _keys_gone(config, signer)
                      + idle_pins(config, signer) + exposed(signer.exposed))
        diags += unmatched_accepts(config, result.inputs)
        # --fail-on warning: a warning stops the write too, unless knoc.toml accepts it (as the report does)
        written = result.ok and not fails(split(diags, config.accept)[0], fail_on_warning)
        if written and not current:
            progress("writing", 0, len(result.files))
            try:
                unchanged = {p for p in staging.early if _same_card(result.files, result.early, p)}
                _write(staging, result.files, result.digests, unchanged, differ, old, scan.owned(), progress)
            except OutputError as exc:
                raise UsageError("KNO-OUTPUT", str(exc),
                                 "move those files away, or set another `output` in knoc.toml") from None
            swapped = plain(result.digests), result.base
    finally:
        staging.abort()  # whatever was written early and not swapped in
    unstaged = _staged(config) if written and stage else None
    if unstaged is not None:  # said beside what the build found and wrote, not instead of it
        diags.append(unstaged)
    stripped = written and (dropped, committed) != (None, None)
    summary = _summary(config, result, written, differ, stage and unstaged is None, signer)
    if stripped:
        summary += f"; unsigned (--unsigned): the signatures {config.output}/ had are gone"
    if written and unsigned and config.public:  # the drift guard holds build/ to the pinned keys
        summary += (f"; {CONFIG_FILE} pins signing keys, so `knoc check` refuses these unsigned cards: build "
                    "with the key before you commit")
    outcome = Outcome("knoc build", diags, result.inputs, summary)
    del result  # its trees and per-file results, and the old tree's scan: the memo is made without them
    old.cache_clear()
    if swapped is not None:
        scan.memo.written(_stat(config, scan, staging.update, swapped[0]), *swapped)  # the memo the scan read
    return outcome


def _staged(config: Config) -> Diagnostic | None:
    """`git add` the build just written; why not, if it could not be."""
    out = config.output + "/"
    ignored = (f"a repo that commits its build must not ignore any of {out}: remove the line that does "
               "(.gitignore, or .git/info/exclude)")
    try:
        left, marked = git.stage(config.root, config.out_dir)
    except git.GitError as exc:
        if "ignored by one of your .gitignore" in str(exc):
            return diag("KNO-GIT", f"{out} was written but not staged: git's ignore rules keep it out", hint=ignored)
        return diag("KNO-GIT", f"{out} was written but not staged: "
                    f"{(str(exc).splitlines() or ['git failed'])[0].removeprefix('fatal: ')}",
                    hint="run it in a git work tree, or without --stage")
    if left:
        return diag("KNO-GIT", f"{out} was written but {len(left):,} of its files were not staged: git's ignore "
                    f"rules keep them out ({_some(left)})", hint=ignored)
    if marked:
        return diag("KNO-GIT", f"{out} was written but {len(marked):,} of its files may not be staged: they are "
                    f"marked skip-worktree or assume-unchanged, so git does not look at them ({_some(marked)})",
                    hint=f"clear the marks (`git update-index --no-skip-worktree --no-assume-unchanged FILE`, or "
                         f"leave {out} out of the sparse checkout's exclusions), then build with --stage again")
    return None


def _keys_gone(config: Config, signer: KeySigner) -> list[Diagnostic]:
    """A warning for each key build/ is signed with or publishes whose
    cards stop verifying with this build's key sets (in caches, in other
    registries): a key build/ signed with that this build neither signs
    with nor publishes (a retired key dropped later is the rotation's last
    step), a key published under another kid, another key under its kid."""
    from knoc.a2a import signing

    where = setting_span(config, "signing")
    now = {k.kid: signing.thumbprint(k.jwk) for k in (*signer.published, *signer.retired)}
    was = built_keys(config)
    renamed = {thumb: kid for kid, thumb in now.items()}
    signed = signed_by(config) or []
    found = []
    for kid in dict.fromkeys([*signed, *was]):
        said = f"{config.output}/ is signed with key {kid!r}" if kid in signed else \
            f"{config.output}/ publishes key {kid!r}"
        if kid not in now and was.get(kid) in renamed:  # the same key, published under another kid
            found.append(diag("KNO-SIGNING-KEY-GONE", f"{said}, which this build publishes as "
                              f"{renamed[was[kid]]!r}: copies of the cards it signed name {kid!r}, and stop "
                              "verifying", file=CONFIG_FILE, span=where,
                              hint=f"give its entry under [signing] (`public` or `retired`) "
                                   f"`kid = {json.dumps(kid)}`, the kid it signed under"))
        elif kid not in now and kid in signed:
            found.append(diag("KNO-SIGNING-KEY-GONE", f"{said}, which this build neither signs with nor publishes: "
                              "copies of the cards it signed stop verifying", file=CONFIG_FILE, span=where,
                              hint="keep it in the key sets a while: list its public half under [signing] "
                              "`retired` (`knoc keys public KEY` prints it)"))
        elif kid in now and was.get(kid, now[kid]) != now[kid]:
            found.append(diag("KNO-SIGNING-KEY-GONE", f"{said}, and this build publishes another key under that "
                              "kid: copies of the cards it signed stop verifying", file=CONFIG_FILE, span=where,
                              hint="give the new key a kid of its own (remove [signing] `kid`: a key is then "
                              "named by its thumbprint), and list the old key's public half under `retired` with "
                              f"`kid = {json.dumps(kid)}`"))
    return found


def _rootless(config: Config, differ: set[str], files: Mapping[str, bytes],
              old: Callable[[], Mapping[str, object]]) -> list[Diagnostic]:
    """A warning for each host this build publishes cards on without a root
    card (clients given only the host find none), said once, when that
    changes: build/ had the root card and this build does not write it, or
    the host is new in build/. A host of many agents that means to have
    none is not told again at each build."""
    rootless = sorted(host for host in _card_hosts(differ) if f"{SITE}{host}/{CARD_FILE}" not in files)
    before = _card_hosts(old()) if any(f"{SITE}{host}/{CARD_FILE}" not in differ for host in rootless) else set()
    found: list[Diagnostic] = []
    where = functools.cache(lambda: setting_span(config, "primary"))  # knoc.toml read once, and only if said
    for host in rootless:
        if f"{SITE}{host}/{CARD_FILE}" in differ:  # build/ has it (a host with no card left is gone whole)
            if not any(p.startswith(f"{SITE}{host}/") and p.endswith(f"/{CARD_FILE}") for p in files):
                continue
            said = f"{host}'s root card (/{CARD_FILE}) is no longer published"
        elif host not in before:
            cards = sum(1 for p in differ if p.startswith(f"{SITE}{host}/") and p.endswith(f"/{CARD_FILE}"))
            said = f"{host} has {cards:,} public agents and no root card (/{CARD_FILE})"
        else:
            continue
        found.append(diag("KNO-HOST-NO-ROOT", f"{said}, so a client given only the host finds no card",
                          file=CONFIG_FILE, span=where(),
                          hint=f'name the host\'s primary agent under [primary]: "{host}" = "<slug>"'))
    return found


def _card_hosts(paths: Iterable[str]) -> set[str]:
    """The hosts of the cards among `paths` (a host's root card too)."""
    return {p.split("/", 2)[1] for p in paths if p.startswith(SITE) and p.endswith(f"/{CARD_FILE}")}


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' if n != 1 else ''}"


def _some(names: list[str]) -> str:
    return ", ".join(escaped(name) for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _summary(config: Config, result: Result, written: bool, differ: set[str], stage: bool,
             signer: KeySigner | None) -> str:
    """What the build did to build/: wrote it whole, wrote the files that
    changed (and removed those gone), or nothing."""
    out = config.output + "/"
    what = _plural(len(result.cards), "card") + f" (A2A {config.a2a})"
    removed = sum(path not in result.files for path in differ)
    if not written:
        summary = f"{out} left unchanged"
    elif not differ:
        summary = f"{out} is up to date with {what}: nothing written"
    elif removed or len(differ) < len(result.files):
        summary = (f"{out} updated to {what}: {_plural(len(differ) - removed, 'file')} written"
                   + (f", {removed:,} removed" if removed else ""))
    else:
        summary = f"wrote {what} to {out}"
    private = sorted(set(result.agents) - {slug for slug, _ in result.published})
    if written and signer is not None:
        summary += f", signed with {len(signer.signers)} key{'s' if len(signer.signers) != 1 else ''}"
    if written and stage:
        summary += ", staged"
    if written and result.untwinned:  # no agent.json for them: old clients find nothing there
        shown = ", ".join(result.untwinned[:5]) + (f" and {len(result.untwinned) - 5} more"
                                                   if len(result.untwinned) > 5 else "")
        summary += f"; without agent.json (no interface 0.3 clients can use): {shown}"
    if written and private:  # an agent that is valid but not published is private: say so, by name
        shown = ", ".join(private[:5]) + (f" and {len(private) - 5} more" if len(private) > 5 else "")
        summary += f"; not published: {len(private)} private agent{'s' if len(private) != 1 else ''} ({shown})"
    return summary


def _write(staging: Staging, tree: Mapping[str, bytes], digests: Mapping[str, str], unchanged: set[str],
           differ: set[str], old: Callable[[], dict[str, TreeStat]], owned: Columns | None,
           progress: Progress) -> None:
    """Make `tree` build/, each file's bytes made as the writers ask for them:
    in place where few differ from build/ (`differ`), else a whole new tree
    that links the files of the `old` tree that hold the same bytes.
    `progress` is told after each batch (and may stop the build there)."""
    paths = list(tree)
    update = staging.in_place(paths, differ)
    reuse = {} if update is not None else _reusable(old(), digests.get)
    writing = staging.writing(paths, unchanged, reuse, owned, update)
    done = 0
    for batch in writing.needed():
        writing.put([(rel, tree.content(rel) if isinstance(tree, Tree) else tree[rel]) for rel in batch])
        done += len(batch)
        progress("writing", done, len(paths))
    writing.commit()


def _stat(config: Config, scan: Scan, update: Update | None, digests: Mapping[str, str]) -> Columns:
    """The memo's columns of the tree just written: where it was updated in
    place, only the files and folders the update touched are stat'ed."""
    if update is None or scan.memo.path is None:
        return stat_tree(config.out_dir, digests)
    return restat_tree(config.out_dir, digests, scan.memo.columns, [*update.replace, *update.remove])


def _reusable(old: dict[str, TreeStat], digest: Callable[[str], str | None]) -> dict[str, TreeStat]:
    """The files of the old tree that hold the bytes the new one wants at their path."""
    return {rel: st for rel, st in old.items() if digest(rel) == st[2]}


def _same_card(tree: Mapping[str, bytes], early: Mapping[str, bytes], path: str) -> bool:
    """Whether the file written early at `path` is the one the tree holds."""
    return isinstance(tree, Tree) and isinstance(early, Tree) and tree.card(path) == early.card(path) is not None
