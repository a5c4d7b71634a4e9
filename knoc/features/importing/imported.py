"""What `knoc import` makes of a card, and the tests it applies to values
of any shape (a card from the wild may hold anything)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TypedDict
from urllib.parse import urlsplit, urlunsplit

from knoc.output.hosting import locate_url
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.masking import CREDENTIAL_NAME, masked, secret_param
from knoc.rules.paths import has_userinfo, without_userinfo
from knoc.rules.text import unshown

URL = re.compile(r"^https?://[^/?#\s]+(/[^?#\s]*)?$")  # agent-card-schema's card url
# The other urls a card holds keep their query (`?audience=`): a provider's
# site its fragment too, an OAuth endpoint none (RFC 6749 3.1). Credential
# parameters are gone by then (`_credential_params`).
_SITE_URL = re.compile(r"https?://[^/?#\s]+(?:[/?#]\S*)?")
_ENDPOINT_URL = re.compile(r"https?://[^/?#\s]+(?:[/?][^#\s]*)?")


class NotACard(Exception):
    """The JSON is not an A2A Agent Card: nothing is written."""


class NoServiceUrl(NotACard):
    """A card whose every interface is at a url no card can be published
    under (a query, a fragment): nothing is written."""


def member(path: str, key: str) -> str:
    """The JSON path of `key` under `path`: `.key`, or `["a b"]` for a key a
    dot would not hold whole (a space, a dot, a bracket, none at all)."""
    return f"{path}.{key}" if _PLAIN_KEY.fullmatch(key) else f"{path}[{json.dumps(key, ensure_ascii=True)}]"


_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


# What import says of an OAuth endpoint's fragment, which it leaves out (`card_security`).
UNFRAGMENTED = ("the url without its fragment (not shown: it may hold a credential): an OAuth or OpenID Connect "
                "endpoint has none")


@dataclass(frozen=True)
class Change:
    path: str  # JSON path in the imported card, e.g. $.capabilities.streaming
    message: str


class ImportedSkill(TypedDict, total=False):
    """A skill of the card `knoc import` writes (id, name, description and tags, always)."""

    id: str
    name: str
    description: str
    tags: list[str]
    examples: list[str]
    input_modes: list[str]
    output_modes: list[str]
    security: list[dict[str, list[str]]]


class ImportedCard(TypedDict, total=False):
    """The `a2a_projection` `knoc import` writes, snake_case: each field
    once it is converted (name, description, url, version and skills, always)."""

    name: str
    description: str
    url: str
    protocol_versions: list[str]
    min_protocol_version: str  # these two from knoc's own capability-contract entry
    max_protocol_version: str
    version: str
    provider: dict[str, str]
    documentation_url: str
    icon_url: str
    capabilities: JsonObject
    authentication: dict[str, list[str]]
    security_schemes: dict[str, JsonObject]
    security: list[dict[str, list[str]]]
    skills: list[ImportedSkill]
    default_input_modes: list[str]
    default_output_modes: list[str]
    preferred_transport: str
    additional_interfaces: list[dict[str, str | list[str]]]  # url, transport, tenant, protocol_versions


@dataclass
class Imported:
    card: ImportedCard  # the a2a_projection, snake_case
    service_class: str | None = None
    changes: list[Change] = field(default_factory=list)
    private: bool = False  # its security could not be kept: it would be published as open

    # Each said with any url parameter named as a credential masked (`diag` masks the rest: a password), by
    # the rule import leaves them out of a url by: a message may quote the card's url as it came.
    def drop(self, path: str, why: str) -> None:
        self.changes.append(Change(path, f"dropped: {masked(why, named=True)}"))

    def convert(self, path: str, what: str) -> None:
        self.changes.append(Change(path, f"converted: {masked(what, named=True)}"))


def http_url(url: object) -> bool:
    """An absolute http(s) URL, anywhere (a provider's site), with a query
    and fragment unlike a card's, and no character a reader would not see."""
    return isinstance(url, str) and _SITE_URL.fullmatch(url) is not None and unshown(url) is None and _splits(url)


def not_a_url(url: object) -> str:
    """Why `http_url` refuses `url`, as a drop says it."""
    hidden = unshown(url) if isinstance(url, str) else None
    return f"it holds {hidden}, a character no reader sees" if hidden else "not an absolute http(s) URL"


def _splits(url: str) -> bool:
    """Whether a url's host and port read (`https://[bad/` does not)."""
    try:
        urlsplit(url).port  # noqa: B018 - read for the ValueError a host or port that does not read raises
    except ValueError:
        return False
    return True


def endpoint_url(url: object) -> bool:
    """`http_url`, for an OAuth endpoint: without a fragment."""
    return http_url(url) and _ENDPOINT_URL.fullmatch(str(url)) is not None


def publishable(url: object) -> bool:
    """An http(s) URL a card can be published at (so not `http://localhost:PORT/`)."""
    return isinstance(url, str) and unpublishable(url) is None


def unpublishable(url: str) -> str | None:
    """Why a card cannot be published at `url` (None: it can)."""
    if URL.match(url) is None:
        if URL.match(re.sub(r"^[A-Za-z]+(?=://)", lambda m: m.group().lower(), url)):
            return "its scheme is written in capitals: the card schema takes `https://` (or `http://`) in lowercase"
        return "it is not an http(s) URL without query, fragment or whitespace"
    where = locate_url(url)
    return where if isinstance(where, str) else None


def list_of(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def boolean(value: JsonValue, path: str, out: Imported) -> bool | None:
    """A boolean, or a string that clearly says one (converted); else None (dropped)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        out.convert(path, f"the string \"{value}\" to a boolean")
        return value.strip().lower() == "true"
    out.drop(path, f"`{json.dumps(value, ensure_ascii=False)[:80]}` is not a boolean (true or false)")
    return None


def no_credentials(raw: JsonValue, out: Imported) -> None:
    """No credential anywhere in the blueprint (it is committed, and its
    card would publish them): a url holding a user name and password, or a
    query or fragment parameter that carries one (`?api_key=`), is kept
    without them; text holding one (a description, an example, a params
    key) is kept with it masked; the value of a member named as a credential
    (`password`, `Authorization`, `client_secret`) is left out. Each is said
    at its path."""
    # What is left out whole is said once, as such: `signatures` by KNO-IMPORT-SIGNATURE.
    dropped = ["$.signatures", *(c.path for c in out.changes if c.message.startswith("dropped: "))]
    unfragmented = {c.path for c in out.changes if c.message == f"converted: {UNFRAGMENTED}"}
    for path, text in _with_credentials(raw, "$"):
        if any(path == d or path.startswith((f"{d}.", f"{d}[")) for d in dropped):
            continue  # inside a field already left out whole: not written, and said once
        if path in unfragmented and text is not None:
            text = text.partition("#")[0]  # its fragment is left out, and said so: never shown
            if not _is_url(text):
                continue
        if text is None:
            out.drop(path, "a credential's value: a committed blueprint and its card would publish it; left out")
            continue
        kept = ("left the url out: it cannot be taken out of it, and a url is never written masked"
                if path.lower().endswith(("url", "uri")) and unmendable(text)
                else "kept the url without it" if _is_url(text) else "kept the text with it masked")
        shown = masked(_credential_params(text, mask=True) if _SCHEME.match(text) else text)
        out.drop(path, f"the credential in `{shown[:200]}`: a committed blueprint and its card would "
                       f"publish it; {kept}")
    _strip(out.card)


def _is_url(value: str) -> bool:
    return _SCHEME.match(value) is not None and (has_userinfo(value) or _credential_params(value) != value)


def _clean(text: str) -> str:
    """`text` without a url's credentials (a url's), or with them masked (text, not an address)."""
    return _credential_params(without_userinfo(text)) if _is_url(text) else masked(text, bare=False)


def unmendable(url: str) -> bool:
    """Whether a url's credential could only be masked, not taken out (in
    its path, or before an `@` a browser reads otherwise): `***` written
    into a url would stand in its host or path. A url field holding one is
    left out whole."""
    return _WHOLE_URL.fullmatch(url) is not None and (cleaned := _clean(url)) != url and (
        not _is_url(url) or masked(cleaned) != cleaned)


def _credential_params(url: str, mask: bool = False) -> str:
    """A url without the query and fragment parameters that may carry a
    credential, or (`mask`) with their values masked, as a message shows it."""
    try:
        parts = urlsplit(url)
    except ValueError:  # `https://[bad/`: no url to take apart (refused where a url belongs)
        return url
    kept = [_path_params(parts.path, mask), *(_params(part, mask) for part in (parts.query, parts.fragment))]
    return (urlunsplit(parts._replace(path=kept[0], query=kept[1], fragment=kept[2]))
            if kept != [parts.path, parts.query, parts.fragment] else url)


def _kept_param(param: str, mask: bool) -> str | None:
    """A url parameter as the url keeps it: itself, or, when `secret_param`
    finds it, left out (None) or (`mask`) with its value masked."""
    if not secret_param(param):
        return param
    return param.partition("=")[0] + "=***" if mask else None


def _path_params(path: str, mask: bool) -> str:
    """A path with its `;name=value` parameters (`/app;jsessionid=...`) as `_kept_param` keeps them."""
    def kept(found: re.Match[str]) -> str:
        param = _kept_param(found.group(1), mask)
        return "" if param is None else f";{param}"

    return re.sub(r";([^/;]*)", kept, path) if ";" in path else path


def _params(part: str, mask: bool) -> str:
    """A query's or fragment's parameters (split at `&` and at `;`, as some
    servers read them) as `_kept_param` keeps them."""
    pieces = re.split(r"([&;])", part)  # a parameter, a separator, a parameter, ...
    kept: list[str] = []
    for i in range(0, len(pieces), 2):
        if (param := _kept_param(pieces[i], mask)) is not None:
            kept += [pieces[i - 1] if kept else "", param]  # the separator before it, unless it comes first
    return "".join(kept)


def _secret_member(key: str, value: object) -> bool:
    """A member whose name says its value is a credential (`password`, `Authorization`)."""
    return isinstance(value, str) and bool(value) and CREDENTIAL_NAME.fullmatch(key) is not None


def _with_credentials(value: JsonValue, path: str) -> list[tuple[str, str | None]]:
    """Each credential in `value`: its path, and the text holding it (None:
    the whole value of a member named as one)."""
    if isinstance(value, dict):
        found: list[tuple[str, str | None]] = [(member(path, k), k) for k in value if _clean(k) != k]
        for k, v in value.items():
            found += [(member(path, k), None)] if _secret_member(k, v) else _with_credentials(v, member(path, k))
        return found
    if isinstance(value, list):
        return [found for i, v in enumerate(value) for found in _with_credentials(v, f"{path}[{i}]")]
    return [(path, value)] if isinstance(value, str) and _clean(value) != value else []


def _strip(value: object) -> None:
    """Every string in `value` (in place, keys too) without a credential,
    and no member named as one."""
    if isinstance(value, dict):
        items = [(_clean(k), v) for k, v in value.items() if not _secret_member(k, v) and not (
            isinstance(v, str) and k.lower().endswith(("url", "uri")) and unmendable(v))]
        value.clear()
        value.update(items)
    pairs = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in list(pairs):
        if isinstance(v, str):
            value[k] = _clean(v)  # type: ignore[index]
        else:
            _strip(v)


_SCHEME = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*:")  # a url, as far as a password in it goes
_WHOLE_URL = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*:\S*\s*")  # a text that is a url and nothing else
