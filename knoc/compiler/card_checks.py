"""What the projection says about an agent's card without shaping it:
placeholders left in, deprecated capabilities, security schemes no client
can use, the values no signature protects (its interfaces:
knoc.compiler.interface_checks; the 0.3-shaped part:
knoc.compiler.legacy_checks). Each finding points into the agent's entity."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import SplitResult

from knoc.a2a import schemes
from knoc.a2a.capability import DEPRECATED
from knoc.a2a.fields import a2a_binding, named_binding
from knoc.a2a.targets.base import Target
from knoc.a2a.unprotected import unprotected
from knoc.a2a.wire import FLOW_FIELDS
from knoc.diagnostics import Diagnostic, JsonPath, at, json_path
from knoc.kinds.agent import PLACEHOLDERS, Agent
from knoc.rules import jsontext
from knoc.rules.masking import credential_shown, holds_credential
from knoc.rules.paths import (
    credential_in,
    local_host,
    origin,
    shown_url,
    split_url,
    web_link,
)
from knoc.rules.text import hidden_character


def unusable_schemes(agent: Agent, target: Target) -> list[Diagnostic]:
    """An error at each value of a security scheme no client can use (`knoc.a2a.schemes`)."""
    stated = agent.card.get("security_schemes")
    a2a_1_0 = not target.legacy_shaped
    return [card_error(agent, ("security_schemes", name, *path), "KNO-PROJECT-AUTH", message, hint)
            for name, scheme in (stated.items() if isinstance(stated, Mapping) else ())
            if isinstance(scheme, Mapping) for path, message, hint in schemes.unusable(scheme, a2a_1_0)]


def unprotected_values(agent: Agent) -> list[Diagnostic]:
    """The values of the card no signature protects, in one finding a
    signed build reports (`knoc.a2a.unprotected`)."""
    gaps = unprotected(agent.card)
    if not gaps:
        return []
    listed = "; ".join(f"`{json_path((*agent.card_path, *path))}`: {what}" for path, what in gaps)
    return [card_error(agent, gaps[0][0], "KNO-SIGNING-UNPROTECTED",
                       f"a signature cannot protect {len(gaps)} value{'s' if len(gaps) != 1 else ''} of this card "
                       f"that clients read, because the signed form every A2A SDK computes leaves empty values "
                       f"out: a copy without {'them' if len(gaps) != 1 else 'it'} still verifies. {listed}",
                       "give each requirement the scopes it needs where its scheme has scopes; for the rest, "
                       "clients must not take the signature as proof of which authentication is required")]


def unfinished(agent: Agent) -> Iterable[Diagnostic]:
    """Warnings for what a public card should not go out with: a skeleton's
    placeholder text, a url only this machine can reach, plain http."""
    c = agent.card
    fields: list[tuple[JsonPath, object, str]] = [(("description",), c.get("description"), "description")]
    for i, skill in enumerate(c.get("skills") or []):
        if isinstance(skill, dict):
            fields += [(("skills", i, "name"), skill.get("name"), "skill_name"),
                       (("skills", i, "description"), skill.get("description"), "skill_description")]
    for path, value, key in fields:
        if value == PLACEHOLDERS[key]:
            yield card_error(agent, path, "KNO-CARD-PLACEHOLDER", f"`{value}` is the skeleton's placeholder text",
                       "say what the agent really does: clients choose agents by these words")
    url = c.get("url")
    where = split_url(url)
    if where is not None and local_host(where.hostname or ""):
        yield card_error(agent, ("url",), "KNO-CARD-URL-LOCAL", f"url `{shown_url(str(url))}` can be reached only from "
                         "this machine or network",
                         "publish the url clients will use, or keep the agent private while it is local")
    if where is not None and not local_host(where.hostname or "") and where.scheme == "http":
        yield card_error(agent, ("url",), "KNO-CARD-URL-HTTP", f"url `{shown_url(str(url))}` is plain http: tasks and "
                         "credentials travel unencrypted", "serve the agent over https")
    yield from _bindings(agent)
    yield from _card_urls(agent)
    yield from _inexact(agent)
    yield from _hidden_text(agent)
    yield from _credentials_in_text(agent)
    for i, iface in enumerate(c.get("additional_interfaces") or []):
        transport = iface.get("transport")
        grpc = split_url(iface.get("url")) if isinstance(transport, str) and a2a_binding(transport) == "GRPC" else None
        if grpc is not None and grpc.hostname:
            address = f"{grpc.hostname}:{grpc.port or (443 if grpc.scheme == 'https' else 80)}"
            yield card_error(agent, ("additional_interfaces", i, "url"), "KNO-CARD-GRPC-ADDRESS",
                       f"gRPC interface url `{iface['url']}` is not an address a gRPC channel can dial",
                       f"write its host:port, `{address}` (A2A: a gRPC interface's url is hostname:port)")


def _card_urls(agent: Agent) -> Iterable[Diagnostic]:
    """The card's own URLs (its extensions' uris too): none holds a user
    name or password (the card is public, and so would they be), and the
    links a viewer of the card shows (its documentation, icon and
    provider) are web addresses, not `javascript:` or another scheme a
    viewer would run or open."""
    c = agent.card
    urls: list[tuple[JsonPath, object]] = [((key,), c.get(key)) for key in ("url", "documentation_url", "icon_url")]
    provider = c.get("provider")
    if isinstance(provider, dict):
        urls.append((("provider", "url"), provider.get("url")))
    urls += [(("additional_interfaces", i, "url"), iface.get("url"))
             for i, iface in enumerate(c.get("additional_interfaces") or []) if isinstance(iface, dict)]
    urls += [(("capabilities", "extensions", i, "uri"), ext.get("uri")) for i, ext in _extensions(c)]
    for path, url in urls:
        if not isinstance(url, str):
            continue
        if not (url.isascii() and url.isprintable()) and (found := hidden_character(url)) is not None:
            yield card_error(agent, path, "KNO-CARD-HIDDEN-TEXT", f"`{_field(path)}` holds {found}, which is not "
                             "shown, or changes how the url around it is shown: viewers show another url than "
                             "clients fetch", "remove it")
        # (a gRPC host:port with a user name is no address: the schema refuses it)
        if (why := credential_in(url)) is not None:
            yield card_error(agent, path, "KNO-CARD-URL-CREDENTIALS", f"{_named(path, url)} {why}: the card is "
                             "public, and so would it be", "publish the URL without it; clients bring their own "
                             "credentials")
        elif path[0] in _LINKS and not web_link(url, image=path[0] == "icon_url"):
            yield card_error(agent, path, "KNO-CARD-LINK", f"{_named(path, url)} is not an http(s) URL: card "
                             "viewers show it as a link, and a `javascript:` or `file:` one runs or opens "
                             "something else", "write the page's full https URL")


def _named(path: JsonPath, url: str) -> str:
    """A card url as a message names it: its field and the url, masked."""
    return f"`{_field(path)}` `{shown_url(url)}`"


def _inexact(agent: Agent) -> Iterable[Diagnostic]:
    """An integer in an extension's params (the card's only free-form
    values) that JSON clients cannot hold exactly: a2a-sdk reads
    12345678901234567890 as 12345678901234567168, and knoc's own reader
    refuses the card."""
    for i, ext in _extensions(agent.card):
        for path in jsontext.inexact_integers(ext.get("params"), ("capabilities", "extensions", i, "params")):
            yield card_error(agent, path, "KNO-CARD-NUMBER", "an integer outside JSON's safe range (at most 2**53 - 1 "
                             "either way): clients read it as another number", "write it as a string")


def _hidden_text(agent: Agent) -> Iterable[Diagnostic]:
    """Text a viewer shows otherwise than it reads: a direction override or
    isolate (the "Trojan Source" characters), an invisible space, or a
    control character, in a name, description, tag or example clients and
    people choose by."""
    if agent.typed.entity.source.ascii_only():  # each such character is beyond ASCII, and most cards hold none
        return
    for path, text in _texts(agent.card):
        plain = isinstance(text, str) and text.isascii() and text.isprintable()  # most text: nothing to look for
        found = hidden_character(text) if isinstance(text, str) and not plain else None
        if found is not None:
            yield card_error(agent, path, "KNO-CARD-HIDDEN-TEXT", f"`{_field(path)}` holds {found}, "
                             "which changes how the text around it is shown, or is not shown at all: viewers of "
                             "the card show another text than clients read", "remove it")


def _credentials_in_text(agent: Agent) -> Iterable[Diagnostic]:
    """A credential any text of the card holds, a key of its mappings too
    (a url written into a description, an example or an extension's params,
    with a user name and password or an `?api_key=`; a bare `Bearer
    <token>`, JWT or well-known key): the card is public, and so would it
    be. Not its urls, which hold none (`_card_urls`), nor a legacy card's
    `authentication.credentials`, which it never publishes."""
    if not agent.typed.entity.source.may_hold_credentials():  # most cards: no text to read (a build's hot path)
        return
    for path, text in jsontext.strings(agent.card):
        if (path[:2] == ("authentication", "credentials") or (path[-1] in _URLS and "params" not in path)
                or path[:1] in (("$schema",), ("id",))):
            continue
        if holds_credential(text):
            yield card_error(agent, path, "KNO-CARD-TEXT-CREDENTIALS", f"`{_field(path)}` holds a credential "
                             f"(`{credential_shown(text)}`): the card is public, and so would it be",
                             "remove it (a url can go without it); clients bring their own credentials")


def _listed(value: Mapping[str, object], keys: tuple[str, ...], at: JsonPath) -> Iterator[tuple[JsonPath, object]]:
    """Each item of the lists `value` holds under `keys`, with its place."""
    for key in keys:
        items = value.get(key)
        yield from (((*at, key, j), v) for j, v in enumerate(items if isinstance(items, list) else []))


def _texts(c: Mapping[str, object]) -> Iterator[tuple[JsonPath, object]]:
    """The card's texts people, models and the catalog pages read (its
    version, modes and skill ids too), with their places."""
    yield ("name",), c.get("name")
    yield ("description",), c.get("description")
    yield ("version",), c.get("version")
    yield from _listed(c, ("default_input_modes", "default_output_modes"), ())
    provider = c.get("provider")
    if isinstance(provider, dict):
        yield ("provider", "organization"), provider.get("organization")
    yield from ((("capabilities", "extensions", i, "description"), ext.get("description")) for i, ext in _extensions(c))
    skills = c.get("skills")
    for i, skill in enumerate(skills if isinstance(skills, list) else []):
        if isinstance(skill, dict):
            yield from ((("skills", i, key), skill.get(key)) for key in ("id", "name", "description"))
            yield from _listed(skill, ("tags", "examples", "input_modes", "output_modes"), ("skills", i))
    schemes = c.get("security_schemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():  # what a client shows to sign in
        if isinstance(scheme, dict):
            yield ("security_schemes", name, "description"), scheme.get("description")
            flows = scheme.get("flows")
            for flow, spec in flows.items() if isinstance(flows, dict) else ():
                scopes = spec.get("scopes") if isinstance(spec, dict) else None
                yield from ((("security_schemes", name, "flows", flow, "scopes", scope), text)
                            for scope, text in (scopes.items() if isinstance(scopes, dict) else ()))


_LINKS = ("documentation_url", "icon_url", "provider")  # what a card viewer shows as a link or an image
# A card's urls (its own, an interface's, a link's, an extension's uri, a security scheme's endpoints): each is
# refused with a credential in it, by `_card_urls` and `auth_urls`.
_URLS = frozenset({"url", "uri", "documentation_url", "icon_url", "oauth2_metadata_url", "open_id_connect_url",
                   "authorization_url", "device_authorization_url", "token_url", "refresh_url"})


def _extensions(card: Mapping[str, object]) -> list[tuple[int, dict[str, object]]]:
    """The card's authored extension entries, with their places."""
    caps = card.get("capabilities")
    entries = caps.get("extensions") if isinstance(caps, dict) else None
    return [(i, e) for i, e in enumerate(entries if isinstance(entries, list) else []) if isinstance(e, dict)]


def _field(path: JsonPath) -> str:
    """A card field as a message names it (`skills[0].tags[1]`)."""
    return json_path(path).removeprefix("$.")


# The fields of a security scheme (and of its OAuth flows) a client fetches or sends credentials to.
_SCHEME_URLS = ("oauth2_metadata_url", "open_id_connect_url")
_FLOW_URLS = ("authorization_url", "device_authorization_url", "token_url", "refresh_url")


def auth_urls(agent: Agent, dropped: Iterable[JsonPath]) -> Iterable[Diagnostic]:
    """A security scheme's endpoints that the card publishes (not those
    under `dropped`, left out of it): each MUST be a URL (A2A; a relative
    one or a bare word leaves clients nowhere to authenticate), holds no
    credentials (the card is public), is reachable from elsewhere, and
    uses TLS (OAuth and OpenID Connect require it)."""
    left_out = [tuple(p) for p in dropped]
    for path, url in _endpoints(agent.card):
        if any(path[:len(d)] == d for d in left_out):
            continue
        where = split_url(url)
        shown = shown_url(url)
        if where is None or where.scheme not in ("https", "http") or not _well_formed(url, where):
            yield card_error(agent, path, "KNO-CARD-AUTH-URL", f"`{path[-1]}` `{shown}` is not an absolute "
                             "http(s) URL: clients have nowhere to authenticate",
                             "write the endpoint's full https URL (`https://auth.example.com/token`)")
        elif (why := credential_in(url)) is not None:
            yield card_error(agent, path, "KNO-CARD-AUTH-URL", f"`{path[-1]}` `{shown}` {why}: the card is public, "
                             "and so would it be", "write the endpoint's URL without it; clients bring their own "
                             "credentials")
        elif local_host(where.hostname or ""):
            yield card_error(agent, path, "KNO-CARD-URL-LOCAL", f"`{path[-1]}` `{shown}` can be reached only "
                             "from this machine or network: clients elsewhere cannot authenticate",
                             "publish the endpoint clients will use, or keep the agent private while it is local")
        elif where.scheme == "http":
            yield card_error(agent, path, "KNO-CARD-AUTH-HTTP", f"`{path[-1]}` `{shown}` is plain http: "
                             "credentials and tokens travel unencrypted (OAuth 2.0 requires TLS)",
                             "use the endpoint's https URL")


def _endpoints(card: Mapping[str, object]) -> Iterable[tuple[JsonPath, str]]:
    """Each endpoint URL of the card's security schemes, at its path."""
    schemes = card.get("security_schemes")
    for name, scheme in schemes.items() if isinstance(schemes, dict) else ():
        if not isinstance(scheme, dict):
            continue
        found: list[tuple[JsonPath, object]] = [(("security_schemes", name, key), scheme.get(key))
                                             for key in _SCHEME_URLS]
        flows = scheme.get("flows")
        for flow, values in flows.items() if isinstance(flows, dict) else ():
            if isinstance(values, dict):
                found += [(("security_schemes", name, "flows", flow, key), values.get(key))
                          for key in FLOW_FIELDS.get(flow, _FLOW_URLS) if key in _FLOW_URLS]
        yield from ((path, url) for path, url in found if isinstance(url, str))


def _well_formed(url: str, where: SplitResult) -> bool:
    """No whitespace or control character (urlsplit drops some silently),
    a host that is a DNS name or an IP address, and a port that is one."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return False
    try:
        port = where.port
    except ValueError:
        return False
    return port != 0 and origin(where) is not None


def _bindings(agent: Agent) -> Iterable[Diagnostic]:
    """A binding written otherwise than A2A names it (`grpc`, `REST`):
    a2a-sdk compares bindings exactly, so it would not know it."""
    c = agent.card
    stated: list[tuple[JsonPath, object]] = [(("preferred_transport",), c.get("preferred_transport"))]
    stated += [(("additional_interfaces", i, "transport"), iface.get("transport"))
               for i, iface in enumerate(c.get("additional_interfaces") or []) if isinstance(iface, dict)]
    for path, binding in stated:
        named = named_binding(binding) if isinstance(binding, str) else None
        if named is not None:
            yield card_error(agent, path, "KNO-CARD-BINDING", f"binding `{binding}` is published as written, and "
                             f"a2a-sdk compares bindings exactly (the JS SDK ignores case): it knows it as "
                             f"`{named}`", f"write `{named}`")


def deprecated(agent: Agent) -> Iterable[Diagnostic]:
    caps = agent.card.get("capabilities") or {}
    for name, replacement in DEPRECATED.items():
        if caps.get(name) is True:
            yield card_error(agent, ("capabilities", name), "KNO-CAP-DEPRECATED",
                        f"`{name}` is a deprecated capability (tier 3)",
                        f"declare `{replacement}`, which replaces it; keep `{name}` only while "
                        "old clients still need it")


def card_error(agent: Agent, path: JsonPath, code: str, message: str, hint: str) -> Diagnostic:
    """A diagnostic at `path` inside the agent's card fields (its line, and its JSON path in the entity)."""
    where = (*agent.card_path, *path)
    return at(agent.typed.source, where, code, message, hint, json_path=json_path(where))
