"""YAML text to plain values (dicts with string keys, lists, strings,
numbers, booleans, None) under the YAML 1.2 core schema, within the
bounds of knoc.rules.limits.

libyaml (PyYAML's C binding) parses and composes the node tree; the
resolver below gives plain scalars their 1.2 types (`yes` and `2024-01-01`
stay strings, `0o17` is octal, `017` is seventeen), as ruamel.yaml's safe
loader did; `construct` turns the nodes into values without recursion.
Nothing here runs code or builds objects other than those above: an
unknown or Python tag is an error.

`compose` is also what a diagnostic walks to find a line and column."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from yaml import MappingNode, Node, ScalarNode, SequenceNode, YAMLError
from yaml.constructor import ConstructorError
from yaml.error import Mark

from knoc.rules import limits
from knoc.rules.json import JsonArray, JsonObject, JsonScalar, JsonValue
from knoc.yaml.scanner import Parser as _Parser

__all__ = [
    "ODD_BREAKS",
    "TOO_DEEP",
    "ConstructorError",
    "DuplicateKey",
    "MappingNode",
    "Mark",
    "Node",
    "Refusal",
    "ScalarNode",
    "SequenceNode",
    "YAMLError",
    "compose",
    "key_of",
    "load",
    "load_value",
]

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = (_TAG + t for t in ("str", "int", "float", "bool", "null"))
MAP, SEQ, MERGE, VALUE, TIMESTAMP = (_TAG + t for t in ("map", "seq", "merge", "value", "timestamp"))


# The YAML 1.2 core schema's plain scalars, plus the merge key `<<`, by
# their first character. (A timestamp is not resolved: under 1.2 it is a string.)
_PLAIN: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
for _tag, _pattern, _first in (
    (BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    (FLOAT, r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
                |[-+]?\.(?:inf|Inf|INF)
                |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
    (INT, r"""^(?:[-+]?0b[0-1_]+
              |[-+]?0o?[0-7_]+
              |[-+]?[0-9_]+
              |[-+]?0x[0-9a-fA-F_]+)$""", "-+0123456789"),
    (MERGE, r"^(?:<<)$", "<"),
    (NULL, r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    (VALUE, r"^(?:=)$", "="),
):
    _compiled = re.compile(_pattern, re.X)
    for _char in _first:
        _PLAIN.setdefault(_char, []).append((_tag, _compiled))

# Line breaks to YAML 1.1 (and libyaml), text to the YAML 1.2 spec: written
# raw, tools disagree on the value and the lines after it. A source refuses
# them (knoc.compiler.bounds); every YAML knoc writes escapes them.
ODD_BREAKS = {"\x85": "U+0085 (next line)", "\u2028": "U+2028 (line separator)",
              "\u2029": "U+2029 (paragraph separator)"}

_KINDS: dict[str, type[Node]] = {MAP: MappingNode, SEQ: SequenceNode}
_COLLECTIONS = {kind: tag for tag, kind in _KINDS.items()}


class _Composer(_Parser):
    """libyaml's composer, with the tags above. It asks for a tag for
    every node, so this is the plainest lookup (no path resolvers)."""

    def resolve(self, kind: type[Node], value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is not ScalarNode:
            return _COLLECTIONS[kind]
        text = value or ""
        if implicit[0]:  # plain
            for tag, pattern in _PLAIN.get(text[:1], ()):
                if pattern.match(text):
                    return tag
        return STR

    def descend_resolver(self, current_node: Node | None, current_index: object) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


# A value nested past the limit: what is wrong, and what to do.
TOO_DEEP = (f"mappings and lists nest more than {limits.NESTING_DEPTH} deep",
            "flatten the structure: no entity needs it this deep")


class Refusal(ConstructorError):
    """A value knoc refuses, with its diagnostic code and what to do:
    past one of knoc.rules.limits, or YAML that means something else than
    its author likely thought."""

    def __init__(self, code: str, message: str, hint: str, mark: Mark | None) -> None:
        super().__init__(None, None, message, mark)
        self.code, self.hint = code, hint


class DuplicateKey(ConstructorError):
    """A key set twice in one mapping: where each was written."""

    def __init__(self, key: str, first: Node, second: Node) -> None:
        super().__init__("while constructing a mapping", first.start_mark, f"`{key}` is set twice in one mapping",
                         second.start_mark)
        self.key, self.first, self.second = key, first, second


def compose(text: str) -> Node | None:
    """The node tree of a one-document text (None: no document)."""
    composer = _Composer(text)
    try:
        return composer.get_single_node()
    except YAMLError as exc:  # libyaml 0.2.6 (PyYAML 6.0.4) has a nesting bound of its own, past knoc's
        mark = getattr(exc, "problem_mark", None)
        if mark is not None and "maximum nesting depth" in str(getattr(exc, "problem", "")):
            raise Refusal("KNO-YAML-LIMIT", *TOO_DEEP, mark) from None
        raise
    finally:
        composer.dispose()


def load(text: str) -> Any:
    """`load_value`, for a caller that reads the value as it expects it
    (and catches the AttributeError or TypeError of another shape)."""
    return load_value(text)


def load_value(text: str) -> JsonValue:
    """The value of a one-document text (None: no document)."""
    node = compose(text)
    return None if node is None else construct(node)


def construct(root: Node) -> JsonValue:
    """The value of a node tree. A node reached twice (an alias) is made
    once and shared, so a value can be recursive (knoc.compiler.bounds
    refuses that); each collection is made empty first and filled from a
    work list, however deeply it nests."""
    made: dict[int, JsonObject | JsonArray] = {}
    todo: list[tuple[Node, JsonObject | JsonArray]] = []
    merges = _Merges()

    def value(node: Node) -> JsonValue:
        tag = node.tag
        if tag == STR and type(node) is ScalarNode:  # most of a file
            text: str = node.value
            return text
        kind = _KINDS.get(tag)
        if kind is None:
            return _scalar(node)
        found = made.get(id(node))
        if found is None:
            if not isinstance(node, kind):
                raise _misfit(node)
            found = made[id(node)] = {} if kind is MappingNode else []
            todo.append((node, found))
        return found

    top = value(root)
    while todo:
        node, into = todo.pop()
        if isinstance(into, list):
            into.extend(map(value, node.value))
            continue
        _count_keys(node)
        if any(key_node.tag == MERGE for key_node, _ in node.value):  # rare
            into.update((key, value(item)) for key, item in merges.entries(node).items())
        else:
            into.update((key, value(item)) for key, item in _own(node))
    return top


def _own(node: Node) -> Iterator[tuple[str, Node]]:
    """A mapping's own keys, as strings, and their value nodes (not `<<`)."""
    keys: dict[str, Node] = {}
    for key_node, item in node.value:
        tag = key_node.tag
        if tag == STR and type(key_node) is ScalarNode:  # most keys
            key = key_node.value
        elif tag == MERGE:
            continue
        else:
            key = _key(key_node)
        if key in keys:
            raise DuplicateKey(key, keys[key], key_node)
        keys[key] = key_node
        yield key, item


def _count_keys(node: Node) -> None:
    if len(node.value) > limits.MAPPING_KEYS:
        raise Refusal("KNO-YAML-LIMIT", f"a mapping holds {len(node.value):,} keys; the limit is "
                      f"{limits.MAPPING_KEYS:,}", "split the mapping, or move the data out of the entity",
                      node.start_mark)


class _Merges:
    """Each mapping's keys, as strings, and their value nodes, with the
    mappings merged in by `<<` under its own keys: the first of a list of
    merged mappings wins, and the keys keep the order YAML's merge key
    gives them. A mapping's keys are worked out once, however often it is
    merged (each later merge copies them: counted against the alias bound)."""

    def __init__(self) -> None:
        self.done: dict[int, dict[str, Node]] = {}
        self.merged: dict[int, list[Node]] = {}  # the mappings each one merges in, once checked
        self.copied = 0

    def sources(self, node: Node) -> list[Node]:
        found = self.merged.get(id(node))
        if found is None:
            found = self.merged[id(node)] = _sources(node)
        return found

    def entries(self, node: Node) -> dict[str, Node]:
        stack, open_ = [node], set()
        while stack:  # merged mappings first, without recursion: a chain of merges can be long
            top = stack[-1]
            if id(top) in self.done:
                stack.pop()
                continue
            waiting = [s for s in self.sources(top) if id(s) not in self.done]
            if waiting:
                open_.add(id(top))
                for source in waiting:
                    if id(source) in open_:  # it is `top` or a mapping that merges `top` in
                        raise Refusal("KNO-YAML-ALIAS-CYCLE", "a merge (`<<`) takes in a mapping that holds it",
                                      "merge a mapping outside this one", source.start_mark)
                stack += waiting
                continue
            self.done[id(top)] = self._merged(top)
            open_.discard(id(top))
            stack.pop()
        return self.done[id(node)]

    def _merged(self, node: Node) -> dict[str, Node]:
        merged: dict[str, Node] = {}
        for source in reversed(self.sources(node)):
            merged.update(self.done[id(source)])
        self.copied += len(merged)
        if self.copied > limits.ALIAS_NODES:
            raise Refusal("KNO-YAML-ALIAS-LIMIT", f"merge keys (`<<`) copy more than {limits.ALIAS_NODES:,} keys",
                          "merge fewer or smaller mappings", node.start_mark)
        merged.update(_own(node))
        return merged


def _sources(node: Node) -> list[Node]:
    """The mappings a mapping merges in (`<<`), in the order written."""
    _count_keys(node)
    merge = [(key, item) for key, item in node.value if key.tag == MERGE]
    if not merge:
        return []
    if len(merge) > 1:
        raise DuplicateKey("<<", merge[0][0], merge[1][0])
    item = merge[0][1]
    sources = item.value if isinstance(item, SequenceNode) and item.tag == SEQ else [item]
    for source in sources:
        if not isinstance(source, MappingNode) or source.tag != MAP:
            raise Refusal("KNO-YAML-SYNTAX", f"a merge (`<<`) takes a mapping or a list of mappings, not a "
                          f"{_what(source)}", "merge an anchored mapping (`<<: *name`) or a list of them",
                          source.start_mark)
    return list(sources)


def key_of(node: Node) -> str | None:
    """A mapping key as a loaded value has it (`_key`: `0x1` is "1", `~` is
    "null"), or None for one no value has (a merge's `<<`, a refused key)."""
    if node.tag == MERGE:
        return None
    try:
        return _key(node)
    except ConstructorError:
        return None


def _key(node: Node) -> str:
    """A mapping key as the string it is in JSON: `1` and `"1"` are one key."""
    if node.tag == VALUE:
        return "="
    if not isinstance(node, ScalarNode):
        raise Refusal("KNO-YAML-SYNTAX", f"a mapping key is a {_what(node)}; a key is a string, number, boolean or "
                      "null", "write the key as a string", node.start_mark)
    key = _scalar(node)
    if type(key) is str:
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _scalar(node: Node) -> JsonScalar:
    tag = node.tag
    if tag in (STR, TIMESTAMP):
        return _text(node)
    maker = _SCALARS.get(tag)
    if maker is None:
        raise _unsupported(node)
    return maker(_text(node), node)


def _text(node: Node) -> str:
    if not isinstance(node, ScalarNode):
        raise _misfit(node)
    text: str = node.value
    return text


def _what(node: Node) -> str:
    return "mapping" if isinstance(node, MappingNode) else "sequence" if isinstance(node, SequenceNode) else "scalar"


def _misfit(node: Node) -> ConstructorError:
    return ConstructorError(None, None, f"the tag {node.tag!r} does not fit a {_what(node)}", node.start_mark)


def _null(text: str, node: Node) -> None:
    if text not in ("", "~", "null", "Null", "NULL"):
        raise Refusal("KNO-YAML-TAG", f"`{text}` is not null", _RETAG, node.start_mark)


def _bool(text: str, node: Node) -> bool:
    if text.lower() not in ("true", "false"):
        raise Refusal("KNO-YAML-TAG", f"`{text}` is not a boolean (true or false)", _RETAG, node.start_mark)
    return text.lower() == "true"


def _int(text: str, node: Node) -> int:
    plain = text.replace("_", "")
    sign = -1 if plain[:1] == "-" else 1
    plain = plain[1:] if plain[:1] in ("+", "-") else plain
    base = {"0b": 2, "0o": 8, "0x": 16}.get(plain[:2], 10)
    digits = plain[2:] if base != 10 else plain
    if len(digits) > limits.INTEGER_DIGITS:  # hex too: printing one of 4,300 digits fails
        raise Refusal("KNO-YAML-LIMIT", f"an integer of {len(digits):,} digits; the limit is {limits.INTEGER_DIGITS}",
                      "quote it if it is an identifier, not a number", node.start_mark)
    try:
        return sign * int(digits, base)
    except ValueError:
        raise Refusal("KNO-YAML-TAG", f"`{text}` is not an integer", _RETAG, node.start_mark) from None


def _float(text: str, node: Node) -> float:
    plain = text.replace("_", "").lower()
    try:
        value = float(plain.replace(".inf", "inf").replace(".nan", "nan"))
    except ValueError:
        raise Refusal("KNO-YAML-TAG", f"`{text}` is not a number", _RETAG, node.start_mark) from None
    if not math.isfinite(value):
        raise Refusal("KNO-YAML-NUMBER", f"`{text}` is not a finite number, which JSON cannot carry",
                      "write a finite number, or quote it as a string", node.start_mark)
    return value


def _special(text: str, node: Node) -> NoReturn:
    raise Refusal("KNO-YAML-SYNTAX", f"a plain `{text}` has a meaning of its own in YAML", f"quote it (\"{text}\")",
                  node.start_mark)


_RETAG = "write a value of the tag's type, or remove the tag"


_SCALARS: dict[str, Callable[[str, Node], JsonScalar]] = {
    NULL: _null, BOOL: _bool, INT: _int, FLOAT: _float, MERGE: _special, VALUE: _special}


def _unsupported(node: Node) -> ConstructorError:
    return ConstructorError(None, None, f"the tag {node.tag!r} is not supported", node.start_mark)
