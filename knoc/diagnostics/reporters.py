"""Reporters: the same Diagnostic objects as text for people, or for
machines as JSON lines, SARIF 2.1.0 (code scanning), JUnit XML (one test case
per entity) or GitHub workflow commands (annotations on the pull request).

Reporters are a registry by format name; each takes the diagnostics and one
`Context` and returns its text, which goes to stderr (text, for people) or
stdout (the machine formats)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO
from urllib.parse import quote

from knoc.diagnostics.codes import CODES
from knoc.diagnostics.model import Diagnostic, Span
from knoc.diagnostics.source import SourceFile
from knoc.rules.masking import masked, masked_line
from knoc.rules.text import columns, visible
from knoc.version import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

Sources = Callable[[str], SourceFile | None]


@dataclass(frozen=True)
class Context:
    """What a reporter may need besides the diagnostics."""

    sources: Sources  # a source file by repo-relative path, for excerpts
    inputs: list[str]  # every file the command read (JUnit's test cases)
    suite: str  # the command, e.g. "knoc build"
    fail_on_warning: bool = False
    color: bool = False
    prefix: str = ""  # SARIF, GitHub and JUnit name files from the git work tree's top: the repo's path there


@dataclass(frozen=True)
class Reporter:
    render: Callable[[list[Diagnostic], Context], str]
    to_stderr: bool  # for people (alongside the summary) rather than for a machine reading stdout

_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "blue": "\x1b[1;34m", "bold": "\x1b[1m",
           "reset": "\x1b[0m"}


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def text(diags: Iterable[Diagnostic], ctx: Context) -> str:
    sources, color = ctx.sources, ctx.color
    paint = (lambda key, s: f"{_COLORS[key]}{s}{_COLORS['reset']}") if color else (lambda key, s: s)
    blocks = []
    for d in diags:
        lines = [paint(d.severity.value, f"{d.severity.value}[{d.code}]") + paint("bold", f": {d.message}")]
        if d.file:
            where = f"{d.file}:{d.span.line}:{d.span.column}" if d.span else d.file
            source = sources(d.file) if d.span else None
            gutter = " " * len(str(d.span.line)) if d.span else " "
            lines.append(f"{gutter}{paint('blue', '-->')} {where}")
            if source is not None and d.span is not None:
                gutter = " " * max(len(str(s.line)) for s in (d.span, *(r.span for r in d.related)))
                lines[-1] = f"{gutter}{paint('blue', '-->')} {where}"
                lines += _excerpt(source, d.span, "^", "", gutter, paint, d.severity.value)
                for r in d.related:
                    other = sources(r.file) if r.file and r.file != d.file else source
                    if r.file and r.file != d.file:
                        lines.append(f"{gutter}{paint('blue', '-->')} {r.file}:{r.span.line}:{r.span.column}")
                    if other is not None:
                        lines += _excerpt(other, r.span, "-", r.label, gutter, paint, "blue")
        pad = " " * (len(str(d.span.line)) if d.span else 1)
        if d.detail:
            lines += [f"{pad}   {line}" for line in d.detail.splitlines()]
        if d.hint:
            lines.append(f"{pad} = help: {d.hint}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _excerpt(source: SourceFile, span: Span, mark: str, label: str, gutter: str,
             paint: Callable[[str, str], str], color: str) -> list[str]:
    """A source line with the span underlined (and labelled), rustc-style;
    a long line cut to the part around the span (`...` where it is cut)."""
    code_line = _shown(source.line(span.line), source.line(span.line + 1))
    width = max(1, (span.end_column or span.column + 1) - span.column)
    column = span.column
    if len(code_line) > EXCERPT_WIDTH:
        start = max(0, min(column - 1 - EXCERPT_WIDTH // 4, len(code_line) - EXCERPT_WIDTH))
        shown = code_line[start:start + EXCERPT_WIDTH]
        code_line = ("..." if start else "") + shown + ("..." if start + EXCERPT_WIDTH < len(code_line) else "")
        column = column - start + (3 if start else 0)
        width = max(1, min(width, EXCERPT_WIDTH - (column - 1) + (3 if start else 0)))
    number = str(span.line).rjust(len(gutter))
    underlined = code_line[column - 1:column - 1 + width]  # as the terminal draws it: CJK takes two columns
    under = max(1, columns(underlined) + width - len(underlined))
    return [f"{gutter} {paint('blue', '|')}",
            f"{paint('blue', number)} {paint('blue', '|')} {code_line}",
            f"{gutter} {paint('blue', '|')} {' ' * columns(code_line[:column - 1])}" + paint(color, mark * under)
            + (f" {paint(color, label)}" if label else "")]


@functools.lru_cache(maxsize=64)  # many findings on one long line: it is masked once
def _shown(line: str, following: str) -> str:
    """A source line as an excerpt shows it: no url's password, and no
    character that would reorder or hide the line on the terminal."""
    return visible(masked_line(line, following)).replace("\t", " ")


EXCERPT_WIDTH = 160  # characters of a source line an excerpt shows


def json_lines(diags: Iterable[Diagnostic], ctx: Context | None = None) -> str:
    return "\n".join(json.dumps(d.to_dict(), ensure_ascii=False, sort_keys=False) for d in diags)


def summary(diags: list[Diagnostic], entities: int, outcome: str, failed: bool = False,
            accepted: Sequence[str] = ()) -> str:
    """The last line. Its first word agrees with the exit code: `ok` for 0,
    `error` when there are errors, `failed` when warnings (under `--fail-on
    warning`) or the command's own verdict failed the run. `accepted`: the
    code of each warning knoc.toml's [accept] kept from the findings, counted
    and named here (`2 accepted warnings (KNO-COMPAT-JS)`)."""
    errors = sum(d.is_error for d in diags)
    warnings = len(diags) - errors
    counts = ", ".join(p for p in (_plural(errors, "error"), _plural(warnings, "warning"),
                                   _accepted(accepted)) if p) or "no problems"
    head = "error" if errors else "failed" if failed else "ok"
    if not diags and not entities and not accepted:  # a command that read no entities (knoc clean): only what it did
        return f"{head}: {outcome}"
    if not entities:  # a command that read no entities, with findings (`knoc keys new` in a shared folder)
        return f"{head}: {counts} ({outcome})"
    if failed and not diags:  # the command's own verdict (a breaking change): it leads, not "no problems"
        return f"{head}: {outcome} ({counts} in {_plural(entities, 'entity', 'entities')})"
    return f"{head}: {counts} in {_plural(entities, 'entity', 'entities')} ({outcome})"


def _accepted(codes: Sequence[str]) -> str:
    counted = _plural(len(codes), "accepted warning")
    return f"{counted} ({', '.join(sorted(set(codes)))})" if codes else ""


def _plural(n: int, one: str, many: str | None = None) -> str:
    if n == 0 and one != "entity":
        return ""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def sarif(diags: list[Diagnostic], ctx: Context | None = None) -> str:
    """One run; rules are the codes that occur, described from the registry.
    Paths are relative to the git work tree's top (%SRCROOT%), as code
    scanning wants, and a finding about the whole repo is placed at
    knoc.toml: code scanning refuses an upload with a result placed nowhere."""
    codes = sorted({d.code for d in diags})
    rules = [{"id": c, "name": c.removeprefix("KNO-").title().replace("-", ""),
              "shortDescription": {"text": CODES[c].summary},
              "fullDescription": {"text": CODES[c].explanation},
              "defaultConfiguration": {"level": CODES[c].severity.value}} for c in codes]
    results = []
    prefix = ctx.prefix if ctx is not None else ""
    for d in diags:
        message = d.message + (f" (help: {d.hint})" if d.hint else "")
        result: dict[str, object] = {"ruleId": d.code, "ruleIndex": codes.index(d.code),
                                  "level": d.severity.value, "message": {"text": message},
                                  "locations": [{"physicalLocation": _sarif_location(
                                      forge_path(prefix, d.file or REPO_FILE), d.span if d.file else None)}]}
        if d.file and d.related:
            result["relatedLocations"] = [{"id": i, "message": {"text": r.label}, "physicalLocation": _sarif_location(
                forge_path(prefix, r.file or d.file), r.span)} for i, r in enumerate(d.related)]
        results.append(result)
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "knoc", "version": __version__, "rules": rules}},
        "columnKind": "unicodeCodePoints",  # knoc counts characters; SARIF's default is UTF-16 code units
        "results": results,
    }]}
    return json.dumps(log, indent=2, ensure_ascii=False)


REPO_FILE = "knoc.toml"  # where a forge is shown a finding about the whole repo


def forge_path(prefix: str, file: str) -> str:
    """A file as a forge names it, from the git work tree's top: a repo's
    own path after `prefix`; a path outside it or a url as it is."""
    return file if file.startswith(("/", "../")) or "://" in file else prefix + file


def _sarif_location(file: str, span: Span | None) -> dict[str, object]:
    """Where a result is; its path a URI reference (a space or `#` escaped)."""
    uri = file if "://" in file else quote(file, safe="/")
    location: dict[str, object] = {"artifactLocation": {"uri": uri} if uri.startswith("/") or "://" in uri
                                   else {"uri": uri, "uriBaseId": "%SRCROOT%"}}
    if span:
        region = {"startLine": span.line, "startColumn": span.column}
        if span.end_column > span.column:
            region["endColumn"] = span.end_column
        location["region"] = region
    return location


_REPO = "(repo)"  # JUnit's case for the findings about the whole repo


def junit(diags: list[Diagnostic], ctx: Context) -> str:
    """A test case per entity (and per other file a finding names, such as a
    drifted build/ file): it fails on an error, or on a warning under
    `--fail-on warning`; other warnings go to the case's system-out."""
    entities, suite, fail_on_warning = ctx.inputs, ctx.suite, ctx.fail_on_warning
    by_file: dict[str, list[Diagnostic]] = {masked(f): [] for f in entities}  # a url read: not its password
    for d in diags:
        by_file.setdefault(d.file or _REPO, []).append(d)
    cases, failures = [], 0
    for file in sorted(by_file):
        failing = [d for d in by_file[file] if d.is_error or fail_on_warning]
        other = [d for d in by_file[file] if d not in failing]
        body = []
        if failing:
            failures += 1
            first = failing[0]
            body.append(f"<failure message={_attr(first.message)} type={_attr(first.code)}>"
                        f"{_xml_text(_lines(failing))}</failure>")
        if other:
            body.append(f"<system-out>{_xml_text(_lines(other))}</system-out>")
        classname = _classname(file)
        where = forge_path(ctx.prefix, file if file != _REPO else REPO_FILE)  # the repo's case: at knoc.toml
        cases.append(f'    <testcase classname={_attr(classname)} name={_attr(file)} file={_attr(where)}>'
                     + "".join(body) + "</testcase>")
    head = (f'<testsuite name={_attr(suite)} tests="{len(cases)}" failures="{failures}" '
            f'errors="0" skipped="0">')
    return "\n".join(['<?xml version="1.0" encoding="UTF-8"?>',
                      f'<testsuites name="knoc" tests="{len(cases)}" failures="{failures}" errors="0">',
                      f"  {head}", *cases, "  </testsuite>", "</testsuites>"])


def _classname(file: str) -> str:
    """A file's folder as a JUnit class name: its folders are the levels a
    CI page groups by, so a folder's own dots (a host name, `.well-known`)
    are written `_` and a leading one dropped."""
    folders = file.split("/")[:-1]
    return ".".join(f.lstrip(".").replace(".", "_") or "_" for f in folders) or "repo"


def github(diags: list[Diagnostic], ctx: Context | None = None) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation."""
    out = []
    for d in diags:
        props = [f"title={_gh_prop(d.code)}"]
        if d.file:
            props.insert(0, f"file={_gh_prop(forge_path(ctx.prefix if ctx is not None else '', d.file))}")
            if d.span:
                props[1:1] = [f"line={d.span.line}", f"col={d.span.column}"]
                if d.span.end_column > d.span.column:
                    props.insert(3, f"endColumn={d.span.end_column}")
        message = d.message + (f"\nhelp: {d.hint}" if d.hint else "")
        out.append(f"::{d.severity.value} {','.join(props)}::{_gh_data(message)}")
    return "\n".join(out)


def _lines(diags: list[Diagnostic]) -> str:
    return "\n".join(f"{d.severity.value}[{d.code}]" + (f" {d.file}" if d.file else "")
                     + f"{f':{d.span.line}:{d.span.column}' if d.span else ''}: {d.message}"
                     + (f"\n  help: {d.hint}" if d.hint else "") for d in diags)


def _clean(s: str) -> str:
    """XML 1.0 cannot carry most control characters, even escaped."""
    return "".join(c if c in "\t\n\r" or ord(c) >= 0x20 else "\ufffd" for c in s)


# Imported where used, like jinja2 (knoc.output.templates): they pull in half the
# standard library, and a pre-commit check renders neither.
def _attr(s: str) -> str:
    from xml.sax.saxutils import quoteattr
    return quoteattr(_clean(s))


def _xml_text(s: str) -> str:
    from xml.sax.saxutils import escape
    return escape(_clean(s))


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


REPORTERS: dict[str, Reporter] = {
    "text": Reporter(text, to_stderr=True),
    "json": Reporter(json_lines, to_stderr=False),
    "sarif": Reporter(sarif, to_stderr=False),
    "junit": Reporter(junit, to_stderr=False),
    "github": Reporter(github, to_stderr=False),
}
FORMATS = tuple(REPORTERS)
FORGE_FORMATS = ("sarif", "github", "junit")  # read by a forge, which names files from the work tree's top
