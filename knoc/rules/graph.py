"""Graph walks over `extends` and `composes` links: iterative (content may
hold chains of 10,000, deeper than Python's recursion limit) and linear in
nodes plus edges."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

Node = TypeVar("Node", bound=Hashable)
Label = TypeVar("Label")


def cycles(nodes: Sequence[Node], edges: Mapping[Node, Sequence[tuple[Label, Node]]]
           ) -> Iterable[list[tuple[Node, Label]]]:
    """Cycles found by one depth-first search from each node in `nodes` order
    (every node visited once): each as its members with the label of the
    edge leaving each, starting at the member the search reached first, and
    each set of members once. Every strongly connected component with a
    cycle yields at least one."""
    state: dict[Node, int] = {}  # 1: on the current path, 2: done
    reported: set[frozenset[Node]] = set()
    for start in nodes:
        if start in state:
            continue
        path: list[tuple[Node, Label]] = []  # the current path, with the edge taken from each
        stack = [(start, iter(edges.get(start, ())))]
        state[start] = 1
        while stack:
            node, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                stack.pop()
                state[node] = 2
                if path:
                    path.pop()
                continue
            label, child = step
            seen = state.get(child)
            if seen == 1:
                found = [*path, (node, label)]
                cycle = found[next(i for i, (n, _) in enumerate(found) if n == child):]
                members = frozenset(n for n, _ in cycle)
                if members not in reported:
                    reported.add(members)
                    yield cycle
            elif seen is None:
                path.append((node, label))
                state[child] = 1
                stack.append((child, iter(edges.get(child, ()))))


class Named(Protocol):
    """An entity, as a cycle shows it: by its slug."""

    @property
    def data(self) -> Mapping[str, object]: ...


def show(cycle: Sequence[tuple[Named, object]]) -> str:
    """A cycle of entities as `a -> b -> a`, by slug."""
    slugs = [str(node.data["slug"]) for node, _ in cycle]
    return " -> ".join([*slugs, slugs[0]])


def reach(nodes: Sequence[Node], edges: Mapping[Node, Sequence[Node]],
          own: Mapping[Node, frozenset[str]]) -> dict[Node, frozenset[str]]:
    """For each node, the union of `own` over every node reachable from it
    (itself included), computed once per strongly connected component
    (Tarjan's algorithm, iteratively). A node without `edges` has none."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    on_stack: set[Node] = set()
    component: list[Node] = []
    out: dict[Node, frozenset[str]] = {}
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        component.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    component.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:  # node roots a component: pop it, union what it reaches
                members: list[Node] = []
                while True:
                    member = component.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                union: set[str] = set()
                for member in members:
                    union |= own[member]
                    for child in edges.get(member, ()):
                        if child in out:  # a component below, already done
                            union |= out[child]
                frozen = frozenset(union)
                for member in members:
                    out[member] = frozen
    return out
