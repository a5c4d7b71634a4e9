"""The A2A targets knoc builds for, by name. Each is one module holding its
wire models, how card fields become its card (`build`) and how its card is
read back (`read`, `url_of`); adding a target is one module and one line in
`_BUILT_IN`."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from knoc.a2a.targets.base import Target

# Each built-in target's name and module, imported when first asked for:
# its wire models cost a tenth of a second, which a command that only
# names targets (every command's --a2a option) does not pay.
_BUILT_IN = {"1.0": "v10", "0.3": "v03", "compat": "compat"}
_REGISTERED: dict[str, Target] = {}
DEFAULT = "1.0"


def register(target: Target) -> None:
    """Make `target` available by its name (a plugin, or a test's throwaway target)."""
    _REGISTERED[target.name] = target


def unregister(name: str) -> None:
    _REGISTERED.pop(name, None)


def get(name: str) -> Target:
    """The target called `name` (KeyError for an unknown one)."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    target: Target = importlib.import_module(f"{__name__}.{_BUILT_IN[name]}").TARGET
    return target


def names() -> tuple[str, ...]:
    return tuple(dict.fromkeys([*_BUILT_IN, *_REGISTERED]))


def by_shape(card: Mapping[str, object]) -> Target:
    """The built-in target whose shape a card of unknown origin has, to read
    it as a client would: 1.0 interfaces (with a 0.3 `url`: compat), or 0.3."""
    if "supportedInterfaces" in card:
        return get("compat" if "url" in card else "1.0")
    return get("0.3")


__all__ = ["DEFAULT", "by_shape", "get", "names", "register", "unregister"]
