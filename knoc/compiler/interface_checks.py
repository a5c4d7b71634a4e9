"""What a card says of its interfaces, checked as each client generation
reads it: the declared protocol range holding together, versions written
with a patch number, a card no client of its target can call, and two
interfaces clients choose between differently. Each finding points into
the agent's entity."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from knoc.a2a import capability, targets
from knoc.a2a.capability import in_range, version_key
from knoc.a2a.fields import CardFields
from knoc.a2a.protocol import major_minor
from knoc.a2a.targets.base import Target
from knoc.compiler.card_checks import card_error
from knoc.diagnostics import Diagnostic, JsonPath, json_path
from knoc.kinds.agent import Agent


def protocol_checks(agent: Agent, target: Target) -> Iterable[Diagnostic]:
    """The declared protocol range holds together: min <= max, and every
    version an interface speaks lies inside it."""
    c = agent.card
    low = capability.optional_str(c.get("min_protocol_version"))
    high = capability.optional_str(c.get("max_protocol_version"))
    if low and high and version_key(low) > version_key(high):
        yield card_error(agent, ("max_protocol_version",), "KNO-PROTOCOL-RANGE",
                   f"max_protocol_version {high} is below min_protocol_version {low}",
                   "swap them, or widen the range so it holds at least one version")
        return
    defaults = capability.defaults(target.versions, agent.states_versions)
    main = capability.main_versions(c, defaults)
    stated: list[tuple[JsonPath, str, tuple[str, ...], bool]] = [
        (("protocol_versions",), "main url", main, bool(c.get("protocol_versions")))]
    for i, iface in enumerate(c.get("additional_interfaces") or []):
        stated.append((("additional_interfaces", i, "protocol_versions"), f"interface {iface.get('url')}",
                       capability.interface_versions(iface, defaults), bool(iface.get("protocol_versions"))))
    for path, what, versions, declared in stated:
        for j, v in enumerate(versions):
            if in_range(v, low, high):
                continue
            bound = "min_protocol_version" if low and version_key(v) < version_key(low) else "max_protocol_version"
            yield card_error(agent, (*path, j) if declared else (bound,), "KNO-PROTOCOL-RANGE",
                       f"the {what} speaks A2A {v}" + ("" if declared else " (not stated: the default)")
                       + f", outside the declared range {low or '*'} to {high or '*'}",
                       f"widen `{bound}` to include {v}" + ("" if declared else
                       ", or state the interface's `protocol_versions`"))
    unstated = [(path, what, versions) for path, what, versions, declared in stated if not declared]
    if unstated and not agent.states_versions and defaults != capability.STATED_DEFAULT and agent.public:
        path, what, versions = unstated[0]
        claims: dict[tuple[str, ...], list[str]] = {}  # the main url defaults to the target's versions, the others
        for _, named, speaks in unstated:  # to its first (knoc.a2a.capability.interface_versions)
            claims.setdefault(speaks, []).append(named)
        said = "; ".join(f"{'the ' + names[0] if len(names) == 1 else f'{len(names)} urls'} (A2A "
                         f"{', '.join(speaks)})" for speaks, names in claims.items())
        yield card_error(agent, path[:-1] if path[-1] == "protocol_versions" and len(path) > 1 else path,
                   "KNO-PROTOCOL-UNSTATED",
                   f"{len(unstated)} of the card's urls state no protocol versions, so this A2A {target.name} card "
                   f"claims the target's defaults for them: {said}" if len(unstated) > 1 else
                   f"the {what} states no protocol versions: this A2A {target.name} card claims A2A "
                   f"{', '.join(versions)} for it, as the target's default",
                   "state `protocol_versions` (each interface's too), or declare agent-blueprint@0.4.0, where "
                   "an unstated interface speaks A2A 1.0 under every target")
    if target.legacy_shaped and agent.public and not any(capability.legacy_version(v) for _, _, v, _ in stated):
        yield card_error(agent, ("protocol_versions",), "KNO-PROTOCOL-TARGET",
                   f"an A2A {target.name} card sends its clients to an interface that speaks A2A 0.3 (or "
                   f"another version before 1.0), and none does ({', '.join(main)} for the url)",
                   f"add \"0.3\" to the `protocol_versions` of the interface that answers 0.3 clients, or build "
                   f"with `--a2a {targets.DEFAULT}`")



def patch_versions(agent: Agent) -> Iterable[Diagnostic]:
    """A warning for each protocol version written with a patch number."""
    c = agent.card
    bounds = ("min_protocol_version", "max_protocol_version")
    written: list[tuple[JsonPath, object]] = [((k,), c.get(k)) for k in bounds]
    lists: list[tuple[JsonPath, object]] = [(("protocol_versions",), c.get("protocol_versions"))]
    lists += [(("additional_interfaces", i, "protocol_versions"), iface.get("protocol_versions"))
              for i, iface in enumerate(c.get("additional_interfaces") or []) if isinstance(iface, dict)]
    written += [((*path, j), v) for path, vs in lists if isinstance(vs, list) for j, v in enumerate(vs)]
    for path, v in written:
        if isinstance(v, str) and major_minor(v) != v:
            yield card_error(agent, path, "KNO-PROTOCOL-PATCH",
                             f"protocol version {v} is published as {major_minor(v)}",
                             f"write \"{major_minor(v)}\": cards name protocol versions without a patch number")


class _Listed(NamedTuple):
    """One entry of a 1.0 card's `supportedInterfaces`, where it comes from."""

    path: JsonPath  # the interface in the entity: the main url, or an additional interface
    url: str
    binding: str
    version: str
    tenant: str


def client_picks(agent: Agent, fields: CardFields, target: Target) -> Iterable[Diagnostic]:
    """What each 1.0 SDK calls of a 1.0 (or compat) card, binding by
    binding (both take the first binding the card lists that they speak,
    then one of its interfaces): a warning for a binding none of whose
    interfaces a 1.0 client calls, and one where the SDKs call different
    interfaces. (A 0.3-shaped card has no `supportedInterfaces`.)"""
    if target.legacy_shaped:
        return
    listed = [_Listed(("url",), fields.url, fields.transport, major_minor(v), "") for v in fields.main_versions]
    listed += [_Listed(("additional_interfaces", i), iface["url"], iface["transport"], major_minor(v),
                       str(iface.get("tenant") or ""))
               for i, iface in enumerate(fields.interfaces) for v in iface["protocol_versions"]]
    bindings: dict[str, list[_Listed]] = {}  # as a2a-sdk groups them: by their exact name
    for entry in listed:
        bindings.setdefault(entry.binding, []).append(entry)
    for binding, entries in bindings.items():
        if binding not in _A2A_SDK_BINDINGS:  # a2a-sdk calls none of these; a misspelt one is KNO-CARD-BINDING's
            continue
        python = _a2a_sdk_pick(entries)
        js = _js_sdk_pick([e for e in listed if e.binding.upper() == binding.upper()])  # the JS SDK ignores case
        if python is None:
            versions = ", ".join(sorted({e.version for e in entries}, key=version_key))
            path = entries[0].path
            yield card_error(agent, ("protocol_versions",) if path == ("url",) else (*path, "protocol_versions"),
                             "KNO-PROTOCOL-TOO-OLD",
                             f"the card's {binding} interfaces speak only A2A {versions}, which no 1.0 client "
                             f"calls: a2a-sdk 1.x finds none of them to call, and @a2a-js/sdk calls {js.url} in "
                             "A2A 1.0",
                             f"add \"1.0\" (or \"0.3\") to the `protocol_versions` of the {binding} interface that "
                             "answers 1.0 clients, if one does; or build with `--a2a 0.3` for older clients alone")
        elif (python.url, python.tenant) != (js.url, js.tenant):
            first = json_path((*agent.card_path, *python.path))
            yield card_error(agent, js.path, "KNO-INTERFACE-CHOICE",
                             f"a2a-sdk 1.x calls {binding} at {_shown(python)} (`{first}`), and @a2a-js/sdk at "
                             f"{_shown(js)}: of a binding's interfaces, a2a-sdk takes the first that speaks A2A "
                             "1.0 (else one past 1.0, else 0.3), the JS SDK the last that speaks 1.0 (else the first)",
                             f"list one {binding} interface for A2A 1.0, the one 1.0 clients should call: give "
                             "the others their own binding or version, or drop them")


def _a2a_sdk_pick(entries: list[_Listed]) -> _Listed | None:
    """a2a-sdk 1.x's `ClientFactory._find_best_interface`: the first that
    speaks 1.0, else the first past 1.0, else the first of 0.3 or later."""
    ranked = [(e, version_key(e.version).release[:2]) for e in entries]
    return next((e for better in _A2A_SDK_ORDER for e, v in ranked if better(v)), None)


_A2A_SDK_BINDINGS = frozenset({"JSONRPC", "HTTP+JSON", "GRPC"})  # the transports a2a-sdk 1.x registers
_A2A_SDK_ORDER: tuple[Callable[[tuple[int, ...]], bool], ...] = (
    lambda v: v == (1, 0), lambda v: v > (1, 0), lambda v: v >= (0, 3))


def _js_sdk_pick(entries: list[_Listed]) -> _Listed:
    """@a2a-js/sdk's `ClientFactory`: the last that speaks "1.0", else the first."""
    return next((e for e in reversed(entries) if e.version == "1.0"), entries[0])


def _shown(entry: _Listed) -> str:
    return entry.url + (f" (tenant `{entry.tenant}`)" if entry.tenant else "") + f", A2A {entry.version}"
