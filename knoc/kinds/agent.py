"""The agent kind: a blueprint (`a2a_projection` holds its card fields) or a
legacy agent (card fields at the top level). Its output is a projection:
its card for the build target, rendered, with what the catalog reads."""

from __future__ import annotations

import struct
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn, Protocol, overload

from knoc.a2a.protocol import protocol_key
from knoc.diagnostics import JsonPath
from knoc.io import packing
from knoc.io.stored import CacheDamaged
from knoc.kinds.entity import AGENT_TYPES, ENTITY_KEYS, Typed, is_public
from knoc.rules import limits
from knoc.rules.json import JsonValue
from knoc.rules.records import Encoded

# The card fields the link stage reads: what the capability contract of a
# delegation chain reads (`knoc.a2a.capability.from_card`).
CONTRACT_KEYS = ("capabilities", "protocol_versions", "min_protocol_version", "max_protocol_version",
                 "additional_interfaces")
FACT_KEYS = ("composes", "service_class", "perception")
# What the link stage reads of a blueprint's own facts once its Agent is made.
LINKED_KEYS = (*ENTITY_KEYS, "composes")
BLUEPRINT_SCHEMA = "agent-blueprint@0.4.0"  # what knoc writes new blueprints as (new, init, import, migrate)
# The text of `knoc new agent`'s skeleton: still there on a public card, it is
# a card nobody finished (a warning names each).
PLACEHOLDERS = {"description": "What a client can ask this agent to do.",
                "skill_name": "First skill", "skill_description": "What the skill does."}


NO_TWIN = "-"  # a projection's `legacy_digest` when no agent.json is written (no interface speaks 0.3)


class Written(NamedTuple):
    """A projection's bytes that are written out, not read by the link stage."""

    body: bytes  # the card JSON
    # The card at the pre-0.3 path (agent.json) when it is not `body`: the
    # shape clients of that path parse. Empty: the same bytes as `body`.
    legacy: bytes = b""
    # What the catalog pages show beyond the summary, as compact JSON. Not
    # in the summary: editing a description must not redo the link stage.
    details: bytes = b"{}"
    listing: bytes = b"{}"  # its entry in its host's AI Catalog (output.listing)

    def pack(self) -> tuple[bytes, bytes]:
        """The two halves a Projection keeps: the card files, and what the
        catalogs join. A card and its agent.json twin share most of their
        text: packed together they shrink about fivefold."""
        return _pack(self.body, self.legacy), _pack(self.details, self.listing)


def _pack(first: bytes, second: bytes) -> bytes:
    return packing.pack(_LENGTH.pack(len(first)) + first + second)


def _unpack(packed: bytes) -> tuple[bytes, bytes]:
    raw = packing.unpack(packed, _LENGTH.size, _PACKED_MOST)
    cut = _LENGTH.size + _LENGTH.unpack_from(raw)[0]
    if cut > len(raw):
        raise CacheDamaged("a packed card is shorter than its own length says", dropped=False)
    return raw[_LENGTH.size:cut], raw[cut:]


def well_packed(packed: bytes) -> bool:
    """Whether `packed` may be a pair `_pack` made (its frame's header alone read)."""
    return packing.states(packed, _LENGTH.size, _PACKED_MOST)


_LENGTH = struct.Struct(">I")
# A published card is at most limits.CARD_BYTES; its twin, its details and
# its AI Catalog entry are made from the same fields, and are about as
# large. A pair that says it holds more was not packed by knoc.
_PACKED_MOST = 8 * limits.CARD_BYTES


@dataclass(eq=False, slots=True)  # slots: the link stage holds one per agent, a hundred thousand
class Agent:
    """An agent entity (blueprint or legacy card) ready for projection."""

    typed: Typed
    card: dict[str, Any]  # the card-shaped fields, snake_case
    card_path: tuple[str, ...]  # where `card` sits in the entity, for diagnostics
    domains: tuple[str, ...]
    service_class: str | None
    composes: tuple[str, ...]  # slugs of agents this one delegates to
    slug: str = ""  # kept: the link stage asks for it a dozen times an agent

    def __post_init__(self) -> None:
        self.slug = str(self.typed.data.get("slug", ""))  # read before validation: it may be missing

    @property
    def id(self) -> str:
        return str(self.typed.data["id"])

    @property
    def public(self) -> bool:
        return is_public(self.typed)

    @property
    def states_versions(self) -> bool:
        """Whether its schema version gives unstated protocol versions one
        meaning under every target (agent-card and agent-blueprint 0.4.0 on)."""
        return self.typed.type in AGENT_TYPES and protocol_key(self.typed.version) >= protocol_key("0.4.0")


def agent_of(t: Typed) -> Agent:
    data = t.data
    card_path: tuple[str, ...]
    if t.type == "agent-blueprint":
        card, card_path = data.get("a2a_projection", {}), ("a2a_projection",)
        persona = data.get("persona")
        perception = persona.get("perception", {}) if isinstance(persona, dict) else {}
    else:  # legacy: card fields at the top level
        card, card_path = data, ()
        perception = data.get("perception", {})
    domains = perception.get("domains", []) if isinstance(perception, dict) else []
    composes = []
    links = data.get("composes") if t.type == "agent-blueprint" else None
    for link in links if isinstance(links, list) else []:  # read before validation: any shape may come
        if isinstance(link, dict) and isinstance(link.get("xri"), str):
            composes.append(link["xri"].rsplit("/", 1)[-1])
    return Agent(
        typed=t,
        card=card if isinstance(card, dict) else {},
        card_path=card_path,
        domains=tuple(sys.intern(d) for d in domains if isinstance(d, str)) if isinstance(domains, list) else (),
        service_class=data.get("service_class") if isinstance(data.get("service_class"), str) else None,
        composes=tuple(composes),
    )


def linked(t: Typed, alike: dict[tuple[object, ...], dict[str, Any]]) -> Agent:
    """`agent_of`, for the link stage, which holds every agent at once: of a
    blueprint's facts it then keeps only what is read past this point (its
    persona and card trees are in the Agent, or not needed), and of its
    card only what its contract reads, one dict for all agents whose are
    equal (`alike`: those seen so far). The link stage reads facts, never
    changes them."""
    agent = agent_of(t)
    if agent.card is not t.data:  # a legacy agent's card is its entity
        t.entity.data = {k: t.data[k] for k in LINKED_KEYS if k in t.data}
    read = {k: agent.card[k] for k in CONTRACT_KEYS if k in agent.card}
    interfaces = read.get("additional_interfaces")
    if isinstance(interfaces, list):  # of each, its versions (and not its url)
        read["additional_interfaces"] = [{k: i[k] for k in ("protocol_versions",) if k in i} if isinstance(i, dict)
                                         else i for i in interfaces]
    agent.card = alike.setdefault(_frozen(read), read)
    return agent


def _frozen(value: object) -> tuple[object, ...]:
    """`value` as a key equal for equal facts only (True and 1 are not the same fact)."""
    if isinstance(value, dict):
        return (dict, *((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return (list, *map(_frozen, value))
    return (type(value), value)


def card_facts(data: Mapping[str, object], out: dict[str, object]) -> None:
    """Add to `out` the agent facts of `data`: what the link stage reads."""
    persona = data.get("persona")
    if isinstance(persona, dict) and "perception" in persona:
        out["persona"] = {"perception": persona["perception"]}
    card = data.get("a2a_projection", data)
    if isinstance(card, dict):
        picked = {k: card[k] for k in CONTRACT_KEYS if k in card}
        if card is data:
            out.update(picked)
        else:
            out["a2a_projection"] = picked


class Projection(NamedTuple):
    """One agent's card, rendered, with what the catalog reads from it. It
    depends on the agent's own entity only, so the cache keeps it (a plain
    tuple: ten thousand of them load at every warm check). The bytes that
    only get written or joined (`Written`) are kept packed: a hundred
    thousand cards fit in memory, and a check that compares digests never
    unpacks a card."""

    host: str
    path: str  # url path without leading or trailing slash, "" for the root
    name: str
    url: str
    tags: tuple[str, ...]
    digest: str  # sha256 of the card
    # capabilities.extensions as published: (uri, required, params, where the
    # entry comes from in the entity, whether knoc generated it)
    extensions: tuple[tuple[str, bool, dict[str, JsonValue] | None, JsonPath, bool], ...] = ()
    skills: tuple[str, ...] = ()  # skill names, for the catalog page
    legacy_digest: str = ""  # sha256 of agent.json when its bytes are not the card's; NO_TWIN: none is written
    packed: bytes = b""  # the card and agent.json (Written.pack)
    catalog: bytes = b""  # its details and AI Catalog entry (Written.pack)

    @property
    def summary(self) -> tuple[object, ...]:
        """All of it but the written bytes: what the link stage (publish,
        index, contract) reads."""
        return (self.host, self.path, self.name, self.url, self.tags, self.extensions, self.skills, self.has_twin)

    def written(self) -> Written:
        return Written(*_unpack(self.packed), *_unpack(self.catalog))

    def catalog_pieces(self) -> tuple[bytes, bytes]:
        """Its details and AI Catalog entry, without unpacking the card."""
        return _unpack(self.catalog)

    @property
    def body(self) -> bytes:
        """The card, as written."""
        return _unpack(self.packed)[0]

    @property
    def has_twin(self) -> bool:
        """Whether an agent.json is written beside the card."""
        return self.legacy_digest != NO_TWIN

    def file_digest(self, legacy: bool) -> str:
        """The sha256 of the card, or (`legacy`) of its agent.json twin."""
        return self.legacy_digest or self.digest if legacy else self.digest

    def file_bytes(self, legacy: bool) -> bytes:
        """The card's bytes, or (`legacy`) its agent.json twin's."""
        return self.both_files()[legacy]

    def both_files(self) -> tuple[bytes, bytes]:
        """The card's bytes and its agent.json twin's, unpacked once."""
        body, twin = _unpack(self.packed)
        return body, twin or body

    @property
    def site_dir(self) -> str:
        return join_site(self.host, self.path)


def join_site(host: str, path: str) -> str:
    """The folder under build/site/ for a host and url path."""
    return f"{host}/{path}" if host and path else host or path


class Card(NamedTuple):
    """A published card: whose it is and its projection (a tuple: a warm
    check makes one for each of a hundred thousand agents)."""

    slug: str  # the agent's
    source: str  # the agent's source file, repo-relative
    projection: Projection


class Packed(Protocol):
    """Values held compact by key, the bytes at each one's tail kept apart
    (`knoc.io.held.Held`)."""

    def value(self, key: str) -> Encoded:
        """The value without its tail."""
        ...

    def get(self, key: str) -> tuple[Encoded, tuple[bytes, ...]]:
        """The value and its tail's bytes."""
        ...

    def lacks(self, key: str) -> NoReturn:
        """Raise for a value that lacks what was asked of it (a card)."""
        ...


class CardLookup(Protocol):
    def projection(self, rel: str) -> Projection:
        """The card of the agent in the source `rel`, decoded (KeyError: it has none)."""
        ...


class Projections(CardLookup):
    """Each source's card, as held compact with the rest of its result
    (`packed`, the card at `at` in each value, its written bytes as the
    tail): decoded when asked for, never all at once."""

    def __init__(self, packed: Packed, at: int) -> None:
        self._packed, self._at = packed, at

    def projection(self, rel: str) -> Projection:
        value, written = self._packed.get(rel)
        return self._card(rel, value, written)

    def summary(self, rel: str) -> Projection:
        """The card without its written bytes (left empty, and never
        unpacked): all the link stage reads, without reading them."""
        return self._card(rel, self._packed.value(rel), ())

    def summaries(self) -> CardLookup:
        """These cards as their summaries (`summary`)."""
        return _Summaries(self)

    def _card(self, rel: str, value: Encoded, written: tuple[bytes, ...]) -> Projection:
        card = value[self._at] if len(value) > self._at else None
        if not card or not isinstance(card, tuple):
            self._packed.lacks(rel)
        values = (*card, *written)
        if len(values) == _SUMMARY:  # a summary: no written bytes
            values += _UNWRITTEN
        try:
            made = Projection._make(values)
        except TypeError:  # not a card's fields: kept by another knoc, or damaged
            self._packed.lacks(rel)
        if made.packed and not (well_packed(made.packed) and well_packed(made.catalog)):  # its frames' headers
            self._packed.lacks(rel)
        return made


_UNWRITTEN = (b"", b"")  # a Projection's `packed` and `catalog`, its last fields, when not read
_SUMMARY = len(Projection._fields) - len(_UNWRITTEN)


class _Summaries(CardLookup):
    def __init__(self, of: Projections) -> None:
        self._of = of

    def projection(self, rel: str) -> Projection:
        return self._of.summary(rel)


class Cards(Sequence[Card]):
    """The published cards, each projection looked up when asked for: a run
    never holds a hundred thousand of them at once."""

    def __init__(self, published: list[tuple[str, str]], cards: CardLookup) -> None:
        self.published, self.cards = published, cards
        self.projection = cards.projection  # the renderer looks cards up by source too

    @overload
    def __getitem__(self, i: int) -> Card: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Card]: ...

    def __getitem__(self, i: int | slice) -> Card | Sequence[Card]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        slug, rel = self.published[i]
        return Card(slug, rel, self.cards.projection(rel))

    def __len__(self) -> int:
        return len(self.published)
