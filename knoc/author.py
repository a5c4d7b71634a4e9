"""What the commands that write an author's sources share (`knoc new`,
`knoc import`, `knoc migrate`): fresh ids, YAML that keeps comments and key
order, and writes that never replace a file unless asked to."""

from __future__ import annotations

import io
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class Exists(Exception):
    """The file to write is already there (and --force was not given)."""


def ulid(now_ms: int | None = None) -> str:
    """A ULID: 48 bits of milliseconds since the epoch, then 80 random bits."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | secrets.randbits(80)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def yaml_rt() -> Any:
    """ruamel's round-trip YAML, indented the way the example repo is."""
    from ruamel.yaml import YAML  # the round-trip loader is slow to build: only these commands use it

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    return yaml


def dump(yaml: Any, data: Any) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def blueprint_skeleton(slug: str, title: str, url: str, id_: str | None = None) -> str:
    from knoc import template

    return template.get("blueprint.kno.j2").render(slug=slug, id=id_ or ulid(), title=title, url=url)


def write_new(path: Path, text: str, force: bool = False) -> None:
    """Write `text` to `path`. Without `force` an existing file is never
    touched (the check and the create are one step: O_EXCL). With `force`
    the new text is written aside and renamed over, so a crash leaves either
    file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not force:
        try:
            with open(path, "x", encoding="utf-8", newline="\n") as f:
                f.write(text)
        except FileExistsError:
            raise Exists(str(path)) from None
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
