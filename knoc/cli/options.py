"""What every command shares: the common options, opening the repo, and
handing the outcome to the reporter of the chosen format.

Exit codes: 0 clean, 1 findings at or above `--fail-on` (default: errors)
or a command's own failure, 2 usage or configuration error, 3 a bug in
knoc (one KNO-INTERNAL diagnostic; `--debug` shows its traceback)."""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from knoc.a2a import targets
from knoc.app import CACHE_DIR
from knoc.app.common import open_repo
from knoc.app.outcome import INTERRUPTED, Outcome, UsageError, as_usage, exit_code
from knoc.config import Config
from knoc.diagnostics import Diagnostic, diag, internal
from knoc.diagnostics.accepted import split
from knoc.diagnostics.progress import ProgressBar
from knoc.diagnostics.reporters import FORGE_FORMATS, FORMATS, REPORTERS, Context, summary, use_color
from knoc.diagnostics.source import reader
from knoc.rules.text import lines_shown

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # the shell's code for a process ended by SIGINT


@dataclass(frozen=True)
class Run:
    """What every command is given: the repo's config and how to report."""

    config: Config
    fmt: str
    fail_on: str  # error, warning, or for diff also breaking
    use_cache: bool
    debug: bool = False  # --debug: a bug's traceback is shown
    reopen: Callable[[], Config] | None = None  # the config read anew, as the command line gave it

    def reread(self) -> Config:
        """The config with knoc.toml read again (`knoc serve --watch` after an edit of it)."""
        return self.config if self.reopen is None else self.reopen()

    def progress(self) -> ProgressBar:
        """A bar on stderr for a long run: only on a terminal, only for text
        output, and only once the run has taken two seconds."""
        return ProgressBar(self.fmt == "text" and sys.stderr.isatty())

    def report(self, outcome: Outcome) -> int:
        """Show the outcome in the chosen format; the exit code it deserves."""
        # What an answer, a note or a summary quotes (a card's values, a file or branch name) is written so
        # that the terminal, or a pull request's page, shows it and acts on nothing (findings are, as made).
        for note in outcome.notes:
            click.echo(lines_shown(note), err=True)
        if outcome.answer is not None:
            click.echo(lines_shown(outcome.answer), nl=False)
        outcome.diagnostics, accepted = split(outcome.diagnostics, self.config.accept)
        accepted += outcome.accepted
        if outcome.summary is None:
            return exit_code(outcome, self.fail_on == "warning")
        fmt = outcome.report_format or self.fmt
        reporter = REPORTERS[fmt]
        ctx = Context(reader(self.config.root), outcome.inputs, outcome.command, self.fail_on == "warning",
                      color=reporter.to_stderr and use_color(sys.stderr),
                      prefix=self.config.report_prefix if fmt in FORGE_FORMATS else "")
        shown = outcome.diagnostics if self.debug else internal.without_traceback(outcome.diagnostics)
        body = reporter.render(shown, ctx)
        if body:
            click.echo(body + ("\n" if reporter.to_stderr else ""), err=reporter.to_stderr)
        code = exit_code(outcome, self.fail_on == "warning")
        click.echo(lines_shown(summary(outcome.diagnostics, len(outcome.inputs), outcome.summary,
                                       failed=code != EXIT_OK, accepted=accepted)), err=True)
        return code


def common(command: Callable[..., int]) -> Callable[..., None]:
    """The options every command takes; the command gets a `Run`."""
    return options()(command)


def authoring(command: Callable[..., int]) -> Callable[..., None]:
    """The options of a command that writes a source: no target, threshold
    or cache choice to make."""
    return options(formats=("text", "json"), thresholds=(), target=False, cache=False)(command)


def options(formats: tuple[str, ...] = FORMATS, thresholds: tuple[str, ...] = ("error", "warning"),
            target: bool = True, cache: bool = True, repo: bool = True, default_format: str = "text"
            ) -> Callable[[Callable[..., int]], Callable[..., None]]:
    """`common`, for a command with its own formats or `--fail-on` thresholds,
    without the target and cache options it has no use for, or run outside
    any repo (`repo=False`: no --root; `knoc verify`)."""
    def decorate(command: Callable[..., int]) -> Callable[..., None]:
        @functools.wraps(command)
        def wrapper(debug: bool, fmt: str | None = None, root: Path | None = None, **kw: Any) -> None:
            a2a, fail_on, no_cache = kw.pop("a2a", None), kw.pop("fail_on", "error"), kw.pop("no_cache", False)
            jobs = kw.pop("jobs", None)
            if fmt is None:
                fmt = implied_format(formats)

            def opened() -> Config:
                config = open_repo(root, a2a, Path.cwd()) if repo else Config(root=Path.cwd())
                return config if jobs is None else dataclasses.replace(config, jobs=jobs)

            def run() -> int:
                utf8_arguments([root, *kw.values()])
                return command(Run(opened(), fmt, fail_on, not no_cache, debug, opened), **kw)

            guarded(run, fmt, command_name(click.get_current_context()), debug)

        chosen = [
            *([click.option("--root", type=click.Path(file_okay=False, path_type=Path),
                            help="Content repo root (default: walk up to knoc.toml or specs/).")] if repo else []),
            *([click.option("--a2a", type=click.Choice(targets.names()),
                            help=f"A2A target version (default: knoc.toml, else {targets.DEFAULT}).")]
              if target else []),
            *([click.option("--format", "fmt", type=click.Choice(formats), help=_format_help(formats, default_format))]
              if len(formats) > 1 else []),  # one format: nothing to choose
            *([click.option("--fail-on", type=click.Choice(thresholds), default="error", show_default=True,
                            help="The least severe finding that makes the exit code 1.")] if thresholds else []),
            *([click.option("--no-cache", is_flag=True, help=f"Neither read nor write {CACHE_DIR}/ "
                            "(compile everything)."),
               click.option("--jobs", type=click.IntRange(1, 512), metavar="N",
                            help="Processes compiling files (default: every core; the output is the same "
                                 "for any N).")] if cache else []),
            click.option("--debug", is_flag=True, help="On a bug in knoc (exit 3), also print its traceback."),
        ]
        for option in reversed(chosen):
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _format_help(formats: tuple[str, ...], default: str) -> str:
    if "github" not in formats:
        return f"Output format: {' or '.join(formats)} (default: {default})."
    others = ", ".join(f for f in formats if f not in (default, "github"))
    return (f"{default} (default; `github` under GITHUB_ACTIONS=true), or {others} or github workflow commands "
            "(json: one finding per line)." if default == "text" else
            f"{default} (default, also as `text`; `github` under GITHUB_ACTIONS=true), or "
            f"{others.replace('text, ', '')} or github workflow commands.")


def utf8_arguments(values: list[object]) -> None:
    """Refuse an argument that is not UTF-8 (a Latin-1 `--title`, a file
    name in another encoding: the shell hands them over as bytes Python
    cannot write back out)."""
    for value in values:
        for item in value if isinstance(value, (tuple, list)) else [value]:
            text = str(item) if isinstance(item, (str, Path)) else None
            if text is not None and not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                    raise UsageError("KNO-CONFIG", f"the argument `{shown}` is not UTF-8 text",
                                     "pass arguments in UTF-8 (check the terminal's and the file's encoding)"
                                     ) from None


def finish(outcome: Outcome, root: Path) -> int:
    """Report an outcome of a command that runs outside a repo (`knoc init`)."""
    return Run(Config(root=root), "text", "error", True).report(outcome)


def guarded(action: Callable[[], int], fmt: str = "text", suite: str = "knoc", debug: bool = False) -> None:
    """Run a command and exit with its code; a usage error, a bug or Ctrl-C
    becomes one finding and its exit code, never a traceback. A machine
    format gets the finding too (a SARIF upload is never an empty file)."""
    try:
        code = action()
    except Exception as exc:
        code = complain(exc, fmt, suite, debug)
    except KeyboardInterrupt as exc:  # what was being written was left aside, not half-done
        click.echo(str(exc) or INTERRUPTED, err=True)  # a command that wrote nothing says so
        code = EXIT_INTERRUPTED
    sys.exit(code)


def complain(exc: Exception, fmt: str = "text", suite: str = "knoc", debug: bool = False) -> int:
    """Say what went wrong (a usage error, else a bug in knoc); its exit code."""
    found = as_usage(exc)
    finding = internal.internal(exc) if found is None else found.finding()
    if not debug:
        [finding] = internal.without_traceback([finding])
    where = found.root if found is not None else None  # the line it is about, shown as a finding's is
    click.echo(REPORTERS["text"].render([finding], Context(reader(where) if where else lambda rel: None, [], suite,
                                                           color=use_color(sys.stderr))), err=True)
    _machine(finding, fmt, suite)
    return EXIT_USAGE if found is not None else EXIT_BUG


def command_name(ctx: click.Context) -> str:
    """`knoc specs vendor`, however knoc was started (`python -m knoc` too)."""
    names = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(["knoc", *reversed(names)])


def implied_format(formats: tuple[str, ...] = FORMATS) -> str:
    """The format when none is asked for: GitHub annotations in a GitHub
    Actions job (for a command that has them), else text."""
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" and "github" in formats else "text"


def report_usage(message: str, fmt: str, suite: str) -> None:
    """A command line click refused, for a machine format (click has told the person)."""
    _machine(diag("KNO-CONFIG", message, hint="see the command's --help"), fmt, suite)


def _machine(finding: Diagnostic, fmt: str, suite: str) -> None:
    reporter = REPORTERS.get(fmt) or REPORTERS.get(implied_format())  # `--format nope`: the default's
    if reporter is not None and not reporter.to_stderr:
        click.echo(reporter.render([finding], Context(lambda rel: None, [], suite)))
