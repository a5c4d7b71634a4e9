"""The command line: parse arguments, run the pipeline, render diagnostics.

Exit codes: 0 clean, 1 findings at or above `--fail-on` (default: errors),
2 usage or configuration error.

A module only one command needs (the HTTP server, git, the importer and
migrator) is imported inside that command: `knoc check` runs on every
commit and should not pay for them."""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import click

from knoc import __version__, background, capability, render
from knoc.cache import DIR, OutputMemo
from knoc.changes import Publication, compare, count
from knoc.config import Config, ConfigError, find_root, load_config
from knoc.diagnostics import Diagnostic, error, warning
from knoc.discover import CATALOG_CLASSES, Request, catalog, discover
from knoc.drift import drift
from knoc.emit import DOMAINS, OutputError, scan_tree, stat_tree, write_tree
from knoc.hosting import SITE
from knoc.pipeline import Result, compile_repo
from knoc.source import SourceFile
from knoc.wire import TARGETS

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # document-schema's slug


class UsageError(Exception):
    """A problem with the invocation or the environment: exit 2."""

    def __init__(self, code: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code, self.hint = code, hint


@dataclass(frozen=True)
class Run:
    """What every command is given: the repo's config and how to report."""

    config: Config
    fmt: str
    fail_on: str  # error, warning, or for diff also breaking
    use_cache: bool

    def compile(self) -> Result:
        result = compile_repo(self.config, use_cache=self.use_cache)
        result.cache.save()
        return result

    def report(self, diags: list[Diagnostic], inputs: list[str], outcome: str, suite: str) -> int:
        """Render `diags` in the chosen format; the exit code they deserve."""
        if self.fmt == "text":
            body = render.text(diags, _source_reader(self.config.root), color=render.use_color(sys.stderr))
            if body:
                click.echo(body + "\n", err=True)
        else:
            out = {"json": lambda: render.json_lines(diags),
                   "sarif": lambda: render.sarif(diags),
                   "junit": lambda: render.junit(diags, inputs, suite, self.fail_on == "warning"),
                   "github": lambda: render.github(diags)}[self.fmt]()
            if out:
                click.echo(out)
        click.echo(render.summary(diags, len(inputs), outcome), err=True)
        return EXIT_FINDINGS if self.fails(diags) else EXIT_OK

    def fails(self, diags: list[Diagnostic]) -> bool:
        return any(d.is_error or self.fail_on == "warning" for d in diags)


def _common(f: Callable[..., int], formats: tuple[str, ...] = render.FORMATS,
            thresholds: tuple[str, ...] = ("error", "warning")) -> Callable[..., None]:
    @click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                  help="Content repo root (default: walk up to knoc.toml or specs/).")
    @click.option("--a2a", type=click.Choice(TARGETS), help="A2A target version (default: knoc.toml, else 1.0).")
    @click.option("--format", "fmt", type=click.Choice(formats),
                  help="How findings are written: text (default; `github` under GITHUB_ACTIONS=true), "
                       "json lines, sarif, junit or github workflow commands."
                       if "github" in formats else f"Output format: {' or '.join(formats)} (default: text).")
    @click.option("--fail-on", type=click.Choice(thresholds), default="error", show_default=True,
                  help="The least severe finding that makes the exit code 1.")
    @click.option("--no-cache", is_flag=True, help=f"Neither read nor write {DIR}/ (compile everything).")
    @functools.wraps(f)
    def wrapper(root: Path | None, a2a: str | None, fmt: str | None, fail_on: str, no_cache: bool,
                **kw: object) -> None:
        if fmt is None:
            fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in formats else "text"
        try:
            config = load_config(root.resolve() if root else find_root(Path.cwd()), a2a)
            code = f(Run(config, fmt, fail_on, not no_cache), **kw)
        except ConfigError as exc:
            code = _usage(UsageError("KNO-CONFIG", str(exc)))
        except UsageError as exc:
            code = _usage(exc)
        sys.exit(code)

    return wrapper


def _usage(exc: UsageError) -> int:
    click.echo(f"error[{exc.code}]: {exc}" + (f"\n  = help: {exc.hint}" if exc.hint else ""), err=True)
    return EXIT_USAGE


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="knoc")
def main() -> None:
    """knoc compiles a KNO content repo into public A2A agent cards."""


@main.command()
@_common
def build(run: Run) -> int:
    """Compile the repo and write build/ (cards, domain index, catalog, manifest).

    The new tree is written aside and swapped in: a failed build leaves the
    previous build/ untouched."""
    return _build(run)


def _rebuild(run: Run) -> None:
    """A --watch rebuild: its findings are reported, and serving goes on."""
    try:
        _build(run)
    except UsageError as exc:
        _usage(exc)


def _build(run: Run) -> int:
    config, result = run.config, run.compile()
    out = config.output + "/"
    diags = result.report.sorted()
    written = result.ok and not run.fails(diags)  # --fail-on warning: a warning stops the write too
    if written:
        try:
            write_tree(config.out_dir, result.files)
        except OutputError as exc:
            raise UsageError("KNO-OUTPUT", str(exc),
                             "move those files away, or set another `output` in knoc.toml") from None
        OutputMemo.open(config.root, run.use_cache).update(stat_tree(config.out_dir, result.digests))
    cards = len(result.cards)
    outcome = (f"wrote {cards} card{'s' if cards != 1 else ''} (A2A {config.a2a}) to {out}"
               if written else f"{out} left unchanged")
    return run.report(diags, result.inputs, outcome, "knoc build")


@main.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1; 0 picks a free one.")
@click.option("--site", "site_name", metavar="HOST",
              help="Serve the build/site/HOST tree for every request, whatever its Host header.")
@click.option("--watch", is_flag=True, help="Build now, then rebuild whenever a source or spec changes.")
@_common
def serve(run: Run, port: int, site_name: str | None, watch: bool) -> int:
    """Serve build/site/ on loopback the way a static host would.

    The request's Host header picks the build/site/<host> tree; any other
    host gets build/site/ itself, with the catalog page at /. Cards go out
    as application/json with CORS open for GET; agent.json answers too."""
    import threading

    from knoc import serve as serving

    config = run.config
    site = config.out_dir / SITE.rstrip("/")
    if watch:
        _build(run)
    if not site.is_dir():
        raise UsageError("KNO-SERVE", f"nothing to serve: {config.output}/{SITE} does not exist",
                         "run `knoc build` first, or `knoc serve --watch`")
    if site_name is not None and not (site / site_name).is_dir():
        trees = ", ".join(sorted(p.name for p in site.iterdir() if p.is_dir())) or "none"
        raise UsageError("KNO-SERVE", f"no tree {config.output}/{SITE}{site_name}", f"trees: {trees}")
    try:
        server = serving.start(site, site_name, port)
    except OSError as exc:
        raise UsageError("KNO-SERVE", f"cannot listen on 127.0.0.1:{port}: {exc.strerror}",
                         "pick another --port, or 0 for a free one") from None
    stop = threading.Event()
    if watch:
        sources = functools.partial(serving.fingerprint, config.root, [config.specs, config.content])
        threading.Thread(target=serving.watch, args=(sources, lambda: _rebuild(run), stop), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    click.echo(f"serving {config.output}/{SITE} on {url}"
               + (f" (every request gets {site_name})" if site_name else " (the Host header picks the tree)")
               + ("; rebuilding on change" if watch else "") + "; Ctrl-C stops", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
    return EXIT_OK


@main.command()
@_common
def check(run: Run) -> int:
    """Compile in memory and compare with build/ on disk (the drift guard).

    Exit 0 when build/ matches the sources; exit 1 with each stale, missing
    or extra file (and a short diff) when it does not, or on any finding."""
    config = run.config
    out = config.output + "/"
    on_disk = background.start(functools.partial(_on_disk, config, run.use_cache))
    result = run.compile()
    actual = on_disk()
    if not result.ok:
        return run.report(result.report.sorted(), result.inputs, f"{out} not compared", "knoc check")
    drifted = drift(result.files, result.digests, actual,
                    lambda rel: (config.out_dir / rel).read_bytes(), out)
    outcome = f"{out} drifted: run `knoc build`" if drifted else f"{out} is up to date"
    return run.report(result.report.sorted() + drifted, result.inputs, outcome, "knoc check")


def _on_disk(config: Config, use_cache: bool) -> dict[str, str]:
    """The sha256 of each file under build/, through the memo of its stats.
    `check` runs it on another core while the sources compile."""
    memo = OutputMemo.open(config.root, use_cache)
    memo.update(scan_tree(config.out_dir, memo.snapshot))
    return {rel: st[2] for rel, st in memo.snapshot.files.items()}


@main.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@_common
def validate(run: Run, files: tuple[Path, ...]) -> int:
    """Run every check of `build` without writing anything.

    With FILES, report only their diagnostics (the whole repo is still read,
    since references cross files)."""
    result = run.compile()
    diags, inputs = result.report.sorted(), result.inputs
    if files:
        wanted = {_rel(run.config.root, f) for f in files}
        diags = [d for d in diags if d.file in wanted]
        inputs = [i for i in inputs if i in wanted]
    return run.report(diags, inputs, "nothing written", "knoc validate")


@main.command()
@click.option("--base", help="Git ref to compare with (default: the merge base with the default branch).")
@functools.partial(_common, formats=(*render.FORMATS, "markdown"), thresholds=("error", "warning", "breaking"))
def diff(run: Run, base: str | None) -> int:
    """Report the public wire changes between a git ref and the work tree.

    Per agent and per perception domain, each change is classed breaking,
    additive or cosmetic. Markdown (the default; paste it into a pull
    request) or JSON; --fail-on breaking makes it a CI gate."""
    import tempfile

    from knoc.gitref import GitError, default_base, describe, export

    config, head = run.config, run.compile()
    diags = head.report.sorted()
    if not head.ok:
        return run.report(diags, head.inputs, "not compared: fix the work tree first", "knoc diff")
    try:
        ref = base or default_base(config.root)
        label = describe(config.root, ref)
        with tempfile.TemporaryDirectory(prefix="knoc-diff-") as tmp:
            old = compile_repo(load_config(export(config.root, ref, Path(tmp)), config.a2a))
    except (GitError, ValueError) as exc:
        raise UsageError("KNO-GIT", str(exc), "pass --base with a branch, tag or commit") from None
    changes = compare(publication(old), publication(head))
    counts = count(changes)
    gate = run.fail_on == "breaking"
    if run.fmt in ("text", "markdown"):
        click.echo(render.markdown_changes(changes, label, "work tree", config.a2a), nl=False)
    elif run.fmt == "json":
        click.echo(json.dumps({"base": label, "head": "work tree", "a2a_target": config.a2a, "counts": counts,
                               "changes": [c.to_dict() for c in changes]}, indent=2, ensure_ascii=False))
    sources = head.agents
    make = error if gate else warning
    findings = [make("KNO-CARD-BREAKING", f"{c.subject} `{c.name}`: {c.message}",
                     file=sources.get(c.name) if c.subject == "agent" else None,
                     hint="keep it, or bump the agent's major version and tell its clients")
                for c in changes if c.cls == "breaking"]
    outcome = f"{counts['breaking']} breaking, {counts['additive']} additive, {counts['cosmetic']} cosmetic since {label}"
    shown = diags + findings if run.fmt in ("sarif", "junit", "github") else diags
    # Markdown and JSON own stdout: findings then go to stderr as text.
    findings_run = replace(run, fmt="text") if run.fmt in ("markdown", "json") else run
    code = findings_run.report(shown, head.inputs, outcome, "knoc diff")
    return EXIT_FINDINGS if code or (gate and counts["breaking"]) else EXIT_OK


@main.command(name="discover")
@click.option("--requires", "requires", multiple=True, metavar="CAPABILITY",
              help="A capability the agent must declare (repeatable): a flag such as streaming_message, "
                   "or ext:<uri> for an extension.")
@click.option("--protocol", metavar="VERSION", help="The A2A protocol version the caller speaks, e.g. 1.0.")
@click.option("--domain", metavar="DOMAIN", help="Only agents that perceive this perception domain.")
@click.option("--class", "service_class", type=click.Choice(CATALOG_CLASSES),
              help="Only agents of this service class (declared or inferred, as in the catalog).")
@functools.partial(_common, formats=("text", "json"))
def discover_cmd(run: Run, requires: tuple[str, ...], protocol: str | None, domain: str | None,
                 service_class: str | None) -> int:
    """Which public agents qualify for a request, and why the others do not.

    Answers from the catalog `knoc build` would publish (compiled in memory,
    through the cache), reading each agent's published card the way a
    client would (seed 001's safe discovery). Exit 0 when at least one
    agent qualifies, 1 when none does."""
    request = Request(requires, protocol, domain, service_class)
    problems = request.problems()
    if problems:
        raise UsageError("KNO-CONFIG", "; ".join(problems),
                         f"capabilities: {', '.join(capability.vocabulary())}")
    result = run.compile()
    if not result.ok:
        return run.report(result.report.sorted(), result.inputs, "no catalog: fix the errors first", "knoc discover")
    answers = discover(catalog(result.files.__getitem__), request)
    if run.fmt == "json":
        click.echo(json.dumps({"request": request._asdict(), "agents": [a.to_dict() for a in answers]},
                              indent=2, ensure_ascii=False))
    else:
        click.echo(render.discovery(answers, request), nl=False)
    return EXIT_OK if any(a.qualifies for a in answers) else EXIT_FINDINGS


@main.group()
def new() -> None:
    """Write a new source file from a skeleton."""


@new.command(name="agent")
@click.argument("slug")
@click.option("--title", help="The agent's title and card name (default: from the slug).")
@click.option("--url", default="https://agents.example.com/{slug}", show_default=True,
              help="Where the agent is served; its card goes to <url>/.well-known/agent-card.json.")
@_common
def new_agent(run: Run, slug: str, title: str | None, url: str) -> int:
    """Write content/agent-blueprints/SLUG.kno: a valid blueprint skeleton
    with a fresh ULID, private until its visibility line is removed. Never
    replaces a file; the new file is then validated like any other."""
    from knoc import author, importer

    if not SLUG.match(slug):
        raise UsageError("KNO-CONFIG", f"`{slug}` is not a slug", "use lowercase letters, digits and single hyphens")
    url = url.replace("{slug}", slug)
    if not importer.publishable(url):
        raise UsageError("KNO-CONFIG", f"`{url}` is not an http(s) URL without query or fragment")
    rel = f"{run.config.content}/agent-blueprints/{slug}.kno"
    title = title or slug.replace("-", " ").title()
    _write(run, rel, author.blueprint_skeleton(slug, title, url), force=None)
    click.echo(f"wrote {rel}", err=True)
    return _validate_written(run, [rel])


@main.command(name="import")
@click.argument("sources", nargs=-1, required=True, metavar="CARD.json|URL...")
@click.option("--force", is_flag=True, help="Replace a blueprint of the same slug that exists.")
@_common
def import_cmd(run: Run, sources: tuple[str, ...], force: bool) -> int:
    """Turn existing A2A Agent Cards (files or URLs; 0.1 to 1.0 and mixed
    shapes) into blueprints in content/agent-blueprints/.

    What it drops or converts is reported as a warning with its JSON path;
    a JSON file that is not an agent card is refused. A blueprint of the
    same slug is never replaced unless --force. What it writes is then
    validated like any other source."""
    import datetime

    from knoc import author, importer, migrate

    config = run.config
    diags: list[Diagnostic] = []
    written: list[str] = []
    taken: set[str] = set()  # slugs given in this run
    date = datetime.date.today().isoformat()
    for source in sources:
        label = source if source.startswith(("http://", "https://")) else _rel(config.root, Path(source))
        imported, found = importer.load(source, label)
        diags += found
        if imported is None:
            continue
        slug = importer.unique_slug(imported.card["name"], taken)
        if slug != importer.unique_slug(imported.card["name"], set()):  # two cards of one name in this run: both are kept
            diags.append(warning("KNO-IMPORT-CHANGED", f"another card here is also named `{imported.card['name']}`; "
                                 f"this one's slug is `{slug}`", file=label, hint="rename one of them"))
        taken.add(slug)
        rel = f"{config.content}/{migrate.BLUEPRINTS}/{slug}.kno"
        try:
            author.write_new(config.root / rel, importer.blueprint(imported, slug, author.ulid(), source, date), force)
        except author.Exists:
            diags.append(error("KNO-EXISTS", _exists(rel), file=label,
                               hint="pass --force to replace it, or move it away"))
            continue
        written.append(rel)
        click.echo(f"imported {label} -> {rel}", err=True)
    result = run.compile() if written else None
    if result is not None:
        diags += [d for d in result.report.sorted() if d.file in set(written)]
    return run.report(diags, [*sources], f"wrote {len(written)} blueprint{'s' if len(written) != 1 else ''}",
                      "knoc import")


@main.command(name="migrate")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check the migration and say what it would do; write nothing.")
@_common
def migrate_cmd(run: Run, files: tuple[Path, ...], dry_run: bool) -> int:
    """Rewrite legacy agents (content/agents/*.kno, or FILES) as blueprints
    in content/agent-blueprints/, keeping every comment and the key order.

    Before writing, the repo is compiled as it is and as it would be in a
    scratch copy: every built file but the manifest must come out byte for
    byte the same, or nothing is written. A blueprint that exists is never
    replaced; the legacy file is removed once its blueprint is written."""
    import datetime

    from knoc import migrate

    config = run.config
    rels = ([_rel(config.root, f) for f in files] if files else
            sorted(p.relative_to(config.root).as_posix()
                   for p in (config.root / config.content / migrate.LEGACY).glob("*.kno")))
    if not rels:
        raise UsageError("KNO-MIGRATE", f"no legacy agents under {config.content}/{migrate.LEGACY}/")
    today = datetime.date.today()
    plan: list[migrate.Migration] = []
    for rel in rels:
        try:
            m = migrate.plan(config.root, rel, config.content, today)
        except (OSError, UnicodeDecodeError, ValueError, migrate.NotLegacy) as exc:
            raise UsageError("KNO-MIGRATE", f"{rel}: {exc}", "migrate only legacy agents; `knoc validate` "
                             "shows what is wrong with a file that does not load") from None
        if (config.root / m.target).exists():
            raise UsageError("KNO-EXISTS", _exists(m.target), f"move it away, or rename {rel}")
        plan.append(m)
    before = run.compile()
    if not before.ok:
        return run.report(before.report.sorted(), before.inputs, "nothing migrated: fix the errors first",
                          "knoc migrate")
    after = migrate.rehearse(config, plan)
    changed = migrate.changed(before, after)
    if changed:
        raise UsageError("KNO-MIGRATE-CHANGED", f"the migration would change {', '.join(changed)}; "
                         "nothing was written", "report this as a knoc bug, with the legacy file")
    for m in plan:
        click.echo(f"{'would migrate' if dry_run else 'migrated'} {m.source} ({m.declared}) -> {m.target}",
                   err=True)
        if not dry_run:
            _write(run, m.target, m.text, force=None)
            (config.root / m.source).unlink()
    if dry_run:
        return EXIT_OK
    written = {m.target for m in plan}  # the rehearsal compiled what is now on disk
    return run.report([d for d in after.report.sorted() if d.file in written], sorted(written),
                      "nothing else written", "knoc validate")


def _write(run: Run, rel: str, text: str, force: bool | None) -> None:
    """force: None for a command without --force."""
    from knoc import author

    try:
        author.write_new(run.config.root / rel, text, bool(force))
    except author.Exists:
        raise UsageError("KNO-EXISTS", _exists(rel),
                         "pick another name, move the file away" + (", or pass --force" if force is not None else "")) \
            from None


def _exists(rel: str) -> str:
    return f"{rel} already exists; knoc does not replace it"


def _validate_written(run: Run, written: list[str]) -> int:
    """What a command just wrote, checked as `knoc validate FILE` would."""
    result = run.compile()
    wanted = set(written)
    return run.report([d for d in result.report.sorted() if d.file in wanted], written,
                      "nothing else written", "knoc validate")


def publication(result: Result) -> Publication:
    return Publication({c.slug: json.loads(c.projection.body) for c in result.cards},
                       json.loads(result.files[DOMAINS])["domains"])


def _rel(root: Path, path: Path) -> str:
    full = path if path.is_absolute() else Path.cwd() / path
    try:
        return full.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _source_reader(root: Path) -> Callable[[str], SourceFile | None]:
    @functools.lru_cache(maxsize=None)
    def read(rel: str) -> SourceFile | None:
        source = SourceFile(f"{root}/{rel}", rel, None)
        try:
            source.text  # read now: a file that is gone shows no excerpt
        except OSError:
            return None
        return source

    return read
