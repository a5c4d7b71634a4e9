"""Run `knoc specs check`'s engine over the history of the example repo's
specs (which are knoc's built-in specs): each commit that changed a spec
against the commit before it, on the content of the older commit.
Prints the Markdown table docs/concepts/spec-versioning.md holds.

    .venv/bin/python bench/spec_history.py
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
from pathlib import Path
from typing import Any

from knoc.config import load_config
from knoc.evolution import report
from knoc.evolution.verdict import compare_sets
from knoc.incremental.driver import entities, spec_set
from knoc.io import git
from knoc.kinds.spec import Spec

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    config = load_config(ROOT)
    commits = subprocess.run(["git", "-C", str(ROOT), "log", "--reverse", "--format=%h", "--", "specs"],
                             capture_output=True, text=True, check=True).stdout.split()
    print("| spec | versions | commits | bump | verdict | what knoc says |")
    print("|---|---|---|---|---|---|")
    for older, newer in itertools.pairwise(commits):
        with git.checkout(ROOT, older, only=("specs", "content")) as a, \
                git.checkout(ROOT, newer, only=("specs",)) as b:
            before = dataclasses.replace(config, root=a)
            old, new = spec_set(before)[0], spec_set(dataclasses.replace(config, root=b))[0]
            documents = [e.data for e in entities(before)]

            def of(spec: Spec, held: list[dict[str, Any]] = documents) -> list[dict[str, Any]]:
                return [d for d in held if d.get("$schema") in spec.accepts]

            for change in compare_sets(old, new, of):
                if change.cls == "none" and change.old_version == change.new_version:
                    continue
                said = report.diagnostics(change, older)
                codes = ", ".join(sorted({d.code for d in said})) or "nothing"
                print(f"| `{change.slug}` | {change.old_version or 'new'} → {change.new_version or 'gone'} | "
                      f"{older} → {newer} | {change.bump if change.old and change.new else ''} | "
                      f"{change.cls} | {codes} |")
                for d in said:
                    print(f"|  |  |  |  |  | {d.code}: {d.message.replace('|', '&#124;')} |")


if __name__ == "__main__":
    main()
