"""What an A2A target is: one module per target (`1.0`, `0.3`, `compat`)
provides one `Target`, registered by name in `knoc.a2a.targets`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from knoc.a2a import capability
from knoc.a2a.capability import Contract
from knoc.a2a.fields import CardFields
from knoc.a2a.wire import Wire
from knoc.diagnostics import JsonPath

Card = Mapping[str, object]  # a published card, as JSON
# What a target leaves out of a card: (where it is in the entity's card, what).
Dropped = list[tuple[JsonPath, str]]


def drops_nothing(fields: CardFields) -> Dropped:
    return []


@dataclass(frozen=True)
class Target:
    name: str  # what `--a2a` and knoc.toml's `a2a` say
    # The protocol versions a card's main url speaks unless the card states
    # them; an additional interface speaks the first.
    versions: tuple[str, ...]
    # How a projection becomes this target's card: the wire model (extra
    # fields forbidden), whose JSON is what gets published.
    build: Callable[[CardFields], Wire]
    # How this target's published card is read back: its capability
    # contract (discovery, diff) and its main url (diff).
    read: Callable[[Card], Contract]
    url_of: Callable[[Card], str | None]
    # Core capability flags this target's card cannot carry.
    unsupported_flags: frozenset[str] = frozenset()
    # Its interfaces carry no protocol version: those go into the
    # capability-contract extension entry instead.
    versions_in_contract: bool = False
    # Its card is the 0.3-shaped one: it needs an interface that speaks a
    # version before 1.0 (compat and 1.0 do without, and say so).
    legacy_shaped: bool = False
    # The stated fields its card leaves out (each becomes a warning).
    dropped: Callable[[CardFields], Dropped] = drops_nothing
    # What its card cannot state without changing what it means (each an error).
    refused: Callable[[CardFields], Dropped] = drops_nothing
    # agent.json, the pre-0.3 path, holds a card its clients (a2a-sdk 0.2)
    # parse, sent to an interface that speaks a version before 1.0: this
    # target's own card when that is so (None), else this one's (which is
    # None itself when no interface does: then agent.json is not written).
    legacy: Callable[[CardFields], Wire | None] | None = None

    def authored(self, card: Mapping[str, object], extension_uris: list[str], states_versions: bool) -> Contract:
        """The capability contract of an authored (snake_case) card built for this target."""
        return capability.from_card(card, capability.defaults(self.versions, states_versions),
                                    self.unsupported_flags, extension_uris)
