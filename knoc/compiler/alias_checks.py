"""A blueprint's card field that a YAML alias (`*name`) fills from outside
`a2a_projection`: the card publishes that value, though the docs say
persona, goals and the rest never leave the repo, and the card's own lines
show only `*name`."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator

from knoc.diagnostics import Diagnostic, JsonPath, at, json_path
from knoc.kinds.agent import Agent
from knoc.yaml.yaml12 import MappingNode, Node, ScalarNode, SequenceNode

_CREDENTIALS = ("authentication", "credentials")
# An anchor (`&name`) where YAML allows one: at a value's start. Most sources have none (a build's hot path).
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]", re.M)


def aliased_from_outside(agent: Agent) -> Iterable[Diagnostic]:
    """A warning at each card value that is an alias of a value written
    where nothing is published: outside a blueprint's card, or in a legacy
    card's `authentication.credentials` (what is under it is not looked at again)."""
    source = agent.typed.source
    if "&" not in source.text or not _ANCHOR.search(source.text) or (root := source.tree()) is None:
        return
    hidden: Node | None = None  # a legacy card's credentials: the one part of it not published
    if agent.card_path:
        card = _child(root, agent.card_path[0])
    else:
        card, hidden = root, _child(_child(root, _CREDENTIALS[0]), _CREDENTIALS[1])
        if hidden is None:
            return
    if card is None:
        return
    private = functools.partial(_holds, hidden) if hidden is not None else lambda index: not _holds(card, index)
    for path, node in _copied(card, private, _CREDENTIALS if hidden is not None else None):
        origin = _path_to(root, node)
        written = f"`{json_path(origin).removeprefix('$.')}`" if origin is not None else "a value"
        # Said at its key (a list item's: its list's): YAML keeps no place of an alias but its anchor's.
        where = said = (*agent.card_path, *path)
        while isinstance(said[-1], int):
            said = said[:-1]
        yield at(source, said, "KNO-CARD-ALIAS", f"`{json_path(path).removeprefix('$.')}` is an alias of "
                 f"{written} (line {node.start_mark.line + 1}), which is not published: the card would publish "
                 "it here", "write the card's own value here; or, if it is meant to be public, anchor it "
                 "inside the card and alias it from outside", key=True, json_path=json_path(where))


def _copied(card: Node, private: Callable[[int], bool], hidden: JsonPath | None) -> Iterator[tuple[JsonPath, Node]]:
    """Each node under `card` (not the one at `hidden`) written where
    `private` says nothing is published (an alias's node is written at its
    anchor), with its path in the card; not what is under it."""
    todo: list[tuple[JsonPath, Node]] = [((), card)]
    while todo:
        path, item = todo.pop()
        if path == hidden:
            continue
        if path and private(item.start_mark.index):
            yield path, item
        elif isinstance(item, MappingNode):
            todo += [((*path, str(k.value)) if k.value != "<<" else path, v) for k, v in item.value
                     if isinstance(k, ScalarNode)]
        elif isinstance(item, SequenceNode):
            todo += [((*path, i), v) for i, v in enumerate(item.value)]


def _holds(node: Node, index: int) -> bool:
    """Whether `node`'s text holds the character at `index`."""
    return node.start_mark.index <= index < max(node.end_mark.index, node.start_mark.index + 1)


def _path_to(root: Node, wanted: Node) -> JsonPath | None:
    """Where `wanted` is written in the entity (its anchor): each step goes
    into the one child whose text holds the node's start."""
    found: JsonPath = ()
    item, index = root, wanted.start_mark.index
    while item is not wanted:
        children = (item.value if isinstance(item, MappingNode) else enumerate(item.value)
                    if isinstance(item, SequenceNode) else ())
        step = next(((k.value if isinstance(k, ScalarNode) else k, v) for k, v in children if _holds(v, index)), None)
        if step is None:
            return None
        found, item = (*found, step[0]), step[1]
    return found


def _child(node: Node | None, key: str) -> Node | None:
    if isinstance(node, MappingNode):
        return next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None)
    return None
