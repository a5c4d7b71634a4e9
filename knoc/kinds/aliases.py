"""A published value that a YAML alias (`*name`) fills from a value the
entity does not publish: a blueprint's persona or goals (anything outside
`a2a_projection` but its service class, perception domains and identity),
a legacy card's `authentication.credentials`, purpose, goals or ownership,
an extension's purpose or provenance on its page. The file would publish
it, though the docs say those never leave the repo, and the published
field's own lines show only `*name`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from knoc.diagnostics import Diagnostic, JsonPath, SourceFile, at, json_path
from knoc.kinds.agent import Agent
from knoc.yaml.yaml12 import MappingNode, Node, ScalarNode, SequenceNode, compose, key_of

CREDENTIALS = ("authentication", "credentials")
# What names an entity and is published by design (the index, the card's path). Not an agent's title, which
# only the repo's readers see (an extension's page shows its own).
IDENTITY = frozenset({"$schema", "type", "subtype", "id", "slug", "version"})
# A legacy card's fields that it never publishes (the agent-card reference says which).
LEGACY_PRIVATE = frozenset({"title", "purpose", "persona", "goals", "boundaries", "ownership", "provenance", "taxonomy",
                            "relationships", "quality", "budget_override", "composes", "_history"})
_ALIAS, _MERGED = "is an alias of", "merges in (`<<`)"
# An anchor (`&name`) where YAML allows one: at a value's start. Most sources have none (a build's hot path).
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]", re.M)


def aliased(source: SourceFile, shown: Sequence[JsonPath], private: Callable[[JsonPath], bool],
            what: str) -> Iterator[Diagnostic]:
    """A warning at each value (or key) under the `shown` paths, which the
    entity publishes as its `what`, that is an alias of one written where
    `private` says nothing is published; said at the key that uses it."""
    text = source.text
    if "&" not in text or not _ANCHOR.search(text) or (root := _tree(text)) is None:
        return
    written = _origins(root)
    for top in shown:
        node = _at(root, top)
        if node is None:
            continue
        origin = written.get(id(node), top)
        found = [((), (), node, _ALIAS)] if origin != top and private(origin) else \
            _copied(node, top, written, private)
        for path, said, copied, how in found:
            where, said = (*top, *path), (*top, *said)
            while said and isinstance(said[-1], int):  # a list item is said at its list's key
                said = said[:-1]
            yield at(source, said, "KNO-CARD-ALIAS", f"`{json_path(where)[2:]}` {how} "
                     f"`{json_path(written[id(copied)])[2:]}` (line {copied.start_mark.line + 1}), which is not "
                     f"published: the {what} would publish it here", f"write the {what}'s own value here; or, if "
                     "it is meant to be public, anchor it where it is published and alias it from elsewhere",
                     key=True, json_path=json_path(where))


def _copied(top: Node, at_path: JsonPath, written: dict[int, JsonPath], private: Callable[[JsonPath], bool]
            ) -> Iterator[tuple[JsonPath, JsonPath, Node, str]]:
    """Each node (or key) under `top` used here but written where `private`
    says nothing is published: its path, the path of the key it is said at
    (the outermost alias on the way: YAML keeps no place of an alias but its
    anchor's), the node and how it is used; not what is under it."""
    def copied(node: Node, path: JsonPath) -> bool:
        origin = written.get(id(node))
        return origin is not None and origin != (*at_path, *path) and private(origin)

    todo: list[tuple[JsonPath, JsonPath | None, Node]] = [((), None, top)]
    while todo:
        path, said, item = todo.pop()
        if path and private((*at_path, *path)):  # used where nothing is published (a legacy card's goals)
            continue
        if said is None and written.get(id(item)) != (*at_path, *path):  # an alias: said where it is used
            said = path
        if path and copied(item, path):
            yield path, said or path, item, _ALIAS
            continue
        if isinstance(item, MappingNode):
            own = {key_of(k) for k, _ in item.value} - {None}  # as loaded: `0x1` and `"1"` are one key
            for key, value in item.value:
                if isinstance(key, ScalarNode) and key.value == "<<":  # keys merged in: said at the mapping
                    for merged in value.value if isinstance(value, SequenceNode) else [value]:
                        if copied(merged, path) and _adds(merged, own):
                            yield path, said or path, merged, _MERGED
                        elif isinstance(merged, MappingNode):  # what it gives, unless the mapping sets it itself
                            todo += [((*path, name), said or path, v) for k, v in merged.value
                                     if (name := key_of(k)) is not None and name not in own]
                elif (name := key_of(key)) is None:
                    continue
                elif copied(key, (*path, name)) and not copied(value, (*path, name)):  # a copied value: said so
                    yield path, said or path, key, "has a key that is an alias of"
                else:
                    todo.append(((*path, name), said, value))
        elif isinstance(item, SequenceNode):
            todo += [((*path, i), said, v) for i, v in enumerate(item.value)]


def _adds(merged: Node, own: set[str | None]) -> bool:
    """Whether a mapping merged in (`<<`) gives a key the mapping does not set itself."""
    return isinstance(merged, MappingNode) and any((name := key_of(k)) is not None and name not in own
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
            ((key_of(k) or "<<", v, k) for k, v in item.value) if isinstance(item, MappingNode) else
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


def _tree(text: str) -> Node | None:
    """The text's nodes; None where it does not parse (the load stage said why)."""
    try:
        return compose(text)
    except Exception:
        return None


def _at(node: Node | None, path: JsonPath) -> Node | None:
    """The node at `path` of mapping keys."""
    for step in path:
        if not isinstance(node, MappingNode):
            return None
        node = next((v for k, v in node.value if key_of(k) == step), None)
    return node


def card_aliases(agent: Agent) -> Iterator[Diagnostic]:
    """`aliased` for an agent's card: a blueprint's `a2a_projection`, its
    credentials aside, against the rest of the entity but its identity,
    service class and perception domains; a legacy card's top level against
    its credentials and the fields it never publishes (`LEGACY_PRIVATE`)."""
    card = tuple(agent.card_path)

    def private(origin: JsonPath) -> bool:
        if not card:
            return origin[:2] == CREDENTIALS or (bool(origin) and origin[0] in LEGACY_PRIVATE)
        if origin[:len(card)] == card:
            return origin[len(card):len(card) + 2] == CREDENTIALS
        return bool(origin) and origin[0] not in IDENTITY and origin[0] != "service_class" and \
            origin[:3] != ("persona", "perception", "domains")

    return aliased(agent.typed.source, [card], private, "card")


# What an extension's page shows.
PAGE = (("title",), ("description",), ("params_schema",), ("uri",), ("depends_on",), ("evolution",), ("required",))


def page_aliases(source: SourceFile) -> Iterator[Diagnostic]:
    """`aliased` for a public extension's page, against its other fields but its identity."""
    shown = {p[0] for p in PAGE}
    return aliased(source, PAGE, lambda origin: bool(origin) and origin[0] not in IDENTITY | shown,
                   "extension's page")
