"""What `knoc import` makes of a card, and the tests it applies to values
of any shape (a card from the wild may hold anything)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from knoc.output.hosting import url_location

URL = re.compile(r"^https?://[^/?#\s]+(/[^?#\s]*)?$")  # agent-card-schema's card url


class NotACard(Exception):
    """The JSON is not an A2A Agent Card: nothing is written."""


@dataclass(frozen=True)
class Change:
    path: str  # JSON path in the imported card, e.g. $.capabilities.streaming
    message: str


@dataclass
class Imported:
    card: dict[str, Any]  # the a2a_projection, snake_case
    service_class: str | None = None
    changes: list[Change] = field(default_factory=list)

    def drop(self, path: str, why: str) -> None:
        self.changes.append(Change(path, f"dropped: {why}"))

    def convert(self, path: str, what: str) -> None:
        self.changes.append(Change(path, f"converted: {what}"))


def http_url(url: Any) -> bool:
    """An absolute http(s) URL (a token or metadata url: anywhere, unlike a card's)."""
    return isinstance(url, str) and URL.match(url) is not None


def publishable(url: Any) -> bool:
    """An http(s) URL a card can be published at (so not `http://localhost:PORT/`)."""
    return isinstance(url, str) and URL.match(url) is not None and url_location(url) is not None


def list_of(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
