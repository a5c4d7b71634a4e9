"""The compiler: load -> specs -> validate -> resolve -> project -> render.

Pure up to `render`: it returns the files a build would write and what was
found. Writing is the caller's choice (build writes, validate does not)."""

from __future__ import annotations

from dataclasses import dataclass, field

from knoc.config import Config
from knoc.diagnostics import Report
from knoc.emit import render
from knoc.load import discover, load_all
from knoc.project import Card, project_all
from knoc.resolve import Repo, resolve
from knoc.specs import compile_specs
from knoc.validate import validate_all


@dataclass
class Result:
    report: Report
    entities: int = 0
    cards: list[Card] = field(default_factory=list)
    repo: Repo = field(default_factory=Repo)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.report.errors == 0


def compile_repo(config: Config) -> Result:
    report = Report()
    paths = discover(config.root, [config.specs, config.content])
    entities, found = load_all(config.root, paths)
    report.extend(found)
    specs, found = compile_specs(entities)
    report.extend(found)
    typed, found = validate_all(entities, specs)
    report.extend(found)
    repo, found = resolve(typed)
    report.extend(found)
    cards, found = project_all(repo.agents, config.a2a)
    report.extend(found)
    result = Result(report, entities=len(paths), cards=cards, repo=repo)
    if result.ok:
        result.files = render(repo, cards, entities, config.a2a)
    return result
