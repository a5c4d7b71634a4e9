"""The capability contract (seed 001): what an agent declares it can do and
which A2A protocol versions it speaks, read either from an authored card
(the link stage's delegation checks) or from a published card (discovery).
Both readings give the same `Contract`, so build time and discovery time
judge an agent alike."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from packaging.version import Version
from pydantic.alias_generators import to_snake

from knoc.a2a.extensions import CONTRACT_URI
from knoc.a2a.protocol import PROTOCOL, major_minor, protocol_key
from knoc.a2a.wire import ContractCapabilities

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
VERSION = PROTOCOL  # what a protocol version looks like


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

    def overlaps(self, other: Contract) -> bool:
        return any(a <= d and c <= b for a, b in _ordered_spans(self) for c, d in _ordered_spans(other))


def _ordered_spans(contract: Contract) -> tuple[tuple[Version, Version], ...]:
    return _spans_of(contract.versions, contract.min_version, contract.max_version)


@functools.lru_cache(maxsize=1024)  # a repo's contracts share a few version sets: each is ordered once
def _spans_of(versions: tuple[str, ...], low: str | None, high: str | None) -> tuple[tuple[Version, Version], ...]:
    spans = Contract({}, frozenset(), versions, low, high).spans()
    return tuple((version_key(a), version_key(b)) for a, b in spans)


def version_key(version: str) -> Version:
    """"1.0" and "1.0.0" are the same version."""
    return protocol_key(version)


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


def from_card(card: Mapping[str, object], versions: tuple[str, ...], unsupported: frozenset[str],
              extension_uris: Iterable[str]) -> Contract:
    """The contract of an authored (snake_case) card whose main url speaks
    `versions` when it states none (`defaults`), built for a target whose
    card cannot carry the `unsupported` flags."""
    caps = _mapping(card.get("capabilities"))
    flags = {k: v for k in (*CORE, *CONTRACT_FLAGS) if isinstance(v := caps.get(k), bool) and k not in unsupported}
    stated = list(main_versions(card, versions))
    for iface in _sequence(card.get("additional_interfaces")):
        if isinstance(iface, dict):
            stated += interface_versions(iface, versions)
    return Contract(flags, frozenset(extension_uris), tuple(dict.fromkeys(stated)),
                    optional_str(card.get("min_protocol_version")), optional_str(card.get("max_protocol_version")))


STATED_DEFAULT = ("1.0",)  # what an interface of a 0.4 card that states no versions speaks, under every target


def defaults(target: tuple[str, ...], states_versions: bool) -> tuple[str, ...]:
    """What an interface speaks when its card states no `protocol_versions`:
    A2A 1.0 for a card that says so (agent-card / agent-blueprint 0.4.0 and
    later), whatever the target; for an older card, what the target
    writes (1.0; 1.0 and 0.3 for compat; 0.3 for 0.3), as it always did."""
    return STATED_DEFAULT if states_versions else target


def main_versions(card: Mapping[str, object], default: tuple[str, ...]) -> tuple[str, ...]:
    return _stated(card.get("protocol_versions")) or default


def interface_versions(iface: Mapping[str, object], default: tuple[str, ...]) -> tuple[str, ...]:
    return _stated(iface.get("protocol_versions")) or default[:1]


def speaks_0_3(versions: Iterable[str]) -> bool:
    """Whether any of `versions` is a 0.3 version (a 0.3 client can use it)."""
    return any(version_key(v).release[:2] == (0, 3) for v in versions)


def legacy_version(versions: Iterable[str]) -> str | None:
    """The version a 0.3-shaped card (whose readers predate 1.0) states for
    an interface speaking `versions`: 0.3 if it speaks it, else its highest
    0.x; None when it speaks no version before 1.0."""
    early = sorted((v for v in versions if version_key(v).release[0] == 0), key=version_key)
    return "0.3" if speaks_0_3(early) else (early[-1] if early else None)


def _stated(declared: object) -> tuple[str, ...]:
    """The protocol versions a card states (only strings count), as
    Major.Minor, without repeats."""
    if not isinstance(declared, list):
        return ()
    return tuple(dict.fromkeys(major_minor(v) for v in declared if isinstance(v, str)))


def wire_contract(card: Mapping[str, object], stated: list[str]) -> Contract:
    """The contract of a published card whose interfaces state the protocol
    versions `stated`: flags from its capabilities (core, and the
    capability-contract entry's), its extension URIs, and the versions and
    range the contract entry adds. A card may be a stranger's: a value of
    the wrong shape counts as absent."""
    caps = _mapping(card.get("capabilities"))
    flags: dict[str, bool] = {}
    for key, value in caps.items():
        if isinstance(value, bool):
            flags[to_snake(key)] = value
    if isinstance(extended := card.get("supportsAuthenticatedExtendedCard"), bool):
        flags["extended_agent_card"] = extended
    extensions = [e for e in _sequence(caps.get("extensions")) if isinstance(e, dict)]
    params = _mapping(next((e.get("params") for e in extensions if e.get("uri") == CONTRACT_URI), None))
    for key, value in _mapping(params.get("capabilities")).items():
        if isinstance(value, bool):
            flags[to_snake(key)] = value
    versions = [v for v in stated if isinstance(v, str)]
    for iface in _sequence(params.get("interfaces")):
        versions += _stated(_mapping(iface).get("protocolVersions"))
    return Contract(flags, frozenset(str(e.get("uri")) for e in extensions), tuple(dict.fromkeys(versions)),
                    optional_str(params.get("minProtocolVersion")), optional_str(params.get("maxProtocolVersion")))


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}


def _sequence(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def read_1_0(card: Mapping[str, object]) -> Contract:
    """The contract of a 1.0-shaped card: a version per supported interface."""
    interfaces = [_mapping(i) for i in _sequence(card.get("supportedInterfaces"))]
    return wire_contract(card, [str(i.get("protocolVersion")) for i in interfaces])


def read_0_3(card: Mapping[str, object]) -> Contract:
    """The contract of a 0.3-shaped card: one version for the whole card."""
    version = card.get("protocolVersion")
    return wire_contract(card, [version] if isinstance(version, str) else [])


def from_wire(card: Mapping[str, object]) -> Contract:
    """The contract of a published card of any shape (0.3, 1.0 or compat),
    such as a stranger's: the shape says how to read it (what
    `targets.by_shape(card).read(card)` gives, without the registry)."""
    return read_1_0(card) if "supportedInterfaces" in card else read_0_3(card)


def optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None
