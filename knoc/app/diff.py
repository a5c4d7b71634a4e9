"""`knoc diff`: the public wire changes between a git ref and the work tree."""

from __future__ import annotations

import dataclasses
import json

from knoc.app.common import compile_cached
from knoc.app.outcome import Outcome, UsageError
from knoc.compiler.driver import Result, compile_repo
from knoc.config import Config, load_config
from knoc.diagnostics import Severity, diag
from knoc.io import git
from knoc.output.tree import DOMAINS
from knoc.tools import diff as changes

MACHINE = ("sarif", "junit", "github")  # formats that carry the breaking changes as findings


def diff(config: Config, base: str | None, *, fmt: str, gate: bool, use_cache: bool) -> Outcome:
    head = compile_cached(config, use_cache)
    diags = head.report.sorted()
    if not head.ok:
        return Outcome("knoc diff", diags, head.inputs, "not compared: fix the work tree first")
    try:
        ref = base or git.default_base(config.root)
        label = git.describe(config.root, ref)
        with git.checkout(config.root, ref) as old_root:
            old = compile_repo(load_config(old_root, config.a2a))
    except (git.GitError, ValueError) as exc:
        said = str(exc)
        unknown = base is not None and any(s in said for s in ("unknown revision", "Needed a single revision"))
        what = (f"`{base}` is not a branch, tag or commit git knows" if unknown
                else (said.splitlines() or ["git failed"])[0].removeprefix("fatal: "))
        raise UsageError("KNO-GIT", what, "pass --base with a branch, tag or commit (`git log --oneline` lists "
                         "commits)") from None
    found = changes.compare(publication(old, config.a2a), publication(head, config.a2a))
    counts = changes.count(found)
    answer = None
    if fmt in ("text", "markdown"):
        answer = changes.markdown(found, label, "work tree", config.a2a)
    elif fmt == "json":
        answer = json.dumps({"base": label, "head": "work tree", "a2a_target": config.a2a, "counts": counts,
                             "changes": [c.to_dict() for c in found]}, indent=2, ensure_ascii=False) + "\n"
    findings = [diag("KNO-CARD-BREAKING", f"{c.subject} `{c.name}`: {c.message}",
                     file=head.agents.get(c.name) if c.subject == "agent" else None,
                     hint="keep it, or bump the agent's major version and tell its clients")
                for c in found if c.cls == "breaking"]
    if gate:  # --fail-on breaking: a breaking change is an error
        findings = [dataclasses.replace(d, severity=Severity.ERROR) for d in findings]
    summary = (f"{counts['breaking']} breaking, {counts['additive']} additive, {counts['cosmetic']} cosmetic "
               f"since {label}")
    return Outcome("knoc diff", diags + findings if fmt in MACHINE else diags, head.inputs, summary,
                   answer=answer, report_format="text" if fmt in ("markdown", "json") else None,
                   failed=gate and counts["breaking"] > 0)


def publication(result: Result, target: str) -> changes.Publication:
    return changes.Publication({c.slug: json.loads(c.projection.body) for c in result.cards},
                               json.loads(result.files[DOMAINS])["domains"], target)
