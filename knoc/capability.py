"""The capability contract (seed 001): what an agent declares it can do and
which A2A protocol versions it speaks, read either from an authored card
(the link stage's delegation checks) or from a published card (discovery).
Both readings give the same `Contract`, so build time and discovery time
judge an agent alike."""

from __future__ import annotations

import re
from typing import Any, Iterable, NamedTuple

from pydantic.alias_generators import to_snake

from knoc.wire.common import ContractCapabilities

# Tier 1: every compliant agent does these; nobody declares them.
IMPLICIT = ("send_message", "get_task", "list_tasks", "basic_errors")
# Tier 2 flags the A2A card defines itself, by target.
CORE = ("streaming", "push_notifications", "extended_agent_card", "state_transition_history")
# Tier 2 and 3 flags no A2A version defines: the wire model of the
# capability-contract extension names them (one list, one place).
CONTRACT_FLAGS = tuple(ContractCapabilities.model_fields)
# Tier 3: still honoured, discouraged; the value names the replacement.
DEPRECATED = {"artifact_streaming": "streaming_message"}
EXT_PREFIX = "ext:"
# The protocol versions the main interface of a card speaks, per build target.
TARGET_VERSIONS = {"1.0": ("1.0",), "compat": ("1.0", "0.3"), "0.3": ("0.3.0",)}
CONTRACT_URI = "https://possibility.space/extensions/capability-contract/v1"
VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")


class Contract(NamedTuple):
    flags: dict[str, bool]  # every flag the card states, true or false
    extensions: frozenset[str]  # URIs in capabilities.extensions
    versions: tuple[str, ...]  # every protocol version an interface speaks, in card order
    min_version: str | None = None
    max_version: str | None = None

    def spans(self) -> list[tuple[str, str]]:
        """The versions it accepts, as inclusive spans. A declared bound
        replaces the bound its interfaces imply on that side (seed 001's
        version_in_range); with no bound declared, exactly its interfaces'."""
        if not self.versions:
            return []
        if self.min_version is None and self.max_version is None:
            return [(v, v) for v in self.versions]
        ordered = sorted(self.versions, key=version_key)
        return [(self.min_version or ordered[0], self.max_version or ordered[-1])]

    def accepts(self, version: str) -> bool:
        return any(in_range(version, low, high) for low, high in self.spans())

    def overlaps(self, other: "Contract") -> bool:
        return any(version_key(a) <= version_key(d) and version_key(c) <= version_key(b)
                   for a, b in self.spans() for c, d in other.spans())


def version_key(version: str) -> tuple[int, ...]:
    """"1.0" and "1.0.0" are the same version."""
    parts = [int(p) for p in version.split(".")] if VERSION.match(version) else [-1]
    return tuple(parts + [0] * (3 - len(parts)))


def in_range(version: str, low: str | None, high: str | None) -> bool:
    key = version_key(version)
    return (low is None or version_key(low) <= key) and (high is None or key <= version_key(high))


def known_requirement(name: str) -> bool:
    return (name in IMPLICIT or name in CORE or name in CONTRACT_FLAGS
            or (name.startswith(EXT_PREFIX) and len(name) > len(EXT_PREFIX)))


def vocabulary() -> list[str]:
    return [*IMPLICIT, *CORE, *CONTRACT_FLAGS, "ext:<uri>"]


class Verdict(NamedTuple):
    verdict: str  # compatible | deprecated_capability | missing_capability | version_mismatch
    reason: str


COMPATIBLE = Verdict("compatible", "")


def judge(contract: Contract, requires: Iterable[str], protocol: str | None = None) -> Verdict:
    """Seed 001's safe_discover: the version first, then each requirement.
    A deprecated capability the agent declares still qualifies, with a warning."""
    if protocol is not None and not contract.accepts(protocol):
        return Verdict("version_mismatch", f"speaks {describe_versions(contract)}, not {protocol}")
    deprecated: Verdict | None = None
    for name in requires:
        missing = unmet(contract, name)
        if missing:
            return Verdict("missing_capability", missing)
        if name in DEPRECATED and deprecated is None:
            deprecated = Verdict("deprecated_capability",
                                 f"`{name}` is deprecated (tier 3): use `{DEPRECATED[name]}`")
    return deprecated or COMPATIBLE


def unmet(contract: Contract, name: str) -> str | None:
    """Why `contract` does not satisfy `name`, or None when it does."""
    if name in IMPLICIT:
        return None
    if name.startswith(EXT_PREFIX):
        uri = name[len(EXT_PREFIX):]
        return None if uri in contract.extensions else f"does not declare extension `{uri}`"
    state = contract.flags.get(name)
    if state is True:
        return None
    if name == "context_reuse" and state is False:
        return "declares `context_reuse: false`: the caller cannot rely on shared context"
    return f"does not declare `{name}`" + (" (it declares it false)" if state is False else "")


def describe_versions(contract: Contract) -> str:
    spans = [low if low == high else f"{low} to {high}" for low, high in contract.spans()]
    return ", ".join(spans) or "no version"


# --- reading a contract --------------------------------------------------


def from_card(card: dict[str, Any], target: str, extension_uris: Iterable[str]) -> Contract:
    """The contract of an authored (snake_case) card built for `target`."""
    caps: dict[str, Any] = card["capabilities"] if isinstance(card.get("capabilities"), dict) else {}
    flags = {k: v for k in (*CORE, *CONTRACT_FLAGS) if isinstance(v := caps.get(k), bool)}
    if target == "1.0":
        flags.pop("state_transition_history", None)  # a 1.0 card cannot state it
    versions = list(main_versions(card, target))
    for iface in card.get("additional_interfaces") or []:
        if isinstance(iface, dict):
            versions += interface_versions(iface, target)
    return Contract(flags, frozenset(extension_uris), tuple(dict.fromkeys(versions)),
                    optional_str(card.get("min_protocol_version")), optional_str(card.get("max_protocol_version")))


def main_versions(card: dict[str, Any], target: str) -> tuple[str, ...]:
    declared = card.get("protocol_versions")
    return tuple(declared) if isinstance(declared, list) and declared else TARGET_VERSIONS[target]


def interface_versions(iface: dict[str, Any], target: str) -> tuple[str, ...]:
    declared = iface.get("protocol_versions")
    return tuple(declared) if isinstance(declared, list) and declared else TARGET_VERSIONS[target][:1]


def from_wire(card: dict[str, Any]) -> Contract:
    """The contract of a published card of any target (0.3, 1.0 or compat)."""
    caps: dict[str, Any] = card["capabilities"] if isinstance(card.get("capabilities"), dict) else {}
    flags: dict[str, bool] = {}
    for key, value in caps.items():
        if isinstance(value, bool):
            flags[to_snake(key)] = value
    if isinstance(card.get("supportsAuthenticatedExtendedCard"), bool):
        flags["extended_agent_card"] = card["supportsAuthenticatedExtendedCard"]
    extensions = [e for e in caps.get("extensions") or [] if isinstance(e, dict)]
    params: dict[str, Any] = next((e.get("params") or {} for e in extensions if e.get("uri") == CONTRACT_URI), {})
    for key, value in (params.get("capabilities") or {}).items():
        if isinstance(value, bool):
            flags[to_snake(key)] = value
    versions: list[str] = []
    for iface in card.get("supportedInterfaces") or []:
        versions.append(str(iface.get("protocolVersion")))
    if "supportedInterfaces" not in card and isinstance(card.get("protocolVersion"), str):
        versions.append(card["protocolVersion"])  # a 0.3 card: one version for the whole card
    for iface in params.get("interfaces") or []:
        versions += [str(v) for v in iface.get("protocolVersions") or []]
    return Contract(flags, frozenset(str(e.get("uri")) for e in extensions), tuple(dict.fromkeys(versions)),
                    optional_str(params.get("minProtocolVersion")), optional_str(params.get("maxProtocolVersion")))


def optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
