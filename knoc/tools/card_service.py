"""`knoc import`, interfaces: where the agent answers, with which binding
and which protocol versions, as each client generation reads the card.
Bindings and versions are kept as stated, never replaced by a default;
what a reading gains or loses in the rebuilt card is a recorded change."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from knoc.a2a.fields import DEFAULT_TRANSPORT
from knoc.rules.version import PROTOCOL, major_minor
from knoc.tools.imported import Imported, list_of, publishable

TRANSPORTS = ("JSONRPC", "GRPC", "HTTP+JSON")
# What cards in the wild call a binding, for the ones A2A names otherwise.
ALIASES = {"REST": "HTTP+JSON", "HTTP_JSON": "HTTP+JSON", "HTTP+REST": "HTTP+JSON", "JSON-RPC": "JSONRPC",
           "JSON_RPC": "JSONRPC", "JSONRPC2": "JSONRPC", "GRPC+PROTO": "GRPC"}


@dataclass
class Service:
    """Where the agent answers: its main url, binding and protocol versions,
    and its other interfaces (each `url`, `transport`, `protocol_versions`)."""

    url: str
    transport: str
    versions: list[str]
    others: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Seen:
    path: str
    url: Any
    binding: str
    version: str
    explicit: bool = True  # the binding was stated (a 0.3 `url` without `preferredTransport` is JSONRPC by default)


def service(raw: dict[str, Any], out: Imported, base_url: str | None) -> Service | None:
    """The interfaces the card states, as each client generation reads them:
    a2a-sdk 1.x reads `supportedInterfaces` alone when the card has it; a 0.3
    client reads `url`, `preferredTransport` (JSONRPC by default),
    `additionalInterfaces` and `protocolVersion` (0.3.0 by default), which
    applies to each. Bindings and versions are kept as stated, never
    changed to a default; what a reading gains or loses is a warning."""
    legacy_version = _legacy_version(raw, out)
    stated = [_Seen(f"$.supportedInterfaces[{i}]", item.get("url"),
                    _binding(item.get("protocolBinding"), f"$.supportedInterfaces[{i}]", out)[0],
                    _version(item.get("protocolVersion"), f"$.supportedInterfaces[{i}]", out))
              for i, item in enumerate(_items(raw, "supportedInterfaces", out)) if isinstance(item, dict)]
    legacy = []
    if "url" in raw:
        binding, known = _binding(raw.get("preferredTransport", DEFAULT_TRANSPORT), "$.preferredTransport", out)
        legacy.append(_Seen("$.url", raw["url"], binding, legacy_version, "preferredTransport" in raw and known))
    legacy += [_Seen(f"$.additionalInterfaces[{i}]", item.get("url"),
                     _binding(item.get("transport"), f"$.additionalInterfaces[{i}]", out)[0], legacy_version)
               for i, item in enumerate(_items(raw, "additionalInterfaces", out)) if isinstance(item, dict)]
    groups: dict[tuple[str, str], list[str]] = {}
    unpublished: list[_Seen] = []
    for seen in stated:
        if _usable(seen, out, unpublished):
            groups.setdefault((_bare(seen.url), seen.binding), [])
            if seen.version not in groups[(_bare(seen.url), seen.binding)]:
                groups[(_bare(seen.url), seen.binding)].append(seen.version)
    for seen in legacy:
        if not _usable(seen, out, unpublished):
            continue
        _merge_legacy(seen, groups, bool(stated), out)
    if not groups:
        return _substitute(unpublished, base_url, legacy_version, out)
    (url, transport), versions = next(iter(groups.items()))
    others = [{"url": u, "transport": t, "protocol_versions": v} for (u, t), v in list(groups.items())[1:]]
    return Service(url, transport, versions, others)


def _merge_legacy(seen: _Seen, groups: dict[tuple[str, str], list[str]], has_1x: bool, out: Imported) -> None:
    """A 0.3 reading's interface, into the interfaces the 1.x reading found."""
    url = _bare(seen.url)
    same_url = [key for key in groups if key[0] == url]
    if (url, seen.binding) in groups:
        if seen.version not in groups[(url, seen.binding)]:
            groups[(url, seen.binding)].append(seen.version)
            if has_1x:
                out.convert(seen.path, f"the 0.3 reading says this interface speaks A2A {seen.version} too; "
                                       "recorded (a2a-sdk 1.x read only `supportedInterfaces`)")
        return
    if same_url and not seen.explicit:  # `url` with JSONRPC only by default, where 1.x says another binding
        out.drop(seen.path, f"0.3 clients read JSONRPC at `{url}` (no `preferredTransport`), but "
                            f"`supportedInterfaces` say {same_url[0][1]} there: kept that binding")
        return
    groups[(url, seen.binding)] = [seen.version]
    if has_1x:
        out.convert(seen.path, f"kept as an interface speaking A2A {seen.version} ({seen.binding}); a2a-sdk 1.x "
                               "did not read it: the card has `supportedInterfaces`")


def _substitute(unpublished: list[_Seen], base_url: str | None, version: str, out: Imported) -> Service | None:
    """With no publishable interface, `--url` (or where the card was fetched)
    stands in: a templated url (`{BASE_URL}/a2a`) gets its path appended, and
    the first interface's binding and version are kept."""
    if base_url is None or not publishable(base_url):
        return None
    base = base_url.rstrip("/") or base_url
    first = unpublished[0] if unpublished else None
    url = base
    if first is not None and isinstance(first.url, str) and (m := _TEMPLATE.match(first.url)):
        url = base + (m.group(1) or "").rstrip("/")
    elif first is not None and isinstance(first.url, str) and first.url.startswith("/") and publishable(
            joined := urljoin(base + "/", first.url)):
        url = joined.rstrip("/") or joined  # a path relative to where the card is served
    out.convert(first.path if first else "$.url", f"no publishable url; took {url} (from the base url): check it is "
                                                  "where the agent answers")
    binding = first.binding if first else DEFAULT_TRANSPORT
    return Service(url, binding, [first.version if first else version])


_TEMPLATE = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}(/[^?#\s]*)?$")


def _usable(seen: _Seen, out: Imported, unpublished: list[_Seen]) -> bool:
    if publishable(seen.url):
        return True
    unpublished.append(seen)
    out.drop(seen.path, f"`{seen.url}` is not an http(s) URL knoc can publish")
    return False


def _bare(url: str) -> str:
    return url.rstrip("/") or url


def _items(raw: dict[str, Any], key: str, out: Imported) -> list[Any]:
    if key in raw and not isinstance(raw[key], list):
        out.drop(f"$.{key}", "not a list of interfaces")
    return list_of(raw.get(key))


def _binding(transport: Any, path: str, out: Imported) -> tuple[str, bool]:
    """An A2A binding as stated (one named by its spec URI, by its name);
    another value is JSONRPC, said so. Whether it was one."""
    named = str(transport).rstrip("/").rsplit("/", 1)[-1].upper() if transport is not None else None
    if transport in TRANSPORTS:
        return str(transport), True
    named = ALIASES.get(named or "", named)
    if named in TRANSPORTS:
        out.convert(path, f"binding `{transport}` to `{named}`")
        return str(named), True
    out.convert(path, f"binding `{transport}` is not an A2A binding ({', '.join(TRANSPORTS)}); JSONRPC assumed")
    return DEFAULT_TRANSPORT, False


def _version(value: Any, path: str, out: Imported) -> str:
    """A 1.0 interface's protocol version, as Major.Minor."""
    if isinstance(value, str) and PROTOCOL.match(value):
        return major_minor(value)
    out.convert(f"{path}.protocolVersion", "no protocol version (A2A 1.0 requires one); recorded 1.0")
    return "1.0"


def _legacy_version(raw: dict[str, Any], out: Imported) -> str:
    """What a 0.3 reading says every interface of the card speaks:
    `protocolVersion`, whose 0.3 default is 0.3.0."""
    value = raw.get("protocolVersion")
    if isinstance(value, str) and PROTOCOL.match(value):
        return major_minor(value)
    if value is not None:
        out.convert("$.protocolVersion", f"`{value}` is not a protocol version; recorded 0.3, the 0.3 default")
    return "0.3"
