"""`knoc import`: an A2A Agent Card from the wild (any version from 0.1 to
1.0, or a mix) as the `a2a_projection` of a new agent blueprint.

Forgiving where the meaning is clear, and it says so: every field dropped or
converted is a `Change` with its JSON path. Refusing where it is not: a JSON
file without a name, a service url or a skill is not an agent card
(`NotACard`). What it keeps is shaped so the blueprint builds into a card
that passes the official checks."""

from __future__ import annotations

import dataclasses
import json
import re
from urllib.parse import urljoin, urlsplit

from knoc.a2a import signing
from knoc.a2a.fields import DEFAULT_TRANSPORT
from knoc.diagnostics import Diagnostic, diag
from knoc.diagnostics.source import SourceFile
from knoc.features import keysets
from knoc.features.importing.card_fields import (
    CONVERTERS,
    DEFAULT_VERSION,
    LEGACY_FIELDS,
    MODES,
    RENAMED,
    WHY_DROPPED,
    extended_card,
    extensions,
    json_kind,
    links,
    modes,
    text_field,
    version_field,
    whole_agent_skill,
)
from knoc.features.importing.card_names import camel
from knoc.features.importing.card_security import security
from knoc.features.importing.card_service import service
from knoc.features.importing.imported import (
    URL,
    Imported,
    NoServiceUrl,
    NotACard,
    list_of,
    member,
    no_credentials,
    unmendable,
)
from knoc.kinds.agent import BLUEPRINT_SCHEMA
from knoc.output.hosting import locate_url
from knoc.rules import jsontext, limits
from knoc.rules import slug as slugs
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.masking import masked
from knoc.rules.paths import shown_url, without_userinfo
from knoc.rules.version import is_semver

# A JSON object with a name and one of these is an agent card (the official
# SDK's loader reads almost any object: it checks types, not meaning).
CARD_FIELDS = {"skills", "capabilities", "supportedInterfaces", "additionalInterfaces", "preferredTransport",
               "protocolVersion", "defaultInputModes", "defaultOutputModes", "securitySchemes"}


def convert(raw: JsonValue, base_url: str | None = None) -> Imported:
    """The card as a blueprint's `a2a_projection`. `base_url`: the agent's
    service url when the card names none (`--url`, or where it was fetched)."""
    if not isinstance(raw, dict):
        raise NotACard(f"the JSON is {json_kind(raw)}, not an object: an Agent Card is a JSON object")
    out = Imported({})
    raw = camel(raw, out)  # proto field names (snake_case) read as the SDKs read them
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise NotACard("it has no `name`: every A2A Agent Card has one")
    if not {k for k in CARD_FIELDS if k in raw and (k != "capabilities" or isinstance(raw[k], dict))}:
        raise NotACard(f"it has none of the fields only agent cards have ({', '.join(sorted(CARD_FIELDS))}; "
                       "`capabilities` as A2A's map of flags)")
    out.card["name"] = name
    found = service(raw, out, base_url)
    if found is None:
        if any(k in raw for k in ("url", "supportedInterfaces", "additionalInterfaces")):
            raise NoServiceUrl(f"none of its interfaces is at a url a card can be published under ({_why_not(raw)}); "
                               "give the agent's url with `--url`")
        raise NotACard("it names no A2A service url (`url`, `supportedInterfaces` or `additionalInterfaces`); "
                       "give the agent's url with `--url`")
    text_field(raw, out, "description", fallback=name)
    out.card["url"] = found.url
    out.card["protocol_versions"] = found.versions  # as the card states them: every target claims these
    version_field(raw, out)
    for key in ("provider", *RENAMED, "capabilities", "authentication", "securitySchemes", "skills"):
        if key in raw:
            CONVERTERS[key](raw, out)
    links(out, base_url)
    modes(raw, out)
    extended_card(raw, out)
    if found.transport != DEFAULT_TRANSPORT:
        out.card["preferred_transport"] = found.transport
    if found.others:
        out.card["additional_interfaces"] = found.others
    extensions(raw, out)
    security(raw, out)
    if not out.card.get("skills"):
        whole_agent_skill(out)
    known = {"name", "description", "url", "version", "provider", "capabilities", "authentication",
             "securitySchemes", "security", "securityRequirements", "skills", "extensions", "preferredTransport",
             "supportedInterfaces", "additionalInterfaces", "signatures", *RENAMED, *MODES, *LEGACY_FIELDS}
    for key in raw:
        if key not in known:
            out.drop(member("$", key), WHY_DROPPED.get(key, "not a field of any A2A version"))
    no_credentials(raw, out)
    return out


def base_of(source: str) -> str:
    """Where a card fetched from `source` is served from: the url before its
    well-known path, the folder of a `.json` file, else the url itself."""
    head, well_known, _ = source.partition("/.well-known/")
    if well_known:
        return head
    if urlsplit(source).path.endswith(".json"):
        return urljoin(source, ".").rstrip("/")
    return source


def load(source: str, label: str, base_url: str | None = None,
         allow_jku: bool = False) -> tuple[Imported | None, list[Diagnostic]]:
    """One card file or URL, converted; its findings are located at `label`.
    A card fetched from a URL without a service url of its own answers at
    that URL's base, unless `base_url` says otherwise. Its signatures are
    checked when `allow_jku` lets knoc fetch the key sets they name."""
    try:
        body = keysets.read_card(source)
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [diag("KNO-IMPORT-READ", f"cannot read it: {why}", file=label,
                            hint="check the path or URL; a URL without .json gets /.well-known/agent-card.json")]
    try:  # the card becomes a source, which may nest only so deep (the blueprint adds a level)
        raw = jsontext.parse_value(body, depth=limits.NESTING_DEPTH - 1)
    except jsontext.Refused as exc:
        return None, [diag("KNO-IMPORT-READ", f"cannot import it: {exc}", file=label,
                            hint="an Agent Card is a JSON object that A2A clients can read")]
    if base_url is None and keysets.is_url(source):
        base_url = without_userinfo(base_of(source))  # what fetched it is not where clients call
    try:
        imported = convert(raw, base_url)
    except NotACard as exc:
        lead = "cannot import this card" if isinstance(exc, NoServiceUrl) else "not an A2A Agent Card"
        return None, [diag("KNO-IMPORT-NOT-CARD", f"{lead}: {exc}", file=label,
                            hint="nothing was written for it")]
    # Where each change is written, as the YAML composer places it (JSON is YAML, but for a key of
    # over 1,024 characters, which libyaml refuses: then the findings say no place).
    written = SourceFile(label, label, body.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    found = [diag("KNO-IMPORT-CHANGED", f"{c.path}: {c.message}", file=label, span=written.find(_parts(c.path)),
                  json_path=c.path, hint="review the blueprint") for c in imported.changes]
    if isinstance(raw, dict) and raw.get("signatures"):  # `convert` took it: an object
        signed = _signatures(raw, source, label, allow_jku)
        found.append(dataclasses.replace(signed, span=written.find(["signatures"])))
    return imported, found


def _why_not(raw: JsonObject) -> str:
    """Why the card's first url cannot be where a card is published."""
    urls = [raw.get("url"), *(i.get("url") for key in ("supportedInterfaces", "additionalInterfaces")
                              for i in list_of(raw.get(key)) if isinstance(i, dict))]
    first = next((u for u in urls if isinstance(u, str)), None)
    if first is None:
        return "it states no url"
    why = ("its credential (in its path) cannot be taken out of it" if unmendable(first) else locate_url(first)
           if URL.match(first) else "it is not an http(s) url without query or fragment")
    return (f"`{masked(shown_url(first), named=True)}`: {why}" if isinstance(why, str)
            else "an http(s) url without query or fragment")


def _parts(path: str) -> list[str | int]:
    """A change's JSON path (`$.skills[0].tags`, `$.securitySchemes["a b"]`)
    as keys and indexes."""
    return [int(index) if index else json.loads(quoted) if quoted else key
            for key, index, quoted in _PART.findall(path)]


_PART = re.compile(r'\.([^.\[]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _signatures(raw: JsonObject, source: str, label: str, allow_jku: bool) -> Diagnostic:
    """Whether the original card's signatures verified for every client
    that reads it: they cover its own bytes, so the blueprint never
    carries them."""
    count = len(raw["signatures"]) if isinstance(raw["signatures"], list) else 0
    kept_out = "the blueprint leaves them out (they cover the original card); sign the built one instead"
    if not allow_jku:
        return diag("KNO-IMPORT-SIGNATURE", f"the card carries {count} signature(s), not checked; {kept_out}",
                    file=label, json_path="$.signatures",
                    hint="`--allow-jku` fetches the key sets they name, or run `knoc verify` with `--jwks`")
    home = keysets.home(source, raw)
    try:
        named = keysets.named_by(raw["signatures"], {home} if home else set())
    except keysets.Unreadable as exc:
        verdict = f"its key set could not be read ({exc})"
    else:
        checked = signing.verify(raw, named.keys)
        refused = [f"{signing.shown(jku)}: {why}" for jku, why in named.refused.items()]
        if checked.valid:
            kids = sorted({signing.shown(c.kid) for c in checked.checks if c.covers})
            verdict = f"its signatures verify for every client that reads it (keys {', '.join(kids)})"
        else:
            problems = [c.problem for c in checked.checks if c.problem] + refused
            verdict = (f"its signatures do not verify for {', '.join(v.reader for v in checked.uncovered)}"
                       + (f" ({problems[0]})" if problems else ""))
    return diag("KNO-IMPORT-SIGNATURE", f"{verdict}; {kept_out}", file=label, json_path="$.signatures",
                hint="review who published the original before trusting what it says")


def unique_slug(name: str, taken: set[str]) -> str:
    """The slug of a card's name, numbered past the ones in `taken`."""
    base = slugs.slugify(name) or "agent"
    return next(s for n in range(1, len(taken) + 2) if (s := base if n == 1 else f"{base}-{n}") not in taken)


def blueprint(imported: Imported, slug: str, id_: str, source: str, date: str) -> str:
    """The blueprint's YAML: the envelope, then the card as `a2a_projection`."""
    from knoc.features.authoring import dump, yaml_rt

    data: dict[str, object] = {
        "$schema": BLUEPRINT_SCHEMA,
        "id": id_,
        "slug": slug,
        "type": "agent-blueprint",
        "version": imported.card["version"] if is_semver(imported.card["version"]) else DEFAULT_VERSION,
        **({"visibility": "private"} if imported.private else {}),  # never published as open (`requirements`)
        "title": imported.card["name"],
        "provenance": {"origin": {"id": masked(source), "timestamp": date, "tool": "knoc import"}},  # committed
    }
    if imported.service_class:
        data["service_class"] = imported.service_class
    data["ownership"] = {"context": "platform"}
    data["a2a_projection"] = imported.card
    shown = masked(source if source.isprintable() else json.dumps(source))  # one plain line of text, no password
    head = (f"# Imported by `knoc import` from {shown}.\n"
            "# Review it: knoc kept what A2A defines and said what it changed.\n")
    return head + dump(yaml_rt(), data)
