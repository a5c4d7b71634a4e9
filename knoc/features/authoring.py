"""What the commands that write an author's sources share (`knoc new`,
`knoc import`, `knoc migrate`): YAML that keeps comments and key order, and
the skeletons `knoc new` writes. Fresh ids are `knoc.rules.ulid`; writes
that never replace a file are `knoc.io.files.write_in`."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

from knoc.kinds.agent import BLUEPRINT_SCHEMA, PLACEHOLDERS
from knoc.rules import ulid
from knoc.yaml.yaml12 import ODD_BREAKS

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import ScalarNode
    from ruamel.yaml.representer import RoundTripRepresenter


def yaml_rt() -> YAML:
    """ruamel's round-trip YAML, indented the way the example repo is."""
    from ruamel.yaml import YAML  # the round-trip loader is slow to build: only these commands use it

    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    yaml.preserve_quotes = True
    yaml.representer.add_representer(str, _text)
    return yaml


def _text(representer: RoundTripRepresenter, value: str) -> ScalarNode:
    """A string as ruamel writes it, but double-quoted (so escaped) when it
    holds a line break YAML 1.1 and 1.2 disagree on (`ODD_BREAKS`): ruamel
    would write it raw, in single quotes, which knoc then refuses."""
    if any(c in value for c in ODD_BREAKS):
        return representer.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    node: ScalarNode = representer.represent_str(value)
    return node


def dump(yaml: YAML, data: object) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def blueprint_skeleton(slug: str, title: str, url: str, id_: str | None = None, *, public: bool = False,
                       domain: str | None = None, description: str | None = None, skill: str | None = None,
                       skill_description: str | None = None, versions: tuple[str, ...] = ("1.0",)) -> str:
    """A blueprint: a private skeleton for `knoc new agent`, or with the
    keyword arguments a public agent ready to build (`knoc init`). Its url
    states `versions` (the repo's build target's: what it publishes)."""
    return _render("blueprint.kno.j2", schema=BLUEPRINT_SCHEMA, slug=slug, id=id_ or ulid.new(), title=title,
                   url=url, public=public, versions=json.dumps(list(versions)),
                   domain=domain, description=description or PLACEHOLDERS["description"],
                   skill=skill or PLACEHOLDERS["skill_name"],
                   skill_description=skill_description or PLACEHOLDERS["skill_description"])


def domain_skeleton(slug: str, title: str, purpose: str = "What this domain covers, in one sentence.") -> str:
    return _render("domain.kno.j2", slug=slug, id=ulid.new(), title=title, purpose=purpose)


def extension_skeleton(slug: str, title: str, uri: str) -> str:
    return _render("extension.kno.j2", slug=slug, id=ulid.new(), title=title, uri=uri)


def config_file() -> str:
    return _render("knoc.toml.j2")


def title_of(slug: str) -> str:
    """A title from a slug: `night-watch` -> `Night Watch`."""
    return slug.replace("-", " ").title()


def _render(template: str, **values: object) -> str:
    from knoc.output import templates

    return templates.get(template).render(**values)
