"""The extension kind (seed 003): an extension entity (`content/extensions/
*.kno`) says what an extension URI means and which params its card entries
take. In the link stage every card's `capabilities.extensions` entries are
checked against them, from facts and projection summaries only."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from knoc.a2a.extensions import CONTRACT_URI, SERVICE_CLASS_URI, SERVICE_CLASSES
from knoc.a2a.wire import ContractParams
from knoc.diagnostics import Diagnostic, JsonPath, at, json_path
from knoc.io.native import jsonschema_rs
from knoc.kinds import schema_size
from knoc.kinds.agent import Agent, Projection
from knoc.kinds.entity import Typed, is_public
from knoc.kinds.schema import compile_schema, first_error
from knoc.rules.jsontext import strings
from knoc.rules.masking import credential_shown, holds_credential
from knoc.rules.paths import credential_in, origin, path_segments, shown_url, split_url, unportable

FACT_KEYS = ("uri", "evolution", "required", "depends_on", "params_schema")
PAGE_KEYS = ("title", "description")  # what its page shows besides the facts

# A version segment in a URI path: /v1, /v2.1, /1.0.0 (seed 003: URIs carry one).
VERSION_SEGMENT = re.compile(r"/v?\d+(\.\d+)*(/|$)")


@dataclass
class Extension:
    """An extension, as the contract reads it: an entity of the repo, or one
    knoc defines itself."""

    uri: str
    source: str  # where it is defined, for messages
    required: bool
    depends_on: list[str]
    params: jsonschema_rs.Validator  # the compiled params_schema
    properties: set[str] | None  # names params_schema defines; None: it allows any

    @classmethod
    def of(cls, uri: str, source: str, data: Mapping[str, object]) -> Extension:
        schema = data.get("params_schema")
        schema = schema if isinstance(schema, dict) else {}
        props = schema.get("properties")
        # Unknown params are worth a warning only where the schema lets them through.
        names = set(props) if isinstance(props, dict) and schema.get("additionalProperties", True) else None
        depends_on = data.get("depends_on")  # a list of URIs, in a valid entity
        return cls(uri, source, data.get("required") is True,
                   [d for d in depends_on if isinstance(d, str)] if isinstance(depends_on, list) else [],
                   compile_schema(schema), names)


@cache
def builtin() -> dict[str, Extension]:
    """The extensions knoc generates entries for, so it knows them without
    an entity (the README documents them); a repo's own entity for the same
    URI wins."""
    service_class = {"type": "object", "required": ["class"],
                     "properties": {"class": {"enum": list(SERVICE_CLASSES)}}}
    return {
        SERVICE_CLASS_URI: Extension.of(SERVICE_CLASS_URI, "knoc's definition of service-class",
                                        {"params_schema": service_class}),
        CONTRACT_URI: Extension.of(CONTRACT_URI, "knoc's capability-contract extension (see the README)",
                                   {"params_schema": ContractParams.model_json_schema(by_alias=True)}),
    }


def registry(typed: list[Typed]) -> tuple[dict[str, Extension], list[Diagnostic]]:
    """Known extensions by URI; a URI declared twice, or a versioned one
    without a version, is reported."""
    known: dict[str, Extension] = {}
    diags: list[Diagnostic] = []
    for t in sorted((t for t in typed if t.type == "extension" and t.valid), key=lambda t: t.entity.source.rel):
        schema = t.data.get("params_schema")
        if not isinstance(schema, dict) or not jsonschema_rs.meta.is_valid(schema):
            diags.append(at(t.source, ("params_schema",), "KNO-EXT-SCHEMA",
                            "`params_schema` is not a valid JSON Schema",
                            "write it as JSON Schema draft 2020-12, e.g. `type: object` with `properties`"))
            continue
        unbounded = schema_size.problem(schema, schema_size.resolver({"": schema}))
        if unbounded is not None:
            diags.append(at(t.source, ("params_schema",), "KNO-EXT-SCHEMA",
                            f"`params_schema` cannot be checked in bounded time: {unbounded}", schema_size.HINT))
            continue
        try:
            ext = Extension.of(str(t.data.get("uri")), t.entity.source.rel, t.data)
        except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
            diags.append(at(t.source, ("params_schema",), "KNO-EXT-SCHEMA",
                            f"`params_schema` cannot be compiled: {str(exc).splitlines()[0]}",
                            "it may refer only inside itself (`#/...`): knoc never fetches a schema; patterns "
                            "may not use lookaround or back-references"))
            continue
        if ext.uri in known:
            diags.append(at(t.source, ("uri",), "KNO-EXT-DUPLICATE",
                            f"extension `{ext.uri}` is already declared by {known[ext.uri].source}",
                            "one entity per extension URI: remove or rename one"))
            continue
        known[ext.uri] = ext
        if is_public(t):
            diags += [*_credentials(t), *_unportable_page(t)]
        if t.data.get("evolution") == "versioned" and not VERSION_SEGMENT.search(_path_of(ext.uri)):
            diags.append(at(t.source, ("uri",), "KNO-EXT-UNVERSIONED",
                            f"`{ext.uri}` is a versioned extension but its URI carries no version",
                            "end the URI with a version segment such as /v1 (a breaking change mints "
                            "a new URI), or declare `evolution: additive`"))
    return {**builtin(), **known}, diags


def _path_of(uri: str) -> str:
    """A URI without its scheme, query and fragment: where a version segment is."""
    return re.split(r"[?#]", uri.split("://", 1)[-1], maxsplit=1)[0]


def _unportable_page(t: Typed) -> list[Diagnostic]:
    """The page's folder, from its uri, as a card's is held to (KNO-PROJECT-URL-PORTABLE)."""
    parts = split_url(t.data.get("uri"))
    if parts is None or parts.scheme not in ("http", "https"):
        return []
    why = next((w for s in [origin(parts) or "", *path_segments(parts.path)] if (w := unportable(s))), None)
    return [] if why is None else [at(t.source, ("uri",), "KNO-PROJECT-URL-PORTABLE", f"the extension's page goes in "
                                      f"a folder Windows cannot name: {why}, so a clone of the repo on Windows cannot "
                                      "check out its build", "if the repo is cloned on Windows, give the extension a "
                                      "uri without it; if not, accept the code in knoc.toml's [accept]")]


def _credentials(t: Typed) -> list[Diagnostic]:
    """A credential a public extension's page would publish: in its uri or
    a uri it depends on (a user name, a password, a key or token
    parameter), or in its title, description or params_schema (in a url
    written there, or bare: `Bearer <token>`)."""
    if not t.entity.source.may_hold_credentials():  # most extensions: nothing to look for
        return []
    depends_on = t.data.get("depends_on")
    urls = [(("uri",), t.data.get("uri")),
            *((("depends_on", i), d) for i, d in enumerate(depends_on if isinstance(depends_on, list) else []))]
    found = []
    for path, url in urls:
        if not isinstance(url, str):
            continue
        if (why := credential_in(url)) is not None:
            found.append(at(t.source, path, "KNO-EXT-CREDENTIALS", f"`{shown_url(url)}` {why}, which the "
                            "extension's page would publish", "give the uri without it; clients bring their own "
                            "credentials"))
    texts = [(("title",), t.data.get("title")), (("description",), t.data.get("description")),
             *strings(t.data.get("params_schema"), ("params_schema",))]
    for path, text in texts:
        if isinstance(text, str) and holds_credential(text):
            found.append(at(t.source, path, "KNO-EXT-CREDENTIALS", f"`{json_path(path).removeprefix('$.')}` "
                            f"holds a credential (`{credential_shown(text)}`), which the "
                            "extension's page would publish", "remove it (a url can go without it)"))
    return found


def check_cards(cards: Iterable[tuple[Agent, Projection]], known: dict[str, Extension]) -> list[Diagnostic]:
    """Every capabilities.extensions entry of every published card."""
    diags: list[Diagnostic] = []
    for agent, projection in cards:
        declared = {uri for uri, *_ in projection.extensions}
        seen: set[str] = set()
        for uri, required, params, path, generated in projection.extensions:
            if uri in seen:
                diags.append(at(agent.typed.source, (*path, "uri"), "KNO-EXT-DUPLICATE",
                                f"extension `{uri}` is declared twice on this card",
                                "keep one entry per URI"))
                continue
            seen.add(uri)
            ext = known.get(uri)
            if ext is None:
                diags.append(at(agent.typed.source, path if generated else (*path, "uri"), "KNO-EXT-UNKNOWN",
                                f"extension `{uri}` is not declared by any extension entity",
                                "add content/extensions/<name>.kno with its uri and params_schema, "
                                "or check the URI for a typo"))
                continue
            diags += _params(agent.typed, path if generated else (*path, "params"), ext, params)
            if ext.required and not required:  # its page says required; the card, optional
                diags.append(at(agent.typed.source, path if generated else (*path, "required"), "KNO-EXT-REQUIRED",
                                f"extension `{uri}` says a client must activate it (`required: true`, as its page "
                                "says), but this entry" + (", which knoc writes," if generated else "") + " does "
                                "not: every client reads it as optional here",
                                "make the extension optional in its entity" if generated else
                                "add `required: true` to the entry, or make the extension optional in its entity"))
            if required or ext.required:
                for dep in ext.depends_on:
                    if dep not in declared:
                        diags.append(at(agent.typed.source, path, "KNO-EXT-DEPENDENCY",
                                        f"required extension `{uri}` depends on `{dep}`, "
                                        "which this card does not declare",
                                        f"add `{dep}` to capabilities.extensions"))
    return diags


def _params(t: Typed, where: JsonPath, ext: Extension, params: object) -> list[Diagnostic]:
    value = {} if params is None else params
    if (e := first_error(ext.params, value)) is not None:
        return [at(t.source, where, "KNO-EXT-PARAMS", f"params of `{ext.uri}` do not fit its params_schema: "
                   f"{e.message} (at `{'/'.join(map(str, e.instance_path)) or 'params'}`)",
                   f"see {ext.source} for what the extension accepts")]
    if ext.properties is not None and isinstance(value, dict):
        unknown = sorted(set(value) - ext.properties)
        if unknown:
            return [at(t.source, where, "KNO-EXT-PARAMS-UNKNOWN",
                       f"params of `{ext.uri}` name {', '.join(f'`{u}`' for u in unknown)}, "
                       "which its params_schema does not define",
                       "clients ignore unknown params (forward compatibility); "
                       "add them to the extension's params_schema or remove them")]
    return []
