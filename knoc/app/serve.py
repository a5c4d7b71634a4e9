"""`knoc serve`: build/site/ on loopback the way a static host serves it,
optionally rebuilt whenever a source changes."""

from __future__ import annotations

from collections.abc import Callable

from knoc.app.build import build
from knoc.app.outcome import Outcome, UsageError
from knoc.config import CONFIG_FILE, Config
from knoc.diagnostics.progress import quiet
from knoc.features import serve as serving
from knoc.io import files, interrupts, journal, server, tree, watch
from knoc.output.hosting import SITE
from knoc.rules.paths import segment_problem

# How long a stopping `serve --watch` waits for a rebuild under way to
# unwind (it checks between batches of files), before saying so, and at most.
STOP_SOON, STOP_SECONDS = 1.0, 30.0


STOPPED = "stopped serving (knoc serve writes nothing)"


def serve(config: Config, port: int, site_name: str | None, rebuild: bool, sign_keys: tuple[str, ...] = (),
          unsigned: bool = False, *, use_cache: bool, reopen: Callable[[], Config],
          fail_on_warning: bool, report: Callable[[Outcome, Config], object],
          failed: Callable[[Exception], object], say: Callable[[str], None]) -> Outcome:
    """Serve until interrupted. `report` shows each build's outcome (under
    the config it was built with), `failed` a rebuild that raised (a usage
    error or a knoc bug): either way the old tree stays served and the
    watcher goes on. `say` tells the user where to look. A rebuild after
    knoc.toml changed reads it anew (`reopen`)."""
    site = config.out_dir / SITE.rstrip("/")
    watching = watch.Watch() if rebuild else None
    folders = [config.specs, config.content]
    settings = watch.fingerprint(config.root, [], (CONFIG_FILE,))
    now = config

    def build_and_report() -> None:
        nonlocal now, settings
        if (changed := watch.fingerprint(config.root, [], (CONFIG_FILE,))) != settings:
            now = _reread(config, bool(settings) and not changed, reopen)  # raises, each rebuild, until mended
            settings = changed
            say(f"{CONFIG_FILE} changed: building with it")
        report(build(now, use_cache=use_cache, fail_on_warning=fail_on_warning, sign_keys=sign_keys,
                     unsigned=unsigned, progress=watching.progress if watching is not None else quiet), now)

    since = watch.fingerprint(config.root, folders, (CONFIG_FILE,)) if rebuild else None
    if rebuild:
        build_and_report()
    if files.unlinked(config.out_dir, SITE) != "folder":
        raise UsageError("KNO-SERVE", f"nothing to serve: {config.output}/{SITE} does not exist (or is a link)",
                         "run `knoc build` first, or `knoc serve --watch`")
    if site_name is not None and (segment_problem(site_name) is not None or site_name.startswith((".", "_"))
                                  or files.unlinked(site, site_name) != "folder"):
        trees = ", ".join(t for t in tree.trees(site) if not t.startswith("_")) or "none"  # `_catalog`: assets
        raise UsageError("KNO-SERVE", f"no tree {config.output}/{SITE}{site_name}", f"trees: {trees}")
    try:
        running = server.start(port, serving.answer(site, site_name))
    except OSError as exc:
        raise UsageError("KNO-SERVE", f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
                         "pick another --port, or 0 for a free one") from None
    gone: list[Exception] = []  # why the watch stopped, if it did: serving stale trees ends too

    def lost(exc: Exception) -> None:
        gone.append(exc)
        running.shutdown()

    if watching is not None:
        watching.start(config.root, folders, (CONFIG_FILE,), since, build_and_report, failed, lost)
    with interrupts.as_ctrl_c() as ignore_more:  # a service manager's stop is a Ctrl-C too
        try:  # said once Ctrl-C stops it as said: a stop right after the line is one
            say(f"serving {config.output}/{SITE} on http://127.0.0.1:{running.server_address[1]}/"
                + (f" (every request gets {site_name})" if site_name else " (the Host header picks the tree)")
                + ("; rebuilding on change" if rebuild else "") + "; Ctrl-C stops")
            running.serve_forever()  # until Ctrl-C: exit 130, as the shell expects of an interrupted command
        except KeyboardInterrupt:
            if watching is None:  # nothing was being written: no word of half-written trees
                raise KeyboardInterrupt(STOPPED) from None
            raise
        finally:
            ignore_more()  # a second Ctrl-C cannot cut short what follows
            running.server_close()
            if watching is not None:
                _stop(watching, say)
    if gone:
        why = str(gone[0])[:200] or type(gone[0]).__name__
        raise UsageError("KNO-SERVE", f"the watch on the sources stopped: {why}",
                         "raise the system's limit on watched folders (Linux: fs.inotify.max_user_watches), or "
                         "serve without --watch and build by hand")
    return Outcome("knoc serve")


def _reread(served: Config, gone: bool, reopen: Callable[[], Config]) -> Config:
    """knoc.toml as it now reads, unless it is `gone` (removed while
    serving: a build with every default would drop its settings from the
    tree) or moves what is watched or served."""
    if gone:
        raise UsageError("KNO-CONFIG", f"{CONFIG_FILE} is gone: nothing is built until it is back",
                         f"restore {CONFIG_FILE} (`git checkout {CONFIG_FILE}`)")
    new = reopen()
    if (new.root, new.specs, new.content, new.output) != (served.root, served.specs, served.content, served.output):
        raise UsageError("KNO-SERVE", f"{CONFIG_FILE} now names another repo, or other folders (specs, content "
                         "or output), than the ones being watched and served", "stop knoc serve (Ctrl-C) and start "
                         "it again")
    return new


def _stop(watching: watch.Watch, say: Callable[[str], None]) -> None:
    """Stop the watch: a rebuild under way unwinds at its next checkpoint,
    removing what it wrote aside, or, past the wait, is left to the next
    run to clean up; one updating build/ finishes that first."""
    if not watching.stop(STOP_SOON):
        say("stopping: the rebuild under way is removing what it wrote")
        watching.stop(STOP_SECONDS)
    journal.close()
