"""`knoc import`: the extension entries knoc writes itself (the capability
contract, the service class), back into the blueprint fields they are made
of, and what of the card's such an entry holds that knoc would not write."""

from __future__ import annotations

from typing import Literal

from pydantic.alias_generators import to_snake

from knoc.a2a.wire import ContractCapabilities
from knoc.features.importing.imported import Imported, list_of, member
from knoc.rules.json import JsonObject, JsonValue
from knoc.rules.paths import shown_url


def regenerated(ext: JsonObject, path: str, out: Imported, params: set[str] | None = None) -> None:
    """What an entry knoc writes itself (the service class, the capability
    contract) does not carry of the card's: each said. `params`: the only
    params it writes (None: `_contract` says what it does not carry)."""
    if str(ext.get("required")).strip().lower() not in ("none", "false"):
        out.drop(f"{path}.required", "knoc writes this entry as not required: clients read it as optional")
    if ext.get("description") not in (None, ""):
        out.drop(f"{path}.description", "knoc writes this entry without a description")
    for key in sorted(set(ext) - {"uri", "description", "required", "params"}):
        out.drop(member(path, key), "not a field of an A2A extension entry")
    given = ext.get("params")
    for key in sorted(set(given) - params) if isinstance(given, dict) and params is not None else ():
        out.drop(member(f"{path}.params", key), "knoc writes this entry with its own params alone")


_CONTRACT_FLAGS = frozenset(ContractCapabilities.model_fields)
_RANGE: tuple[tuple[str, Literal["min_protocol_version", "max_protocol_version"]], ...] = (
    ("minProtocolVersion", "min_protocol_version"), ("maxProtocolVersion", "max_protocol_version"))


def contract(params: JsonValue, path: str, out: Imported) -> None:
    """The capability-contract entry, which knoc writes from a blueprint's
    own fields and refuses written by hand: its flags and version range
    back in those fields; its interfaces' versions are the card's to state."""
    if not isinstance(params, dict):
        out.drop(path, "the capability-contract extension's params are an object")
        return
    flags = params.get("capabilities", {})
    if not isinstance(flags, dict):
        out.drop(member(path, "capabilities"), "not an object of capability flags")
        flags = {}
    for key, value in flags.items():
        at = member(member(path, "capabilities"), key)
        if (snake := to_snake(key)) not in _CONTRACT_FLAGS:
            out.drop(at, "not a flag of the capability-contract extension")
        elif not isinstance(value, bool):
            out.drop(at, "not a boolean (true or false)")
        else:
            out.card.setdefault("capabilities", {})[snake] = value
            out.convert(at, f"the capability-contract flag to `capabilities.{snake}`")
    for key, field in _RANGE:
        if key not in params:
            continue
        if isinstance(version := params[key], str):
            out.card[field] = version
            out.convert(member(path, key), f"the capability-contract range to `{field}`")
        else:
            out.drop(member(path, key), "not a version (a string such as \"1.0\")")
    for i, entry in enumerate(list_of(params.get("interfaces"))):
        _contract_interface(entry, f"{member(path, 'interfaces')}[{i}]", out)
    for key in sorted(set(params) - {"capabilities", "interfaces", *(key for key, _ in _RANGE)}):
        out.drop(member(path, key), "not a field of the capability-contract extension, as knoc writes it")


def _contract_interface(entry: JsonValue, path: str, out: Imported) -> None:
    """The versions the contract says an interface of the card answers
    (a 0.3 card's `protocolVersion` speaks for all it lists): onto that
    interface. One the card does not list has no transport to keep."""
    url, listed = (entry.get("url"), entry.get("protocolVersions")) if isinstance(entry, dict) else (None, None)
    versions = [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []
    if not isinstance(url, str) or not versions or len(versions) != len(list_of(listed)):
        out.drop(path, "not an interface's url with its protocol versions")
        return
    found = 0
    if out.card.get("url", "").rstrip("/") == url.rstrip("/"):
        out.card["protocol_versions"] = list(versions)
        found += 1
    for interface in out.card.get("additional_interfaces", []):
        if str(interface.get("url", "")).rstrip("/") == url.rstrip("/"):
            interface["protocol_versions"] = list(versions)
            found += 1
    if not found:
        out.drop(path, f"`{shown_url(url)}` is none of the card's interfaces, so its transport is not known: add it "
                       "to `additional_interfaces`, with its transport and these `protocol_versions`")
    else:
        out.convert(path, f"the versions `{shown_url(url)}` answers, from the capability-contract entry, to its "
                          "`protocol_versions`")
