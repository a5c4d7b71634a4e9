"""The A2A targets knoc builds for, by name. Each is one module holding its
wire models, how card fields become its card (`build`) and how its card is
read back (`read`, `url_of`); adding a target is one module and one line in
`_BUILT_IN`."""

from __future__ import annotations

from typing import Any

from knoc.a2a.targets import compat, v03, v10
from knoc.a2a.targets.base import Target

_BUILT_IN = (v10.TARGET, v03.TARGET, compat.TARGET)
REGISTRY: dict[str, Target] = {t.name: t for t in _BUILT_IN}
DEFAULT = v10.TARGET.name


def register(target: Target) -> None:
    """Make `target` available by its name (a plugin, or a test's throwaway target)."""
    REGISTRY[target.name] = target


def unregister(name: str) -> None:
    REGISTRY.pop(name, None)


def get(name: str) -> Target:
    """The target called `name` (KeyError for an unknown one)."""
    return REGISTRY[name]


def names() -> tuple[str, ...]:
    return tuple(REGISTRY)


def by_shape(card: dict[str, Any]) -> Target:
    """The built-in target whose shape a card of unknown origin has, to read
    it as a client would: 1.0 interfaces (with a 0.3 `url`: compat), or 0.3."""
    if "supportedInterfaces" in card:
        return compat.TARGET if "url" in card else v10.TARGET
    return v03.TARGET


__all__ = ["DEFAULT", "REGISTRY", "Target", "by_shape", "get", "names", "register", "unregister"]
