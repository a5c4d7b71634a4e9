"""What a JS client acts on as written, beside what its verifier reads
(`knoc.a2a.readers.js`): `ClientFactory` picks the interface it calls from
the card's own properties, while `verifyAgentCardSignature` reads the card
through its model, which also takes proto field names and converts values."""

from __future__ import annotations

from collections.abc import Mapping

from knoc.a2a.readers.js import is_legacy, js_boolean, proto_shaped

# What a JS client reads of a card as written, not through the model its
# verifier reads: `ClientFactory` picks the interface it calls by these, and
# `Client` asks for the extended card, push and streaming by these flags.
_PICKED_BY = ("url", "protocolBinding", "protocolVersion", "tenant")
_FLAGS = ("streaming", "pushNotifications", "extendedAgentCard")


def client_reads_otherwise(card: Mapping[str, object], model: Mapping[str, object]) -> str | None:
    """Why a JS client would act on other interfaces or capabilities than
    its verifier read (`model`: its payload, parsed), or None: a field
    under its proto name, a value the model converts. The resolver hands a 0.3 card, or one whose
    security is proto-shaped, to its client converted into the model, which
    the client then reads as the verifier does."""
    if is_legacy(card) or proto_shaped(card):
        return None
    written_caps, read_caps = card.get("capabilities"), model.get("capabilities")
    for flag in _FLAGS:
        value = written_caps.get(flag) if isinstance(written_caps, dict) else None
        if js_boolean(value) != bool(read_caps.get(flag) if isinstance(read_caps, dict) else None):
            return (f"its client reads `capabilities.{flag}` as written, which its verifier reads otherwise "
                    f"(under another name, or converted): write `{flag}`, a JSON boolean")
    raw, read = card.get("supportedInterfaces"), model.get("supportedInterfaces") or []
    if not isinstance(raw, list) or not isinstance(read, list) or len(raw) != len(read):
        return ("its client picks an interface from `supportedInterfaces` as written, which its verifier reads "
                "otherwise: write the card's field names in camelCase")
    for i, (written, entry) in enumerate(zip(raw, read, strict=True)):
        for key in _PICKED_BY:
            value = written.get(key) if isinstance(written, dict) else None
            said = entry.get(key) if isinstance(entry, dict) else None
            if value != said and not (value in (None, "") and said is None):
                return (f"its client reads `supportedInterfaces[{i}].{key}` as written, which its verifier reads "
                        f"otherwise (under another name, or converted): write `{key}`, a string")
    return None
