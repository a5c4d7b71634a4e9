"""The target seam: an A2A target is one module behind one interface, found
by name. A throwaway target, registered by this test alone, is built,
published, read back by discovery and diffed like the real ones, without
a line of knoc changing."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from knoc.a2a import targets
from knoc.a2a.capability import Contract
from knoc.a2a.fields import CardFields
from knoc.a2a.targets.base import Target
from knoc.a2a.wire import AgentSkill, Wire
from knoc.app.diff import publication
from knoc.config import load_config
from knoc.features.diff import compare
from knoc.features.discover import Request, catalog, discover
from knoc.incremental.driver import compile_repo
from tests.conftest import ROOT

NAME = "lite-9.9"


class LiteCard(Wire):
    """A card that says only who the agent is, where, and what it can do."""

    name: str
    description: str
    endpoint: str
    spoken: list[str]
    skills: list[AgentSkill]
    streams: bool = False


def build(f: CardFields) -> LiteCard:
    return LiteCard(name=f.name, description=f.description, endpoint=f.url, spoken=list(f.main_versions),
                    skills=f.skills, streams=bool(f.streaming))


def read(card: dict[str, Any]) -> Contract:
    return Contract({"streaming": bool(card.get("streams"))}, frozenset(), tuple(card.get("spoken", [])))


def url_of(card: dict[str, Any]) -> str | None:
    return card.get("endpoint")


LITE = Target(name=NAME, versions=("1.0",), build=build, read=read, url_of=url_of,
              unsupported_flags=frozenset({"state_transition_history", "push_notifications"}))


@pytest.fixture
def lite() -> Iterator[Target]:
    targets.register(LITE)
    try:
        yield LITE
    finally:
        targets.unregister(NAME)


def test_a_registered_target_is_built_like_the_others(lite: Target) -> None:
    result = compile_repo(load_config(ROOT, NAME))
    assert result.ok, result.report.sorted()
    cards = {path: json.loads(body) for path, body in result.files.items()
             if path.endswith("/agent-card.json") and path.count("/") > 3}  # not a host's root copy
    assert len(cards) == len(result.cards) == 7
    for card in cards.values():
        assert set(card) <= {"name", "description", "endpoint", "spoken", "skills", "streams"}
        LiteCard.model_validate(card)
        assert card["spoken"] and all(v in ("1.0", "0.3", "0.3.0") for v in card["spoken"])
    assert json.loads(result.files["manifest.json"])["a2a_target"] == NAME


def test_a_registered_target_is_read_back_by_discovery_and_diff(lite: Target) -> None:
    result = compile_repo(load_config(ROOT, NAME))
    answers = discover(catalog(result.files.__getitem__), Request(requires=("streaming",)), NAME)
    streams = {a.slug for a in answers if a.qualifies}
    by_slug = {c.slug: json.loads(c.projection.body) for c in result.cards}
    assert streams == {slug for slug, card in by_slug.items() if card["streams"]} != set()
    old = publication(result, load_config(ROOT, NAME), NAME, NAME)
    moved = json.loads(json.dumps(old.cards))
    slug = sorted(moved)[0]
    moved[slug]["endpoint"] = "https://elsewhere.example.com/agent"
    changes = compare(old, dataclasses.replace(old, cards=moved))
    assert [(c.name, c.kind, c.cls) for c in changes] == [(slug, "url-changed", "breaking")]


def test_an_unregistered_target_is_a_config_error() -> None:
    with pytest.raises(Exception, match="unknown A2A target"):
        load_config(ROOT, NAME)


def test_each_built_in_target_is_found_under_its_own_name() -> None:
    """The registry names the built-ins before importing them (`--a2a`'s
    choices cost no import): each name must be the one its module gives."""
    assert targets.names()[:3] == ("1.0", "0.3", "compat") and targets.DEFAULT == "1.0"
    for name in targets.names():
        assert targets.get(name).name == name
