"""The reference pages of the docs site, made from the code: the command
reference from the commands themselves (click: each command's usage,
what it does and its options), and the pages of knoc.features.reference.pages.
`python -m knoc.cli.reference` (`make reference`) writes them all under
docs/reference/; a test holds the files to what this makes."""

from __future__ import annotations

import inspect
from pathlib import Path

import click

from knoc.app.reference import diagnostic_examples, wire_names
from knoc.cli import main
from knoc.features.reference.fields import entity_types, load_specs
from knoc.features.reference.pages import (
    GENERATED,
    authoring_index,
    authoring_page,
    config_page,
    content_examples,
    diagnostics_page,
    output_page,
)
from knoc.kinds.spec import BUILTIN_SPECS


def commands(group: click.Group = main, prefix: str = "knoc") -> list[tuple[str, click.Command]]:
    """Every command, by its full name (`knoc keys new`), in the group's order."""
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found += commands(command, path)
        else:
            found.append((path, command))
    return found


def options(command: click.Command) -> list[str]:
    """A command's option names (`--sign-key`, `-n`)."""
    return [opt for p in command.params if isinstance(p, click.Option) for opt in (*p.opts, *p.secondary_opts)]


def markdown() -> str:
    out = ["# Command reference", "", GENERATED, "", "What `knoc COMMAND --help` prints, for every command.", ""]
    for path, command in commands():
        ctx = click.Context(command, info_name=path)
        out += [f"## `{path}`", "", "```", command.get_usage(ctx).removeprefix("Usage: "), "```", "",
                inspect.cleandoc(command.help or ""), ""]
        records = [r for p in command.params if isinstance(p, click.Option) and (r := p.get_help_record(ctx))]
        if records:
            out += ["| option | what it does |", "|---|---|"]
            out += [f"| `{_cell(name)}` | {_cell(' '.join(text.split()))} |" for name, text in records]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # one Markdown table cell


def pages(root: Path) -> dict[str, str]:
    """Every generated page, by its path under docs/: made from the code, the
    built-in specs and the example content repo at `root` (its examples)."""
    types = entity_types(load_specs(BUILTIN_SPECS))
    examples = content_examples(root / "content")
    found = {"reference/cli.md": markdown(), "reference/diagnostics.md": diagnostics_page(diagnostic_examples(root)),
             "reference/config.md": config_page(), "reference/output.md": output_page(),
             "reference/authoring/index.md": authoring_index(types)}
    wire = wire_names(root)
    found.update({f"reference/authoring/{t.name}.md": authoring_page(t, examples.get(t.name, {}), wire.get(t.name))
                  for t in types})
    return found


if __name__ == "__main__":
    from knoc.app.reference import write_pages

    here = Path(__file__).resolve().parents[2]
    for rel in write_pages(here / "docs", pages(here)):
        click.echo(f"wrote docs/{rel}")
