"""What the commands that write an author's sources share (`knoc new`,
`knoc import`, `knoc migrate`): YAML that keeps comments and key order, and
the skeletons `knoc new` writes. Fresh ids are `knoc.rules.ulid`; writes
that never replace a file are `knoc.io.files.write_new`."""

from __future__ import annotations

import io
from typing import Any

from knoc.rules import ulid


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
    from knoc.output import templates

    return templates.get("blueprint.kno.j2").render(slug=slug, id=id_ or ulid.new(), title=title, url=url)
