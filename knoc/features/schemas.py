"""Each entity type's JSON Schema as an editor reads it (`knoc schemas`):
one self-contained file per `type@version` a spec accepts, every `kno://`
reference bundled into its `$defs`, the spec's descriptions and examples
kept for hovers. yaml-language-server (VS Code's YAML extension, Neovim,
Helix) then completes field names and enum values and marks a wrong type
at its line while the author types."""

from __future__ import annotations

import json
from collections.abc import Iterator

from knoc.kinds.spec import SPEC_URI, Spec, SpecSet, nodes
from knoc.rules.json import JsonObject, JsonValue

DRAFT = "https://json-schema.org/draft/2020-12/schema"
FOLDER = "schemas"  # where `knoc init` and `knoc schemas` put them, in the repo
_RESOURCE = ("$schema", "$id")  # what makes a schema a resource of its own, dropped where a bundle holds it
SUFFIX = ".schema.json"
# The folder under content/ where each type's entities are kept, by
# convention (`knoc init`, `knoc new`): what an editor's settings map to a
# schema. Not content/agents/: legacy agents there are of two types.
FOLDER_TYPES = {"agent-blueprints": "agent-blueprint", "perception-domains": "perception-domain",
                "extensions": "extension"}


def file_name(declaration: str) -> str:
    """`agent-blueprint@0.4.0` -> `agent-blueprint@0.4.0.schema.json`."""
    return declaration + SUFFIX


def export(specs: SpecSet) -> dict[str, bytes]:
    """Every declaration's bundled schema, by file name, as written."""
    return {file_name(decl): _dumps(bundle(decl, spec, specs))
            for decl, spec in sorted(specs.by_declaration.items())}


def latest(specs: SpecSet) -> dict[str, str]:
    """Each type's newest declaration (`type@version`), by type."""
    return {t: f"{t}@{specs.versions_of(t)[-1]}" for t in specs.types}


def modeline(schema: str) -> str:
    """The comment that points yaml-language-server at `schema` (a path
    relative to the file it heads)."""
    return f"# yaml-language-server: $schema={schema}"


def vscode_files(specs: SpecSet, schemas_dir: str, content: str) -> dict[str, bytes]:
    """`.vscode/settings.json` (`.kno` files read as YAML, each content
    folder's entities checked against its type's newest schema by the YAML
    extension) and `.vscode/extensions.json` (which recommends it)."""
    newest = latest(specs)
    mapped = {f"./{schemas_dir}/{file_name(newest[t])}": f"/{content}/{folder}/*.kno"
              for folder, t in FOLDER_TYPES.items() if t in newest}
    settings: JsonObject = {"files.associations": {"*.kno": "yaml"}, "yaml.schemas": dict(mapped)}
    extensions: JsonObject = {"recommendations": ["redhat.vscode-yaml"]}
    return {".vscode/settings.json": _dumps(settings), ".vscode/extensions.json": _dumps(extensions)}


def bundle(declaration: str, spec: Spec, specs: SpecSet) -> JsonObject:
    """`spec`'s schema with every spec it refers to (through `kno://specs/`
    references, however deep) under `$defs`, and each reference rewritten
    to point there: a file that needs no other."""
    keys = _included(spec, specs)
    root = _rewritten(spec.schema, spec.slug, spec.slug, keys)
    assert isinstance(root, dict)
    defs = root.get("$defs")
    defs = dict(defs) if isinstance(defs, dict) else {}
    for slug, key in keys.items():  # each a subschema now: no longer a resource with its own `$id`
        embedded = _rewritten(specs.specs[slug].schema, slug, spec.slug, keys)
        assert isinstance(embedded, dict)  # a spec's schema is a mapping
        defs[key] = {k: v for k, v in embedded.items() if k not in _RESOURCE}
    purpose = spec.entity.data.get("purpose")
    head: JsonObject = {"$schema": DRAFT, "title": f"{declaration} ({spec.entity.data.get('title') or spec.slug})"}
    if isinstance(purpose, str):
        head["description"] = purpose.strip()
    body = {k: v for k, v in root.items() if k not in (*_RESOURCE, "$defs")}
    return {**head, **body, **({"$defs": defs} if defs else {})}


def _included(spec: Spec, specs: SpecSet) -> dict[str, str]:
    """The slugs of the other specs `spec` reaches, each with its key under `$defs`."""
    own = spec.schema.get("$defs")
    taken = set(own) if isinstance(own, dict) else set()
    keys: dict[str, str] = {}
    pending = [spec.slug]
    while pending:
        for slug in _referenced(specs.specs[pending.pop()].schema):
            if slug == spec.slug or slug in keys or slug not in specs.specs:
                continue
            key = f"kno-{slug}"
            while key in taken:
                key += "_"
            taken.add(key)
            keys[slug] = key
            pending.append(slug)
    return dict(sorted(keys.items()))


def _referenced(node: JsonValue) -> Iterator[str]:
    for ref in _refs(node):
        if ref.startswith(SPEC_URI):
            yield ref[len(SPEC_URI):].partition("#")[0]


def _refs(node: JsonValue) -> Iterator[str]:
    return (ref for n in nodes(node) if isinstance(n, dict) and isinstance(ref := n.get("$ref"), str))


def _rewritten(node: JsonValue, here: str, root: str, keys: dict[str, str]) -> JsonValue:
    """`node` (inside spec `here`) with its references made local to the bundle of `root`."""
    if isinstance(node, list):
        return [_rewritten(v, here, root, keys) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _rewritten(v, here, root, keys) for k, v in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = ref[len(SPEC_URI):] if ref.startswith(SPEC_URI) else here + ref if ref.startswith("#") else ref
        slug, _, fragment = target.partition("#")
        if fragment and not fragment.startswith("/"):  # an anchor: left as the spec wrote it
            pass
        elif slug == root:
            out["$ref"] = f"#{fragment}"
        elif slug in keys:
            out["$ref"] = f"#/$defs/{keys[slug]}{fragment}"
    return out


def _dumps(value: JsonObject) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
