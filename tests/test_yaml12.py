"""The YAML loader (knoc.yaml.yaml12): libyaml composes, knoc resolves and
constructs under the YAML 1.2 core schema. Held to ruamel.yaml's safe
loader (what knoc loaded with before) on plain scalars, and to YAML's merge
key, and checked against hostile merges and keys."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.cyaml import CSafeLoader

from knoc.compiler.bounds import OutOfBounds
from knoc.compiler.load import parse, parse_source
from knoc.diagnostics import Diagnostic, SourceFile
from knoc.rules import limits
from knoc.rules.lines import lines, lines_with_ends
from knoc.yaml import yaml12


class _Ruamel(CSafeLoader):  # type: ignore[misc]
    """ruamel's 1.2 safe loader, dates kept as text (as knoc keeps them)."""


_Ruamel.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


def ruamel_load(text: str) -> Any:
    loader = _Ruamel(text)
    try:
        with warnings.catch_warnings():  # its YAML 1.1 advice on `1e5`
            warnings.simplefilter("ignore")
            return loader.get_single_data()
    finally:
        loader.dispose()


def outcome(load: Any, text: str) -> Any:
    """The value, or "error" for a text the loader refuses (or a value JSON
    cannot carry, which knoc refuses)."""
    try:
        value = load(text)
    except Exception:
        return "error"
    if any(isinstance(v, float) and not math.isfinite(v) for v in value.values()):
        return "error"
    return value


SCALAR = st.one_of(
    st.sampled_from(["yes", "No", "on", "OFF", "y", "true", "False", "TRUE", "null", "Null", "~", "", "0o17",
                     "017", "08", "0x1F", "0b101", "1_000", "+12", "-0", "1e5", "1.0e5", "12e03", ".inf", "-.Inf",
                     ".nan", "1.", ".5", "190:20:30", "2001-12-14", "2001-12-14 21:59:43.10 -5", "0o", "0b", "0x_1F",
                     "-0b1", "1e", "+.5e-3", "0.", "00", "=", "<<", "a b", "_1"]),
    st.text(alphabet="0123456789+-._eEoxbINFinfatrulsYN~:", min_size=1, max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(SCALAR, min_size=1, max_size=6))
def test_plain_scalars_read_as_ruamel_read_them(scalars: list[str]) -> None:
    flow = [s for s in scalars if ":" not in s]  # see the next test
    text = "".join(f"k{i}: {s}\n" for i, s in enumerate(scalars)) + f"all: [{', '.join(flow)}]\n"
    assert outcome(yaml12.load, text) == outcome(ruamel_load, text)


def test_a_colon_inside_a_flow_scalar_is_text() -> None:
    """libyaml 0.2.5 (PyYAML's) reads YAML 1.2 here; ruamel's older copy
    refused it as a syntax error."""
    assert yaml12.load("urls: [http://a.example, a:b]\n") == {"urls": ["http://a.example", "a:b"]}


@pytest.mark.parametrize(("text", "value"), [
    ("k: yes", "yes"), ("k: off", "off"), ("k: 2024-01-31", "2024-01-31"), ("k: 0o17", 15), ("k: 017", 17),
    ("k: 1e5", 100000.0), ("k: 1:30", "1:30"), ("k: ~", None), ("k: !!str 12", "12"), ("k: !!int '12'", 12),
    ("k: !!timestamp 2024-01-31", "2024-01-31"), ("k: '=' ", "="),
])
def test_yaml_1_2_core_schema(text: str, value: Any) -> None:
    assert yaml12.load(text + "\n") == {"k": value}


def test_merge_keys_follow_yaml() -> None:
    text = """\
base: &base {x: 1, z: 0}
other: &other {x: 2, w: 3}
more: &more {<<: *base, y: 2}
one: {q: 1, <<: *base, z: 5}
two: {<<: [*base, *other], q: 1}
chained: {<<: *more}
"""
    assert yaml12.load(text) == ruamel_load(text) == {
        "base": {"x": 1, "z": 0}, "other": {"x": 2, "w": 3}, "more": {"x": 1, "z": 0, "y": 2},
        "one": {"x": 1, "z": 5, "q": 1},  # merged keys first, its own over them
        "two": {"x": 1, "w": 3, "z": 0, "q": 1},  # the first merged mapping wins
        "chained": {"x": 1, "z": 0, "y": 2},
    }
    assert list(yaml12.load(text)["two"]) == list(ruamel_load(text)["two"])


def test_an_alias_is_one_shared_value() -> None:
    value = yaml12.load("a: &a {x: [1]}\nb: *a\n")
    assert value["a"] is value["b"]


def test_a_long_chain_of_merges_loads_without_recursion() -> None:
    n = 5_000
    text = "m0: &m0 {k0: 0}\n" + "".join(f"m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}\n" for i in range(1, 100)) + \
        "".join(f"n{i}: {{<<: *m99}}\n" for i in range(n // 100))
    value = yaml12.load(text)
    assert value["n0"] == {f"k{i}": i for i in range(100)}


def refusal(text: str) -> yaml12.Refusal:
    with pytest.raises(yaml12.Refusal) as caught:
        yaml12.load(text)
    return caught.value


def test_merges_are_worked_out_once() -> None:
    # each level merges the one before ten times: 10^8 keys if expanded
    text = "a0: &a0 {" + ", ".join(f"k{i}: {i}" for i in range(1000)) + "}\n" + "".join(
        f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 10)}], x{i}: 1}}\n" for i in range(1, 9))
    assert len(yaml12.load(text)["a8"]) == 1008


def test_merges_that_copy_without_bound_are_refused() -> None:
    # a chain of merges, each adding a key: n * n / 2 keys copied
    text = "m0: &m0 {k0: 0}\n" + "".join(f"m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}\n" for i in range(1, 2000))
    found = refusal(text)
    assert found.code == "KNO-YAML-ALIAS-LIMIT"
    assert f"{limits.ALIAS_NODES:,}" in str(found.problem)


def test_a_mapping_merged_into_itself_is_refused() -> None:
    assert refusal("a: &a {x: 1, <<: *a}\n").code == "KNO-YAML-ALIAS-CYCLE"
    assert refusal("a: &a {b: {c: &c {<<: *a}}, <<: *c}\n").code == "KNO-YAML-ALIAS-CYCLE"


@pytest.mark.parametrize(("text", "code", "line"), [
    ("k: !!bool maybe\n", "KNO-YAML-TAG", 0),  # ruamel: KeyError
    ("k: !!int 1:30\n", "KNO-YAML-TAG", 0),  # ruamel: ValueError
    ("a: 1\n? [x, {y: 1}]\n: 2\n", "KNO-YAML-SYNTAX", 1),  # ruamel: TypeError
    ("k: <<\n", "KNO-YAML-SYNTAX", 0),
    ("k: 0x" + "f" * 5000 + "\n", "KNO-YAML-LIMIT", 0),  # too long to print as decimal
    ("k: {<<: 5}\n", "KNO-YAML-SYNTAX", 0),
])
def test_values_knoc_refuses_say_why_and_where(text: str, code: str, line: int) -> None:
    found = refusal(text)
    assert found.code == code and found.problem_mark is not None and found.problem_mark.line == line


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
@pytest.mark.parametrize("where", ["a: \"été {c}\"\n", "a: été {c} x\n", "# été {c} x\na: 1\n", "a: |\n  é{c}\n"])
def test_a_break_only_yaml_1_1_reads_as_one_is_refused_where_it_is_written(char: str, where: str) -> None:
    """libyaml (YAML 1.1) ends a line at these; YAML 1.2 does not: refused
    at the character itself, in a quoted value, a plain one, a comment or
    a block, rather than read with every later line number off by one."""
    text = "k: 1\n" + where.format(c=char)
    with pytest.raises(OutOfBounds) as caught:
        parse(text)
    assert caught.value.code == "KNO-YAML-LINE-BREAK"
    assert text.split("\n")[caught.value.line - 1][caught.value.column - 1] == char
    assert parse('k: "a\\u2028b"\n') == {"k": "a\u2028b"}  # the escape says the same, unambiguously


def test_a_key_is_its_json_text_so_1_and_quoted_1_collide() -> None:
    with pytest.raises(yaml12.DuplicateKey) as caught:
        yaml12.load("1: a\n'1': b\n")
    assert caught.value.key == "1"
    assert (caught.value.first.start_mark.line, caught.value.second.start_mark.line) == (0, 1)
    assert yaml12.load("1: a\ntrue: b\n~: c\n1.5: d\n") == {"1": "a", "true": "b", "null": "c", "1.5": "d"}


def test_python_tags_build_nothing() -> None:
    for text in ("k: !!python/object/apply:os.system [echo]\n", "k: !!python/name:os.system\n", "k: !foo x\n"):
        with pytest.raises(yaml12.ConstructorError, match="is not supported"):
            yaml12.load(text)


@pytest.mark.parametrize("before", ["", "é😀", "éééééé\n"])
@pytest.mark.parametrize("char", ["\x0c", "\x07", "\x1b", "\ufffe"])
def test_a_character_yaml_does_not_allow_is_reported_where_it_is(char: str, before: str) -> None:
    """libyaml's reader refuses it without a line (its offset counts bytes,
    not characters): knoc says where, and names it in the hint."""
    text = f"k: {before}1\r\nv: \"a" + char + "b\"\n"
    found = parse_source(SourceFile("/x.kno", "x.kno", text, ""))
    assert isinstance(found, Diagnostic) and found.code == "KNO-YAML-SYNTAX" and found.span is not None
    line = 3 if "\n" in before else 2
    assert (found.span.line, found.span.column) == (line, 6) and f"U+{ord(char):04X}" in found.message
    assert found.hint is not None and found.hint.endswith(f'"\\u{ord(char):04x}"')


def test_lines_end_where_yaml_ends_them() -> None:
    """At \\n, \\r\\n and \\r only: not at a form feed, U+0085, U+2028."""
    text = "a\x0cb\u2028c\x85d\r\ne\rf\n\ng"
    assert lines(text) == ["a\x0cb\u2028c\x85d", "e", "f", "", "g"]
    assert lines_with_ends(text) == ["a\x0cb\u2028c\x85d\r\n", "e\r", "f\n", "\n", "g"]
    for plain in ("", "a", "a\n", "a\n\nb\r\n", "\n"):
        assert lines(plain) == plain.splitlines() and lines_with_ends(plain) == plain.splitlines(True)


@pytest.mark.parametrize(("text", "cut"), [
    ("description: Watches the drift\n  #1 in its class\nb: 1\n", True),  # the value's next line, dropped
    ("modes: [text/plain,\n        #application/pdf,\n        application/json]\n", False),  # a flow list's comment
    ("p: {organization: Zyx,\n    #url: https://old.example.com,\n    url: x}\n", False),
    ("description: Watches\n# a comment at the key's indent\nb: 1\n", False)])
def test_a_comment_line_is_said_only_where_it_cuts_a_value(text: str, cut: bool) -> None:
    """A `#word` line after a plain value that ran to its line's end would
    have been the value's next line; after a `,` in a flow list it is the
    comment it looks like."""
    from knoc.compiler.comments import cut_values
    from knoc.diagnostics import SourceFile

    assert bool(cut_values(SourceFile("x.kno", "x.kno", text))) is cut
