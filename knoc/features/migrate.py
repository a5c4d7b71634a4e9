"""`knoc migrate`: a legacy agent (agent-card@0.x, or service-config@0.3.0
with `subtype: agent-card`) rewritten as an agent blueprint (the newest
agent-blueprint schema version).

The card fields move under `a2a_projection`, the persona blocks under
`persona`; every node moves whole in ruamel's round-trip tree, so comments
and key order come along. The card it builds is the same card: the CLI
compiles a scratch copy before writing anything and refuses otherwise."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from knoc.config import CONFIG_FILE, Config, load_config
from knoc.incremental.driver import Result, compile_repo
from knoc.io import files, writing
from knoc.kinds.agent import BLUEPRINT_SCHEMA
from knoc.output.tree import MANIFEST
from knoc.rules.slug import is_slug

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

BLUEPRINT = BLUEPRINT_SCHEMA
BLUEPRINTS = "agent-blueprints"  # the collection under content/
LEGACY = "agents"
# agent-card-schema `$defs/card` properties (a test holds this equal to the spec).
CARD_KEYS = ("name", "description", "url", "version", "documentation_url", "icon_url", "provider",
             "capabilities", "authentication", "security_schemes", "security", "preferred_transport",
             "additional_interfaces", "protocol_versions", "min_protocol_version", "max_protocol_version",
             "default_input_modes", "default_output_modes", "skills")
PERSONA_KEYS = ("perception", "goals", "boundaries")
DROPPED = ("subtype", "type")  # the legacy binding; the blueprint states its own type


class NotLegacy(Exception):
    """The file is not a legacy agent."""


@dataclass(frozen=True)
class Migration:
    source: str  # repo-relative legacy file
    target: str  # repo-relative blueprint
    declared: str  # the legacy `$schema`
    text: str  # the blueprint
    chose_versions: bool = False  # the legacy file stated no protocol versions (of the card or an interface)


def legacy_declaration(data: object) -> str:
    """The `$schema` of a legacy agent; NotLegacy otherwise."""
    fields: Mapping[object, object] = data if isinstance(data, Mapping) else {}
    decl = fields.get("$schema")
    if isinstance(decl, str) and (decl.startswith("agent-card@0.")
                                  or (decl == "service-config@0.3.0" and fields.get("subtype") == "agent-card")):
        return decl
    raise NotLegacy(f"`$schema: {decl}` is not a legacy agent (agent-card@0.x, or service-config@0.3.0 "
                    "with subtype agent-card)")


def to_blueprint(data: CommentedMap, source: str, today: datetime.date,
                 versions: tuple[str, ...] = ("1.0",)) -> CommentedMap:
    """The blueprint tree for a legacy tree (ruamel CommentedMap), built from
    the legacy nodes themselves. `versions`: what the build target wrote
    for an interface that states none (the url: all; another: the first),
    written out, since a blueprint that states none means A2A 1.0 under
    every target."""
    from ruamel.yaml.comments import CommentedMap

    decl = legacy_declaration(data)
    out, card, persona = CommentedMap(), CommentedMap(), CommentedMap()
    if data.ca.comment:  # the file's leading comment block
        out.ca.comment = data.ca.comment
    for key in data:
        if key in CARD_KEYS:
            target = card
        elif key in PERSONA_KEYS:
            target = persona
        elif key in DROPPED:
            continue
        else:
            target = out
        target[key] = data[key]
        if key in data.ca.items:
            target.ca.items[key] = data.ca.items[key]
        if key == "$schema":
            out[key] = BLUEPRINT
    out.insert(_after(out, ("slug", "id", "$schema")), "type", "agent-blueprint")
    if "version" in card:  # the legacy `version` is both the entity's and the card's
        out.insert(_after(out, ("type",)), "version", card["version"])
    provenance = out.setdefault("provenance", CommentedMap())
    provenance["migration"] = CommentedMap([
        ("from", f"{decl} ({source})"),
        ("date", today.isoformat()),
        ("note", "knoc migrate: card fields moved under a2a_projection, persona blocks under persona"),
    ])
    if persona:
        out.insert(_before(out, ("ownership", "provenance")), "persona", persona)
    out["a2a_projection"] = card
    if "protocol_versions" not in card:
        card["protocol_versions"] = _versions(versions)
    for iface in card.get("additional_interfaces") or []:
        if hasattr(iface, "setdefault") and "protocol_versions" not in iface:
            iface["protocol_versions"] = _versions(versions[:1])
    return out


def _versions(versions: tuple[str, ...]) -> CommentedSeq:
    """`["1.0", "0.3"]`, as a blueprint writes it."""
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    seq = CommentedSeq(DoubleQuotedScalarString(v) for v in versions)
    seq.fa.set_flow_style()
    return seq


def _after(m: Iterable[str], keys: tuple[str, ...]) -> int:
    names = list(m)
    return next((names.index(k) + 1 for k in keys if k in names), len(names))


def _before(m: Iterable[str], keys: tuple[str, ...]) -> int:
    names = list(m)
    return next((names.index(k) for k in keys if k in names), len(names))


def plan(root: Path, rel: str, content: str, today: datetime.date, versions: tuple[str, ...] = ("1.0",)) -> Migration:
    """The migration of one legacy file (NotLegacy, OSError or a YAML error
    when it is none), loaded and dumped by one round-trip YAML."""
    from knoc.features.authoring import dump, yaml_rt

    yaml = yaml_rt()
    data = yaml.load(files.read_source(str(root / rel), str(root)).decode("utf-8"))
    declared = legacy_declaration(data)
    interfaces = data.get("additional_interfaces")
    chose = "protocol_versions" not in data or (isinstance(interfaces, list) and any(
        hasattr(i, "get") and "protocol_versions" not in i for i in interfaces))
    slug = data.get("slug")  # the new file is named after it, as `knoc new` names one (KNO-SLUG-FILE)
    name = f"{slug}.kno" if isinstance(slug, str) and is_slug(slug) else Path(rel).name
    return Migration(rel, f"{content}/{BLUEPRINTS}/{name}", declared,
                     dump(yaml, to_blueprint(data, rel, today, versions)), chose)


def rehearse(config: Config, migrations: list[Migration]) -> Result:
    """The repo compiled with `migrations` applied, in a scratch copy."""
    with files.scratch_copy(config.root, [config.specs, config.content, CONFIG_FILE]) as scratch:
        for m in migrations:
            writing.remove_in(scratch, m.source)
            writing.write_in(scratch, m.target, m.text.encode("utf-8"))
        return compile_repo(load_config(scratch, config.a2a))


def changed(before: Result, after: Result) -> list[str]:
    """Built files (but the manifest, which lists inputs) that differ."""
    if not after.ok:
        return [d.file or "?" for d in after.report.sorted() if d.is_error][:3]
    names = (set(before.files) | set(after.files)) - {MANIFEST}
    return sorted(n for n in names if before.files.get(n) != after.files.get(n))
