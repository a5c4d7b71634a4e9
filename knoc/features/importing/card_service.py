"""`knoc import`, interfaces: where the agent answers, with which binding
and which protocol versions, as each client generation reads the card.
Bindings and versions are kept as stated, never replaced by a default;
what a reading gains or loses in the rebuilt card is a recorded change."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

from knoc.a2a.fields import BINDINGS, DEFAULT_TRANSPORT, a2a_binding
from knoc.a2a.protocol import PROTOCOL, major_minor
from knoc.features.importing.imported import Imported, list_of, publishable, unmendable, unpublishable
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.masking import masked
from knoc.rules.paths import shown_url


@dataclass
class Service:
    """Where the agent answers: its main url, binding and protocol versions,
    and its other interfaces (each `url`, `transport`, `protocol_versions`)."""

    url: str
    transport: str
    versions: list[str]
    others: list[dict[str, str | list[str]]] = field(default_factory=list)


@dataclass
class _Seen:
    path: str
    url: JsonValue
    binding: str | None  # None: not a binding at all
    version: str
    explicit: bool = True  # the binding was stated (a 0.3 `url` without `preferredTransport` is JSONRPC by default)
    tenant: str | None = None


def service(raw: JsonObject, out: Imported, base_url: str | None) -> Service | None:
    """The interfaces the card states, as each client generation reads them:
    a2a-sdk 1.x reads `supportedInterfaces` alone when the card has it; a 0.3
    client reads `url`, `preferredTransport` (JSONRPC by default),
    `additionalInterfaces` and `protocolVersion` (0.3.0 by default), which
    applies to each. Urls, bindings, tenants and versions are kept as
    stated, never changed to a default; a relative or templated url is
    resolved against the base url; what a reading gains or loses is a
    warning. The main url is the first interface at an http(s) url without
    a tenant (the blueprint's url has none)."""
    legacy_version = _legacy_version(raw, out)
    stated, items = [], _items(raw, "supportedInterfaces", out)
    listed = any(isinstance(item, dict) for item in items)
    for i, item in enumerate(items):
        at = f"$.supportedInterfaces[{i}]"
        if isinstance(item, dict) and (binding := _binding(item.get("protocolBinding"), at, out)[0]) is not None:
            stated.append(_Seen(at, item.get("url"), binding, _version(item.get("protocolVersion"), at, out),
                                tenant=_tenant(item, at, out)))  # one left out says nothing more of itself
    legacy = []
    if "url" in raw:
        binding, known = _binding(raw.get("preferredTransport", DEFAULT_TRANSPORT), "$.preferredTransport", out)
        legacy.append(_Seen("$.url", raw["url"], binding, legacy_version, "preferredTransport" in raw and known))
    for i, item in enumerate(_items(raw, "additionalInterfaces", out)):
        if isinstance(item, dict):
            path = f"$.additionalInterfaces[{i}]"
            if item.get("tenant") not in (None, ""):  # not turned into a tenant 1.x clients send with each request
                out.drop(f"{path}.tenant", "A2A 0.3 interfaces have no tenant, and no client reads one here "
                                           "(a2a-sdk's 1.x reading copies url and transport alone)")
            legacy.append(_Seen(path, item.get("url"), _binding(item.get("transport"), path, out)[0], legacy_version))
    # The interfaces in the card's order, as runs of one interface's versions: clients pick by order (a2a-sdk
    # 1.x the first of a binding and version it speaks, the JS SDK the last), so the order is kept as stated.
    runs: list[tuple[_Key, list[str]]] = []
    stated_urls: dict[_Key, str] = {}
    paths: dict[_Key, str] = {}  # where the card states each interface first
    for seen in stated:
        if _usable(seen, base_url, out):
            key = _key(seen)
            stated_urls.setdefault(key, str(seen.url))  # a string, as usable
            paths.setdefault(key, seen.path)
            if not runs or runs[-1][0] != key:
                runs.append((key, []))
            if seen.version not in runs[-1][1]:
                runs[-1][1].append(seen.version)
    for seen in legacy:
        if _usable(seen, base_url, out):
            stated_urls.setdefault(_key(seen), str(seen.url))
            paths.setdefault(_key(seen), seen.path)
            _merge_legacy(seen, runs, bool(listed), out)  # a 1.x client reads `supportedInterfaces` when it is there
    main = next((i for i, (k, _) in enumerate(runs) if k[2] is None and publishable(stated_urls[k])), None)
    if main is None:
        main = next((i for i, (k, _) in enumerate(runs) if publishable(stated_urls[k])), None)
        if main is not None:
            out.drop(f"$.supportedInterfaces (tenant `{runs[main][0][2]}`)", "the tenant of the interface taken "
                     "as the card's url: a blueprint's url has none; state it on an additional interface")
    if main is None:
        for k, _ in runs:  # each, at its own path: none is kept beside the url that stands in
            out.drop(paths[k], f"`{shown_url(stated_urls[k])}`, with the card's other interfaces: none is at a url "
                               f"a card is published under (this one: {unpublishable(stated_urls[k])})")
        stated_versions = [v for _, vs in runs for v in vs] or [s.version for s in stated]  # what the card said
        return _substitute(base_url, list(dict.fromkeys(stated_versions)) or [legacy_version], out)
    first, (key, versions) = runs[0][0], runs[main]
    if main != 0:  # a client that takes the first interface it speaks (a2a-sdk's default) may call another
        why = f"has tenant `{first[2]}`" if first[2] is not None else "is not an http(s) URL a card is published at"
        out.convert(paths[first], f"no longer the first interface: the built card lists `{stated_urls[key]}` "
                    f"({key[1]}) first, as the blueprint's url (this one {why}); a client that takes the first "
                    "interface it speaks calls that one now")
    others: list[dict[str, str | list[str]]] = [
        {"url": stated_urls[k], "transport": k[1], **({"tenant": k[2]} if k[2] is not None else {}),
         "protocol_versions": v} for i, (k, v) in enumerate(runs) if i != main]
    return Service(stated_urls[key], key[1], versions, others)


_Key = tuple[str, str, str | None]  # an interface: its url (no trailing slash), binding and tenant


def _key(seen: _Seen) -> _Key:
    assert seen.binding is not None
    return _bare(str(seen.url)), seen.binding, seen.tenant


def _merge_legacy(seen: _Seen, runs: list[tuple[_Key, list[str]]], has_1x: bool, out: Imported) -> None:
    """A 0.3 reading's interface, into the interfaces the 1.x reading found:
    a version it adds joins the interface's first run (a 0.3 client reads
    no order among one url's versions)."""
    key = _key(seen)
    same_url = [k for k, _ in runs if k[0] == key[0]]
    own = [versions for k, versions in runs if k == key]
    if own:
        if not any(seen.version in versions for versions in own):
            own[0].append(seen.version)
            if has_1x:
                out.convert(seen.path, f"the 0.3 reading says this interface speaks A2A {seen.version} too; "
                                       "recorded (a2a-sdk 1.x read only `supportedInterfaces`)")
        return
    if same_url and not seen.explicit:  # `url` with JSONRPC only by default, where 1.x says another binding
        out.drop(seen.path, f"0.3 clients read JSONRPC at `{key[0]}` (no `preferredTransport`), but "
                            f"`supportedInterfaces` say {same_url[0][1]} there: kept that binding")
        return
    runs.append((key, [seen.version]))
    if has_1x:
        out.convert(seen.path, f"kept as an interface speaking A2A {seen.version} ({seen.binding}); a2a-sdk 1.x "
                               "did not read it: the card has `supportedInterfaces`")


def _substitute(base_url: str | None, versions: list[str], out: Imported) -> Service | None:
    """With no interface kept, `--url` (or where the card was fetched)
    stands in, as a JSONRPC url speaking the versions the card's
    interfaces stated (else its 0.3 reading's)."""
    if base_url is None or not publishable(base_url):
        return None
    out.convert("$.url", f"no url; took {base_url} (the base url), speaking A2A {', '.join(versions)}: check it is "
                         "where the agent answers")
    return Service(base_url, DEFAULT_TRANSPORT, versions)


_TEMPLATE = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}(/[^?#\s]*)?$")
_ADDRESS = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$")  # gRPC's host:port
_ANY_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")


def against_base(url: str, base_url: str | None) -> str | None:
    """A relative (`/a2a`) or templated (`{BASE_URL}/a2a`) url resolved
    against the base url; None for any other url, or without a base url."""
    if base_url is None:
        return None
    template = _TEMPLATE.match(url)
    if template is not None:  # the base url, then the path
        return base_url.rstrip("/") + template.group(1) if template.group(1) else base_url
    return urljoin(base_url, url) if url.startswith("/") else None  # a path on the base url's host


def _usable(seen: _Seen, base_url: str | None, out: Imported) -> bool:
    """Whether the interface can be kept: its binding is one, and its url
    an absolute URL (a relative or templated one resolved against the base
    url, said so), or host:port for gRPC."""
    if seen.binding is None:
        return False
    url = seen.url
    if isinstance(url, str) and (resolved := against_base(url, base_url)) is not None:
        seen.url = resolved
        out.convert(f"{seen.path}.url" if seen.path != "$.url" else seen.path,
                    f"`{shown_url(url)}` resolved against the base url: {shown_url(resolved)}")
    elif isinstance(url, str) and (m := re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url)) and m.group(1) != \
            m.group(1).lower():
        seen.url = m.group(1).lower() + url[len(m.group(1)):]
        out.convert(f"{seen.path}.url" if seen.path != "$.url" else seen.path,
                    f"the scheme of `{shown_url(url)}` written in lower case (URL schemes are case-insensitive)")
    url = seen.url
    if isinstance(url, str) and unmendable(url):  # said here, and the interface left out with it: never half kept
        out.drop(seen.path, f"the credential in `{masked(url)}` cannot be taken out of its url (it is in its path), "
                            "and a url is never written masked: left the interface out")
        return False
    if isinstance(url, str) and (publishable(url) or _ANY_URL.match(url)
                                 or (seen.binding == "GRPC" and _ADDRESS.match(url))):
        return True
    out.drop(seen.path, f"`{shown_url(str(url))}` is not a URL (nor, for gRPC, a host:port address)"
             + ("; give --url to resolve relative ones" if isinstance(url, str) and url.startswith("/") else ""))
    return False


def _bare(url: str) -> str:
    return url.rstrip("/") or url


def _tenant(item: JsonObject, path: str, out: Imported) -> str | None:
    tenant = item.get("tenant")
    if tenant is None or tenant == "":
        return None
    if isinstance(tenant, str):
        return tenant
    out.drop(f"{path}.tenant", "not a string")
    return None


def _items(raw: JsonObject, key: str, out: Imported) -> list[JsonValue]:
    if key in raw and not isinstance(raw[key], list):
        out.drop(f"$.{key}", "not a list of interfaces")
    return list_of(raw.get(key))


def _binding(transport: JsonValue, path: str, out: Imported) -> tuple[str | None, bool]:
    """The binding as stated (one of A2A's named by its spec URI or a common
    alias, as its name; a custom one as it is); None when it is not a name
    at all. Whether it is one of A2A's."""
    if transport in BINDINGS:
        return str(transport), True
    if not isinstance(transport, str) or not transport.strip():
        out.drop(path, "it names no binding (`protocolBinding`), so no client can call it: the interface is left out"
                 if transport is None else f"the binding {json.dumps(transport)[:80]} is not a name: the interface "
                 "is left out")
        return None, False
    named = a2a_binding(transport.rstrip("/").rsplit("/", 1)[-1]) or ""
    if named in BINDINGS:
        out.convert(path, f"binding `{transport}` to `{named}`")
        return named, True
    return transport, False  # a custom binding: clients that know it use it


def _version(value: JsonValue, path: str, out: Imported) -> str:
    """A 1.0 interface's protocol version, as Major.Minor."""
    if isinstance(value, str) and PROTOCOL.match(value):
        if (short := major_minor(value)) != value and short == "1.0":  # the JS SDK prefers exactly "1.0"
            out.convert(f"{path}.protocolVersion", f"`{value}` written `{short}`, as A2A 1.0 cards state it "
                        f"(section 3.6): the JS SDK prefers an interface stating exactly `{short}`, so the one "
                        "it picks may change")
        return short
    if isinstance(value, str) and (m := re.match(r"^(\d+)\.(\d+)", value)):
        out.convert(f"{path}.protocolVersion", f"`{value}` is not a protocol version; read as {m[1]}.{m[2]}")
        return f"{int(m[1])}.{int(m[2])}"
    said = "no protocol version" if value is None else f"`{value}` is not a protocol version"
    out.convert(f"{path}.protocolVersion", f"{said} (A2A 1.0 requires one); recorded 1.0")
    return "1.0"


def _legacy_version(raw: JsonObject, out: Imported) -> str:
    """What a 0.3 reading says every interface of the card speaks:
    `protocolVersion`, whose 0.3 default is 0.3.0."""
    value = raw.get("protocolVersion")
    if isinstance(value, str) and PROTOCOL.match(value):
        version = major_minor(value)
        if not version.startswith("0.") and "url" in raw and not raw.get("supportedInterfaces"):
            out.convert("$.protocolVersion", f"a card of 0.3's shape (a `url`, no `supportedInterfaces`) stating "
                        f"{version}: a2a-sdk 1.x reads its interfaces as speaking {version}, the JS SDK (as a "
                        f"0.3 card) as speaking 0.3; kept {version} (state `supportedInterfaces` to settle it)")
        return version
    if isinstance(value, str) and (m := re.match(r"^(\d+)\.(\d+)", value)):
        out.convert("$.protocolVersion", f"`{value}` is not a protocol version; read as {m[1]}.{m[2]}")
        return f"{int(m[1])}.{int(m[2])}"
    if value is not None:
        out.convert("$.protocolVersion", f"`{value}` is not a protocol version; recorded 0.3, the 0.3 default")
    elif "url" in raw:
        out.convert("$.protocolVersion", "not stated: read as 0.3, a2a-sdk 0.3's default (a2a-sdk 0.2 reads "
                    "0.2.6), and stated so in the blueprint and the cards built from it")
    return "0.3"
