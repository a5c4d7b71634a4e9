"""The command reference, made from the commands themselves (click): each
command's usage, what it does and its options, as Markdown. `python -m
knoc.cli.reference > docs/cli.md` writes it; a test holds the file to it."""

from __future__ import annotations

import inspect

import click

from knoc.cli import main


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
    out = ["# Command reference", "", "Made from the commands themselves (`python -m knoc.cli.reference`): what",
           "`knoc COMMAND --help` prints, for every command.", ""]
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


if __name__ == "__main__":
    click.echo(markdown(), nl=False)
