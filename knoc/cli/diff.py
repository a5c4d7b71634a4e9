from __future__ import annotations

import click

from knoc.app.outcome import UsageError
from knoc.cli.options import Run, options
from knoc.diagnostics.reporters import FORMATS


@click.command(name="diff")
@click.argument("refs", required=False, metavar="[A..B | REF]")
@click.option("--base", help="Git ref to compare the work tree with (default: the merge base with the default "
                             "branch).")
@options(formats=(*FORMATS, "markdown"), thresholds=("error", "warning", "breaking"), default_format="markdown")
def command(run: Run, refs: str | None, base: str | None) -> int:
    """Report the public wire changes between two git refs (A..B; A...B
    from where B branched off A, as a pull request shows it), or between a
    ref (REF, or --base REF, as `git diff REF` reads it) and the work tree.

    Per agent, perception domain and host, each change is classed breaking,
    additive or cosmetic, with its old and new value. Breaking changes of
    an agent whose card's major version went up (a blueprint's
    `a2a_projection.version`, an agent card's `version`) are reported as
    intended.
    Markdown (the default; paste it into a pull request) or JSON;
    --fail-on breaking makes it a CI gate that intended changes pass."""
    from knoc.app.diff import diff

    head, merge = None, False
    if refs is not None:
        if base is not None:
            raise UsageError("KNO-CONFIG", "give either A..B (or REF) or --base, not both", "`knoc diff main..HEAD`")
        merge = "..." in refs  # GitHub's A...B: from where B left A
        base, sep, head = refs.partition("..." if merge else "..")
        if not sep:  # one ref: it and the work tree, as `git diff main` reads it
            head = None
        else:
            base, head = base or "HEAD", head or "HEAD"  # as git reads `A..` and `..B`
        if head is not None and (head.startswith(".") or base.endswith(".")):
            raise UsageError("KNO-CONFIG", f"`{refs}` is not a range of two refs", "write it A..B: `knoc diff "
                             "main..HEAD`")
    fmt = "markdown" if run.fmt == "text" else run.fmt
    return run.report(diff(run.config, base, fmt=fmt, fail_on=run.fail_on, use_cache=run.use_cache,
                           head=head, merge=merge))
