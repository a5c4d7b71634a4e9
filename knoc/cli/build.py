from __future__ import annotations

import click

from knoc.cli.options import Run, common


@click.command(name="build")
@click.option("--stage", is_flag=True, help="Then `git add` the output folder (the knoc-build pre-commit hook).")
@click.option("--sign-key", "sign_keys", multiple=True, metavar="PATH",
              help="Sign every card with this private key (PEM, Ed25519 or P-256, outside the repo); "
                   "repeat to sign with several. Default: KNOC_SIGNING_KEY (a path or the PEM itself), "
                   "else knoc.toml's [signing] key.")
@click.option("--unsigned", is_flag=True,
              help="Build without signatures in a repo that signs (a signed build/, or a pinned key): "
                   "without it, such a build is refused.")
@common
def command(run: Run, stage: bool, sign_keys: tuple[str, ...], unsigned: bool) -> int:
    """Compile the repo and write build/ (cards, domain index, catalog, manifest).

    What changed is written aside first, then moved in: a failed or
    interrupted build leaves the previous build/ untouched."""
    from knoc.app.build import build

    with run.progress() as progress:
        outcome = build(run.config, use_cache=run.use_cache, fail_on_warning=run.fail_on == "warning",
                        stage=stage, progress=progress, sign_keys=sign_keys, unsigned=unsigned)
    return run.report(outcome)
