"""What a card says of its interfaces, checked as each client generation
reads it: the declared protocol range holding together, versions written
with a patch number, a card no client of its target can call, and two
interfaces clients choose between differently. Each finding points into
the agent's entity."""

from __future__ import annotations

from collections.abc import Iterable

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
    if not target.legacy_shaped and agent.public and not any(capability.modern_version(v) for _, _, v, _ in stated):
        yield card_error(agent, ("protocol_versions",), "KNO-PROTOCOL-TOO-OLD",
                   f"an A2A {target.name} card lists interfaces that speak only A2A "
                   f"{', '.join(sorted({v for _, _, vs, _ in stated for v in vs}, key=version_key))}, which no 1.0 "
                   f"client speaks: a2a-sdk 1.x finds no interface to call, and @a2a-js/sdk calls one in A2A 1.0 "
                   f"(agent.json serves 0.2 clients)",
                   "add \"1.0\" (or \"0.3\") to the `protocol_versions` of the interface that answers them, or "
                   "build with `--a2a 0.3` for older clients alone")


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


def tenant_picks(agent: Agent, fields: CardFields, target: Target) -> Iterable[Diagnostic]:
    """Two interfaces of a 1.0 card at one url with one binding, both A2A
    1.0, that differ in `tenant`: a2a-sdk 1.x calls the first of them and
    @a2a-js/sdk the last, so which tenant a request goes to depends on the
    client's SDK. (A 0.3-shaped card carries no tenant.)"""
    if target.legacy_shaped:
        return
    seen: dict[tuple[str, str], tuple[JsonPath, str]] = {}
    listed: list[tuple[JsonPath, str, str, tuple[str, ...], str]] = [
        (("url",), fields.url, fields.transport, fields.main_versions, "")]
    listed += [(("additional_interfaces", i), iface["url"], iface["transport"], tuple(iface["protocol_versions"]),
                str(iface.get("tenant") or "")) for i, iface in enumerate(fields.interfaces)]
    for path, url, binding, versions, tenant in listed:
        if "1.0" not in map(major_minor, versions):
            continue
        key = (url.rstrip("/").lower(), binding.upper())
        first = seen.setdefault(key, (path, tenant))
        if first[1] != tenant:
            other = json_path((*agent.card_path, *first[0]))
            yield card_error(agent, path, "KNO-INTERFACE-TENANT",
                             f"{_tenant(tenant)} and {_tenant(first[1])} (at `{other}`) are one url "
                             f"and binding ({url}, {binding}), both A2A 1.0: a2a-sdk 1.x calls the first of them, "
                             f"@a2a-js/sdk the last, so a request's tenant depends on the client",
                             "list the url once per binding with A2A 1.0, with the tenant clients should use; "
                             "serve another tenant at a url of its own")


def _tenant(tenant: str) -> str:
    return f"tenant `{tenant}`" if tenant else "no tenant"
