"""A card value that a YAML alias (`*name`) fills from a value the entity
does not publish: a blueprint's persona, goals or the rest outside
`a2a_projection`, or a legacy card's `authentication.credentials`. The
card would publish it, though the docs say those never leave the repo,
and the card's own lines show only `*name`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from knoc.diagnostics import Diagnostic, JsonPath, at, json_path
from knoc.kinds.agent import Agent
from knoc.yaml.yaml12 import MappingNode, Node, ScalarNode, SequenceNode

_CREDENTIALS = ("authentication", "credentials")
# What a blueprint publishes besides its card: its service class (an extension entry) and perception domains (the
# runtime index and the catalog pages).
_PUBLISHED = (("service_class",), ("persona", "perception", "domains"))
_ALIAS, _MERGED = "is an alias of", "merges in (`<<`)"
# An anchor (`&name`) where YAML allows one: at a value's start. Most sources have none (a build's hot path).
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]", re.M)


def aliased_from_outside(agent: Agent) -> Iterable[Diagnostic]:
    """A warning at each card value (or key) that is an alias of a value
    the entity does not publish, said at the card key that holds it."""
    source = agent.typed.source
    if "&" not in source.text or not _ANCHOR.search(source.text) or (root := source.tree()) is None:
        return
    written = _origins(root)
    legacy = not agent.card_path
    card_path: JsonPath = agent.card_path or ()

    def private(node: Node) -> bool:
        origin = written.get(id(node))
        if origin is None:
            return False
        if legacy:
            return origin[:2] == _CREDENTIALS
        return origin[:len(card_path)] != card_path and not any(origin[:len(p)] == p for p in _PUBLISHED)

    card = _child(root, str(card_path[0])) if card_path else root
    if card is None:
        return
    hidden = _CREDENTIALS if legacy else None
    found = [((), (), card, _ALIAS)] if private(card) else _copied(card, card_path, written, private, hidden)
    for path, said, node, how in found:
        where, said = (*card_path, *path), (*card_path, *said)
        while said and isinstance(said[-1], int):  # a list item is said at its list's key
            said = said[:-1]
        origin = json_path(written[id(node)])[2:]
        yield at(source, said, "KNO-CARD-ALIAS", f"`{json_path(where)[2:]}` {how} `{origin}` (line "
                 f"{node.start_mark.line + 1}), which is not published: the card would publish it here",
                 "write the card's own value here; or, if it is meant to be public, anchor it inside the card and "
                 "alias it from outside", key=True, json_path=json_path(where))


def _copied(card: Node, card_path: JsonPath, written: dict[int, JsonPath], private: Callable[[Node], bool],
            hidden: JsonPath | None) -> Iterator[tuple[JsonPath, JsonPath, Node, str]]:
    """Each node (or key) in `card` that `private` says is not published:
    its path, the path of the card key it is said at (the outermost alias
    on the way: YAML keeps no place of an alias but its anchor's), and the
    node; not what is under it. `hidden`: a path the card does not publish."""
    todo: list[tuple[JsonPath, JsonPath | None, Node]] = [((), None, card)]
    while todo:
        path, said, item = todo.pop()
        if path == hidden:
            continue
        if said is None and written.get(id(item)) != (*card_path, *path):  # an alias: said where it is used
            said = path
        if path and private(item):
            yield path, said or path, item, _ALIAS
            continue
        if isinstance(item, MappingNode):
            own = {k.value for k, _ in item.value if isinstance(k, ScalarNode) and k.value != "<<"}
            for key, value in item.value:
                if isinstance(key, ScalarNode) and key.value == "<<":  # keys merged in: said at the mapping
                    merged = value.value if isinstance(value, SequenceNode) else [value]
                    yield from ((path, said or path, m, _MERGED) for m in merged if private(m) and _adds(m, own))
                elif written.get(id(key)) != (*card_path, *path, str(key.value)) and private(key):  # not its own
                    yield path, said or path, key, "has a key that is an alias of"
                elif isinstance(key, ScalarNode):
                    todo.append(((*path, str(key.value)), said, value))
        elif isinstance(item, SequenceNode):
            todo += [((*path, i), said, v) for i, v in enumerate(item.value)]


def _adds(merged: Node, own: set[object]) -> bool:
    """Whether a mapping merged in (`<<`) gives a key the mapping does not set itself."""
    return isinstance(merged, MappingNode) and any(isinstance(k, ScalarNode) and k.value not in own
                                                   for k, _ in merged.value)


def _origins(root: Node) -> dict[int, JsonPath]:
    """Where each node of the tree (and each key) is written, by node: an
    alias's node at its anchor. One walk: a child is written where it is
    used when its text begins after its key (or the item before it), as an
    alias's anchor never does."""
    found: dict[int, JsonPath] = {}
    todo: list[tuple[JsonPath, Node]] = [((), root)]
    while todo:
        path, item = todo.pop()
        found[id(item)] = path
        after = item.start_mark.index
        children: Iterable[tuple[str | int, Node, Node | None]] = (
            ((str(k.value), v, k) for k, v in item.value) if isinstance(item, MappingNode) else
            ((i, v, None) for i, v in enumerate(item.value)) if isinstance(item, SequenceNode) else ())
        for step, child, key in children:
            if key is not None:
                if after <= key.start_mark.index and _holds(item, key) and id(key) not in found:
                    found[id(key)] = (*path, step)
                after = key.end_mark.index
            if after <= child.start_mark.index and _holds(item, child) and id(child) not in found:
                found[id(child)] = (*path, step)  # taken now: a later alias of it is not walked again
                todo.append(((*path, step), child))
            after = max(after, child.end_mark.index)
    return found


def _holds(parent: Node, child: Node) -> bool:
    """Whether `child`'s text begins inside `parent`'s."""
    index = child.start_mark.index
    return parent.start_mark.index <= index < max(parent.end_mark.index, parent.start_mark.index + 1)


def _child(node: Node | None, key: str) -> Node | None:
    if isinstance(node, MappingNode):
        return next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None)
    return None
