"""Cards and key sets from outside (`knoc verify`, `knoc import`): a card
or JWKS from a file or URL, read under the JSON input rule and the
download limits; or the key sets a card's signatures name in `jku`,
fetched only when the user allows it, only over https, only from the
card's own host or hosts the user names, at most MAX_JKU of them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from knoc.a2a import signing
from knoc.io import files, http
from knoc.rules import jsontext, limits
from knoc.rules.json import JsonValue
from knoc.rules.paths import origin, shown_url, split_url

MAX_JKU = 4  # distinct key-set urls one card may make knoc fetch


class Unreadable(ValueError):
    """A card or key set that cannot be read or is not what it should be."""


def is_url(source: str) -> bool:
    return source[:8].lower().startswith(("http://", "https://"))  # a scheme is case-insensitive


def card_url(source: str) -> str:
    """Where a card is fetched from: a base URL gets the well-known card path."""
    try:
        path = urlsplit(source).path
    except ValueError:  # a malformed URL: the fetch says so
        path = ""
    return source if path.endswith(".json") else source.rstrip("/") + "/.well-known/agent-card.json"


def read_card(source: str) -> bytes:
    """The bytes of a card file, or of a URL, within the download limits.
    OSError when it cannot be read."""
    return http.fetch(card_url(source)) if is_url(source) else _read_file(source)


def load_json(source: str, what: str, card: bool = False, depth: int = jsontext.MAX_DEPTH,
              redirect: Callable[[str], str | None] = http.http_only) -> JsonValue:
    """JSON from a file or URL (a card URL gets its well-known path) under
    the JSON input rule; Unreadable when it cannot be read or is refused.
    `redirect`: which redirects a download may follow."""
    try:
        raw = read_card(source) if card else (http.fetch(source, redirect=redirect) if is_url(source)
                                              else _read_file(source))
        return jsontext.parse_value(raw, depth=depth)
    except (OSError, jsontext.Refused) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise Unreadable(f"cannot read {what} from {shown_url(source) if is_url(source) else source}: {why}") \
            from None


def _read_file(source: str) -> bytes:
    return files.read_source(source, limit=limits.DOWNLOAD_BYTES)


def key_set(source: str, redirect: Callable[[str], str | None] = http.http_only) -> signing.KeySet:
    """The keys of a JWKS file or URL."""
    try:
        return signing.key_set(load_json(source, "the key set", redirect=redirect))
    except signing.KeyProblem as exc:
        raise Unreadable(f"{source}: {exc}") from None


def home(source: str, card: Mapping[str, object]) -> str | None:
    """The host a card speaks for: the one it was fetched from, else the
    host of its main url (its first interface's, or its 0.3 `url`)."""
    if is_url(source):
        parts = split_url(card_url(source))
        return origin(parts) if parts is not None else None
    interfaces = card.get("supportedInterfaces")
    first = interfaces[0] if isinstance(interfaces, list) and interfaces and isinstance(interfaces[0], dict) else {}
    parts = split_url(first.get("url", card.get("url")))
    return origin(parts) if parts is not None and parts.scheme in ("http", "https") else None


@dataclass
class Named:
    """The key sets a card's signatures name, as fetched."""

    keys: signing.KeySet = field(default_factory=lambda: signing.KeySet({}))
    refused: dict[str, str] = field(default_factory=dict)  # jku -> why knoc did not fetch it


def named_by(signatures: object, hosts: set[str]) -> Named:
    """The keys of every key set the signatures name in `jku`, fetched once
    each, when it is an https URL on one of `hosts` (host folders, as
    `origin` gives them). Unreadable when an allowed one cannot be fetched."""
    wanted: list[str] = []
    found = Named()
    for entry in signatures if isinstance(signatures, list) else []:
        header = signing.protected_header(entry)
        jku = header.get("jku") if header else None
        if not isinstance(jku, str) or jku in wanted or jku in found.refused:
            continue
        why = _refusal(jku, hosts, len(wanted))
        if why is None:
            wanted.append(jku)
        else:
            found.refused[jku] = why
    keys: dict[str, signing.PublicKey] = {}
    for url in wanted:  # a redirect is held to the rule the jku itself is
        for kid, key in key_set(url, functools.partial(_refusal, hosts=hosts, fetching=0)).keys.items():
            if kid in keys and signing.public_jwk(keys[kid]) != signing.public_jwk(key):
                raise Unreadable(f"two key sets the card names give kid {kid!r} different keys")
            keys[kid] = key
    found.keys = signing.KeySet(keys)
    return found


def _refusal(jku: str, hosts: set[str], fetching: int) -> str | None:
    """Why knoc will not fetch the key set at `jku`, or None."""
    parts = split_url(jku)
    if parts is None or parts.scheme != "https":
        return "it is not an https URL"
    if origin(parts) not in hosts:
        return (f"it is not on the card's host ({', '.join(sorted(hosts)) or 'none'}); name its host with "
                "--jku-host to trust it")
    if fetching >= MAX_JKU:
        return f"the card names more than {MAX_JKU} key sets"
    return None
